"""Which operators gems registers for a vendor, to find operators that have no conformance cases.

The table is the one ``gems.enable()`` registers (declarations, the vendor's overrides, minus its
unused ops). It is computed in a fresh process: selecting a vendor decides how kernels are defined
for the whole process, and the gate's own process selects none.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

from gems.gate.inputs import GateInputError

_MARK = "gems-registry:"


def registered_operators(vendor: str) -> dict[str, list[str]]:
    """Operator name -> the ATen overloads registered for it. An overload that a vendor override
    registers beyond every declaration is listed under its own name."""
    proc = subprocess.run([sys.executable, "-m", "gems.gate.registry", vendor], capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith(_MARK)]
    if proc.returncode != 0 or not lines:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise GateInputError(f"cannot list the operators gems registers for vendor {vendor!r} "
                             f"(python -m gems.gate.registry {vendor} exited {proc.returncode}):\n{tail}")
    return json.loads(lines[-1][len(_MARK):])


def _table(vendor: str) -> dict[str, list[str]]:
    import gems
    from gems.runtime import selection

    selection.select(vendor, why="the gate's --vendor", explicit=False)  # no device query: listing needs no device
    table = defaultdict(list)
    for overload, (_, _, owner) in gems._implementation_table().items():
        table[owner or overload].append(overload)
    return {op: sorted(overloads) for op, overloads in sorted(table.items())}


def main(argv: list[str]) -> int:
    """``python -m gems.gate.registry VENDOR``: the gate's helper process (prints one marked JSON line)."""
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python -m gems.gate.registry VENDOR\n\nPrints the operators gems registers for VENDOR and their "
              "ATen overloads, as one JSON line after the marker 'gems-registry:' (gems-gate runs it to find "
              "operators that have no conformance cases).", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    from gems.runtime.vendor import VendorError

    try:
        print(_MARK + json.dumps(_table(argv[0])))
    except VendorError as exc:
        print(f"gems.gate.registry: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
