"""Which spans of a trace export are which stage: rules, turns, de-duplication, errors.

An agent's trace names its calls by what they are, not by the stage they play: in a
LiveKit Agents export the query generation and the answer are both ``llm_request``
spans, in Pipecat's both ``llm``. A **rule** says which spans make a stage::

    NAME[KEY=VALUE,…][:ORDER]=STAGE

- ``NAME`` — the span's name (``operationName`` in Jaeger);
- ``[KEY=VALUE,…]`` — optional attribute filters, all of which must hold (a value
  compares as text: ``true``/``false`` for booleans, decimal for numbers);
- ``:ORDER`` — optional position among the spans of the same name and filters *within
  one turn*, by start time: ``first``, ``last``, ``N`` (1-based) or ``-N`` (from the
  end); without it every matching span counts;
- ``STAGE`` — the stage; ``{KEY}`` in it is replaced by the span's attribute ``KEY``
  (``L.{lk.function_tool.name}`` gives one stage per tool, ``L.search_docs``, …; a span
  without the attribute is skipped and counted).

Examples: ``llm_request:first=G``, ``llm_request:last=F``, ``function_tool=L``.

A **turn** (needed by ``:ORDER``) is one of (:func:`parse_turn`):

- ``span:NAME`` — the nearest ancestor span named NAME (through ``parentSpanId`` /
  Jaeger's ``CHILD_OF`` references): Pipecat's ``turn``, LiveKit's ``agent_turn``;
- ``attr:KEY`` — the value of attribute KEY on the span or its nearest ancestor that has
  it, within the trace (``lk.speech_id``, ``turn.number``);
- ``trace`` — the trace id (one trace per turn).

The rules are applied in the order given and a span counts once: the first rule that
selects it claims it. So ``llm_request:last=F llm_request:first=G`` gives a turn with
one LLM call (no tool call: the answer came straight away) to F, and G nothing, while
a turn with two gives the first to G and the last to F.

**Duplicates**: a span whose (trace id, span id) was seen before — the same span
exported twice — is dropped and counted. **Errors**: a span whose status is an error
(OTLP ``status.code`` 2, Jaeger tag ``error = true`` or ``otel.status_code = ERROR``) or
that carries ``error`` or ``lk.function_tool.is_error`` true keeps its role (its
position in the turn) but is not fitted: it is counted per stage as a ``timeout`` when
its status message or ``error.type`` / ``exception.type`` says so, as ``cancelled`` when
they name a cancellation (``CancelledError``) or the span carries
``streamrag.stage.cancelled`` true (a stage the Speculator cut short: its duration is not
the stage's), else as an ``error``.

**Call outcomes**: spans that carry ``streamrag.call.outcome`` (the Speculator's
``speculate.tool_call``, :mod:`streamrag.speculate.telemetry`) are counted per outcome,
whatever the rules select: the terminal outcomes of the speculative calls in the export.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from streamrag.base.errors import ConfigError

ERROR_ATTRIBUTES = ("error", "lk.function_tool.is_error")
"""Attributes whose true value marks a failed span."""
CANCELLED_ATTRIBUTE = "streamrag.stage.cancelled"
"""An attribute whose true value marks a stage cut short by a cancellation."""
OUTCOME_ATTRIBUTE = "streamrag.call.outcome"
"""A speculative call's terminal outcome (counted per value)."""
EXCLUDED_KINDS = ("error", "timeout", "cancelled")
"""Why a selected span is not fitted."""

