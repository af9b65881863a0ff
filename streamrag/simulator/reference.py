"""The frameworks' reference policies: what a voice framework already does at the end of a
turn (its endpointer, its own speculation), as scenario settings with a source for each.

A reference is a TOML file, built in (``sim/reference/NAME.toml``, :func:`list_references`)
or the user's own::

    description = "..."
    [settings]              # scenario settings by dotted path, as --set takes them
    "endpoint.kind" = "silence"
    "endpoint.silence_ms" = 500
    [sources]               # where each value comes from (every setting but a kind has one)
    "endpoint.silence_ms" = "..."

``--reference NAME`` (``simulate``, ``frontier``, ``advise``) applies its settings before
the command's own ``--set``, which win; a run records them as ``--set`` items, so its
manifest reruns it without the reference file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamrag.base.config.bundled import references_dir, toml_names
from streamrag.base.config.tomlfile import read_toml
from streamrag.base.errors import ConfigError


def list_references() -> list[str]:
    """Names of the built-in reference policies."""
    return toml_names(references_dir())


def _source(name: str) -> Any:
    if name.endswith(".toml") or Path(name).is_file():
        return name
    resource = references_dir() / f"{name}.toml"
    if not resource.is_file():
        raise ConfigError(
            f"--reference {name!r}: neither a TOML file nor a built-in reference (built-in: {', '.join(list_references())})"
        )
    return resource


def read_reference(name: str) -> dict[str, Any]:
    """A reference's tables, checked: a description, its settings (scalars by dotted path)
    and a source for every setting's value (a ``kind`` is the description's)."""
    where = f"--reference {name}"
    tables = read_toml(_source(name), "--reference")
    unknown = sorted(set(tables) - {"description", "settings", "sources"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (expected description, [settings], [sources])")
    if not isinstance(tables.get("description"), str):
        raise ConfigError(f"{where}: description: missing (a sentence saying what the policy is)")
    settings, sources = tables.get("settings"), tables.get("sources", {})
    if not isinstance(settings, dict) or not settings:
        raise ConfigError(f"{where}: [settings]: missing (scenario settings by dotted path)")
    if not isinstance(sources, dict):
        raise ConfigError(f"{where}: [sources]: expected a table of one source per setting")
    for key, value in settings.items():
        if not isinstance(value, bool | int | float | str):
            raise ConfigError(f"{where}: settings.{key}: expected a number, a boolean or a string, got {value!r}")
        if not key.endswith(".kind") and (not isinstance(sources.get(key), str) or not sources[key].strip()):
            raise ConfigError(f"{where}: sources.{key}: missing (where the value {value!r} comes from)")
    return tables


def _toml_value(value: bool | int | float | str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def reference_overrides(name: str | None) -> list[str]:
    """The reference's settings as ``--set`` items (none for ``None``), checked on the
    default scenario so that a bad value is reported naming the reference."""
    if name is None:
        return []
    from streamrag.base.config.overrides import parse_override
    from streamrag.simulator.scenario import scenario_from_dict

    items = [f"{key}={_toml_value(value)}" for key, value in read_reference(name)["settings"].items()]
    try:
        scenario_from_dict({}, [[parse_override(item) for item in items]], origin="default")
    except ConfigError as exc:
        raise ConfigError(f"--reference {name}: {exc}") from None
    return items
