"""A question's trace recorded, serialized and read back.

The events themselves, one frozen model per kind, and what each kind means are
:mod:`~streamrag.engine.trace_events`; ``trace.jsonl`` (its header, its lines) is
:mod:`~streamrag.engine.trace_file`. Here: the :class:`Recorder` the arms emit into, the
one serializer of a list of events (:func:`dump_events`), and the readers that turn lines
back into models (:func:`parse_event`, :func:`read_event`, :func:`read_trace`).

Recording and writing a trace builds no model: the event models (31 classes) are imported
when an event is validated or read, so a command that only writes a trace (a table
replay) does not build them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from streamrag.engine.clock import Clock

if TYPE_CHECKING:
    from streamrag.engine.trace_events import _Event


class Recorder:
    """Collects one question's events, stamped with the clock (µs since arrival).

    The hot loop keeps each event as a plain dict whose keys follow its model's field
    order (``qid, t_us, kind, …``) and serializes it with pydantic-core, so a line is
    byte for byte the model's own JSON (tested) without building a model per event.
    ``validate=True`` checks every event against its model as it is emitted.
    """

    __slots__ = ("_clock_now_us", "clock", "events", "origin_us", "qid", "validate")

    def __init__(self, qid: str, clock: Clock, origin_us: int, *, validate: bool = False) -> None:
        self.qid = qid
        self.clock = clock
        self._clock_now_us = clock.now_us
        self.origin_us = origin_us
        self.events: list[dict[str, Any]] = []
        self.validate = validate

    def now_us(self) -> int:
        """µs since the question's arrival."""
        return self.clock.now_us() - self.origin_us

    def emit(self, kind: str, **fields: Any) -> None:
        event = {"qid": self.qid, "t_us": self._clock_now_us() - self.origin_us, "kind": kind, **fields}
        if self.validate:
            from streamrag.engine.trace_events import TRACE_EVENT

            model = TRACE_EVENT.validate_python(event)
            if list(model.model_dump()) != list(event):
                raise ValueError(f"event fields out of model order: {list(event)}")
        self.events.append(event)


def dump_events(events: Sequence[dict[str, Any]]) -> bytes:
    """JSON lines (UTF-8, ``\\n`` after each event), as the models serialize them.

    One serializer call for the whole list, then a line break in place of each comma
    between events: every event's first key is ``qid``, and inside a JSON string a quote
    is escaped, so ``},{"qid":`` only ever stands between two events.
    """
    if not events:
        return b""
    return to_json(events)[1:-1].replace(b'},{"qid":', b'}\n{"qid":') + b"\n"


def parse_event(line: str | bytes) -> _Event:
    """One ``trace.jsonl`` line back to its frozen event model."""
    from streamrag.engine.trace_events import TRACE_EVENT

    return TRACE_EVENT.validate_json(line)


def read_event(line: bytes, line_no: int, path: str | os.PathLike[str]) -> _Event:
    """:func:`parse_event` of line ``line_no`` of trace file ``path``; a line that is no
    event (not JSON, an unknown kind, a field of the wrong type) is a one-line
    :class:`~streamrag.base.errors.RecordError` naming file, line and field."""
    from pydantic import ValidationError

    from streamrag.base.errors import RecordError

    try:
        return parse_event(line)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = [str(part) for part in err.get("loc", ())]
        # An unknown or missing kind is the union's tag; else the field is the last part
        # of pydantic's location (which starts with the kind).
        field = "kind" if err.get("type", "").startswith("union_tag") else (loc[-1] if len(loc) > 1 else "")
        raise RecordError(str(path), line_no, field, f"{err.get('msg', 'invalid')} (not a trace event)") from None


def read_trace(path: str | os.PathLike[str], qid: str | None = None) -> list[_Event]:
    """Events of ``trace.jsonl`` (only question ``qid``'s when given), as models; its
    header checked (:mod:`~streamrag.engine.trace_file`), a bad line named
    (:func:`read_event`)."""
    from streamrag.engine.trace_file import event_lines

    out: list[_Event] = []
    for line_no, line in event_lines(path):
        event = read_event(line, line_no, path)
        if qid is None or event.qid == qid:
            out.append(event)
    return out