_RULE = re.compile(r"^(?P<name>[^\[\]:]+?)(?:\[(?P<where>[^\]]*)\])?(?::(?P<order>first|last|-?[1-9][0-9]*))?$")
_TEMPLATE = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True, slots=True)
class Span:
    """One span of an export, in the reader's terms."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    error: str | None
    """``None``, or one of :data:`EXCLUDED_KINDS`."""


@dataclass(frozen=True, slots=True)
class SpanRule:
    """One ``NAME[KEY=VALUE,…][:ORDER]=STAGE`` rule (see the module docstring)."""

    text: str
    name: str
    where: tuple[tuple[str, str], ...]
    order: int | None
    """1-based position in the turn, negative from its end; ``None``: every span."""
    stage: str

    def matches(self, span: Span) -> bool:
        return span.name == self.name and all(k in span.attributes and text_of(span.attributes[k]) == v for k, v in self.where)

    def stage_of(self, span: Span) -> str | None:
        """The stage, its ``{KEY}`` filled from the span (``None``: an attribute is missing)."""
        missing = [k for k in _TEMPLATE.findall(self.stage) if k not in span.attributes]
        if missing:
            return None
        return _TEMPLATE.sub(lambda m: text_of(span.attributes[m.group(1)]), self.stage)


def text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_rule(text: str) -> SpanRule:
    """A rule from its text; ValueError saying what is wrong."""
    head, sep, stage = text.rpartition("=")
    stage = stage.strip()
    m = _RULE.match(head.strip()) if sep else None
    if m is None or not stage:
        raise ValueError(f"expected NAME[KEY=VALUE,…][:first|last|N]=STAGE, e.g. llm_request:first=G, got {text!r}")
    where = []
    for item in filter(None, (p.strip() for p in (m.group("where") or "").split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"{text!r}: attribute filter {item!r} is not KEY=VALUE")
        where.append((key.strip(), value.strip()))
    order_text = m.group("order")
    order = None if order_text is None else 1 if order_text == "first" else -1 if order_text == "last" else int(order_text)
    return SpanRule(text, m.group("name").strip(), tuple(where), order, stage)


@dataclass(frozen=True, slots=True)
class TurnKey:
    """How spans are grouped into turns: ``span``, ``attr`` or ``trace`` (see the module docstring)."""

    kind: str
    value: str = ""

    @property
    def text(self) -> str:
        return self.kind if self.kind == "trace" else f"{self.kind}:{self.value}"


def parse_turn(text: str) -> TurnKey:
    kind, _, value = text.partition(":")
    if kind == "trace" and not value:
        return TurnKey("trace")
    if kind in ("span", "attr") and value.strip():
        return TurnKey(kind, value.strip())
    raise ValueError(f"expected span:NAME, attr:KEY or trace, e.g. span:agent_turn, got {text!r}")


@dataclass(slots=True)
class Selection:
    """What the rules selected: durations per stage and what was left out."""

    durations: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    """Stage → (ms, start in Unix ns) in file order."""
    span_counts: dict[str, int] = field(default_factory=dict)
    """Spans per name (duplicates excluded)."""
    duplicates: int = 0
    excluded: dict[str, dict[str, int]] = field(default_factory=dict)
    """Stage → ``{"error": n, "timeout": n, "cancelled": n}``: failed or cut spans, not fitted."""
    outcomes: dict[str, int] = field(default_factory=dict)
    """Speculative calls per terminal outcome (spans with :data:`OUTCOME_ATTRIBUTE`)."""
    missing_attribute: dict[str, int] = field(default_factory=dict)
    """Rule → spans it selected that lack an attribute its stage names."""
    outside_turns: int = 0
    """Spans an ordered rule matched that belong to no turn."""
    n_turns: int | None = None


def select(spans: Sequence[Span], rules: Sequence[SpanRule], turn: TurnKey | None) -> Selection:
    """Apply ``rules`` to ``spans`` (see the module docstring; the readers have checked
    the times of every span a rule names)."""
    if turn is None and any(r.order is not None for r in rules):
        ordered = next(r.text for r in rules if r.order is not None)
        raise ConfigError(f"--span {ordered}: a position in a turn needs --turn (span:NAME, attr:KEY or trace)")
    out = Selection()
    unique: list[Span] = []
    seen: set[tuple[str, str]] = set()
    for s in spans:
        if s.span_id:
            key = (s.trace_id, s.span_id)
            if key in seen:
                out.duplicates += 1
                continue
            seen.add(key)
        unique.append(s)
        out.span_counts[s.name] = out.span_counts.get(s.name, 0) + 1
        outcome = s.attributes.get(OUTCOME_ATTRIBUTE)
        if isinstance(outcome, str):
            out.outcomes[outcome] = out.outcomes.get(outcome, 0) + 1
    by_id = {(s.trace_id, s.span_id): s for s in unique if s.span_id}
    turns = _Turns(by_id, turn)
    claimed: dict[int, SpanRule] = {}
    for rule in rules:
        matching = [i for i, s in enumerate(unique) if rule.matches(s)]
        if rule.order is not None:
            groups: dict[Any, list[int]] = {}
            for i in matching:
                key = turns.of(unique[i])
                if key is None:
                    out.outside_turns += 1
                    continue
                groups.setdefault(key, []).append(i)
            out.n_turns = max(out.n_turns or 0, len(groups))
            matching = []
            for members in groups.values():
                members.sort(key=lambda i: (unique[i].start_ns, unique[i].span_id))
                pos = rule.order - 1 if rule.order > 0 else rule.order
                if -len(members) <= pos < len(members):
                    matching.append(members[pos])
        for i in matching:
            claimed.setdefault(i, rule)
    for i in sorted(claimed):
        s, rule = unique[i], claimed[i]
        stage = rule.stage_of(s)
        if stage is None:
            out.missing_attribute[rule.text] = out.missing_attribute.get(rule.text, 0) + 1
            continue
        if s.error is not None:
            counts = out.excluded.setdefault(stage, dict.fromkeys(EXCLUDED_KINDS, 0))
            counts[s.error] += 1
            continue
        out.durations.setdefault(stage, []).append(((s.end_ns - s.start_ns) / 1e6, s.start_ns))
    return out


class _Turns:
    """The turn of a span (memoized walks up the parent chain)."""

    def __init__(self, by_id: dict[tuple[str, str], Span], key: TurnKey | None) -> None:
        self.by_id = by_id
        self.key = key
        self.memo: dict[tuple[str, str], Any] = {}

    def of(self, span: Span) -> Any:
        key = self.key
        if key is None:
            return None
        if key.kind == "trace":
            return span.trace_id or None
        node: Span | None = span if key.kind == "attr" else self._parent(span)
        path: list[tuple[str, str]] = []
        found = None
        while node is not None:
            ident = (node.trace_id, node.span_id)
            if ident in path:  # a cycle of parent ids: no turn
                break
            if ident in self.memo:
                found = self.memo[ident]
                break
            path.append(ident)
            if key.kind == "span" and node.name == key.value:
                found = ident
                break
            if key.kind == "attr" and key.value in node.attributes:
                found = (node.trace_id, text_of(node.attributes[key.value]))
                break
            node = self._parent(node)
        for ident in path:
            self.memo[ident] = found
        return found

    def _parent(self, span: Span) -> Span | None:
        return self.by_id.get((span.trace_id, span.parent_id)) if span.parent_id else None
