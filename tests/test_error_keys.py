"""Every key an error message names is a key a user can type back with ``--set``.

The walk covers every field of the scenario model, through every member of every union
(each member selected with ``--set SECTION.kind=TAG``) and every key of a dict section
(``latency.stages.L``): the field is given a value no field accepts, the key is taken
from the message, and ``--set KEY=VALUE`` with the same selection must be accepted or
name the same key (pydantic's locations carry union tags, ``resources.tool.servers.servers``,
that no ``--set`` can address)."""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from streamrag.base.errors import ConfigError
from streamrag.simulator.scenario import Scenario, load_scenario

BASE = "load"  # the built-in scenario with every optional section set ([resources], [load])
BAD = "[[[]]]"  # a nested list: a value of no field's type


def _strip(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _leaves(tp: Any, path: str, select: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(dotted path, the ``--set`` overrides selecting its union members) of every leaf."""
    tp = _strip(tp)
    if get_origin(tp) in (Union, types.UnionType):
        members = [_strip(m) for m in get_args(tp) if m is not type(None)]
        models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        tagged = [m for m in models if "kind" in m.model_fields]
        for member in tagged:
            yield from _leaves(member, path, (*select, f"{path}.kind={member.model_fields['kind'].default}"))
        if not tagged:
            for member in models:
                yield from _leaves(member, path, select)
        if not models:
            yield path, select
        return
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        for name, field in tp.model_fields.items():
            yield from _leaves(field.annotation, f"{path}.{name}" if path else name, select)
        return
    if get_origin(tp) is dict:
        key_type, value_type = get_args(tp)
        keys = get_args(_strip(key_type)) if get_origin(_strip(key_type)) is Literal else ("x",)
        for key in keys:
            yield from _leaves(value_type, f"{path}.{key}", select)
        return
    yield path, select


LEAVES = sorted(set(_leaves(Scenario, "", ())))


def _error(overrides: list[str]) -> str | None:
    try:
        load_scenario(BASE, overrides)
    except ConfigError as exc:
        return str(exc)
    return None


def _key(message: str) -> str:
    m = re.match(rf"scenario {BASE}: ([^:]+): ", message)
    assert m is not None, f"not a validation error naming a key: {message}"
    return m.group(1)


def test_the_walk_reaches_every_section_and_union_member():
    sections = {path.split(".")[0] for path, _ in LEAVES}
    assert sections == set(Scenario.model_fields) - {"name", "description", "seed"} | {"name", "description", "seed"}
    selected = {s for _, select in LEAVES for s in select}
    assert {"resources.tool.kind=servers", "latency.stages.L.kind=lognormal", "load.arrivals.kind=closed"} <= selected
    assert len(LEAVES) > 80


@pytest.mark.parametrize(("path", "select"), LEAVES, ids=[" ".join((*s, p)) for p, s in LEAVES])
def test_the_key_in_an_error_typed_back_names_the_same_key(path, select):
    message = _error([*select, f"{path}={BAD}"])
    assert message is not None, f"{path}={BAD} was accepted"
    key = _key(message)
    again = _error([*select, f"{key}={BAD}"])
    assert again is None or _key(again) == key, f"{path}: the message names {key!r}; typed back: {again}"


def test_a_table_without_its_kind_says_so_in_the_users_words(tmp_path, capsys) -> None:
    # was: "trigger.kind: Unable to extract tag using discriminator 'kind'"
    from streamrag.cli import main

    scenario = tmp_path / "s.toml"
    scenario.write_text('name = "x"\n[trigger]\nwords = 2\n', encoding="utf-8")
    table = tmp_path / "t.csv"
    assert main(["generate", str(table), "--table", "--questions", "5", "-q"]) == 0
    capsys.readouterr()
    assert main(["simulate", "--table", str(table), "--scenario", str(scenario), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"streamrag: error: scenario {scenario}: trigger.kind: missing (the kind decides which other fields the table "
        "takes; streamrag list names the kinds)"
    )
