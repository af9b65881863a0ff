"""The documentation's reference cannot drift from the code (issue 48).

The pages under ``docs/reference/`` are generated (``scripts/docs_reference.py``); these
tests fail when they are stale, and, read off the code independently of the generator,
when a command, an option, a configuration key, a table column or a public name exists in
the code but not in the reference. ``benchmarks/RESULTS.md`` is checked the same way
against the result records.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import typing
from pathlib import Path
from types import ModuleType, UnionType

import pytest

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def test_the_reference_pages_are_what_the_code_generates() -> None:
    assert _script("docs_reference").main(["--check"]) == 0, "run: python scripts/docs_reference.py"


def _sections(page: str) -> dict[str, str]:
    """A generated page's ``## `name` `` sections, by name."""
    parts = re.split(r"^## `([^`]+)`$", page, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_command_and_option_is_in_the_reference() -> None:
    from streamrag.cli import COMMANDS, build_parser

    sections = _sections(_page("cli.md"))
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS)
    missing = []
    for name, parser in sub.choices.items():
        if name not in sections:
            missing.append(name)
            continue
        shared = ("logging", "figures")
        for group in parser._action_groups:
            for action in group._group_actions:
                for option in action.option_strings:
                    if option.startswith("--") and option != "--help":
                        where = _page("cli.md") if group.title in shared else sections[name]
                        if f"`{option}`" not in where:
                            missing.append(f"{name} {option}")
    assert not missing, f"in the code, not in docs/reference/cli.md: {missing}"


