#!/usr/bin/env bash
# The model presets on an NVIDIA machine (one device-tool call): gems-perf --model for each, ATen and gems
# side by side, results in runs/nvidia-models/ (models.json/.md/.csv) and a log per model under $OUT.
#
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_models.sh [llama bert ...] [-- extra gems-perf options]
set -uo pipefail
OUT=${OUT:-/tmp/gems-out}
mkdir -p "$OUT" runs
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
# The editable install needs setuptools >= 77 (pyproject's SPDX license); where the image's is older, the
# scripts below still import gems from the repository root.
pip install -q --no-deps --no-build-isolation -e . > /tmp/gems-pip.log 2>&1 \
    || echo "editable install failed ($(pip show setuptools 2>/dev/null | grep ^Version)): gems from PYTHONPATH"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python -c "import torch, triton, transformers; print('torch', torch.__version__, 'triton', triton.__version__, \
'transformers', transformers.__version__, torch.cuda.get_device_name())"
models=() extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  models+=("$1"); shift
done
[ ${#models[@]} -gt 0 ] || models=(llama bert)
for model in "${models[@]}"; do
  python -m gems.perf --vendor nvidia --model "$model" --out runs/nvidia-models --no-progress "${extra[@]}" \
      > "$OUT/$model.log" 2>&1
  echo "== $model: exit $?"; grep -v "Warning\|warn(" "$OUT/$model.log" | tail -45
done
cp runs/nvidia-models/models.* "$OUT"/ 2>/dev/null
