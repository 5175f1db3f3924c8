"""Rule of gems.patch (key "patch_fusion", args: numel, the elements of a patched module's activation): from how
many elements a patched module's fused kernel runs; smaller calls run the module's own forward (whose ATen ops
gems serves natively), and under CUDA-graph capture the fused kernel always runs (gems/patch/forwards.py).

MIN_NUMEL, 2^22, measured before gems.fused's calls replayed natively (docs/native.md, "gems' own operators":
since then a call that needs no autograd graph replays from C++, while one that builds a graph, in training,
still takes the Python path; to be measured again). Then a gems.fused call took the Python path (~53 us of
host time per skip_layer_norm call on an H200, against ~24 us for the add and layer_norm it replaces, both
replayed natively; runs/ measurement,
2026-11-27, 8 x 512 x 768 bf16, no_grad, back to back), while it saves one pass over the activation (~1-3 us
of device time at these sizes). It pays only where the device is busy enough to hide the host: measured on
H200s (gems-perf --model llama/bert --patched, ATen / gems and ATen / patched in one process), the patched
models lost where the activations were small and won where they were large:
- Llama, 2048 x 4096 = 8.4M elements per norm: prefill 1.255x patched vs 1.041x unpatched, train step
  1.256x vs 1.084x (foreach AdamW), 1.109x vs 0.984x (fused);
- Llama decode, at most 32 x 4096: 1.305x vs 1.440x (batch 1), 1.151x vs 1.292x (batch 32), eager; under a
  CUDA graph (no host time replayed) 1.363x vs 1.119x and 1.342x vs 1.173x;
- BERT-base, 8 x 512 x 768 = 3.1M: forward 0.989x vs 1.223x, train 0.848x vs 0.940x (an earlier H200).
"""

HEURISTICS_CONFIGS = {
    "patch_fusion": {"MIN_NUMEL": lambda args: 1 << 22},
}
