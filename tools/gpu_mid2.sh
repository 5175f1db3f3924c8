# Second mid-session check: the failures' messages and the operators the first call did not reach.
set -uo pipefail
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
timeout 100 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=short \
    --ops nonzero,unique2,unique_consecutive,sort --dtypes float16,bfloat16 --report-dir runs/mid2-a > $OUT/conf-a.log 2>&1
tail -40 $OUT/conf-a.log | cut -c1-400
timeout 330 python -m pytest conformance --vendor nvidia --quick -n 16 -v -p no:randomly -rf --tb=short \
    --ops flash_attention_forward,scaled_dot_product_attention,scaled_softmax_forward,scaled_softmax_backward,convolution,convolution_backward,conv_depthwise2d,addmm,addmv,addr,baddbmm,bmm,diag,diag_embed,diagonal_backward,dot,grouped_mm,mm,mv,trace,tril,vdot,quantile \
    --report-dir runs/mid2-b > $OUT/conf-b.log 2>&1
echo "b: $(grep -c ' PASSED ' $OUT/conf-b.log) passed, $(grep -c ' FAILED ' $OUT/conf-b.log) failed"
grep -E "^FAILED" $OUT/conf-b.log | cut -c1-300 | head -40
tar czf $OUT/runs-mid2.tgz runs
