#!/usr/bin/env bash
# The whole quick conformance suite on an NVIDIA machine in three shards (one device-tool call each, about
# 5-8 minutes on an H100, under the tool's 10-minute limit), then the core perf targets: joined locally
# with `gems-gate merge` and promoted.
#
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_final.sh 1|2|3|perf
set -uo pipefail
OUT=${OUT:-/tmp/gems-out}
mkdir -p "$OUT" runs
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
python -c "import torch, triton; from gems.report import environment; print(torch.__version__, triton.__version__, environment.source_commit())"
POINTWISE=abs,add,allclose,bitwise_and,bitwise_not,bitwise_or,clamp,cos,div,eq,erf,exp,floor_divide,ge,gelu,gelu_backward,gt,isclose,isfinite,isinf,isnan,le,lt,masked_fill,maximum,minimum,mul,ne,neg,pow,reciprocal,relu,rsqrt,sigmoid,sigmoid_backward,silu,silu_backward,sin,sub,tanh,tanh_backward,threshold_backward,where,arange,full,full_like,ones,ones_like,zeros,zeros_like,triu
REDUCTION=all,amax,amin,aminmax,any,argmax,argmin,bincount,count_nonzero,cummax,cummin,cumsum,equal,is_all_true,isin,linalg_vector_norm,max,mean,min,prod,std,sum,var,var_mean
# Every other declared operator (blas, fused, norms, softmax, conv, attention, losses, compaction, sorting...).
REST=$(python -c "import gems.ops; print(','.join(sorted(set(gems.ops.names()) - set('$POINTWISE,$REDUCTION'.split(',')))))")
shard() {  # name, seconds, ops
  timeout "$2" python -m pytest conformance --vendor nvidia --quick -n 16 -v -p no:randomly -rf --tb=line \
      --ops "$3" --report-dir "runs/$1" > "$OUT/$1.log" 2>&1
  echo "$1: $(grep -c ' PASSED ' "$OUT/$1.log") passed, $(grep -c ' FAILED ' "$OUT/$1.log") failed; $(tail -1 "$OUT/$1.log")"
}
case "$1" in
  1) shard nvidia-shard1 540 "$POINTWISE" ;;
  2) shard nvidia-shard2 540 "$REST" ;;
  3) shard nvidia-shard3 540 "$REDUCTION" ;;
  perf) timeout 560 python -m gems.perf --vendor nvidia --suite core --no-progress --shapes tools/gpu_final.yaml \
            --out runs/nvidia-perf 2>&1 | tail -4 ;;
esac
grep -h "^FAILED" "$OUT"/*.log 2>/dev/null | cut -c1-250 | head -30
tar czf "$OUT/runs-$1.tgz" runs
