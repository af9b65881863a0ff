"""Capabilities are declared on the trigger and reflector configs (``needs``), and every
caller decides from that declaration: what ``build`` refuses, what simulate and sweeps
check early on a bare table, what a live run accepts. A new kind declares its needs once."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from _simhelpers import const_scenario, full_q, table_q

from streamrag.base.errors import ConfigError
from streamrag.live.session import _check_live
from streamrag.pipeline.question import kinds_without
from streamrag.pipeline.reflectors import ReflectorConfig
from streamrag.pipeline.triggers import TriggerConfig
from streamrag.simulator.simulate import check_compatible

REQUIRED: dict[str, dict[str, Any]] = {
    "interval": {"words": 3},
    "hedge": {"lengths": {3: 1, 9: 1}, "threshold_ms": 600.0, "word_interval_ms": 333.0},  # resolved when a scenario is read
}
"""Fields a kind cannot default (every other kind is built from its defaults)."""


OWN_TESTS = {"learned": "needs a saved model file; tests/unit/learn/test_learned.py checks what it needs"}
"""Kinds built from a file, not from defaults: their build is tested where the file is made."""


def _kinds(union: Any) -> list[tuple[str, Any]]:
    return [
        (m.model_fields["kind"].default, m)
        for m in get_args(get_args(union)[0])
        if m.model_fields["kind"].default not in OWN_TESTS
    ]


def _config(member: Any, kind: str) -> Any:
    return member(kind=kind, **REQUIRED.get(kind, {}))


EVIDENCE = full_q("q", [[0, 1, 2], [0, 1, 2], [0, 1, 2]], gold={0}, scores={0: 3.0}, coverage={0: 1.0})


@pytest.mark.parametrize(("section", "union"), [("trigger", TriggerConfig), ("reflector", ReflectorConfig)])
def test_build_refuses_a_bare_table_exactly_when_the_config_needs_rankings(section, union):
    for kind, member in _kinds(union):
        config = _config(member, kind)
        config.build(EVIDENCE)  # every kind runs on per-prefix evidence
        if "rankings" in config.needs:
            with pytest.raises(ConfigError, match=rf"{section}\.kind: '{kind}' needs per-prefix evidence"):
                config.build(table_q("x", n=3, t_sc=2))
            rs = const_scenario(**{section: {"kind": kind, **REQUIRED.get(kind, {})}})
            with pytest.raises(ConfigError, match=rf"{section}\.kind: '{kind}' needs per-prefix evidence"):
                check_compatible([table_q("x", n=3, t_sc=2)], rs)
        else:
            config.build(table_q("x", n=3, t_sc=2))


def test_live_input_takes_the_triggers_that_need_nothing_but_words():
    live = kinds_without(TriggerConfig)
    assert live == ("interval", "every_word", "none", "hedge")  # today's kinds; derived, not listed
    for kind, _ in _kinds(TriggerConfig):
        rs = const_scenario(trigger={"kind": kind, **REQUIRED.get(kind, {})})
        if kind in live:
            _check_live(rs, known=False, judge=None)
        else:
            with pytest.raises(
                ConfigError,
                match=rf"trigger\.kind: '{kind}' needs the question in advance \((rankings|t_star)\); live input takes interval, every_word, none, hedge, and learned with a ranker",
            ):
                _check_live(rs, known=False, judge=None)
        _check_live(rs, known=True, judge=None)  # a known question gives every trigger what it needs
    assert kinds_without(TriggerConfig, "rankings") == ("interval", "every_word", "oracle", "none", "hedge")
    # a kind that ranks the words heard itself (``ranks_online``) runs live given a ranker
    # (the live run's judge: a BM25 tool over the corpus), and says what is missing without one
    from streamrag.engine.clock import RealClock
    from streamrag.live.backends import BM25Tool

    rs = const_scenario(trigger={"kind": "learned", "model": "frontier"})
    assert [k for k, m in _kinds(TriggerConfig) if m.ranks_online] == []  # today only learned declares it
    _check_live(rs, known=False, judge=BM25Tool(["a chunk"], RealClock()))
    with pytest.raises(ConfigError, match="'learned' reads a ranking of each prefix heard: pass ranker="):
        _check_live(rs, known=False, judge=None)
    assert kinds_without(ReflectorConfig, "rankings") == ("heuristic", "gold")
