#!/usr/bin/env bash
# citime (CI test time) changed no kernel; on the GPU it touched the native layer's recording mode (no
# torch._dynamo wrapper around its __torch_dispatch__) and registration (cached tensor positions). This
# checks that recorded native plans still serve and replay on CUDA, in a quick conformance run of a few
# operators whose calls the native layer records (pointwise, reduction, softmax, sort, GEMM), with xdist
# groups on (the loadgroup fix), and that no process imported torch._dynamo. About a minute on an H100.
set -uo pipefail
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1
timeout 85 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line \
    --ops abs,add,sum,softmax,sort,mm --report-dir runs/citime 2>&1 | tail -4
timeout 60 python - <<'PY'
import sys, torch, gems
gems.enable()
x = torch.randn(1000, device="cuda")
for _ in range(3):  # the second call records a plan, the third replays it
    y = torch.abs(x) + x
torch.cuda.synchronize()
assert torch.equal(y, x.abs() + x)
print("citime: native path ok; torch._dynamo imported:", "torch._dynamo" in sys.modules)
PY
