#!/usr/bin/env bash
# GPU check of the compaction family (branch "unique"): nonzero, unique_consecutive, unique2 (_unique2)
# and quantile (a composite of gems' sort, merged from branch "sort"). Quick conformance, then perf
# against ATen at the shapes of tools/gpu_unique_targets.yaml, float32 and int64 (quantile: float32 only).
# Run from the repository root on the GPU machine; about 2-3 minutes on an H100.
set -euo pipefail
OPS=nonzero,unique_consecutive,unique2,quantile
DIR=${OUT:-runs}
python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --ops "$OPS" \
  --report-dir "$DIR/unique" || status=$?
python -m gems.perf --vendor nvidia --suite core --no-progress --ops "$OPS" --dtypes float32,int64 \
  --shapes tools/gpu_unique_targets.yaml --out "$DIR/unique-perf"
python - "$DIR/unique-perf/perf.csv" <<'PY'
import csv, sys
print(f"{'op':<20}{'dtype':<9}{'shape':<12}{'status':<12}{'speedup':>8}{'gems ms':>10}{'aten ms':>10}{'GB/s':>9}")
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] == "unsupported":
        continue
    num = lambda k: f"{float(r[k]):.4g}" if r[k] else "-"
    print(f"{r['op']:<20}{r['dtype']:<9}{r['shape']:<12}{r['status']:<12}{num('speedup'):>9} {num('gems_ms'):>9} "
          f"{num('aten_ms'):>9} {num('gbps'):>9}  {r['reason'] if r['status'] != 'ok' else ''}")
PY
exit "${status:-0}"
