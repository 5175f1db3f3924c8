"""The one error type of gems.models: a message that names the thing and what to do (gems-perf exits 2)."""


class ModelError(ValueError):
    """A model request that cannot run: unknown preset, unbuildable config, unsupported dtype or device."""
