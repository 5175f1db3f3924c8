#!/usr/bin/env bash
# Issue #16, round 3 (branch blasperf2) on one H100, from the repository root with gems installed, at most
# about 80 s warm: the quick conformance of the product operators (CONF_S seconds, default 32), then
# tools/gpu_blasperf2.py (BENCH_S seconds, default 48): fp32 IEEE mm "plain" (a read as given) vs now (a
# copied M-major by gems' Triton tile transpose) at 4096^3 and 8192^3, the copy alone vs torch's, TF32 kn/nk,
# decode M = 1/4/16; ATen and gems side by side. SECTIONS picks benchmark parts (default fp32,tf32,decode,
# in priority order). Logs in $OUT (default runs/blasperf2).
set -uo pipefail
OUT=${OUT:-runs/blasperf2}
mkdir -p "$OUT"
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1 PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
if [ "${CONF_S:-32}" != 0 ]; then  # CONF_S=0: the benchmark alone
    timeout "${CONF_S:-32}" python -m pytest conformance --vendor nvidia --quick -n 8 -v -p no:randomly -rf \
        --tb=line --ops mm,bmm,addmm,baddbmm,mv,addmv,dot,vdot --report-dir runs/blasperf2-conf \
        > "$OUT/conformance.log" 2>&1
    echo "conformance: exit status $? (124: its time limit), $(grep -c ' PASSED ' "$OUT/conformance.log") passed," \
        "$(grep -c ' FAILED ' "$OUT/conformance.log") failed, $(grep -c ' ERROR ' "$OUT/conformance.log") errors" \
        "(log $OUT/conformance.log)"
    grep -E " (FAILED|ERROR) |^(FAILED|ERROR)|^E  " "$OUT/conformance.log" | cut -c1-220 | head -20
fi
timeout "${BENCH_S:-48}" python tools/gpu_blasperf2.py "${SECTIONS:-fp32,tf32,decode}" 2>&1 \
    | tee "$OUT/bench.log" | grep -v -i "warn"
echo "benchmark: exit status ${PIPESTATUS[0]} (124: its time limit; log $OUT/bench.log)"
