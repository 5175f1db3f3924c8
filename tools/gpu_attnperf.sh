#!/usr/bin/env bash
# Issue #16 (attention speed) on an H100, from the repository root with gems installed: (1) tools/gpu_attnperf.py,
# forward and backward TFLOP/s of gems vs ATen's flash path (aten::_scaled_dot_product_flash_attention) vs ATen's
# default SDPA choice (cuDNN) at batch 4, 32 heads, seq 4096, hd 128/64, fp16/bf16, causal and not, plus the forward
# config sweep; (2) quick conformance of the attention operators; (3) gems-perf at the
# target, where shape ...x1 is the flash path on both sides and ...x0 SDPA (ATen's choice). Results under $OUT or runs/.
set -u
export GEMS_VENDOR=nvidia
out="${OUT:-runs}"
mkdir -p "$out"
start=$SECONDS
timeout 75 python tools/gpu_attnperf.py 2>&1 | grep -v -i warning
echo "[bench done at $((SECONDS - start))s]"
timeout 40 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line \
    --ops scaled_dot_product_attention,flash_attention_forward --report-dir "$out/attnperf" 2>&1 | tail -12
echo "[conformance done at $((SECONDS - start))s]"
timeout 25 python -m gems.perf --vendor nvidia --suite core --dtypes float16 --no-progress \
    --ops scaled_dot_product_attention --shapes tools/gpu_attnperf.yaml --out "$out/attnperf-perf" 2>&1 | tail -2
python - "$out/attnperf-perf/perf.csv" <<'PY'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1])))
except OSError as exc:
    sys.exit(f"no perf.csv: {exc}")
for r in rows:  # shape b x h x s x d x causal x flash (flash 1: the flash overload on both sides)
    print(r["dtype"], r["shape"], r["status"], "aten_ms", r["aten_ms"], "gems_ms", r["gems_ms"], "speedup",
          r["speedup"], "gems TFLOP/s", r["tflops"], r["reason"][:80])
PY
echo "[all done at $((SECONDS - start))s]"
