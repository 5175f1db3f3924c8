#!/usr/bin/env bash
# Attention on an H100 (GEMS_VENDOR=nvidia, gems installed, run from the repository root): quick
# conformance of scaled_dot_product_attention (every backend overload SDPA reaches there, forward and
# backward), then gems-perf at the issue's target shape (4x32x4096x128, fp16/bf16, causal and not) against
# ATen's own SDPA call (its flash path for these inputs). Results under runs/ and, if set, $OUT.
set -u
export GEMS_VENDOR=nvidia
out="${OUT:-runs}"
mkdir -p "$out"
python - <<'PY'
import torch
q = torch.empty(4, 32, 4096, 128, dtype=torch.float16, device="cuda")
for causal in (False, True):
    print("ATen's SDPA backend for the target shape, causal =", causal, ":",
          int(torch._fused_sdp_choice(q, q, q, None, 0.0, causal)), "(1 flash, 2 efficient, 3 cudnn, 0 math)")
PY
timeout 150 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf \
    --ops scaled_dot_product_attention,flash_attention_forward --report-dir "$out/attention" 2>&1 | tail -40
timeout 150 python -m gems.perf --vendor nvidia --suite core --no-progress --ops scaled_dot_product_attention \
    --shapes tools/gpu_attention_shapes.yaml --out "$out/attention-perf" 2>&1 | tail -30
cat "$out/attention-perf/perf_summary.md" 2>/dev/null | head -40
