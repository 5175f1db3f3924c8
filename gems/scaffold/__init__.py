"""gems-scaffold: a new vendor backend from vendor_template/ in one command.

    gems-scaffold --vendor acme --base interpreter --device-name cpu
    python -m gems.scaffold --vendor acme --dry-run

See "Adding a backend" in README.md; the API is :func:`plan` (check and render) and :func:`write`.
"""

from gems.scaffold.core import (
    BUILTIN_VENDORS,
    MARKER,
    TEMPLATES,
    Plan,
    ScaffoldError,
    plan,
    scaffold,
    write,
)

__all__ = ["BUILTIN_VENDORS", "MARKER", "TEMPLATES", "Plan", "ScaffoldError", "plan", "scaffold", "write"]
