#!/usr/bin/env bash
# Convolution on the H100 after issue #16 (every conv call replayed by the native layer). From the repository
# root (gems installed):   bash tools/gpu_convperf2.sh     (about 80 s with warm caches; each step time-boxed)
#
# 1. in parallel: the native layer's build (once per dispatch.cpp, which this branch changed: None results)
#    and one process per gems-perf (shape, dtype) that compiles and autotunes the forward into Triton's disk
#    caches (GEMS_NATIVE=0: they do not wait for the build), plus the backward of tools/conv_host.py's shapes.
# 2. quick conformance of the conv operators (-n 8; all must pass).
# 3. gems-perf at tools/gpu_convperf2.yaml (ResNet-50 layers, batch 32, fp16/bf16): ATen / gems / ratio.
# 4. tools/conv_host.py: host us per call and device time, gems (native replay) vs ATen, forward and backward
#    3x3 and depthwise; fails if a warm gems call ran in Python.
# Results: runs/convperf2 (conformance report, gems-perf csv, logs); copied under $OUT when it is set.
set -uo pipefail
export GEMS_VENDOR=nvidia
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the tools import this checkout's gems
OPS=convolution,convolution_backward,conv_depthwise2d
D=runs/convperf2
start=$SECONDS
stamp() { echo "[$1 t=$((SECONDS - start))s]"; }
rm -rf "$D" && mkdir -p "$D"

timeout 240 python -c "import torch, gems; from gems import native; native.load('cuda'); print('native', native.status())" \
    > "$D/native.log" 2>&1 &
build=$!
warm_pids=()
for shape in "64 56 64 3 1" "256 56 64 1 0" "256 14 256 3 1" "128 28 128 3 1" "512 7 512 3 1" bwd; do
    for dt in float16 bfloat16; do
        [ "$shape:$dt" = bwd:bfloat16 ] && continue  # tools/conv_host.py times fp16
        GEMS_NATIVE=0 timeout 60 python - "$shape" "$dt" > "$D/warm-${shape// /_}-$dt.log" 2>&1 <<'PY' &
import sys
import torch
from gems.ops.conv.convolution import convolution
from gems.ops.conv.convolution_backward import convolution_backward
shape, dt = sys.argv[1], getattr(torch, sys.argv[2])
new = lambda *s: torch.randn(*s, device="cuda", dtype=dt)  # noqa: E731
if shape == "bwd":  # tools/conv_host.py's backward cases
    for c, groups in ((64, 1), (256, 256)):
        hw = 56 if groups == 1 else 28
        x, w, dy = new(32, c, hw, hw), new(c, c // groups, 3, 3), new(32, c, hw, hw)
        for _ in range(2):
            convolution_backward(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], groups, [True, True, False])
else:
    c, hw, k, r, p = map(int, shape.split())
    x, w, b = new(32, c, hw, hw), new(k, c, r, r), new(k)
    for _ in range(2):
        convolution(x, w, b, [1, 1], [p, p], [1, 1], False, [0, 0], 1)
torch.cuda.synchronize()
print("warm ok", shape, dt)
PY
        warm_pids+=($!)
    done
done
for p in "${warm_pids[@]}"; do wait "$p"; done
wait "$build"
grep -h "^native\|Error" "$D/native.log" | cut -c1-300
echo "warm: $(cat "$D"/warm-*.log | grep -c '^warm ok') of ${#warm_pids[@]} ok"; grep -h "Error" "$D"/warm-*.log | sort | uniq -c | head -n 3
stamp warmed

timeout 60 python -m pytest conformance --vendor nvidia --quick -n 8 -q -p no:randomly -rf --tb=line \
    --ops "$OPS" --report-dir "$D/conf" 2>&1 | grep -v "Warning\|warn\|^  \|^$" | tail -n 12
conf=${PIPESTATUS[0]}
stamp "conformance exit $conf"

timeout 45 python -m gems.perf --vendor nvidia --suite core --no-progress --ops convolution \
    --shapes tools/gpu_convperf2.yaml --out "$D/perf" > "$D/perf.log" 2>&1
perf=$?
[ "$perf" = 0 ] || tail -n 3 "$D/perf.log" | cut -c1-300
python - "$D/perf/perf.csv" <<'PY'
import csv
import os
import sys
path = sys.argv[1]
for r in csv.DictReader(open(path)) if os.path.exists(path) else []:
    if r["status"] == "ok":
        print(f"gems-perf {r['shape']:30} {r['dtype']:9} aten {float(r['aten_ms']):.4f} ms  gems "
              f"{float(r['gems_ms']):.4f} [{float(r['gems_p20_ms']):.4f}-{float(r['gems_p80_ms']):.4f}]  "
              f"{float(r['speedup']):.2f}x")
    else:
        print(f"gems-perf {r['shape']:30} {r['dtype']:9} {r['status']}")
PY
stamp "gems-perf exit $perf"

timeout 30 python -u tools/conv_host.py 2>&1 | grep -v "Warning\|warn(" | tee "$D/host.log" | cut -c1-300
host=${PIPESTATUS[0]}
stamp "conv_host exit $host"

if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/convperf2" && cp -r "$D" "$OUT/convperf2/" 2>/dev/null; fi
exit $(( conf || perf || host ))
