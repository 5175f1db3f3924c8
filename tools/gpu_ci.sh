#!/usr/bin/env bash
# The ci helper's GPU check (H100, GEMS_VENDOR=nvidia, about 2 minutes): issue #13 (cummax/cummin gradients
# ran ATen's nondeterministic scatter_add: the warm-vs-cold check now judges those against the oracle) and
# the launcher guard (the direct C launch still taken with triton 3.6, the fallback with any other layout).
set -euo pipefail
out="${OUT:-runs}"
python -c "import triton; from gems.runtime import launch; from triton.backends.nvidia.driver import CudaLauncher; \
print('triton', triton.__version__, 'direct C launch:', launch._forwards_to_c_launch(CudaLauncher))"
python -m pytest tests/test_launcher_versions.py -q -p no:randomly
python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --ops cummax,cummin,cumsum,abs,add,softmax \
    --report-dir "$out/ci"
