#!/usr/bin/env bash
# One device-tool call on an NVIDIA machine (torch and triton preinstalled): install gems, then one phase.
# Results go to $OUT (the device tool brings them back) as a tarball of runs/ plus the phase's log.
#
#   GEMS_SOURCE_COMMIT=<commit> bash tools/gpu_session.sh PHASE ...   (the commit the copy was made from)
#   bash tools/gpu_session.sh check        # native layer check, per-call breakdown
#   bash tools/gpu_session.sh quick OPS... # quick conformance, one pytest run per comma-separated group
#   bash tools/gpu_session.sh full OPS...  # full-mode conformance, likewise
#   bash tools/gpu_session.sh perf OPS...  # gems-perf core suite, one run per group
#
# Each step has a timeout inside the device tool's 10-minute limit, so what finished still comes back.
set -uo pipefail
phase=${1:?phase: check, quick, full or perf}
shift
OUT=${OUT:-/tmp/gems-out}
mkdir -p "$OUT" runs
log="$OUT/$phase.log"
exec > >(tee "$log") 2>&1
export PYTHONUNBUFFERED=1 GEMS_VENDOR=nvidia
start=$(date +%s)
left() { echo $(( ${1} - ($(date +%s) - start) )); }

pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || pip install --no-deps --no-build-isolation -e .
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
# The device receives a copy of the working tree whose .git may be an older one: the caller names the
# commit (GEMS_SOURCE_COMMIT=$(git rev-parse --short=10 HEAD), with a clean tree), and reports record it.
python -c "import torch, triton; from gems.report import environment; print('torch', torch.__version__, 'triton', triton.__version__, 'commit', environment.source_commit())"

# Conformance of some operators; each group writes its own report dir and junit file, so a group that
# finished comes back even when a later one runs out of time.
conformance_groups() {
  local mode=$1; shift
  local i=0
  local budget=${GROUP_SECONDS:-170}
  for group in "$@"; do
    i=$((i + 1))
    # -v streams each case's verdict, so a group stopped by its timeout still names what failed.
    timeout "$budget" python -m pytest conformance --vendor nvidia $mode -n 16 -v -p no:randomly -rf \
        --ops "$group" --report-dir "runs/nvidia-conf$i" > "$OUT/conf-$i.log" 2>&1
    echo "group $i: $(grep -c ' PASSED ' "$OUT/conf-$i.log") passed, $(grep -c ' FAILED ' "$OUT/conf-$i.log") failed"
  done
}

case "$phase" in
  check)
    timeout 120 python -m tools.native_check
    timeout 60 python -m tools.percall_breakdown
    ;;
  quick)
    conformance_groups --quick "$@"
    ;;
  full)
    conformance_groups "" "$@"
    ;;
  perf)
    i=0
    for group in "$@"; do
      i=$((i + 1))
      timeout "$(left ${PERF_SECONDS:-575})" python -m gems.perf --vendor nvidia --suite core --no-progress --ops "$group" ${SHAPES:+--shapes "$SHAPES"} \
          --out "runs/nvidia-perf$i" | tail -5
    done
    ;;
esac
tar czf "$OUT/runs-$phase.tgz" runs
ls -la "$OUT"
