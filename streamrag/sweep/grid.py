"""Grid files: what a sweep varies, read from TOML and checked for shape.

A grid names a point *kind* (what one point computes), an *input* (the questions), a
*base* (settings shared by every point) and *axes* (what varies)::

    name = "triggers"
    kind = "simulate"                    # simulate | streamable | analyze
    input = "generated:1371:seed=0"      # or table:PATH, data:PATH, demo, PATH
    scenario = "paper_rq3"               # simulate: base scenario (name or TOML path)
    on_incompatible = "skip"             # error (default) | skip

    [base]                               # dotted overrides applied to every point
    "select.population" = "all"

    [axes]                               # the product of all axes, first one outermost
    "latency.L_ms" = [300, 600, 1000]    # a list: one point per value
    "input.delta_wps" = [2.0, 3.0]

    [axes.trigger]                       # a table: one point per labeled variant
    interval_3w = { "trigger.kind" = "interval", "trigger.words" = 3 }
    oracle = { trigger = { kind = "oracle" } }
    stable = { "trigger.kind" = "stable", "trigger.words" = [1, 2, 4] }  # a family

A variant with one list-valued key is a *family*: one variant per value, labeled
``LABEL=VALUE`` (``stable=1``, ``stable=2``, …); the frontier reads the family as the
policy and the key as its knob.

Keys are dotted paths into the kind's settings (see :mod:`streamrag.sweep.point_kinds`);
nested TOML tables and quoted dotted keys mean the same thing. A list-valued axis is a
column of the sweep table named by the path's last part (``L_ms``); a variants axis is
a column named by the axis holding the label. ``input`` may also be a table
``{source = "...", split = 0, limit = 100}``. Relative paths (input, scenario, and the
files settings name: ``latency.profile = "mine.toml"``, ``input.path``) are relative to
the grid file. ``[output]`` holds ``traces`` (keep each point's
``trace.jsonl``, default false) and ``figures`` (default true).

Every problem is a :class:`~streamrag.base.errors.ConfigError` naming the file and the key.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from streamrag.base.config.tomlfile import read_toml_text
from streamrag.base.errors import ConfigError
from streamrag.base.validation import SettingsModel, validated
from streamrag.sweep.inputs import InputSpec, parse_input

PointKindName = Literal["simulate", "streamable", "analyze"]
Scalar = str | int | float | bool


class _Frozen(SettingsModel):
    """Frozen, no unknown key, no boolean for a number (:class:`~streamrag.base.validation.SettingsModel`)."""


class AxisValue(_Frozen):
    """One value of an axis: its label (table column value) and the overrides it sets."""

    label: str
    value: Scalar
    """What the sweep table shows: the value itself, or the variant's label."""
    overrides: tuple[tuple[str, Scalar], ...]
    """``(dotted path, value)`` pairs, in file order."""
    family: str | None = None
    """A variant of a family (one list-valued key): the family's label, else ``None``."""
    knob: str | None = None
    """The family's list-valued key (dotted path), whose value this variant takes."""


class Axis(_Frozen):
    """One dimension of the grid."""

    name: str
    """Column name in the sweep table."""
    path: str | None
    """Dotted settings path of a list axis; ``None`` for a variants axis."""
    values: tuple[AxisValue, ...]


class OutputOptions(_Frozen):
    traces: bool = False
    """Keep each simulate point's ``trace.jsonl`` (≈ 3 kB per question)."""
    figures: bool = True
    """Draw the sweep's figures (``figures/``, :mod:`streamrag.sweep.figures`) once the points
    are done."""


class _InputTable(_Frozen):
    source: str
    """The questions, as ``input`` names them: ``demo``, ``generated:N[:seed=S]``,
    ``table:PATH``, ``data:PATH`` or a path."""
    split: int | Literal["all"] | None = None
    """A data input's CRAG split (0 = validation) or ``"all"``; absent: 0 (the demo set: all);
    a table has none."""
    limit: int | None = Field(default=None, ge=1)
    """At most this many questions (a table's first rows); absent: all."""


