#!/usr/bin/env bash
# Issue #16's blas speed work (branch blasperf) on one NVIDIA GPU, from the repository root with gems
# installed: tools/gpu_blasperf.py times decode-sized mm (the skinny kernel, each of its configs and K
# splits), mv, bmm 32x1024x128x1024 and fp32 GEMM with TF32 off/on, ATen and gems side by side; then the
# quick conformance of the product operators. Each part has its own time limit (BENCH_S, CONF_S seconds);
# SECTIONS picks the benchmark parts (default decode,fp32,bmm,mv, in priority order; those
# not reached in BENCH_S: SECTIONS=bmm,mv CONF_S=0 bash tools/gpu_blasperf.sh). Logs in $OUT.
set -uo pipefail
OUT=${OUT:-runs/blasperf-out}
mkdir -p "$OUT" runs
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1 PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
timeout "${BENCH_S:-55}" python tools/gpu_blasperf.py "${SECTIONS:-decode,fp32,bmm,mv}" 2>&1 \
    | tee "$OUT/bench.log" | grep -v -i "warn"
echo "benchmark: exit status ${PIPESTATUS[0]} (124: its time limit; log $OUT/bench.log)"
[ "${CONF_S:-35}" = 0 ] && exit 0  # CONF_S=0: the benchmark alone
timeout "${CONF_S:-35}" python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line \
    --ops mm,bmm,addmm,mv,addmv,baddbmm --report-dir runs/blasperf > "$OUT/conformance.log" 2>&1
echo "conformance: exit status $?"
grep -E "^(FAILED|ERROR)|cases:|^(mm|bmm|addmm|mv|addmv|baddbmm) " "$OUT/conformance.log" | cut -c1-220 | head -30
