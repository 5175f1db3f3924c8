"""Reading the YAML files of gems (vendor configs, gate settings, perf shapes, tolerance overrides)."""

from __future__ import annotations

from pathlib import Path

import yaml


def read_mapping(path: Path, error: type[Exception], expected: str) -> dict:
    """The mapping in ``path`` ({} for an empty file). Bad YAML, or anything but a mapping, raises
    ``error`` naming the file; ``expected`` says what the mapping holds ("a mapping of setting -> value")."""
    return read_mapping_with_lines(path, error, expected)[0]


def read_mapping_with_lines(path: Path, error: type[Exception], expected: str) -> tuple[dict, dict]:
    """(mapping, lines) as :func:`read_mapping`; ``lines`` gives the 1-based line where each value
    starts, keyed by its path of keys and list indexes: ``lines[("mm",)]``, ``lines[("mm", 0, "META")]``.
    Messages about a value can then name its line."""
    try:
        text = Path(path).read_text()
        raw = yaml.safe_load(text)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from exc
    if raw is None:
        return {}, {}
    if not isinstance(raw, dict):
        raise error(f"{path}: expected {expected}")
    lines: dict = {}
    _collect_lines(node, (), lines)
    return raw, lines


def _collect_lines(node, where: tuple, lines: dict) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            path = (*where, key_node.value)
            lines[path] = key_node.start_mark.line + 1
            _collect_lines(value_node, path, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*where, i)] = item.start_mark.line + 1
            _collect_lines(item, (*where, i), lines)
