#!/usr/bin/env bash
# Check and time the normalization and fused operators (gems/ops/normalization/, gems/ops/fused/) on a GPU:
# full-mode conformance, then the core perf suite side by side with ATen (copy bandwidth measured in the
# same run), then the issue's targets at 32768x4096 fp16/bf16: layer_norm and rms_norm forward at >= 85%
# of the copy bandwidth and never slower than ATen.
#
#   tools/check_norms.sh [vendor] [out-dir]        (defaults: nvidia, runs/norms-<vendor>)
set -euo pipefail
VENDOR="${1:-nvidia}"
OUT="${2:-runs/norms-$VENDOR}"
OPS=layer_norm,rms_norm,group_norm,batch_norm,weight_norm,fused_add_rms_norm,skip_layer_norm,silu_and_mul,gelu_and_mul,apply_rotary_position_embedding
mkdir -p "$OUT"
status=0
python -m pytest conformance --vendor "$VENDOR" --ops "$OPS" --report-dir "$OUT" -q -p no:randomly -n 4 || status=1
python -m gems.perf --vendor "$VENDOR" --ops "$OPS" --suite core --dtypes float16,bfloat16,float32 --out "$OUT" \
    --no-progress || status=1
python - "$OUT/perf.csv" <<'PY' || status=1
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["shape"] == "32768x4096"]
bad = 0
for r in rows:
    target = r["op"] in ("layer_norm", "rms_norm") and r["dtype"] in ("float16", "bfloat16")
    pct, speedup = float(r["pct_copy_bw"] or 0), float(r["speedup"] or 0)
    ok = r["status"] == "ok" and (not target or (pct >= 85 and speedup >= 1.0))
    bad += not ok
    print(f"{'TARGET' if target else '      '} {'ok  ' if ok else 'MISS'} {r['op']:<20} {r['dtype']:<9} "
          f"{r['status']:<8} speedup {speedup:6.3f}x  {float(r['gbps'] or 0):7.0f} GB/s  {pct:5.1f}% of copy")
sys.exit(1 if bad or not rows else 0)
PY
exit $status
