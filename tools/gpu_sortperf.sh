#!/usr/bin/env bash
# GPU check of issue #15 (sort/topk speed, branch "sortperf"). Run from the repository root on an H100;
# logs under $OUT if set, else runs/.
#  1. in parallel, untimed: the quick conformance of sort, topk and quantile (-n 8), and the bench's cases
#     compiled into Triton's cache by 6 processes (tools/gpu_sortperf_bench.py --warm);
#  2. then alone on the GPU: tools/gpu_sortperf_bench.py, ATen against gems end to end (sort and topk k=64
#     of 4096x1024 fp16/bf16/fp32, topk k=8 fp16, sort of 65536x64 fp16) and the tile kernel at 1, 2 and 4
#     warps per row, each checked against ATen's stable sort (see the bench's docstring for the rows).
set -uo pipefail
export GEMS_VENDOR=nvidia
DEST=${OUT:-runs}
mkdir -p "$DEST"
python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line --ops sort,topk,quantile \
    --report-dir "$DEST/sortperf" > "$DEST/sortperf-conformance.txt" 2>&1 &
conformance=$!
python tools/gpu_sortperf_bench.py --warm 6 2>&1 | tail -3
wait "$conformance" || status=$?
echo "--- conformance (sort, topk, quantile; quick):"
tail -12 "$DEST/sortperf-conformance.txt"
echo "--- bench:"
python tools/gpu_sortperf_bench.py --budget-s 45 2>&1 | tee "$DEST/sortperf-bench.txt" || status=$?
exit "${status:-0}"
