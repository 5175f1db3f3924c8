#!/usr/bin/env bash
# Check and time the convolutions (gems/ops/conv/) on an NVIDIA GPU, from the repository root (gems installed):
#
#     bash tools/gpu_conv.sh
#
# 1. quick conformance of convolution, convolution_backward and conv_depthwise2d (fp32 without TF32 must
#    meet fp32 tolerances; every case must be served by gems, transposed calls are deliberate fallbacks);
# 2. gems-perf, core suite, at ResNet-50's layer shapes in fp16 and bf16 beside cuDNN (target: at least
#    0.70x of cuDNN's throughput); the first call of each shape autotunes over the nvidia "conv" configs.
# Results: runs/conv (conformance) and runs/conv-perf (perf); copied under $OUT when it is set.
set -uo pipefail
export GEMS_VENDOR=nvidia
OPS=convolution,convolution_backward,conv_depthwise2d
python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --ops "$OPS" --report-dir runs/conv \
    2>&1 | tail -n 60
conf=${PIPESTATUS[0]}
python -m gems.perf --vendor nvidia --suite core --no-progress --ops convolution \
    --shapes tools/gpu_conv_targets.yaml --out runs/conv-perf 2>&1 | tail -n 40
perf=${PIPESTATUS[0]}
cat runs/conv-perf/perf_summary.md 2>/dev/null | head -n 60
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/conv" && cp -r runs/conv runs/conv-perf "$OUT/conv/" 2>/dev/null
fi
echo "conformance exit $conf, perf exit $perf"
exit $(( conf || perf ))
