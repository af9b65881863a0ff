"""``streamrag list``: what is built in, one line each — the names other commands take.

Every list is read from the registry the commands themselves use (the TOML and model
folders of :mod:`streamrag.base.config.bundled`, the discriminated unions of trigger, reflector,
speculation policy and retriever configs), so a new scenario or kind shows up without
touching this file. Descriptions are the TOML files' ``description``, a shipped model's
columns and provenance, and the config classes' first docstring line.
"""

from __future__ import annotations

import argparse
from typing import Any

SECTIONS = ("scenarios", "grids", "profiles", "models", "triggers", "reflectors", "policies", "retrievers")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="built-in scenarios, grids, latency profiles, trigger models, triggers, reflectors, policies and retrievers",
        description="List what is built in, one line each: the names --scenario, sweep GRID, "
        "latency.profile, trigger.model, trigger.kind, reflector.kind, policy.kind and --retriever take.",
    )
    p.add_argument("what", nargs="?", choices=SECTIONS, help="only this list")
    p.set_defaults(run=run)


def _first_line(doc: str | None) -> str:
    text = (doc or "").strip()
    return text.splitlines()[0].strip().replace("``", "") if text else ""  # reST literals read as plain words


def _kinds(union: Any) -> list[tuple[str, str]]:
    """(kind, description) of each member of ``Annotated[A | B | …, Field(discriminator="kind")]``."""
    from typing import get_args

    members = get_args(get_args(union)[0])
    return [(cls.model_fields["kind"].default, _first_line(cls.__doc__)) for cls in members]


def _tomls(folder: Any, names: list[str]) -> list[tuple[str, str]]:
    from streamrag.base.config.tomlfile import read_toml

    return [(name, str(read_toml(folder / f"{name}.toml").get("description", ""))) for name in names]


def _model_line(model: Any) -> str:
    """A shipped trigger model in one line: what it reads and what it was trained on."""
    prov = model.provenance
    line = f"learned trigger: {model.kind} on {', '.join(model.columns)}"
    if prov.get("train_table"):
        line += f"; trained on {prov['train_table']}"
    if prov.get("tau_cv") is not None:
        line += f", tau by cross-validation {prov['tau_cv']}"
    return line


def entries(section: str) -> list[tuple[str, str]]:
    """The (name, description) pairs of one section, in the registry's order."""
    if section == "scenarios":
        from streamrag.base.config.bundled import scenarios_dir, toml_names

        return _tomls(scenarios_dir(), toml_names(scenarios_dir()))
    if section == "grids":
        from streamrag.base.config.bundled import grids_dir, toml_names

        return _tomls(grids_dir(), toml_names(grids_dir()))
    if section == "profiles":
        from streamrag.base.config.bundled import calibration_dir, toml_names

        folder = calibration_dir() / "profiles"
        return _tomls(folder, toml_names(folder))
    if section == "models":
        from streamrag.pipeline.learned import list_models, load_model

        return [(name, _model_line(load_model(name))) for name in list_models()]
    if section == "triggers":
        from streamrag.pipeline.triggers import TriggerConfig

        return _kinds(TriggerConfig)
    if section == "reflectors":
        from streamrag.pipeline.reflectors import ReflectorConfig

        return _kinds(ReflectorConfig)
    if section == "policies":
        from streamrag.pipeline.policies import PolicyConfig

        return _kinds(PolicyConfig)
    from streamrag.retrieval.kinds import RetrieverConfig

    return _kinds(RetrieverConfig)


def run(args: argparse.Namespace) -> int:
    from streamrag.base.system.terminal import printable

    sections = [args.what] if args.what else list(SECTIONS)
    lines: list[str] = []
    for section in sections:
        found = entries(section)
        width = max((len(name) for name, _ in found), default=0)
        if not args.what:
            lines.append(f"{section}:")
        indent = "" if args.what else "  "
        lines += [f"{indent}{name:<{width}}  {printable(text)}".rstrip() for name, text in found]
    print("\n".join(lines))
    return 0