class _GridToml(_Frozen):
    """The raw shape of a grid file (before axes are interpreted)."""

    name: str | None = None
    """The sweep's name, recorded in its manifest; absent: the grid file's name without
    ``.toml``."""
    description: str = ""
    """Free text saying what the sweep asks, recorded in its manifest."""
    kind: PointKindName
    """What one point computes: ``simulate`` (a simulation), ``streamable`` (the RQ2 cell
    H ≥ θ·L, from a stabilization table) or ``analyze`` (an analysis of a data input)."""
    input: str | _InputTable
    """The questions every point runs on: ``demo``, ``generated:N[:seed=S]``,
    ``table:PATH``, ``data:PATH``, a path, or a table ``{source, split, limit}``."""
    scenario: str | None = None
    """A simulate grid's base scenario: a built-in name or a TOML path; absent:
    ``paper_rq3``. Other kinds have none."""
    on_incompatible: Literal["error", "skip"] = "error"
    """A point that cannot run on the input (it needs prefix rankings, the input is a table):
    ``error`` stops the sweep before it starts, ``skip`` leaves the point out and says why."""
    base: dict[str, Any] = Field(default_factory=dict)
    """Settings shared by every point, by dotted path (as ``--set`` takes them)."""
    axes: dict[str, Any] = Field(default_factory=dict)
    """What varies: a dotted path → a list (one point per value), or a table of labelled
    variants; the points are the product of the axes, the first outermost."""
    output: OutputOptions = Field(default_factory=OutputOptions)
    """What a sweep keeps beside its table: ``traces`` and ``figures``."""


class Grid(_Frozen):
    """A validated grid file (points are expanded by :func:`streamrag.sweep.points.expand`)."""

    origin: str
    """Where the grid came from (file path or built-in name), for messages."""
    name: str
    description: str
    kind: PointKindName
    input: InputSpec
    scenario: str | None
    on_incompatible: Literal["error", "skip"]
    base: tuple[tuple[str, Scalar], ...]
    axes: tuple[Axis, ...]
    output: OutputOptions
    text: str
    """The grid file's text as read (copied into the run folder for provenance)."""

    @property
    def n_points(self) -> int:
        n = 1
        for axis in self.axes:
            n *= len(axis.values)
        return n


def _leaves(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"a": {"b": 1}, "c.d": 2}`` → ``[("a.b", 1), ("c.d", 2)]`` (file order)."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out += _leaves(value, path)
        else:
            out.append((path, value))
    return out


def _scalar(origin: str, where: str, value: Any) -> Scalar:
    if isinstance(value, str | int | float | bool):
        return value
    kind = "a list" if isinstance(value, list) else type(value).__name__
    raise ConfigError(f"grid {origin}: {where}: expected a number, string or boolean, got {kind}")


