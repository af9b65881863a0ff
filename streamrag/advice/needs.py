"""What a policy needs at run time, read from its trigger's declaration and the Speculator's check.

A trigger config declares ``needs`` (``rankings``: each word prefix's top-k; ``t_star``:
the question's stabilization point) and ``ranks_online`` (it can rank the words heard
itself, given a local ranker). Whether a live agent can run it is the Speculator's own
check (:func:`~streamrag.speculate.scenario_check.check_scenario`), asked twice: with only the
tool (no ranker) and with a local index (a ranker), on the scenario with its rankings
free (the Speculator pays a ranking's real cost; ``pipeline.ranking`` prices it in
simulation). What the point's own ``pipeline.ranking`` says then decides where it runs:
``tool`` — a search per word on the tool, charged in its calls and load, so it runs with
only the tool; ``local`` — it needs a local index. Nothing is restated here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

from streamrag.base.errors import ConfigError
from streamrag.engine.endpoint import EndpointConfig
from streamrag.pipeline.tools import Hit
from streamrag.simulator.scenario import ResolvedScenario
from streamrag.speculate.scenario_check import check_scenario

RANKINGS_TEXT = "a ranking of every word prefix: a local index, or a search per word"
T_STAR_TEXT = "the question's stabilization point t*, known only offline"

RunsOn = Literal["tool", "local index", "replay only"]


class RunTimeNeeds(NamedTuple):
    """A policy's run-time needs and where it runs."""

    needs: str
    """What it reads besides the words heard ("" for nothing), in words."""
    runs_on: RunsOn
    """``tool``: a live agent with only the tool runs it; ``local index``: it needs a
    ranker of each prefix; ``replay only``: the Speculator runs it on known questions only."""


class LocalIndex:
    """Stands for the deployer's local index in the Speculator's check (never asked to rank)."""

    def rank(self, query: str, k: int) -> Sequence[Hit]:  # pragma: no cover - the check never ranks
        raise NotImplementedError("advise: a placeholder of the user's local index")

    def judge(self, query: str, chunk_id: int, coverage: float) -> float:  # pragma: no cover
        raise NotImplementedError("advise: a placeholder of the user's local index")


def run_time_needs(rs: ResolvedScenario) -> RunTimeNeeds:
    """The needs of ``rs``'s trigger (module docstring); ``rs`` replays turns alone."""
    sc = rs.scenario
    trigger = sc.trigger
    text = "; ".join(RANKINGS_TEXT if n == "rankings" else T_STAR_TEXT for n in sorted(trigger.needs))
    ranking = sc.pipeline.ranking
    if ranking == "tool":
        text = "a ranking of every word prefix: a search per word on the tool, counted in the calls and the load"
    elif ranking == "local":
        text = f"a ranking of every word prefix: a local index, {sc.pipeline.local_rank_ms:g} ms per word charged"
    pipeline = sc.pipeline.model_copy(update={"ranking": "free", "local_rank_ms": 0.0})
    # live, the framework's own endpointer ends the turn and its recognizer gives the words:
    # only the simulation models them
    live_sc = sc.model_copy(
        update={"pipeline": pipeline, "endpoint": EndpointConfig(), "data": sc.data.model_copy(update={"asr": None})}
    )
    live = rs.model_copy(update={"scenario": live_sc})
    for runs_on, ranker in (("tool", None), ("local index", LocalIndex())):
        try:
            check_scenario(live, known=False, ranker=ranker)
        except ConfigError:
            continue
        where = "tool" if ranking == "tool" else runs_on  # its rankings are the tool's searches, charged
        return RunTimeNeeds(text, where)  # type: ignore[arg-type]
    return RunTimeNeeds(text, "replay only")


def allowed(needs: RunTimeNeeds, ranker: Literal["tool", "local"]) -> str:
    """Why the policy cannot be deployed with the user's ranker ("" when it can)."""
    if needs.runs_on == "replay only":
        return (
            "runs only on replayed questions: the Speculator reads its rankings from a known question, not from the words heard"
        )
    if needs.runs_on == "local index" and ranker == "tool":
        return (
            "needs a local index ranking every word prefix; with only the tool (--ranker tool), its _tool twin is the one to run"
        )
    return ""
