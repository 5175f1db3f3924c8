#!/usr/bin/env bash
# README's "Adding a backend" worked example for an out-of-tree device, run for real: vendor "acme"
# brings device type "acme" on PrivateUse1, rehearsed on gems' simulated device. It runs in a scratch
# copy of this repository (the scaffold writes into the tree it runs from), so the checkout is untouched.
#   tools/sim_vendor_example.sh [--coverage DIR]
# --coverage DIR: step 2's conformance runs under line and branch coverage, its data added to DIR's
# (python -m gems.testing.coverage --append: CI's report of what the samples reach).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
coverage_dir=""
if [[ $# -gt 0 ]]; then
    [[ $1 == --coverage && $# -eq 2 ]] || { echo "usage: $0 [--coverage DIR]" >&2; exit 2; }
    coverage_dir="$(mkdir -p "$2" && cd "$2" && pwd)"
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/gems-copy"
(cd "$repo" && tar --exclude=__pycache__ --exclude=runs -cf - gems conformance perf vendor_template reports ci \
    pyproject.toml) | tar -xf - -C "$scratch/gems-copy"
cd "$scratch/gems-copy"
export PYTHONPATH="$PWD"
unset GEMS_VENDOR

# 1. Create the vendor: its device is "acme", its operators register under PrivateUse1, and it inherits
#    the simulated device's kernels, configs and load_device() (which registers the device under the
#    vendor's device name; a real vendor imports its torch plugin there instead).
python -m gems.scaffold --vendor acme --base sim --device-name acme --dispatch-key PrivateUse1

# 2. Conformance (the whole quick suite: the gate refuses a run that leaves registered operators
#    untested), then perf, on device "acme" (GEMS_VENDOR too: conftest imports gems.ops before --vendor).
conformance=(-n 2 --dist loadgroup conformance --vendor acme --quick -q -p no:randomly)
if [[ -n $coverage_dir ]]; then
    GEMS_VENDOR=acme python -m gems.testing.coverage --append --out "$coverage_dir" "${conformance[@]}"
else
    GEMS_VENDOR=acme python -m pytest "${conformance[@]}"
fi
# Perf of a few operators, to show the pipeline (the whole quick perf suite takes about 9 minutes of
# interpreter time on 2 cores; its only 2 non-ok cases, skip_layer_norm float16, are a declared device gap:
# no aten-parity rule without ATen). The gate leaves sim's perf ungated: interpreter times say nothing of speed.
GEMS_VENDOR=acme python -m gems.perf --vendor acme --quick --no-progress --ops abs,add,sum,softmax,layer_norm

# 3. The first reviewed run becomes the baseline; the gate then judges later runs against it.
python -m gems.gate promote --vendor acme --candidate runs/acme
python -m gems.gate --vendor acme --candidate runs/acme --baseline reports/acme

# 4. What the device does not compute is refused by name, never run on the CPU behind your back.
GEMS_VENDOR=acme python - <<'PY'
import torch
import gems

gems.enable()
x = torch.ones(3, device="acme")
print("abs on", torch.abs(-x).device, "served by gems:", gems.call_counts()["gems"])
try:
    torch.special.bessel_j0(x)
except NotImplementedError as exc:
    print("refused:", exc)
else:
    raise SystemExit("bessel_j0 ran on device acme although neither gems nor the device serves it")
PY
