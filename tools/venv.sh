#!/usr/bin/env bash
# Make .venv in the repository root with what gems needs on a CPU machine (the interpreter vendor), once:
# a venv that already imports gems, torch and triton is left as it is. README's two commands start here.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ] && .venv/bin/python -c "import gems, torch, triton, pytest, xdist" 2>/dev/null; then
    exit 0
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# CPU wheels, pinned to match the GPU machine's triton; numpy < 2.4 for triton 3.6's interpreter.
.venv/bin/python -m pip install -q "torch==2.13.0" "triton==3.6.0" "numpy<2.4"
.venv/bin/python -m pip install -q -e ".[test]"
