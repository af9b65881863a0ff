"""What a load run measures of each session, read off its events, and where its events go.

:class:`SessionMeasures` holds one system's per-session arrays (answer latency, calls fired,
used and rejected, waits per resource, busy and wasted server time); :class:`TraceSink`
spools each finished session's events to a temporary file so a run's memory stays flat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.engine.trace import dump_events


@dataclass(slots=True)
class SessionMeasures:
    """Per-session measurements of one system (arrays indexed by session)."""

    n: int
    question: np.ndarray = field(init=False)
    arrival_us: np.ndarray = field(init=False)
    answer_us: np.ndarray = field(init=False)
    """Answer ready − end of input, µs; −1: the session failed."""
    fired: np.ndarray = field(init=False)
    used: np.ndarray = field(init=False)
    rejected: np.ndarray = field(init=False)
    waits: dict[str, np.ndarray] = field(default_factory=dict)
    busy_us: dict[str, int] = field(default_factory=dict)
    wasted_us: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.question = np.full(self.n, -1, dtype=np.int32)
        self.arrival_us = np.full(self.n, -1, dtype=np.int64)
        self.answer_us = np.full(self.n, -1, dtype=np.int64)
        self.fired = np.zeros(self.n, dtype=np.int32)
        self.used = np.zeros(self.n, dtype=np.int32)
        self.rejected = np.zeros(self.n, dtype=np.int32)

    def add(self, i: int, question: int, arrival_us: int, input_end_us: int, events: list[dict[str, Any]]) -> None:
        self.question[i] = question
        self.arrival_us[i] = arrival_us
        fired = rejected = 0
        answer = -1
        used_call = None
        opened: dict[tuple[str, int, str], int] = {}
        queued: dict[tuple[str, int, str], int] = {}
        spans: list[tuple[str, int, int]] = []  # (resource, call, µs of service)
        for e in events:
            kind = e["kind"]
            if kind == "fire":
                fired += 1
            elif kind == "cancel" and e["reason"] == "unstarted":
                fired -= 1
            elif kind == "reject":
                rejected += 1
            elif kind == "respond":
                used_call = e["call"]
            elif kind == "answer_ready":
                answer = e["t_us"] - input_end_us
            elif kind == "enqueue":
                queued[(e["resource"], e["call"], e["stage"])] = e["t_us"]
            elif kind == "serve":
                key = (e["resource"], e["call"], e["stage"])
                since = queued.pop(key, None)
                if since is not None:
                    self._wait(e["resource"], i, e["t_us"] - since)
                opened[key] = e["t_us"]
            elif kind in ("finish", "withdraw"):
                key = (e["resource"], e["call"], e["stage"])
                start = opened.pop(key, None)
                if start is not None:
                    spans.append((e["resource"], e["call"], e["t_us"] - start))
                elif kind == "withdraw":  # withdrawn while waiting
                    since = queued.pop(key, None)
                    if since is not None:
                        self._wait(e["resource"], i, e["t_us"] - since)
        self.answer_us[i] = answer
        self.fired[i] = fired
        self.used[i] = 1 if answer >= 0 else 0
        self.rejected[i] = rejected
        for resource, call, us in spans:
            self.busy_us[resource] = self.busy_us.get(resource, 0) + us
            if call != 0 and call != used_call:  # F jobs are call 0: always used
                self.wasted_us[resource] = self.wasted_us.get(resource, 0) + us

    def _wait(self, resource: str, i: int, us: int) -> None:
        column = self.waits.get(resource)
        if column is None:
            column = self.waits[resource] = np.zeros(self.n, dtype=np.int64)
        column[i] += us


class TraceSink:
    """Each finished session's events, appended to a temporary file with its offset."""

    def __init__(self, path: Path, n: int) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed in close(), after the run
        self.offsets = np.full((n, 2), -1, dtype=np.int64)

    def add(self, i: int, events: list[dict[str, Any]]) -> None:
        blob = dump_events(events)
        self.offsets[i] = (self.fh.tell(), len(blob))
        self.fh.write(blob)

    def close(self) -> None:
        self.fh.close()
