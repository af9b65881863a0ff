"""``streamrag list``: every built-in name the other commands take, one line each."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from streamrag.cli import main
from streamrag.engine.profiles import list_profiles
from streamrag.pipeline.learned import list_models
from streamrag.pipeline.policies import PolicyConfig
from streamrag.pipeline.reflectors import ReflectorConfig
from streamrag.pipeline.triggers import TriggerConfig
from streamrag.retrieval.kinds import RETRIEVER_KINDS
from streamrag.simulator.scenario import list_scenarios
from streamrag.sweep.grid import list_grids


def _kinds(union: Any) -> list[str]:
    return [cls.model_fields["kind"].default for cls in get_args(get_args(union)[0])]


EXPECTED = {
    "scenarios": list_scenarios(),
    "grids": list_grids(),
    "profiles": list_profiles(),
    "models": list_models(),
    "triggers": _kinds(TriggerConfig),
    "reflectors": _kinds(ReflectorConfig),
    "policies": _kinds(PolicyConfig),
    "retrievers": list(RETRIEVER_KINDS),
}


def test_list_shows_every_section_and_name_with_a_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    sections: dict[str, list[tuple[str, str]]] = {}
    for line in lines:
        if not line.startswith("  "):
            sections[line.removesuffix(":")] = []
            continue
        name, _, description = line.strip().partition("  ")
        sections[list(sections)[-1]].append((name, description.strip()))
    assert list(sections) == list(EXPECTED)
    for section, names in EXPECTED.items():
        assert [name for name, _ in sections[section]] == names, section
        assert all(description and "``" not in description for _, description in sections[section]), section
    assert {"paper_rq3", "oracle_bound"} <= set(EXPECTED["scenarios"]) and "interval" in EXPECTED["triggers"]


@pytest.mark.parametrize("section", list(EXPECTED))
def test_list_one_section(capsys: pytest.CaptureFixture[str], section: str) -> None:
    assert main(["list", section]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()] == EXPECTED[section]


def test_list_unknown_section_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "nope"]) == 2
    assert "invalid choice" in capsys.readouterr().err
