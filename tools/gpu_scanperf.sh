#!/usr/bin/env bash
# GPU check of branch "scanperf" (issue 15: cummax/cummin >= 85% of the copy bandwidth and never slower than
# ATen, prod >= 90%, at 32768x4096 fp16/bf16 over the last dim): quick conformance of cummax, cummin, cumsum
# and prod on nvidia, then tools/scanperf_bench.py (ATen and gems side by side in one process, the copy
# ceiling measured there, the variants to decide). Run from the repository root on an H100 with gems
# installed; logs go to $OUT. About 90 seconds.
set -uo pipefail
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1
OUT=${OUT:-runs/scanperf-out}
mkdir -p "$OUT" runs
timeout 55 python -m pytest conformance --vendor nvidia --quick -n "${WORKERS:-16}" -v -p no:randomly -rf \
    --ops cummax,cummin,cumsum,prod --report-dir runs/scanperf > "$OUT/conformance.log" 2>&1
echo "conformance: $(grep -c ' PASSED ' "$OUT/conformance.log") passed, $(grep -c ' FAILED ' "$OUT/conformance.log") failed"
sed -n '/gems conformance: nvidia/,$p' "$OUT/conformance.log" | grep -v "^wrote" | head -20
grep ' FAILED ' "$OUT/conformance.log" | sed 's/.*test_case\[/  FAILED [/' | head -20
timeout 45 python tools/scanperf_bench.py 2>&1 | tee "$OUT/bench.txt"
