#!/usr/bin/env bash
# Issue #16 (conv2d forward speed): time gems' forward variants beside cuDNN at ResNet-50 layers, then check
# conformance. From the repository root on an H100 (gems installed):   bash tools/gpu_convperf.sh
#
# 1. tools/conv_variants.py, fp16 then bf16 (prints as it goes): ATen and three gems tilings per shape
#    (default / image512 / flat, see that file; "=x": same kernel as variant x), the default's autotuned
#    config, default and best variant vs ATen, % of the copy ceiling. The target: gems >= 0.70x of ATen.
#    Stops after CONVPERF_BENCH_S seconds.
# 2. quick conformance of the conv operators on the GPU (all must pass). Stops after CONVPERF_CONF_S seconds.
# Results: runs/convperf (conformance); copied under $OUT when it is set.
set -uo pipefail
export GEMS_VENDOR=nvidia
OPS=convolution,convolution_backward,conv_depthwise2d
start=$SECONDS
timeout "${CONVPERF_BENCH_S:-50}" python -u tools/conv_variants.py --dtypes float16,bfloat16 --rep 20
bench=$?
echo "variants exit $bench after $((SECONDS - start))s"
timeout "${CONVPERF_CONF_S:-60}" python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf \
    --tb=line --ops "$OPS" --report-dir runs/convperf 2>&1 | grep -v "Warning\|warn\|^  \|^$" | tail -n 25
conf=${PIPESTATUS[0]}
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/convperf" && cp -r runs/convperf "$OUT/convperf/" 2>/dev/null
fi
echo "conformance exit $conf, variants exit $bench, total $((SECONDS - start))s"
exit $(( conf || bench ))
