#!/usr/bin/env bash
# GPU check of branch "redperf" (issue 15's reduction speed targets, std's special values, bf16 -> bool
# sums): quick conformance of the reductions on nvidia (under 2 minutes), then gems-perf (under a minute) of
# sum, mean, amax, argmax and var_mean at the target shapes, fp16 and bf16, beside ATen, with the copy
# ceiling measured in the same run. Targets: >= 90% of the copy bandwidth at 32768x4096 (last dim), >= 75%
# at 32x4096x1024 (middle dim). Run from the repository root on an H100 with gems installed; logs go to $OUT.
set -uo pipefail
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1
OPS=all,amax,amin,aminmax,any,argmax,argmin,count_nonzero,linalg_vector_norm,max,mean,min,prod,std,sum,var,var_mean
PERF_OPS=sum,mean,amax,argmax,var_mean
OUT=${OUT:-runs/redperf-out}
mkdir -p "$OUT" runs
# -v streams each verdict to the log, so a run stopped by its timeout still names what failed.
timeout 115 python -m pytest conformance --vendor nvidia --quick -n "${WORKERS:-16}" -v -p no:randomly -rf \
    --ops "$OPS" --report-dir runs/redperf > "$OUT/conformance.log" 2>&1
echo "conformance: $(grep -c ' PASSED ' "$OUT/conformance.log") passed, $(grep -c ' FAILED ' "$OUT/conformance.log") failed"
sed -n '/gems conformance: nvidia/,$p' "$OUT/conformance.log" | grep -v "^wrote" | head -40
grep ' FAILED ' "$OUT/conformance.log" | sed 's/.*test_case\[/  FAILED [/' | head -30
timeout 60 python -m gems.perf --vendor nvidia --suite core --no-progress --ops "$PERF_OPS" \
    --shapes tools/gpu_redperf.yaml --out runs/redperf-perf 2>&1 | tail -5
cp runs/redperf-perf/perf.csv "$OUT/perf.csv" 2>/dev/null
python - runs/redperf-perf/perf.csv <<'PY' | tee "$OUT/perf_summary.txt"
import csv, sys
target = {"32768x4096": 90.0, "32x4096x1024": 75.0}
print(f"{'op':<10}{'dtype':<10}{'shape':<14}{'gems ms':>9}{'ATen ms':>9}{'speedup':>9}{'% copy':>8}  target")
for r in csv.DictReader(open(sys.argv[1])):
    if r["shape"] not in target:
        continue
    pct = float(r["pct_copy_bw"] or "nan")
    ok = "ok" if pct >= target[r["shape"]] else "MISS"
    print(f"{r['op']:<10}{r['dtype']:<10}{r['shape']:<14}{float(r['gems_ms'] or 'nan'):>9.4f}"
          f"{float(r['aten_ms'] or 'nan'):>9.4f}{float(r['speedup'] or 'nan'):>9.2f}{pct:>8.1f}  "
          f">= {target[r['shape']]:.0f}% {ok} ({r['status']})")
PY
