#!/usr/bin/env bash
# Check and time the blas operators (gems/ops/blas/) on an NVIDIA GPU, from the repository root:
#
#     bash tools/blas_gpu_check.sh            # conformance (full mode) + perf (core suite) + tuning cache
#
# 1. conformance of every blas operator in full mode (fp32 without TF32 must meet fp32 tolerances);
# 2. gems-perf, core suite: mm/addmm/bmm at 8192^3 beside cuBLAS in one run (target: >= 0.90x in
#    fp16, bf16 and fp32), the decode shapes (1x4096x4096 ...), mv, dot; the first call of each shape
#    autotunes over the nvidia tune_configs.yaml list (TRITON_PRINT_AUTOTUNING=1 prints the choice);
# 3. a second process runs one tuned shape again: it must print no "Triton autotuning" line, because
#    the first process's result is read from Triton's cache.
set -euo pipefail
OPS=mm,bmm,addmm,baddbmm,mv,addmv,dot,vdot,addr,trace,tril,diag,diag_embed,diagonal_backward,grouped_mm
export GEMS_VENDOR=nvidia
python -m pytest conformance --vendor nvidia --ops "$OPS" -n 4 -q -p no:randomly --report-dir runs/nvidia-blas
TRITON_PRINT_AUTOTUNING=1 python -m gems.perf --vendor nvidia --ops mm,addmm,bmm,baddbmm,mv,addmv,dot \
    --out runs/nvidia-blas 2>&1 | tee runs/nvidia-blas/perf_log.txt
grep -E "^\| *(mm|addmm|bmm) " runs/nvidia-blas/perf_summary.md || true
python - <<'PY'
import subprocess, sys
probe = ("import torch, gems; gems.enable(); a = torch.randn(4096, 4096, device='cuda', dtype=torch.float16); "
         "torch.mm(a, a); torch.cuda.synchronize()")
runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                       env={**__import__("os").environ, "TRITON_PRINT_AUTOTUNING": "1"}) for _ in range(2)]
tuned = [r.stdout.count("Triton autotuning") for r in runs]
print(f"autotuning runs per process (first, second): {tuned}")
sys.exit(0 if tuned[1] == 0 else 1)
PY
