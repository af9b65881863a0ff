"""The gap the user hears, in parts, and the compute each arm spends (a non-``fixed``
``[endpoint]``, :mod:`streamrag.engine.endpoint`).

Each arm's latency as the user hears it (``streaming_ms`` and ``baseline_ms``: the answer is
ready, and the turn confirmed, − the last word) is split into parts that sum to it exactly
(in µs, so within 1 ms in the CSV's ms):

- ``endpoint_ms`` — last word → both arms start: the endpointer's end of turn, or its eager
  signal (``confirm_ms``: → the confirmed end of turn, the same for both arms);
- ``*_g_ms`` — query generation of the call the answer used, after the end of turn (the
  part speculation did not hide);
- ``*_l_ms`` — that call's tool time after the end of turn (unhidden L);
- ``*_other_ms`` — the rest before the response starts: the reflector's check, waiting for
  a stage to start (a queue on finite capacity, a mutating call held for the turn);
- ``*_f_ms`` — response generation F;
- ``*_confirm_ms`` — an answer ready before the confirmed end of turn waits for it (an eager start).

Compute per turn, each arm with the replies to the endpointer's false cut-offs
(``false_cutoffs``, of which ``answered_partial`` were spoken to a partial turn) and eager
restarts (``eager_restarts``): LLM calls
(a query generation per call started, the response, and the cut-offs' replies), tool
calls (calls whose tool stage started, searches ranking word prefixes on the tool, and the
cut-offs' tool calls) and LLM **tokens in** (``[compute]``, :class:`ComputeConfig`): every
LLM call reads ``prompt_tokens``, plus the words it carries at ``tokens_per_word`` — a
query generation on input event t reads t words, the response the n words of the question
and ``evidence_tokens`` of the tool's result, a reply to a partial turn its prefix (and the
evidence, for its response). ``summary.json``'s ``endpoint`` block reads them as the field
reports them: extra LLM calls, tool calls and tokens in per turn over the baseline, and as a
share of its compute.

On recorded hypotheses, event t stands for hypothesis t, whose length may differ from t
words by what the recognizer inserted or dropped; the prompt, not the question, is most of
what a production agent's calls read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from streamrag.base.validation import SettingsModel

if TYPE_CHECKING:
    from collections.abc import Callable

    from streamrag.simulator.replay.fold import Tally

PART_COLUMNS: tuple[str, ...] = (
    "endpoint_ms",
    "confirm_ms",
    "streaming_g_ms",
    "streaming_l_ms",
    "streaming_other_ms",
    "streaming_f_ms",
    "streaming_confirm_ms",
    "baseline_g_ms",
    "baseline_l_ms",
    "baseline_other_ms",
    "baseline_f_ms",
    "baseline_confirm_ms",
)
COUNT_COLUMNS: tuple[str, ...] = (
    "false_cutoffs",
    "answered_partial",
    "eager_restarts",
    "llm_calls",
    "tool_calls",
    "baseline_llm_calls",
    "baseline_tool_calls",
    "llm_tokens_in",
    "baseline_llm_tokens_in",
)
ENDPOINT_COLUMNS: tuple[str, ...] = (*PART_COLUMNS, *COUNT_COLUMNS)
"""The optional columns of a run with an endpointer, in order."""


MAX_TOKENS = 10_000_000
"""The most tokens a setting of ``[compute]`` may give (far past any model's context)."""


class ComputeConfig(SettingsModel):
    """``[compute]``: what each LLM call reads, to count compute in tokens in beside calls
    (the module docstring). Read where the compute columns are written: a run with an
    endpointer (``endpoint.kind`` silence or detector)."""

    prompt_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS)
    """Tokens every LLM call reads besides the question's words: system prompt, tool schemas,
    conversation so far (0: the words alone)."""
    tokens_per_word: float = Field(default=4 / 3, ge=0, le=100, allow_inf_nan=False)
    """Tokens per word of the question (default 4/3: OpenAI's rule of thumb, a token is about
    ¾ of an English word, help.openai.com article 4936856)."""
    evidence_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS)
    """Tokens of the tool's result that the response generation F reads."""

    def tokens_in(self, calls: int, words: int, responses: int) -> float:
        """Tokens in of ``calls`` LLM calls reading ``words`` question words in all, of
        which ``responses`` read the tool's result."""
        return calls * self.prompt_tokens + words * self.tokens_per_word + responses * self.evidence_tokens


def _overlap(start: int, end: int, lo: int, hi: int) -> int:
    return max(0, min(end, hi) - max(start, lo))