def _label(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _list_axis(origin: str, path: str, values: list[Any]) -> Axis:
    where = f"axes.{path}"
    if not values:
        raise ConfigError(f"grid {origin}: {where}: the list of values is empty")
    items = [_scalar(origin, f"{where}[{i}]", v) for i, v in enumerate(values)]
    seen: set[Any] = set()
    for v in items:
        # 3 and 3.0 are the same setting (and the same point key): reject both.
        marker = (type(v) is bool, float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v)
        if marker in seen:
            raise ConfigError(f"grid {origin}: {where}: value {v!r} is listed twice")
        seen.add(marker)
    name = path.rsplit(".", 1)[-1]
    return Axis(name=name, path=path, values=tuple(AxisValue(label=_label(v), value=v, overrides=((path, v),)) for v in items))


def _variants_axis(origin: str, name: str, table: dict[str, Any]) -> Axis:
    if not table:
        raise ConfigError(f"grid {origin}: axes.{name}: the table of variants is empty")
    values = []
    for label, body in table.items():
        where = f"axes.{name}.{label}"
        if not isinstance(body, dict):
            raise ConfigError(
                f'grid {origin}: {where}: a variant is a table of overrides, e.g. {label} = {{ "trigger.kind" = "oracle" }}'
            )
        leaves = _leaves(body)
        knobs = [path for path, v in leaves if isinstance(v, list)]
        if len(knobs) > 1:
            raise ConfigError(f"grid {origin}: {where}: a family varies one key; {', '.join(knobs)} are all lists")
        if not knobs:
            overrides = tuple((path, _scalar(origin, f"{where}.{path}", v)) for path, v in leaves)
            values.append(AxisValue(label=label, value=label, overrides=overrides))
            continue
        # A family: one variant per value of its list-valued key, labeled LABEL=VALUE.
        knob = knobs[0]
        for variant in _list_axis(origin, f"{name}.{label}.{knob}", dict(leaves)[knob]).values:
            value = variant.value
            overrides = tuple((path, value if path == knob else _scalar(origin, f"{where}.{path}", v)) for path, v in leaves)
            tag = f"{label}={variant.label}"
            values.append(AxisValue(label=tag, value=tag, overrides=overrides, family=label, knob=knob))
    labels = [v.label for v in values]
    for i, tag in enumerate(labels):
        if tag in labels[:i]:
            raise ConfigError(f"grid {origin}: axes.{name}: two variants are both labeled {tag!r}")
    return Axis(name=name, path=None, values=tuple(values))


def parse_axes(origin: str, axes: dict[str, Any]) -> tuple[Axis, ...]:
    """Interpret ``[axes]``: lists are value axes, tables of tables are variants axes.

    A table whose leaves are all lists is a nesting of value axes (TOML's unquoted dotted
    key ``latency.L_ms = [...]``).
    """
    out: list[Axis] = []
    for name, value in axes.items():
        if isinstance(value, list):
            out.append(_list_axis(origin, name, value))
        elif isinstance(value, dict):
            leaves = _leaves(value)
            lists = [isinstance(v, list) for _, v in leaves]
            if leaves and all(lists):
                out += [_list_axis(origin, f"{name}.{path}", v) for path, v in leaves]
            elif any(lists) and not all(isinstance(body, dict) for body in value.values()):
                raise ConfigError(
                    f"grid {origin}: axes.{name}: mixes lists and variants; write value axes as "
                    f'"{name}.KEY" = [...] and variants as [axes.{name}] LABEL = {{ ... }}'
                )
            else:
                out.append(_variants_axis(origin, name, value))
        else:
            raise ConfigError(
                f"grid {origin}: axes.{name}: expected a list of values or a table of labeled variants, got {value!r}"
            )
    names = [a.name for a in out]
    for i, axis in enumerate(out):
        if axis.name in names[:i]:
            raise ConfigError(f"grid {origin}: axes: two axes are both named {axis.name!r} (a sweep-table column)")
    return tuple(out)


def grid_from_tables(
    raw: dict[str, Any],
    *,
    text: str,
    origin: str,
    base_dir: Path,
    input_override: str | None = None,
    name: str | None = None,
) -> Grid:
    """Shape-check a grid file's tables (see the module docstring); ``text`` is the
    file's text, kept for the sweep's manifest."""
    model = validated(_GridToml, raw, f"grid {origin}")
    base = tuple((p, _scalar(origin, f"base.{p}", v)) for p, v in _leaves(model.base))
    spec = model.input if isinstance(model.input, _InputTable) else _InputTable(source=model.input)
    if input_override is not None:
        spec = _InputTable(source=input_override, split=spec.split, limit=spec.limit)
        base_for_input = Path.cwd()
    else:
        base_for_input = base_dir
    try:
        input_spec = parse_input(spec.source, base_dir=base_for_input, split=spec.split, limit=spec.limit)
    except ConfigError as exc:
        raise ConfigError(f"grid {origin}: input: {exc}") from None
    scenario = model.scenario
    axes = parse_axes(origin, model.axes)
    if model.kind == "simulate":
        scenario = scenario or "paper_rq3"
        if scenario.endswith(".toml") and not Path(scenario).is_absolute():
            scenario = str((base_dir / scenario).resolve())
        base, axes = _anchor_files(base, axes, base_dir)
    elif scenario is not None:
        raise ConfigError(f"grid {origin}: scenario: only simulate grids have a scenario (this grid's kind is {model.kind!r})")
    return Grid(
        origin=origin,
        name=model.name or name or Path(origin).stem,
        description=model.description,
        kind=model.kind,
        input=input_spec,
        scenario=scenario,
        on_incompatible=model.on_incompatible,
        base=base,
        axes=axes,
        output=model.output,
        text=text,
    )


def _anchor_files(
    base: tuple[tuple[str, Scalar], ...], axes: tuple[Axis, ...], base_dir: Path
) -> tuple[tuple[tuple[str, Scalar], ...], tuple[Axis, ...]]:
    """Settings naming files (a profile file, word timings) made absolute against the
    grid's folder; labels keep the text as written."""
    from streamrag.simulator.file_settings import anchor_file_setting

    def pairs(items: tuple[tuple[str, Scalar], ...]) -> tuple[tuple[str, Scalar], ...]:
        return tuple((key, anchor_file_setting(key, value, base_dir)) for key, value in items)

    axes = tuple(
        axis.model_copy(update={"values": tuple(v.model_copy(update={"overrides": pairs(v.overrides)}) for v in axis.values)})
        for axis in axes
    )
    return pairs(base), axes


def list_grids() -> list[str]:
    """Names of the built-in grids (``sim/grids/*.toml``)."""
    from streamrag.base.config.bundled import grids_dir, toml_names

    return toml_names(grids_dir())


def load_grid(name_or_path: str | os.PathLike[str], *, input: str | None = None, sets: Sequence[str] = ()) -> Grid:
    """Read a grid file, or a built-in grid by name (``paper_rq2``, ``triggers``, …).

    ``input`` replaces the grid's input source (a path relative to the current folder);
    ``sets`` (``--set key=value``) go into its ``[base]``, over the file's own (:func:`with_sets`).
    """
    from streamrag.base.config.bundled import grids_dir

    text_path = str(name_or_path)
    path = Path(text_path)
    if text_path.endswith(".toml") or path.is_file():
        text, raw = with_sets(*read_toml_text(text_path, "grid"), sets, text_path)
        return grid_from_tables(raw, text=text, origin=text_path, base_dir=path.resolve().parent, input_override=input)
    resource = grids_dir() / f"{text_path}.toml"
    if not resource.is_file():
        known = ", ".join(list_grids()) or "none"
        raise ConfigError(f"grid {text_path!r}: neither a TOML file nor a built-in grid (built-in: {known})")
    # Built-in grids name only built-in scenarios and generated or demo inputs, so the
    # folder relative paths would resolve against does not matter.
    text, raw = with_sets(*read_toml_text(resource, "grid"), sets, text_path)
    return grid_from_tables(raw, text=text, origin=text_path, base_dir=Path.cwd(), input_override=input, name=text_path)


def with_sets(text: str, raw: dict[str, Any], sets: Sequence[str], origin: str) -> tuple[str, dict[str, Any]]:
    """A grid's text and tables with ``sets`` (``key=value``, as ``--set`` parses them) in
    its ``[base]``, each winning over the file's value of that key; a file a setting names
    is relative to the current folder (stored absolute). The text is rewritten to load
    back to the same tables (its comments dropped), so the run folder's ``grid.toml``
    reruns the run. No ``sets``: both unchanged."""
    if not sets:
        return text, raw
    from streamrag.base.config.overrides import parse_override
    from streamrag.base.config.tomlfile import dumps_toml
    from streamrag.simulator.file_settings import anchor_file_setting

    if not isinstance(raw.get("base", {}), dict):
        return text, raw  # the grid's own check names the problem
    base = dict(_leaves(raw.get("base", {})))
    for item in sets:
        key, value = parse_override(item)
        base[key] = anchor_file_setting(key, value, Path.cwd())
    tables = {**raw, "base": base}
    header = f"# {origin}, with these settings in [base]:\n" + "".join(f"#   --set {s}\n" for s in sets)
    return header + dumps_toml(tables), tables
