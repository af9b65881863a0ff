"""The time integrals of one finite resource over a run, and the report made of them."""

from __future__ import annotations

from typing import Any


class Usage:
    """Time integrals of one resource over a run (µs-weighted), for its report."""

    __slots__ = (
        "busy_area",
        "cancelled",
        "completed",
        "detached_area",
        "in_system_area",
        "jobs",
        "last_us",
        "queue_area",
        "rejected",
        "sojourn_us",
        "started_us",
        "wait_us",
        "waited",
    )

    def __init__(self) -> None:
        self.busy_area = self.queue_area = self.in_system_area = self.detached_area = 0.0
        self.last_us = self.started_us = -1
        self.jobs = self.completed = self.cancelled = self.rejected = self.waited = 0
        self.wait_us = self.sojourn_us = 0

    def advance(self, now_us: int, busy: float, queued: int, detached: float = 0.0) -> None:
        """Accumulate the areas since the last change (call before every change)."""
        if self.last_us >= 0:
            dt = now_us - self.last_us
            self.busy_area += busy * dt
            self.queue_area += queued * dt
            self.in_system_area += (busy - detached + queued) * dt
            self.detached_area += detached * dt
        else:
            self.started_us = now_us
        self.last_us = now_us

    def report(self, servers: int | None, end_us: int) -> dict[str, Any]:
        """The resource's summary over ``[first event, end_us]`` (see :func:`~.base.resource_report`)."""
        span = max(1, end_us - self.started_us) if self.started_us >= 0 else 0
        out: dict[str, Any] = {
            "servers": servers,
            "jobs": self.jobs,
            "completed": self.completed,
            "cancelled": self.cancelled,
            "rejected": self.rejected,
            "span_s": span / 1e6,
            "utilization": None if not servers or not span else self.busy_area / (servers * span),
            "queue_length": {"mean": None if not span else self.queue_area / span},
            "in_system": {"mean": None if not span else self.in_system_area / span},
            "wait_ms": {"mean": None if not self.jobs else self.wait_us / self.jobs / 1000},
            "share_waited": None if not self.jobs else self.waited / self.jobs,
            "busy_s": self.busy_area / 1e6,
            "detached_busy_s": self.detached_area / 1e6,
        }
        # Little's law, L = λ·W, over the jobs that left the system (completed or cancelled
        # after waiting/serving): λ = arrivals / span, W = mean time in system.
        left = self.completed + self.cancelled
        out["littles_law"] = {
            "L": out["in_system"]["mean"],
            "lambda_per_s": None if not span else self.jobs / (span / 1e6),
            "W_s": None if not left else self.sojourn_us / left / 1e6,
        }
        return out
