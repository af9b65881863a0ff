"""Dotted overrides of nested settings: the one rule behind ``--set`` and sweep points.

An override is ``(dotted path, value)``: ``("trigger.words", 3)``. ``simulate --set``,
every sweep point (the grid's ``[base]``, then one group per axis), and the load and live
scenarios all apply them with :func:`apply_overrides`, so one setting means the same
thing everywhere.

The rule
--------
Overrides come in *groups* applied in order (``--set`` flags form one group; a sweep
point has its base, then one group per axis). Within a group, ``kind`` paths apply first,
then the rest in the order given.

- Setting a section's ``kind`` to a **different** kind resets the section: the new kind
  starts from its own defaults, then takes the group's other overrides
  (``trigger.kind=oracle`` does not inherit ``words = 3``).
- Setting ``kind`` to the kind the section **already has** changes nothing
  (``--set trigger.kind=interval`` on an interval trigger keeps its ``words``).
- Fields declared *exclusive* (``exclusive``, e.g. the interval trigger's ``words`` and
  ``seconds``: exactly one may be set) replace each other: setting ``trigger.seconds``
  drops an inherited ``trigger.words``.
- Fields declared *shadowing* (``shadows``) take precedence over others in the tables
  the overrides start from, so an override of the weaker one would be silently ignored:
  ``latency.L_ms`` (a constant) wins over the stage ``L`` of ``latency.profile`` and of
  ``latency.stages.L``. An override that *changes* a shadowed field (``--set
  latency.profile=mine.toml`` on a scenario with ``L_ms = 600``) therefore drops the
  fields that shadow it from the starting tables (the scenario's ``L_ms``), so it takes
  effect. What the overrides set themselves is never dropped: among overrides the
  section's own precedence holds (``--set latency.profile=mine.toml --set
  latency.L_ms=1000`` simulates L = 1000 ms in any order and in any groups). Setting the
  value the tables already have changes nothing, as for ``kind``.

Values given as text (``--set key=value``) are parsed as TOML scalars (``3``, ``0.5``,
``true``, ``"text"``); a bare word is taken as a string.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from streamrag.base.errors import ConfigError

Override = tuple[str, Any]
"""``(dotted path, value)``."""

Exclusive = Mapping[str, Iterable[frozenset[str]]]
"""Section path → sets of field names of which at most one may be set."""

Shadows = Mapping[str, Mapping[str, Iterable[str]]]
"""Section path → {field path → the field paths that win over it}, relative to the
section: ``{"latency": {"profile": ("L_ms", …), "stages.L": ("L_ms",)}}``."""

_ABSENT = object()


def parse_override(item: str) -> Override:
    """``"a.b=3"`` → ``("a.b", 3)``; the value is a TOML scalar or a bare string."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {item!r}: expected key=value with a dotted key, e.g. latency.L_ms=1000")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    except RecursionError:
        raise ConfigError(f"--set {key}: the value nests arrays or tables too deeply") from None
    return key, value


def _section(data: dict[str, Any], parts: Sequence[str], path: str) -> dict[str, Any]:
    node = data
    for i, part in enumerate(parts):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError(f"{path}: {'.'.join(parts[: i + 1])} is a value, not a table")
        node = child
    return node


def _get(data: Mapping[str, Any], parts: Sequence[str]) -> Any:
    node: Any = data
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _related(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """One path is the other or lies inside it."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _drop_untouched(out: dict[str, Any], parts: tuple[str, ...], touched: set[tuple[str, ...]]) -> None:
    """Remove ``parts`` from ``out`` except what an override set (and its tables)."""
    parent = _get(out, parts[:-1])
    if not isinstance(parent, dict) or parts[-1] not in parent:
        return
    hits = [t for t in touched if _related(t, parts)]
    if not hits:
        del parent[parts[-1]]
    elif isinstance(parent[parts[-1]], dict) and all(len(t) > len(parts) for t in hits):
        for child in list(parent[parts[-1]]):
            _drop_untouched(out, (*parts, child), touched)


def _unshadow(data: Mapping[str, Any], out: dict[str, Any], touched: set[tuple[str, ...]], shadows: Shadows) -> None:
    for section, fields in shadows.items():
        base = tuple(section.split("."))
        for field, winners in fields.items():
            path = (*base, *field.split("."))
            if any(_related(t, path) and len(t) >= len(path) for t in touched) and _get(out, path) != _get(data, path):
                for winner in winners:
                    _drop_untouched(out, (*base, *winner.split(".")), touched)


def apply_overrides(
    data: Mapping[str, Any],
    groups: Iterable[Iterable[Override]],
    *,
    exclusive: Exclusive | None = None,
    shadows: Shadows | None = None,
) -> dict[str, Any]:
    """A deep copy of ``data`` with the override groups applied by the module's rule."""
    out = copy.deepcopy(dict(data))
    exclusive = exclusive or {}
    touched: set[tuple[str, ...]] = set()
    for group in groups:
        for path, value in sorted(group, key=lambda kv: kv[0].rsplit(".", 1)[-1] != "kind"):
            parts = path.split(".")
            touched.add(tuple(parts))
            section_path, last = parts[:-1], parts[-1]
            node = _section(out, section_path, path)
            if last == "kind" and "kind" in node and node["kind"] != value:
                node.clear()
            for fields in exclusive.get(".".join(section_path), ()):
                if last in fields:
                    for other in fields - {last}:
                        node.pop(other, None)
            node[last] = value
    if shadows:
        _unshadow(data, out, touched, shadows)
    return out


def nest(pairs: Iterable[Override]) -> dict[str, Any]:
    """``[("a.b", 1)]`` → ``{"a": {"b": 1}}``."""
    return apply_overrides({}, [pairs])
