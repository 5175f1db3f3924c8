#!/usr/bin/env bash
# GPU check of branch "redperf" (issue 15's reduction speed targets), about 2 minutes on an H100
# (CONF_SECONDS and PERF_SECONDS set the two time limits):
# 1. quick conformance of the reductions whose kernels changed (ONE_STEP paths of arg_reduce, combine,
#    moments; max/min finishes that halve first), verdicts streamed so that a run cut by its timeout still
#    names what failed;
# 2. tools/gpu_redperf_variants.py: copy ceiling, ATen and gems side by side at 32768x4096 (last dim, target
#    >= 90% of copy) and [32, 4096, 1024] over dim 1 (>= 75%), fp16 and bf16, then candidate row kernels
#    (modes and plans, see that file's docstring) checked against ATen and timed.
# Run from the repository root with gems importable; logs go to $OUT (default runs/redperf-out).
set -uo pipefail
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1
OPS=argmax,argmin,max,min,amax,amin,aminmax,linalg_vector_norm,mean,sum,var,std,var_mean
OUT=${OUT:-runs/redperf-out}
mkdir -p "$OUT" runs
timeout "${CONF_SECONDS:-60}" python -m pytest conformance --vendor nvidia --quick -n "${WORKERS:-16}" -v \
    -p no:randomly -rf --tb=line --ops "$OPS" --report-dir runs/redperf > "$OUT/conformance.log" 2>&1
rc=$?
echo "conformance ($OPS): $(grep -c ' PASSED ' "$OUT/conformance.log") passed," \
     "$(grep -c ' FAILED ' "$OUT/conformance.log") failed (exit $rc; 124 = cut by the time limit)"
grep ' FAILED ' "$OUT/conformance.log" | sed 's/.*test_case\[/  FAILED [/' | head -20
REDPERF_SECONDS="${PERF_SECONDS:-55}" timeout 120 python tools/gpu_redperf_variants.py 2>&1 | tee "$OUT/perf.txt"
