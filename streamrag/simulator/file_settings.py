"""Settings that name a file: relative to the file that sets them, stored absolute, and
recorded by their content (:mod:`streamrag.simulator.scenario`'s module docstring)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamrag.base.digest import file_sha256
from streamrag.engine.profiles import is_profile_path
from streamrag.pipeline.learned import is_model_path, list_models, model_sha256

FILE_SETTINGS = (
    "latency.profile",
    "input.path",
    "data.asr.path",
    "load.arrivals.path",
    "trigger.model",
    "data.retriever",
    "data.retriever.target",
)
"""Dotted settings whose value may name a file or folder (see :func:`anchor_file_setting`);
a retriever's only in its ``path/to/file.py:Class`` form."""


def file_settings(raw: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``(key, table, field)`` of each :data:`FILE_SETTINGS` key the raw tables set: the
    value is ``table[field]``."""
    for key in FILE_SETTINGS:
        *sections, field = key.split(".")
        table: Any = raw
        for section in sections:
            table = table.get(section) if isinstance(table, dict) else None
        if isinstance(table, dict) and field in table:
            yield key, table, field


def anchor_file_setting(key: str, value: Any, base_dir: Path) -> Any:
    """``value`` with a relative file path made absolute against ``base_dir``, when
    ``key`` names a file (``latency.profile`` only when :func:`is_profile_path`)."""
    if key not in FILE_SETTINGS or not isinstance(value, str) or not value:
        return value
    if key.startswith("data.retriever"):  # path/to/file.py:Class names a file; a kind or a module does not
        file, colon, name = value.rpartition(":")
        if not colon or not file.endswith(".py"):
            return value
        return f"{anchor_file_setting('input.path', file, base_dir)}:{name}"
    if (key == "latency.profile" and not is_profile_path(value)) or (key == "trigger.model" and not is_model_path(value)):
        return value  # a built-in profile's or a shipped model's name
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base_dir / path).resolve())


def file_setting_sha256(key: str, value: Any) -> str | None:
    """The content digest of the file a file setting names (a shipped model's by its
    name too), None when it names none (a built-in profile, a missing file): what a sweep
    key records in place of the path."""
    if not isinstance(value, str) or not value:
        return None
    if key == "trigger.model" and not is_model_path(value):
        return model_sha256(value) if value in list_models() else None
    if key == "latency.profile" and not is_profile_path(value):
        return None
    return file_sha256(value) if Path(value).is_file() else None


def anchor_tables(raw: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """``raw`` (a scenario file's tables) with every file setting anchored at ``base_dir``."""
    for key, table, field in list(file_settings(raw)):
        table[field] = anchor_file_setting(key, table[field], base_dir)
    return raw
