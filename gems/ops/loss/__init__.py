"""Loss functions: ``gems/ops/loss/<operator>.py``, each declaring SPECS."""
