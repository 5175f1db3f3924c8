"""Rule of gems.patch (key "patch_fusion", args: numel, the elements of a patched module's activation): from how
many elements a patched module's fused kernel runs in a call that builds an autograd graph (training); smaller
such calls run the module's own forward, whose ATen ops gems serves natively. Calls that build no graph always
fuse (gems/patch/forwards.py's fuses()): they replay natively since gems.fused's operators became a `gems::`
namespace (docs/native.md, "gems' own operators"), while a graph-building call still takes gems' Python path.

MIN_NUMEL, 2^22, was measured when every gems.fused call took the Python path (~53 us of host time per
skip_layer_norm call on an H200, against ~24 us for the add and layer_norm it replaces, both replayed natively),
while fusion saves one pass over the activation (~1-3 us of device time at such sizes). It pays only where the
device is busy enough to hide the host: measured on H200s (gems-perf --model llama/bert --patched, ATen / gems
and ATen / patched in one process), the patched models lost where the activations were small and won where they
were large:
- Llama, 2048 x 4096 = 8.4M elements per norm: prefill 1.255x patched vs 1.041x unpatched, train step
  1.256x vs 1.084x (foreach AdamW), 1.109x vs 0.984x (fused);
- BERT-base, 8 x 512 x 768 = 3.1M: forward 0.989x vs 1.223x, train 0.848x vs 0.940x (an earlier H200).
A train step's fused forward still costs more host time than its composite (H200, bf16, 4 x 1024, forward and
backward back to back: silu_and_mul 113 us fused, 67 us composite; skip_layer_norm 266 us and 174 us), so the
threshold stays for training.
"""

HEURISTICS_CONFIGS = {
    "patch_fusion": {"MIN_NUMEL": lambda args: 1 << 22},
}