def heard_us(t: Tally, answer_us: int) -> int:
    """When the user hears an answer ready at ``answer_us``: not before the confirmed end of turn."""
    if t.endpoint is None:
        return answer_us
    return max(answer_us, t.input_end_us + t.endpoint[1])  # type: ignore[operator]  # a complete tally


def endpoint_values(t: Tally, *, n_words: int, ranked_on_tool: bool, compute: ComputeConfig) -> dict[str, Any]:
    """The row's endpoint columns from a complete tally with an ``endpoint`` (the module
    docstring); ``ranked_on_tool``: ``pipeline.ranking = "tool"`` (each ranking a search)."""
    assert t.endpoint is not None and t.input_end_us is not None
    assert t.streaming_answer_us is not None and t.baseline_answer_us is not None
    start, confirm, cuts, restarts, cut_llm, cut_tool, partial, cut_words = t.endpoint
    # The replies to breaks, in both arms: each break starts G; the rest of their calls are responses.
    replies = compute.tokens_in(cut_llm, cut_words, cut_llm - cuts - restarts)
    asked = sum(t.fired_on.values())  # each query generation reads the prefix its call carries
    turn_end = t.input_end_us + start
    decided = t.respond_us
    g0, g1, l0, l1 = t.spans.get(t.used_call, (0, 0, 0, 0))
    g = _overlap(g0, g1, turn_end, decided)
    tool = _overlap(l0, l1, turn_end, decided) if l0 >= 0 else 0
    b0, b1, b2, b3, b4 = t.baseline_marks
    confirmed = t.input_end_us + confirm
    return {
        "endpoint_ms": start / 1000,
        "confirm_ms": confirm / 1000,
        "streaming_g_ms": g / 1000,
        "streaming_l_ms": tool / 1000,
        "streaming_other_ms": (decided - turn_end - g - tool) / 1000,
        "streaming_f_ms": (t.streaming_answer_us - decided) / 1000,
        "streaming_confirm_ms": max(0, confirmed - t.streaming_answer_us) / 1000,
        "baseline_g_ms": (b1 - b0) / 1000,
        "baseline_l_ms": (b3 - b2) / 1000,
        "baseline_other_ms": (b0 - turn_end + b2 - b1 + b4 - b3) / 1000,
        "baseline_f_ms": (t.baseline_answer_us - b4) / 1000,
        "baseline_confirm_ms": max(0, confirmed - t.baseline_answer_us) / 1000,
        "false_cutoffs": cuts,
        "answered_partial": partial,
        "eager_restarts": restarts,
        "llm_calls": t.fired + 1 + cut_llm,
        "tool_calls": len(t.executed) + (t.rankings if ranked_on_tool else 0) + cut_tool,
        "baseline_llm_calls": 2 + cut_llm,
        "baseline_tool_calls": 1 + cut_tool,
        "llm_tokens_in": compute.tokens_in(t.fired + 1, asked + n_words, 1) + replies,
        "baseline_llm_tokens_in": compute.tokens_in(2, 2 * n_words, 1) + replies,
    }


def compute_summary(column: Callable[[str], np.ndarray], n: int) -> dict[str, Any]:
    """``summary.json``'s ``endpoint`` block: false cut-offs and partial answers per 100
    turns, and extra compute per turn over the baseline (calls and tokens in: mean, and share
    of its total)."""
    llm, tool = column("llm_calls"), column("tool_calls")
    base_llm, base_tool = column("baseline_llm_calls"), column("baseline_tool_calls")
    tokens, base_tokens = column("llm_tokens_in"), column("baseline_llm_tokens_in")

    def share(mine: np.ndarray, theirs: np.ndarray) -> float | None:
        return float((mine.sum() - theirs.sum()) / theirs.sum()) if n and theirs.sum() else None

    return {
        "false_cutoffs_per_100_turns": float(100 * column("false_cutoffs").sum() / n) if n else None,
        "answered_partial_per_100_turns": float(100 * column("answered_partial").sum() / n) if n else None,
        "eager_restarts_per_100_turns": float(100 * column("eager_restarts").sum() / n) if n else None,
        "extra_llm_calls_per_turn": float((llm - base_llm).mean()) if n else None,
        "extra_tool_calls_per_turn": float((tool - base_tool).mean()) if n else None,
        "extra_llm_share": share(llm, base_llm),
        "extra_tool_share": share(tool, base_tool),
        "extra_llm_tokens_in_per_turn": float((tokens - base_tokens).mean()) if n else None,
        "extra_llm_tokens_in_share": share(tokens, base_tokens),
    }
