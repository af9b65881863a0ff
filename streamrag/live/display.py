"""The terminal view of a live run: one line per thing that happens, as it happens.

Words, fires (with the words fired on), generated queries (G by an LLM), calls in
flight, results, tool errors, the reflector's checks and choice, each arm's answer, and
the time saved at the end of each turn. Plain lines through rich (colour on a terminal,
plain text in a pipe), so the scroll-back is the record.

Rendering a line costs a fraction of a millisecond; done inside the pipeline's callbacks
it would delay what the callback does next (a tool call, F) and show up in the time
saved. So the run only *enqueues* each line (:class:`DisplayQueue`, a deque append) and
a task of its own renders them a millisecond later, one line per loop turn
(:func:`rendering`); the queue is flushed at the end of each turn and on Ctrl-C, so
what is printed and its order are unchanged.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
from anyio.lowlevel import checkpoint
from rich.console import Console
from rich.markup import escape

from streamrag.engine.clock import Clock


class LiveDisplay:
    """Prints one turn's events; :meth:`begin` starts a turn."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=True)
        self.words: list[str] = []
        self.in_flight: set[tuple[str, int]] = set()
        self.out_at: dict[tuple[str, int], int] = {}

    def begin(self, qid: str, words: list[str], note: str = "") -> None:
        """A new turn (``words`` is the list the session fills as words are heard)."""
        self.words = words
        self.in_flight = set()
        self.out_at = {}
        self.console.print(f"[bold]── {escape(qid)}[/bold] {escape(note)}")

    def _line(self, t_us: int, text: str) -> None:
        self.console.print(f"[dim]{t_us / 1e6:8.3f} s[/dim]  {text}")

    def show(self, e: dict[str, Any]) -> None:
        kind, t = e["kind"], e["t_us"]
        key = (e.get("arm", ""), e.get("call", 0))
        if kind == "word":
            self._line(t, f"[cyan]{escape(self.words[e['word'] - 1])}[/cyan]")
        elif kind == "fire":
            query = " ".join(self.words[: e["prefix_t"]])
            self._line(t, f"{e['arm']} fires call {e['call']} ({e['by']}) on “{escape(query)}”")
        elif kind == "gen_query":
            self._line(t, f"  {e['arm']} call {e['call']}: query “{escape(e['query'])}” ({e['elapsed_us'] / 1000:.1f} ms, G)")
        elif kind == "gen_error":
            self._line(t, f"  [red]{e['arm']} call {e['call']}: {escape(e['error'])}[/red]")
        elif kind == "gen_done":
            self.in_flight.add(key)
            self.out_at[key] = t
            self._line(t, f"  {e['arm']} call {e['call']}: tool call out ({len(self.in_flight)} in flight)")
        elif kind == "tool_done":
            self.in_flight.discard(key)
            took = (t - self.out_at.get(key, t)) / 1000
            self._line(t, f"  {e['arm']} call {e['call']} back after {took:.1f} ms (L): top {list(e['top'] or [])}")
        elif kind == "tool_error":
            self.in_flight.discard(key)
            self._line(t, f"  [red]{e['arm']} call {e['call']} failed: {escape(e['error'])}[/red]")
        elif kind == "cancel":
            self.in_flight.discard(key)
            self._line(t, f"  streaming call {e['call']} cancelled ({e['reason']})")
        elif kind == "input_end":
            self._line(t, f"end of turn after {e['n_words']} words: the reflector looks, the baseline starts")
        elif kind == "check":
            verdict = "sufficient" if e["sufficient"] else "not sufficient"
            score = "" if e.get("score") is None else f" (score {e['score']:.2f}, coverage {e['coverage']:.2f})"
            self._line(t, f"  reflector: call {e['call']} (prefix {e['prefix_t']}) {verdict}{score}")
        elif kind == "decision":
            what = "a speculative result" if e["outcome"] == "speculative" else "the full query (mis-fire or nothing fired)"
            self._line(t, f"[bold]reflector chooses {what}[/bold], call {e['call']}, prefix {e['prefix_t']}")
        elif kind == "answer_ready":
            colour = "green" if e["arm"] == "streaming" else "yellow"
            self._line(t, f"[{colour}]{e['arm']} answer ready[/{colour}]")
        elif kind == "failed":
            self._line(t, f"[red]{e['arm']} cannot answer: its full-query call failed[/red]")

    def saved(self, row: Any) -> None:
        """The turn's outcome (a results row)."""
        if row.saved_ms is None:
            self.console.print(f"[red]{escape(row.interaction_id)}: {escape(row.skip_reason)}[/red]\n")
            return
        self.console.print(
            f"[bold]time saved {row.saved_ms:.1f} ms[/bold] (baseline {row.baseline_ms:.1f} ms, "
            f"streaming {row.streaming_ms:.1f} ms after the last word; {row.calls_fired} call(s) fired)\n"
        )


class DisplayQueue:
    """A :class:`LiveDisplay` off the pipeline's path: :meth:`begin`, :meth:`show` and
    :meth:`saved` only enqueue; :meth:`run` (a task) renders in order, and :meth:`flush`
    renders whatever is left at once."""

    def __init__(self, display: LiveDisplay, clock: Clock, *, settle_us: int = 1000) -> None:
        self.display = display
        self.clock = clock
        self.settle_us = settle_us
        self._pending: deque[Callable[[], object]] = deque()
        self._wake = anyio.Event()

    def _put(self, render: Callable[[], object]) -> None:
        self._pending.append(render)
        self._wake.set()

    def begin(self, qid: str, words: list[str], note: str = "") -> None:
        self._put(partial(self.display.begin, qid, words, note))

    def show(self, event: dict[str, Any]) -> None:
        self._put(partial(self.display.show, event))

    def saved(self, row: Any) -> None:
        self._put(partial(self.display.saved, row))

    def flush(self) -> None:
        """Render every line still queued (end of turn, Ctrl-C)."""
        while self._pending:
            self._pending.popleft()()

    async def run(self) -> None:
        """Render lines as they come (runs until cancelled): ``settle_us`` after a line is
        queued — what the callback that queued it set going (a tool call's request, the
        next stage) goes first — then one line per loop turn, so a timer due meanwhile
        waits one line at most."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await self.clock.sleep_us(self.settle_us)
            while self._pending:
                self._pending.popleft()()
                await checkpoint()


@asynccontextmanager
async def rendering(display: LiveDisplay | None, clock: Clock) -> AsyncIterator[DisplayQueue | None]:
    """``display`` behind a :class:`DisplayQueue` whose task renders while the block runs;
    on the way out (the end of the run, or Ctrl-C) what is still queued is printed.
    ``None`` when there is no display."""
    if display is None:
        yield None
        return
    view = DisplayQueue(display, clock)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(view.run)
        try:
            yield view
        finally:
            view.flush()
            tasks.cancel_scope.cancel()