def _keys(model: type, prefix: str = "") -> set[str]:
    """Every dotted key of a pydantic model that holds a value (a section's keys, not the
    section itself), every kind of a union of sections included."""
    from pydantic import BaseModel

    def models(annotation: object) -> list[type]:
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if origin in (typing.Union, UnionType):
            return [m for a in args for m in models(a)]
        if origin is typing.Annotated:
            return models(args[0])
        return [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []

    out: set[str] = set()
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        key = prefix + (field.alias or name)
        sections = models(field.annotation)
        if not sections:
            out.add(key)
        for member in sections:
            out |= _keys(member, key + ".")
    return out


def test_every_configuration_key_is_in_the_reference() -> None:
    from streamrag.advice.situation import Situation
    from streamrag.simulator.scenario import Scenario
    from streamrag.sweep.grid import _GridToml

    page = _page("config.md")
    listed = set(re.findall(r"^\| `([^`]+)` \|", page, flags=re.M))
    keys = _keys(Scenario) | _keys(Situation) | _keys(_GridToml)
    assert "trigger.model" in keys and "load.arrivals.offered_load" in keys  # a kind's keys are walked too
    assert not keys - listed, f"in the code, not in docs/reference/config.md: {sorted(keys - listed)}"
    # Where a scenario key applies is stated for every section (and a key that differs from its section).
    scenario = page.split("## Sweep grid keys")[0]
    sections = re.findall(r"^### `\[(\w+)\]`\n\n(.*)$", scenario, flags=re.M)
    assert {"input", "trigger", "data", "policy", "load"} <= {name for name, _ in sections}
    assert all("Applies to: " in text for _, text in sections)
    assert "| `data.k` |" in scenario and "Applies to: inputs: data, table" in scenario


UNDOCUMENTED_KEYS: dict[str, str] = {}
"""Configuration keys allowed an empty meaning, each with the reason."""


def test_every_configuration_key_has_a_meaning() -> None:
    """A key's meaning is the docstring under its field (or its ``Field(description=...)``);
    a key without one is listed above with a reason, and an exclusion no longer needed fails."""
    rows = [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in _page("config.md").splitlines()
        if re.match(r"^\| `[^`]+` \|", line)
    ]
    assert rows and all(len(row) == 5 for row in rows)  # key, type, default, unit, meaning
    empty = {row[0].strip("`") for row in rows if not row[4]}
    assert not empty - set(UNDOCUMENTED_KEYS), (
        f"keys without a meaning in docs/reference/config.md: {sorted(empty - set(UNDOCUMENTED_KEYS))}"
    )
    assert not set(UNDOCUMENTED_KEYS) - empty, (
        f"documented now, drop from UNDOCUMENTED_KEYS: {sorted(set(UNDOCUMENTED_KEYS) - empty)}"
    )


def test_every_table_kind_and_column_is_in_the_reference() -> None:
    from streamrag.commands.schema import KINDS, SCHEMAS_DIR
    from streamrag.data.stabilization_row import DTYPES
    from streamrag.simulator.results import RESULT_DTYPES

    page = _page("tables.md")
    # Every TableKind declared anywhere in the package, found in the source, not in the generator.
    declared = {
        m.group(1)
        for path in (ROOT / "streamrag").rglob("*.py")
        for m in re.finditer(r"=\s*TableKind\(\s*\"([a-z_]+)\"", path.read_text(encoding="utf-8"))
    }
    assert len(declared) >= 10
    generator = _script("docs_reference")
    kinds = {where.removeprefix("table kind `").rstrip("`"): columns for _, where, columns, _ in generator.table_kinds()}
    assert declared <= set(kinds), f"table kinds not in the reference: {sorted(declared - set(kinds))}"
    sections = dict(zip(*(lambda p: (p[1::2], p[2::2]))(re.split(r"^### (.+)$", page, flags=re.M)), strict=True))
    missing = [c for c in DTYPES if f"| `{c}` |" not in sections["stabilization.csv"]]
    missing += [c for c in RESULT_DTYPES if f"| `{c}` |" not in sections["results.csv"]]
    for module_kind in _table_kind_objects():
        text = next(body for title, body in sections.items() if f"table kind `{module_kind.name}`" in body)
        missing += [f"{module_kind.name}.{c}" for c in module_kind.columns if f"| `{c}` |" not in text]
    for kind in KINDS:
        schema = json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
        fields = schema.get("properties", {})
        missing += [f"{kind}.{f}" for f in fields if f"| `{f}` |" not in sections[kind]]
    assert not missing, f"in the code, not in docs/reference/tables.md: {missing}"


def _table_kind_objects() -> list[typing.Any]:
    import importlib

    from streamrag.base.columns import TableKind

    out = []
    for path in (ROOT / "streamrag").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^([A-Z_]+)\s*=\s*TableKind\(", text, flags=re.M):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            kind = getattr(importlib.import_module(module), m.group(1))
            assert isinstance(kind, TableKind)
            out.append(kind)
    return out


def test_every_public_name_is_in_the_api_reference() -> None:
    import streamrag

    page = _page("api.md")
    missing = [n for n in streamrag.__all__ if n != "__version__" and f"::: {streamrag._PUBLIC[n]}.{n}\n" not in page]
    missing += [m for m in streamrag._MODULES if f"::: streamrag.{m}" not in page]
    import streamrag.sweep

    missing += [n for n in streamrag.sweep.__all__ if f".{n}\n" not in page]  # the sweep functions the notebooks use
    assert not missing


def test_benchmarks_results_page_is_generated_from_the_records() -> None:
    bench = _script("bench_results")
    assert bench.main(["--check"]) == 0, "run: python scripts/bench_results.py"
    records = bench.records()
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_")}
    recorded = {part.removeprefix("benchmarks/") for doc in records for part in doc["command"].split() if part.endswith(".py")}
    assert scripts <= recorded, f"benchmarks without a result record: {sorted(scripts - recorded)}"
    for doc in records:
        assert "status" in doc or {"command", "commit", "date", "cpu", "cores", "numbers", "peers"} <= set(doc)


def test_a_benchmark_run_writes_a_record_with_what_results_md_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import _common

    monkeypatch.setattr(_common, "RESULTS_DIR", tmp_path)
    monkeypatch.setattr(sys, "argv", ["benchmarks/bench_x.py", "--quick"])
    doc = json.loads(_common.record("x", {"wall_s": 1.5}, peers=["peer"]).read_text(encoding="utf-8"))
    assert doc["command"] == "python benchmarks/bench_x.py --quick" and doc["numbers"] == {"wall_s": 1.5}
    assert doc["cores"] and doc["cpu"] and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["date"])


def test_citation_cff_names_the_anchor_study_and_streamrag() -> None:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert doc["cff-version"] == "1.2.0" and doc["title"].startswith("streamrag")
    assert any("2606.20113" in json.dumps(ref) for ref in doc["references"])
