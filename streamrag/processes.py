"""How streamrag starts worker processes: one rule for the simulator's and the sweep's pools."""

from __future__ import annotations

import sys
from multiprocessing.context import BaseContext


def mp_context() -> BaseContext:
    """``fork`` on Linux when this process runs no other thread (workers start in ms and
    inherit the imported modules and any prepared input); ``spawn`` otherwise, which is
    safe with threads and on other systems. Results never depend on the choice."""
    import multiprocessing
    import threading

    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
