#!/usr/bin/env bash
# Depthwise convolutions on the H100 (issue #16: direct kernels, gems/ops/conv/depthwise.py). From the repository
# root (gems installed):   bash tools/gpu_dwconv.sh     (about 90 s with warm caches; each step time-boxed)
#
# 1. in parallel: the native layer's build and 6 processes compiling tools/dwconv_bench.py's cases and tile
#    variants into Triton's disk cache (GEMS_NATIVE=0); once built, quick conformance of the conv ops (-n 8).
# 2. tools/dwconv_bench.py: device time (L2 flushed) ATen vs gems, forward and backward, MobileNetV2-like
#    depthwise 3x3 shapes at batch 32, then the tile variants (the constants of depthwise.py).
# 3. tools/conv_host.py: host time and native replay of the conv calls (fails if a warm call ran in Python).
# Results: runs/dwconv; copied under $OUT when it is set.
set -uo pipefail
export GEMS_VENDOR=nvidia
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
OPS=convolution,convolution_backward,conv_depthwise2d
D=runs/dwconv
start=$SECONDS
stamp() { echo "[$1 t=$((SECONDS - start))s]"; }
rm -rf "$D" && mkdir -p "$D"

timeout 120 python -c "import torch, gems; from gems import native; native.load('cuda'); print('native', native.status())" \
    > "$D/native.log" 2>&1 &
build=$!
pids=()
for i in 0 1 2 3 4 5; do
    GEMS_NATIVE=0 timeout 60 python tools/dwconv_bench.py --warm "$i/6" > "$D/warm-$i.log" 2>&1 &
    pids+=($!)
done
wait "$build"
stamp built
timeout 60 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line \
    --ops "$OPS" --report-dir "$D/conf" > "$D/conf.log" 2>&1 &
confpid=$!
for p in "${pids[@]}"; do wait "$p"; done
stamp warmed
wait "$confpid"
conf=$?
grep -v "Warning\|warn\|^  \|^$" "$D/conf.log" | tail -n 12
stamp "conformance exit $conf"
grep -h "^native\|Error" "$D/native.log" | cut -c1-300
echo "warm: $(cat "$D"/warm-*.log | grep -c '^warm ok') of 6 ok"; grep -h "Error" "$D"/warm-*.log | sort | uniq -c | head -n 3

timeout 45 python -u tools/dwconv_bench.py 2>&1 | grep -v "Warning\|warn(" | tee "$D/bench.log" | cut -c1-300
bench=${PIPESTATUS[0]}
stamp "bench exit $bench"

timeout 35 python -u tools/conv_host.py 2>&1 | grep -v "Warning\|warn(" | tee "$D/host.log" | cut -c1-300
host=${PIPESTATUS[0]}
stamp "conv_host exit $host"

if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/dwconv" && cp -r "$D" "$OUT/dwconv/" 2>/dev/null; fi
exit $(( conf || bench || host ))
