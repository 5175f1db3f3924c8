#!/usr/bin/env bash
# GPU check of branch "argperf" (issue 15: argmax/argmin at 32768x4096 >= 90% of the copy bandwidth), under a
# minute on a warm H100 (CONF_SECONDS, PERF_SECONDS bound the two stages):
# 1. quick conformance of the value-and-index reductions (argmax, argmin, max, min);
# 2. gems-perf, ATen and gems side by side with the copy ceiling of the same run, at 32768x4096 and
#    [32, 4096, 1024], fp16/bf16 (argmax, argmin, max = max.dim, amax as the one-reduction reference).
#    One-tile fp16/bf16 rows launch with 4 warps (arg_reduce._HALF_ROW_WARPS); main at 4476ff4 used 8.
# Run from the repository root with gems importable; logs go to runs/argperf-out, perf rows to runs/argperf-perf.
set -uo pipefail
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1
OPS=argmax,argmin,max,min
OUT=runs/argperf-out
mkdir -p "$OUT"
timeout "${CONF_SECONDS:-30}" python -m pytest conformance --vendor nvidia --quick -n 8 -v -p no:randomly -rf \
    --tb=line --ops "$OPS" --report-dir runs/argperf > "$OUT/conformance.log" 2>&1
rc=$?
echo "conformance ($OPS): $(grep -c ' PASSED ' "$OUT/conformance.log") passed," \
     "$(grep -c ' FAILED ' "$OUT/conformance.log") failed (exit $rc; 124 = cut by the time limit)"
grep ' FAILED ' "$OUT/conformance.log" | sed 's/.*test_case\[/  FAILED [/' | head -20
timeout "${PERF_SECONDS:-30}" python -m gems.perf --vendor nvidia --suite core --no-progress \
    --ops argmax,argmin,max,amax --shapes tools/gpu_argperf.yaml --out runs/argperf-perf > "$OUT/perf.log" 2>&1
echo "gems-perf exit $? (op dtype shape: aten_ms gems_ms speedup pct_copy_bw)"
python - <<'PY'
import csv, glob
rows = [r for f in glob.glob("runs/argperf-perf/**/perf.csv", recursive=True) for r in csv.DictReader(open(f))]
for r in rows:
    if r["size_class"] == "large":
        print(f"  {r['op']:<7}{r['dtype']:<9}{r['shape']:<13}{r['status']:<5}{r['aten_ms']:>9}{r['gems_ms']:>9}"
              f"{float(r['speedup'] or 0):7.2f}x{r['pct_copy_bw']:>8}")
print("  (no perf.csv)" if not rows else "")
PY
