"""Which scenarios a live turn can follow: the Speculator's check, asked before a turn runs.

A live turn hears words as they come, on unlimited capacity, and ends when its framework
says; a scenario that needs the question in advance (without a ranker to rank the words
heard), shared capacity, priced rankings or a simulated endpointer is refused here, by
the :class:`~streamrag.speculate.speculator.Speculator`, ``streamrag live`` and
``streamrag advise`` alike.
"""

from __future__ import annotations

from streamrag.base.errors import ConfigError
from streamrag.pipeline.question import kinds_without
from streamrag.pipeline.triggers import TriggerConfig
from streamrag.simulator.heard import Ranker, online_trigger
from streamrag.simulator.scenario import ResolvedScenario


def check_scenario(rs: ResolvedScenario, known: bool, ranker: Ranker | None = None) -> None:
    """ConfigError unless a live turn can follow the scenario: without a known question,
    a trigger that reads rankings runs only when it ranks the words heard itself
    (``ranks_online``: ``learned``) and a ``ranker`` is there to rank them; what a ranking
    costs is that ranker's real time (``pipeline.ranking`` prices it in simulation only)."""
    sc = rs.scenario
    trigger = sc.trigger
    if not known and trigger.needs:
        online = trigger.ranks_online and trigger.needs <= {"rankings"}
        if not online:
            raise ConfigError(
                f"trigger.kind: {trigger.kind!r} needs the question in advance ({', '.join(sorted(trigger.needs))}); "
                f"live input takes {', '.join(kinds_without(TriggerConfig))}, and learned with a ranker"
            )
        online_trigger(trigger, [], ranker)  # what is missing (a ranker, an online model), now
    if sc.resources.limited or sc.load is not None:
        raise ConfigError("live runs replay one turn at a time on unlimited capacity: remove [resources] and [load]")
    if sc.pipeline.ranking != "free":
        raise ConfigError(
            f"pipeline.ranking: {sc.pipeline.ranking!r} prices the rankings of word prefixes in simulation; a live turn "
            "ranks the words heard with its ranker, at that ranker's real cost: remove pipeline.ranking"
        )
    if sc.endpoint.kind != "fixed":
        raise ConfigError(
            f"endpoint.kind: {sc.endpoint.kind!r} simulates an endpointer; a live turn ends when its framework (or "
            "its transcript) says: remove [endpoint]"
        )
