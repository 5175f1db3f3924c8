#!/usr/bin/env bash
# normfix (issue #15) on an H100, GEMS_VENDOR=nvidia, from the repo root, in about 3 minutes:
#  1. quick conformance of the normalization family, the softmax family and gems.fused scaled softmax;
#  2. gems-perf of the changed kernels at tools/gpu_normfix_shapes.yaml (layer_norm / rms_norm statistics
#     are now corrected two-pass with correctly rounded divisions: they should stay >= 85% of copy bandwidth).
# Reports go to runs/normfix and runs/normfix-perf (copied under $OUT when set).
set -uo pipefail
export GEMS_VENDOR=nvidia
OPS=batch_norm,layer_norm,softmax,safe_softmax,log_softmax,group_norm,rms_norm,scaled_softmax_forward,scaled_softmax_backward
status=0
timeout 130 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --ops "$OPS" \
    --report-dir runs/normfix 2>&1 | grep -v -E "Warning|warn" | tail -60 || status=1
timeout 45 python -m gems.perf --vendor nvidia --suite core --no-progress \
    --ops layer_norm,softmax,scaled_softmax_forward \
    --shapes tools/gpu_normfix_shapes.yaml --out runs/normfix-perf || status=1
if [ -f runs/normfix-perf/perf.csv ]; then
    python - runs/normfix-perf/perf.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(f"{r['op']:<26} {r['dtype']:<9} {r['shape']:<18} {r['status']:<8} speedup {float(r['speedup'] or 0):6.3f}x "
          f"{float(r['gbps'] or 0):7.0f} GB/s {float(r['pct_copy_bw'] or 0):5.1f}% of copy")
PY
fi
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && cp -r runs/normfix runs/normfix-perf "$OUT"/ 2>/dev/null; fi
exit $status
