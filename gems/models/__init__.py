"""Real models under gems: Hugging Face ``transformers`` models built from configurations with random
weights, run with ATen's kernels and with gems' in one process (``gems-perf --model``; docs/models.md).

    presets.py   named models (llama, bert) per size (tiny: CPU, small: GPU conformance, full: GPU perf)
    build.py     configurations (presets or config.json) -> models; never a download
    answers.py   ATen's and gems' differences from a higher-precision reference
    speed.py     prefill, decode (eager and CUDA graph), training steps, an encoder's forward, timed
    run.py       one model run: answers, coverage (gems.trace), speed
    report.py    models.json / .md / .csv
"""
