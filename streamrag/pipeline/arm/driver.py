"""What the arm's machine asks of whoever runs it (:class:`ArmDriver`), where its trace
events go (:class:`Emitter`) and what it reads of the question (:class:`NumberOfWords`)."""

from __future__ import annotations

from typing import Any, Protocol

from streamrag.pipeline.calls import Call


class Emitter(Protocol):
    """Where the arm's trace events go (a :class:`~streamrag.engine.trace.Recorder`)."""

    def emit(self, kind: str, **fields: Any) -> None: ...


class ArmDriver(Protocol):
    """What the machine asks of whoever runs it: the actions out."""

    def start(self, call: Call) -> None:
        """Run the call's stages now (G, then L); report :meth:`ArmMachine.completed`
        or :meth:`ArmMachine.lost`."""
        ...

    def stop(self, call: Call) -> None:
        """Withdraw a started call (whatever stage it is in)."""
        ...

    def answer(self, call: Call) -> None:
        """The reflector decided: the answer is built from ``call``'s result."""
        ...

    def fail(self) -> None:
        """The fallback call on the full query was lost: the session failed."""
        ...

    def rank(self, t: int) -> None:
        """Rank prefix t (``ranking`` is not ``free``); report :meth:`ArmMachine.ranked`."""
        ...

    def unrank(self, t: int) -> None:
        """Withdraw prefix t's ranking, still out at the end of the turn."""
        ...

    def execute(self, call: Call) -> None:
        """Start the tool stage L of ``call``, deferred until the turn was confirmed
        (``mutating = "deferral"``; its G ended, :meth:`ArmMachine.generated`)."""
        ...


class _Closed:
    """The driver of an arm that is over: any action is a bug."""

    def _over(self, *_: object) -> None:
        raise RuntimeError("the streaming arm is over: no action may follow")

    start = stop = answer = rank = unrank = execute = _over

    def fail(self) -> None:
        self._over()


_CLOSED = _Closed()


class NumberOfWords(Protocol):
    """What the machine reads of the question: its length (0 while live input goes on)."""

    @property
    def n_words(self) -> int: ...
