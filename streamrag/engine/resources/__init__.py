"""Resources: the tool backend and the LLM that every call of every session shares.

A *job* is one stage of one call — query generation G or response F on an LLM, the tool
call L on the retrieval backend — with the service it needs (``work_us``: its duration
alone on an idle server). A resource serves jobs; it reacts to arrivals, completions and
cancellations with kernel timers (:meth:`~streamrag.engine.clock.Clock.call_at_us`), so
thousands of sessions share it without a task per job.

Kinds (config ``kind``):

- ``unlimited`` — every job starts at once and takes its work (the per-question replay:
  no queue, no events);
- ``servers`` — ``servers`` identical servers and a queue. ``discipline``: ``fifo``, or
  ``priority`` (confirmed work — a fallback call, response generation, the baseline —
  ahead of speculative calls; FIFO within a class). ``queue_limit``: a job that finds
  that many waiting is rejected (``None``: unbounded). ``cancel``: ``frees`` — a
  cancelled job leaves its server at once; ``completes`` — the server keeps working
  until the job's end and only the result is dropped (an HTTP call cannot be recalled);
- ``batching`` — an LLM serving up to ``max_batch`` requests at once by continuous
  batching: with b requests in service each progresses at rate ``1 / s(b)``,
  ``s(b) = 1 + slowdown · (b − 1)`` — the time per generated token grows linearly with
  the batch (processor sharing with a linear slowdown; see ``calibration/sources.toml``,
  key ``batching``, for where the curve's form and default slope come from); further
  requests wait in a FIFO (or priority) queue.

Every finite resource keeps the integrals a report needs (busy server-time, time-average
queue length and number in system, waits, rejections) and, when the job carries a
recorder, emits ``enqueue`` / ``serve`` / ``finish`` / ``withdraw`` / ``reject`` events into
that session's trace with the server index (one track per server in the Perfetto view).

The package, as SimPy's ``resources/``: :mod:`.base` (the job, the ``Resource`` role, the
load view, :class:`~.base.Unlimited`), :mod:`.queued` (:class:`~.queued.QueuedResource`:
admission, the queue discipline, rejection, withdrawal, replacement and accounting shared
by every finite kind), one module per finite kind (:mod:`.servers`, :mod:`.batching`), the
run's integrals (:mod:`.usage`) and the configs that build them (:mod:`.configs`).

``base.py`` is named as in SimPy's ``resources/`` (the role and the kind every other
builds on); :mod:`streamrag.retrieval.base` is retrieval's own base, in its own layer.
"""

from __future__ import annotations

from streamrag.engine.resources.base import (
    CONFIRMED,
    SPECULATIVE,
    Job,
    JobRecorder,
    JobState,
    LoadView,
    Resource,
    Unlimited,
    resource_report,
)
from streamrag.engine.resources.batching import Batching
from streamrag.engine.resources.configs import (
    BatchingResourceConfig,
    ResourceConfig,
    ServersResourceConfig,
    UnlimitedResourceConfig,
)
from streamrag.engine.resources.queued import QueuedResource
from streamrag.engine.resources.servers import Servers
from streamrag.engine.resources.usage import Usage

__all__ = [
    "CONFIRMED",
    "SPECULATIVE",
    "Batching",
    "BatchingResourceConfig",
    "Job",
    "JobRecorder",
    "JobState",
    "LoadView",
    "QueuedResource",
    "Resource",
    "ResourceConfig",
    "Servers",
    "ServersResourceConfig",
    "Unlimited",
    "UnlimitedResourceConfig",
    "Usage",
    "resource_report",
]
