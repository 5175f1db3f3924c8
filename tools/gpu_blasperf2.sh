#!/usr/bin/env bash
# Issue #16, second round (branch blasperf2) on one H100, from the repository root with gems installed:
# tools/gpu_blasperf2.py compiles every config it times in WORKERS parallel processes (COMPILE_S seconds
# at most), then times fp32 GEMM without TF32 (FMA tiles), with TF32 (tiles, b copied K-major or not),
# decode-sized products (skinny tiles and K splits, linear-shaped and x @ W, the GEMV kernel) and bmm
# 32x1024x128x1024, ATen and gems side by side; then the quick conformance of the product operators.
# Each part has its own time limit (BENCH_S, CONF_S seconds); SECTIONS picks benchmark parts (default
# fp32,tf32,decode,bmm in priority order). Logs in $OUT (default runs/blasperf2).
set -uo pipefail
OUT=${OUT:-runs/blasperf2}
mkdir -p "$OUT"
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1 PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
timeout "${BENCH_S:-85}" python tools/gpu_blasperf2.py "${SECTIONS:-fp32,tf32,decode,bmm}" 2>&1 \
    | tee "$OUT/bench.log" | grep -v -i "warn"
echo "benchmark: exit status ${PIPESTATUS[0]} (124: its time limit; log $OUT/bench.log)"
[ "${CONF_S:-32}" = 0 ] && exit 0  # CONF_S=0: the benchmark alone
timeout "${CONF_S:-32}" python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line \
    --ops mm,bmm,addmm,mv,addmv,baddbmm --report-dir runs/blasperf2-conf > "$OUT/conformance.log" 2>&1
echo "conformance: exit status $?"
grep -E "^(FAILED|ERROR)|cases:|passed|failed" "$OUT/conformance.log" | cut -c1-220 | head -30
