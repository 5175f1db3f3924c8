#!/usr/bin/env bash
# The whole quick conformance suite on an NVIDIA machine in K shards (one device-tool call each, each well under
# the tool's 10-minute limit), the core perf targets, and the models: joined locally with `gems-gate merge`
# and promoted.
#
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_final.sh shard I K     # operators I, I+K, I+2K... (I from 0);
#                                                                     # WORKERS pytest workers (16), SHARD_S limit (540)
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_final.sh perf [ops]    # gems-perf core with tools/gpu_final.yaml
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_final.sh small [ops]   # its small cases, on every GPU at once
# On 4 H200s the whole suite fits one command: WORKERS=54 SHARD_S=420 ... shard 0 1 (301 s at 8203530, its cells
# ordered by reports/nvidia/durations.json).
set -uo pipefail
OUT=${OUT:-/tmp/gems-out}
mkdir -p "$OUT" runs
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
# The editable install needs setuptools >= 77 (pyproject's SPDX license); where the image's is older, the
# scripts below still import gems from the repository root.
pip install -q --no-deps --no-build-isolation -e . > /tmp/gems-pip.log 2>&1 \
    || echo "editable install failed ($(pip show setuptools 2>/dev/null | grep ^Version)): gems from PYTHONPATH"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python -c "import torch, triton; from gems.report import environment; print(torch.__version__, triton.__version__, \
torch.cuda.get_device_name(), environment.source_commit())"
case "$1" in
  shard)
    # Round robin over the sorted operators (and the model cases), so that each shard gets a share of every
    # family: computed from the registry, so that a new operator cannot be left out.
    OPS=$(python -c "import gems.ops, gems.models.conformance as m; names = sorted(gems.ops.names()) + m.names(); \
print(','.join(names[$2::$3]))")
    name=nvidia-shard$2of$3
    # --time-limit stops starting cases 40 s before the backstop, so the shard's report is written even when it
    # runs long (its note says how many cases were not started: re-run those operators as another shard)
    limit=${SHARD_S:-540}
    timeout -k 30 "$limit" python -m pytest conformance --vendor nvidia --quick -n "${WORKERS:-16}" -v -p no:randomly -rf --tb=line \
        --ops "$OPS" --time-limit $((limit - 40)) --report-dir "runs/$name" > "$OUT/$name.log" 2>&1
    echo "$name: $(grep -c ' PASSED ' "$OUT/$name.log") passed, $(grep -c ' FAILED ' "$OUT/$name.log") failed; \
$(tail -1 "$OUT/$name.log")"
    grep -h "^FAILED" "$OUT/$name.log" | cut -c1-250 | head -30
    tar czf "$OUT/runs-$name.tgz" "runs/$name" ;;
  perf)
    timeout 560 python -m gems.perf --vendor nvidia --suite core --no-progress --shapes tools/gpu_final.yaml \
        ${2:+--ops "$2"} --out runs/nvidia-perf 2>&1 | tail -4
    tar czf "$OUT/runs-perf.tgz" runs/nvidia-perf ;;
  small)
    # Per-call time of every operator's small cases (#28's target), on all of the machine's GPUs at once: about
    # 300 s on nvidia-h200-x2 for the whole suite (550 s on one H200)
    devices=$(python -c "import torch; print(','.join(map(str, range(torch.cuda.device_count()))))")
    timeout 570 python -m gems.perf --vendor nvidia --suite core --size small --no-progress --shapes tools/gpu_final.yaml \
        --devices "$devices" --time-limit 540 ${2:+--ops "$2"} --out runs/nvidia-small 2>&1 | tail -4
    tar czf "$OUT/runs-small.tgz" runs/nvidia-small ;;
  *) echo "usage: bash tools/gpu_final.sh shard I K | perf [ops] | small [ops]" >&2; exit 2 ;;
esac
