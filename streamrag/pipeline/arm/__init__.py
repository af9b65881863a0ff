"""The streaming arm's rules, written once: a state machine with no clock and no I/O.

Events go in — a word heard, a tick, a revision, a call finished or lost, the turn ended
— and actions come out through the :class:`ArmDriver` that runs it: start a call, stop
one, answer from one, fail. The machine decides; its drivers only wait:

- :class:`~streamrag.pipeline.streaming.StreamingArm` drives it on the event engine's
  clock (virtual or real: the simulator, load runs, ``live`` and the
  :class:`~streamrag.speculate.speculator.Speculator`);
- :mod:`~streamrag.simulator.replay.closed` drives it from one heap of stage ends (a
  question alone on unlimited capacity, the default route of ``simulate``);
- :mod:`~streamrag.simulator.predict.saving` drives the closed form on the nominal timeline.

The rules (:class:`ArmRules`; the first value of each is the anchor's code's, the
``paper`` preset): the distinct-prefix rule, the thread cap (``max_threads``) with
``capped_fire`` (defer or drop a blocked fire) and ``slot_release`` (when a finished
call's slot is free again), ``turn_end_order`` (calls fired on the last word held until
the reflector's first look), and the reflector's shell: ``rejudge`` (what is judged
after a completion) and ``fallback`` (what answers when nothing is sufficient).

Time enters only as data: the instant of a word, a tick or a completion (``at_us``),
which the slot-release rule compares. Every trace event the arm records is emitted here,
through ``rec.emit`` (when ``tracing``), in the order the rules take effect.

The package: :mod:`.rules` (:class:`ArmRules`, the input schedule), :mod:`.driver` (what
the machine asks of whoever runs it), :mod:`.machine` (:class:`ArmMachine`: words, fires,
calls) and :mod:`.turn_end` (the reflector's part, once the turn has ended).
"""

from streamrag.pipeline.arm.driver import ArmDriver, Emitter, NumberOfWords
from streamrag.pipeline.arm.machine import ArmMachine
from streamrag.pipeline.arm.rules import ArmRules, CappedFire, SlotRelease, TurnEndOrder, input_schedule

__all__ = [
    "ArmDriver",
    "ArmMachine",
    "ArmRules",
    "CappedFire",
    "Emitter",
    "NumberOfWords",
    "SlotRelease",
    "TurnEndOrder",
    "input_schedule",
]
