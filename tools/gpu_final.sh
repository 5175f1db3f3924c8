#!/usr/bin/env bash
# The whole quick conformance suite on an NVIDIA machine in two shards (one device-tool call each, under
# its 10-minute limit), then the core perf targets: joined locally with `gems-gate merge` and promoted.
#
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_final.sh 1|2|perf
set -uo pipefail
OUT=${OUT:-/tmp/gems-out}
mkdir -p "$OUT" runs
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
python -c "import torch, triton; from gems.report import environment; print(torch.__version__, triton.__version__, environment.source_commit())"
POINTWISE=abs,add,allclose,bitwise_and,bitwise_not,bitwise_or,clamp,cos,div,eq,erf,exp,floor_divide,ge,gelu,gelu_backward,gt,isclose,isfinite,isinf,isnan,le,lt,masked_fill,maximum,minimum,mul,ne,neg,pow,reciprocal,relu,rsqrt,sigmoid,sigmoid_backward,silu,silu_backward,sin,sub,tanh,tanh_backward,threshold_backward,where,arange,full,full_like,ones,ones_like,zeros,zeros_like,triu
REDUCTION=all,amax,amin,aminmax,any,argmax,argmin,bincount,count_nonzero,cummax,cummin,cumsum,equal,is_all_true,isin,linalg_vector_norm,max,mean,min,prod,std,sum,var,var_mean
REST=addmm,addmv,addr,baddbmm,bmm,diag,diag_embed,diagonal_backward,dot,grouped_mm,mm,mv,trace,tril,vdot,apply_rotary_position_embedding,fused_add_rms_norm,gelu_and_mul,scaled_softmax_backward,scaled_softmax_forward,silu_and_mul,skip_layer_norm,batch_norm,group_norm,layer_norm,log_softmax,rms_norm,safe_softmax,softmax,weight_norm,conv_depthwise2d,convolution,convolution_backward,flash_attention_forward,scaled_dot_product_attention,mse_loss,nll_loss,nll_loss2d,soft_margin_loss,nonzero,unique2,unique_consecutive,quantile,sort,topk
shard() {  # name, seconds, ops
  timeout "$2" python -m pytest conformance --vendor nvidia --quick -n 16 -v -p no:randomly -rf --tb=line \
      --ops "$3" --report-dir "runs/$1" > "$OUT/$1.log" 2>&1
  echo "$1: $(grep -c ' PASSED ' "$OUT/$1.log") passed, $(grep -c ' FAILED ' "$OUT/$1.log") failed; $(tail -1 "$OUT/$1.log")"
}
case "$1" in
  1) shard nvidia-shard1 540 "$POINTWISE,$REDUCTION" ;;
  2) shard nvidia-shard2 540 "$REST" ;;
  perf) timeout 560 python -m gems.perf --vendor nvidia --suite core --no-progress --shapes tools/gpu_final.yaml \
            --out runs/nvidia-perf 2>&1 | tail -4 ;;
esac
grep -h "^FAILED" "$OUT"/*.log 2>/dev/null | cut -c1-250 | head -30
tar czf "$OUT/runs-$1.tgz" runs
