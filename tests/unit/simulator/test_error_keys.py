"""Every key an error message names is a key a user can type back with ``--set``.

The walk covers every field of the scenario model, through every member of every union
(each member selected with ``--set SECTION.kind=TAG``) and every key of a dict section
(``latency.stages.L``): the field is given a value no field accepts, the key is taken
from the message, and ``--set KEY=VALUE`` with the same selection must be accepted or
name the same key (pydantic's locations carry union tags, ``resources.tool.servers.servers``,
that no ``--set`` can address)."""

from __future__ import annotations

import re

import pytest
from _scenariokeys import BASE, LEAVES

from streamrag.base.errors import ConfigError
from streamrag.simulator.scenario import Scenario, load_scenario

BAD = "[[[]]]"  # a nested list: a value of no field's type


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
