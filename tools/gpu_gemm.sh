#!/usr/bin/env bash
# Issue #25 on one H100/H200, from the repository root, in about 8 minutes (one device call):
#   1. install gems (editable, no dependencies);
#   2. the quick conformance of the product operators on the GPU (background, CONF_S seconds) while
#      tools/gpu_gemm.py precompile fills Triton's cache for every config the bench tunes (PRE_S seconds);
#   3. tools/gpu_gemm.py check: the persistent pointer and TMA paths forced on odd shapes, layouts, bias,
#      alpha/beta, in-place, out= and gradients vs float64 (CHECK_S seconds);
#   4. tools/gpu_gemm.py bench: cuBLAS vs gems (as routed, and forced onto each path) on the models' linear
#      layers, table last (BENCH_S seconds; CASES=quick for 8 cases).
# Full logs in $OUT (default runs/gemm); the output is kept short.
set -uo pipefail
OUT=${OUT:-runs/gemm}
export OUT GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1 WORKERS=${WORKERS:-8}
mkdir -p "$OUT"
# The editable install needs setuptools >= 77 (pyproject's SPDX license); where the image's is older, the
# scripts below still import gems from the repository root.
pip install -q --no-deps --no-build-isolation -e . > /tmp/gems-pip.log 2>&1 \
    || echo "editable install failed ($(pip show setuptools 2>/dev/null | grep ^Version)): gems from PYTHONPATH"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
# The native layer's C++ extension, built once here (the parallel steps below would all wait for one build).
python -c "import torch, triton, gems; gems.enable(); from gems import native; \
print('torch', torch.__version__, 'triton', triton.__version__, 'native', native.status()['active'] or native.status())"

timeout "${CONF_S:-200}" python -m pytest conformance --vendor nvidia --quick -n "${CONF_N:-8}" -p no:randomly -rf \
    --tb=line --ops mm,addmm,bmm,baddbmm,mv,addmv,addr,dot,vdot,grouped_mm --report-dir "$OUT/conf" \
    > "$OUT/conformance.log" 2>&1 &
conf=$!
timeout "${PRE_S:-150}" python tools/gpu_gemm.py precompile > "$OUT/precompile.log" 2>&1
echo "precompile: exit status $? (124: its time limit); $(head -1 "$OUT/precompile.log")"
grep -v "^precompile: " "$OUT/precompile.log" | cut -c1-200 | head -8
wait $conf
echo "conformance: exit status $? (124: its time limit); $(grep -E '^cells passed|passed|failed' "$OUT/conformance.log" | tail -1)"
grep -E "^(FAILED|ERROR)|^E  " "$OUT/conformance.log" | cut -c1-200 | head -12

timeout "${CHECK_S:-90}" python tools/gpu_gemm.py check > "$OUT/check.log" 2>&1
echo "check: exit status $? (124: its time limit)"
tail -12 "$OUT/check.log" | cut -c1-200

BENCH_S=${BENCH_S:-170} timeout "${BENCH_S:-170}" python tools/gpu_gemm.py bench 2>&1 | grep -v -i "warn" \
    | tee "$OUT/bench.log" | tail -80
echo "bench: exit status ${PIPESTATUS[0]} (124: its time limit; log $OUT/bench.log, rows $OUT/bench.jsonl)"
