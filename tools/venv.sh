#!/usr/bin/env bash
# Make .venv in the repository root with what gems needs on a CPU machine (the interpreter vendor), once:
# a venv that already imports gems, torch and triton is left as it is. README's two commands start here.
#
#   bash tools/venv.sh                   .venv: triton 3.6.0, the GPU machine's version
#   bash tools/venv.sh --triton-latest   .venv-triton-latest: the newest triton on the package index
#                                        (CI's second pass, issue #17); everything else the same
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv
triton="triton==3.6.0"
numpy="numpy<2.4"  # triton 3.6's interpreter breaks with numpy >= 2.4 (3.7.1 and later are fixed)
case "${1:-}" in
    "") ;;
    --triton-latest) venv=.venv-triton-latest triton="triton" numpy="numpy" ;;
    *) echo "tools/venv.sh: unknown option '$1' (known: --triton-latest)" >&2; exit 2 ;;
esac
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import gems, torch, triton, pytest, xdist, transformers, coverage" 2>/dev/null \
    && [ -x "$venv/bin/ruff" ]; then
    exit 0
fi
# pip byte-compiles every module it installs (46 s of CPU for this venv on 2 cores, of which a run imports about
# a tenth). Where Python may write bytecode, it does so at a module's first import instead; where the
# environment forbids that (PYTHONDONTWRITEBYTECODE), pip's compiled files are the only ones there will be.
compile=--compile
if [ -z "${PYTHONDONTWRITEBYTECODE:-}" ]; then compile=--no-compile; fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# CPU wheels (the CPU torch wheel declares no triton requirement, so any triton installs beside it);
# triton in a step of its own, so that a torch that pins one cannot veto the newest.
"$venv/bin/python" -m pip install -q "$compile" "torch==2.13.0" "$numpy"
"$venv/bin/python" -m pip install -q "$compile" --upgrade "$triton"
"$venv/bin/python" -m pip install -q "$compile" -e ".[test,models]"
