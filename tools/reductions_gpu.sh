#!/usr/bin/env bash
# Check and time the reduction operators (gems/ops/reduction, issue 15's reductions part) on an NVIDIA GPU:
# full-mode conformance, then the core perf suite in fp16/bf16 (the copy ceiling is measured in the same
# run: pct_copy_bw in perf.csv; the issue's targets at 32768x4096 are >= 90% of it over the last dim for
# sum/mean/amax/argmax/var_mean and >= 75% for the middle-dim shape [32, 4096, 1024]).
# Usage: tools/reductions_gpu.sh [extra pytest args]   (from the repository root, venv active)
set -euo pipefail
OPS=sum,mean,prod,amax,amin,aminmax,max,min,argmax,argmin,all,any,count_nonzero,var,std,var_mean,linalg_vector_norm,equal,is_all_true,isin,bincount
PERF_OPS=sum,mean,amax,argmax,var_mean,prod,amin,aminmax,max,argmin,all,any,count_nonzero,var,std,linalg_vector_norm
OUT=${OUT:-runs/nvidia/reductions}
python -m pytest conformance --vendor nvidia --ops "$OPS" -n "${JOBS:-8}" -q -p no:randomly --report-dir "$OUT/conformance" "$@"
python -m gems.perf --vendor nvidia --ops "$PERF_OPS" --dtypes float16,bfloat16 --out "$OUT/perf"
# The issue's rows: 32768x4096 and the middle-dim shape, with the share of the copy bandwidth.
python - "$OUT/perf/perf.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r.get("shape") in ("32768x4096", "32x4096x1024")]
for r in sorted(rows, key=lambda r: (r["shape"], r["op"], r["dtype"])):
    print(f'{r["op"]:>20} {r["dtype"]:>9} {r["shape"]:>13}  speedup {r.get("speedup")}  '
          f'GB/s {r.get("gbps")}  copy% {r.get("pct_copy_bw")}')
PY
