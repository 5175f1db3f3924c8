set -uo pipefail
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
NEW=sort,topk,quantile,nonzero,unique2,unique_consecutive,convolution,convolution_backward,conv_depthwise2d,flash_attention_forward,scaled_dot_product_attention,scaled_softmax_forward,scaled_softmax_backward
FIX=batch_norm,layer_norm,softmax,safe_softmax,log_softmax,group_norm,rms_norm,cummax,cummin,all,amax,amin,aminmax,any,argmax,argmin,count_nonzero,linalg_vector_norm,max,mean,min,prod,std,sum,var,var_mean,addmm,addmv,addr,baddbmm,bmm,diag,diag_embed,diagonal_backward,dot,grouped_mm,mm,mv,trace,tril,vdot
timeout 290 python -m pytest conformance --vendor nvidia --quick -n 16 -v -p no:randomly -rf --ops $NEW,$FIX --report-dir runs/mid-conf > $OUT/conf.log 2>&1
echo "conformance: $(grep -c ' PASSED ' $OUT/conf.log) passed, $(grep -c ' FAILED ' $OUT/conf.log) failed"; tail -3 $OUT/conf.log
timeout 120 python -m gems.perf --vendor nvidia --suite core --no-progress --ops sum,mean,amax,argmax,var_mean,sort,topk,scaled_dot_product_attention --shapes tools/gpu_mid.yaml --out runs/mid-perf1 2>&1 | tail -2
timeout 150 python -m gems.perf --vendor nvidia --suite core --no-progress --ops convolution,mm,bmm --shapes tools/gpu_mid.yaml --out runs/mid-perf2 2>&1 | tail -2
tar czf $OUT/runs-mid.tgz runs
