"""The anchor study's own RQ3 harness, run unmodified on asyncio with a virtual clock.

The anchor's ``experiments/streaming_rag.py`` (its ``run_streaming`` and ``run_baseline``)
is read from the anchor's repository (``STREAMRAG_ANCHOR_REPO``, a clone or a bare git
folder, read with ``git show``; never copied here) and executed as it is, on a stock
asyncio event loop whose clock is virtual: the selector's wait advances the loop's time
by exactly the timeout asyncio asks for, so every ``asyncio.sleep`` of the harness ends at
its nominal instant and same-instant events follow asyncio's own scheduling, not
streamrag's. Only the tool is replaced: a broker that takes ``L`` of virtual time and
returns, for prefix t, one hit whose full-query score and sufficiency are streamrag's
per-prefix evidence for that question (the harness's orchestration is what is checked,
its BM25 is checked elsewhere).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HARNESS = "experiments/streaming_rag.py"


def load_harness(repo: Path) -> types.ModuleType:
    """The anchor's harness module, executed from the repository's HEAD."""
    source = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{HARNESS}"], capture_output=True, check=True).stdout
    module = types.ModuleType("anchor_streaming_rag")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, HARNESS, "exec"), module.__dict__)  # the anchor's own published file, in a test only
    return module


def _virtual_loop() -> asyncio.AbstractEventLoop:
    """A stock selector loop whose time advances only when it would wait."""
    loop = asyncio.SelectorEventLoop()
    now = [0.0]
    selector = loop._selector  # type: ignore[attr-defined]
    real_select = selector.select

    def select(timeout: float | None = None) -> list:
        if timeout is None:
            raise RuntimeError("the harness waits with nothing scheduled")
        now[0] += timeout
        return real_select(0)

    loop.time = lambda: now[0]  # type: ignore[method-assign]
    selector.select = select
    return loop


@dataclass(frozen=True)
class HarnessOutcome:
    saved_ms: float
    calls_fired: int


def run_anchor_harness(
    harness: types.ModuleType,
    n: int,
    *,
    delta_wps: float,
    words: int,
    cap: int,
    g_ms: float,
    l_ms: float,
    f_ms: float,
    score: Callable[[int], float],
    sufficient: Callable[[int], bool],
) -> HarnessOutcome:
    """One question through the anchor's ``run_baseline`` and ``run_streaming``."""
    text = " ".join(f"w{t}" for t in range(1, n + 1))

    class Broker(harness.ToolBroker):  # type: ignore[name-defined,misc]
        transport_overhead_ms = 0.0

        async def search(self, query: str):  # type: ignore[no-untyped-def]
            fired = loop.time()
            await asyncio.sleep(l_ms / 1000.0)
            t = len(query.split())
            returned = loop.time()
            return harness.ToolResult(query, [(t, query, score(t))], (returned - fired) * 1000, fired, returned)

        @property
        def scorer(self):  # type: ignore[no-untyped-def]
            return None  # relevance = the hit's own score: the full-query score of prefix t's top chunk

    class Judge(harness.Reflector):  # type: ignore[name-defined,misc]
        def sufficient(self, result, query, scorer=None) -> bool:  # type: ignore[no-untyped-def]
            return result is not None and bool(result.hits) and sufficient(result.hits[0][0])

    cfg = harness.Config(words_per_sec=delta_wps, trigger_interval_words=words, max_threads=cap, query_gen_ms=g_ms, fuse_ms=f_ms)
    loop = _virtual_loop()
    harness.time = types.SimpleNamespace(perf_counter=loop.time)  # its stopwatch reads the virtual clock
    try:
        base = loop.run_until_complete(harness.run_baseline(text, Broker(), cfg))
        stream = loop.run_until_complete(harness.run_streaming(text, Broker(), cfg, Judge()))
        left = asyncio.all_tasks(loop)  # the calls it cancelled: let them finish cancelling
        if left:
            loop.run_until_complete(asyncio.wait(left))
    finally:
        loop.close()
    return HarnessOutcome(base.perceived_ms - stream.perceived_ms, stream.calls_fired)
