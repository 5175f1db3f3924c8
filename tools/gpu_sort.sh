#!/usr/bin/env bash
# GPU check of the sorting family (branch "sort", issue #15): gems-perf at the issue's target shapes
# (tools/gpu_sort_targets.yaml: sort of 4096x1024 >= 0.9x ATen, topk k=64 of 4096x1024 >= 1.0x ATen,
# fp16/bf16/fp32, and one long-row shape without a target), then the quick conformance of sort and topk
# (many small kernel specializations to compile: perf runs first so its numbers come back in any case).
# Run from the repository root on an H100 with gems installed; results under $OUT if set, else runs/.
set -euo pipefail
DEST=${OUT:-runs}
python -m gems.perf --vendor nvidia --suite core --no-progress --ops sort,topk --shapes tools/gpu_sort_targets.yaml \
    --dtypes float16,bfloat16,float32 --out "$DEST/sort-perf" || status=$?
python - "$DEST/sort-perf/perf.csv" <<'PY'
import csv, sys
print(f"{'op':<6}{'dtype':<10}{'shape':<14}{'status':<9}{'aten ms':>10}{'gems ms':>10}{'speedup':>9}  reason")
for row in csv.DictReader(open(sys.argv[1])):
    print(f"{row['op']:<6}{row['dtype']:<10}{row['shape']:<14}{row['status']:<9}{row['aten_ms']:>10}"
          f"{row['gems_ms']:>10}{row['speedup']:>9}  {row['reason']}")
PY
python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --ops sort,topk \
    --report-dir "$DEST/sort" || status=$?
exit "${status:-0}"
