#!/usr/bin/env bash
# GPU check of issue #15 (sort/topk speed, branch "sortperf"): tools/gpu_sortperf_bench.py first (ATen against
# gems end to end at 4096x1024 fp16/bf16/fp32 for sort and topk k=64/k=8, then the fp16 kernel variants to
# choose between, each checked against ATen's stable sort), then the quick conformance of sort, topk and
# quantile. Run from the repository root on an H100 (GEMS_VENDOR=nvidia); results under $OUT if set, else runs/.
set -uo pipefail
export GEMS_VENDOR=nvidia
DEST=${OUT:-runs}
mkdir -p "$DEST"
python tools/gpu_sortperf_bench.py --budget-s 55 2>&1 | tee "$DEST/sortperf-bench.txt" || status=$?
python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line --ops sort,topk,quantile \
    --report-dir "$DEST/sortperf" 2>&1 | tail -15 || status=$?
exit "${status:-0}"
