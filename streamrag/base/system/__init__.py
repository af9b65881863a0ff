"""What a command meets of the operating system, handled the same way by every command.

- :mod:`~streamrag.base.system.outputs` — output paths checked before any work, so a run
  never computes for an hour and then fails to write;
- :mod:`~streamrag.base.system.processes` — worker processes that die with their parent,
  and modules imported in the background;
- :mod:`~streamrag.base.system.signals` — SIGTERM and SIGHUP ending a command as Ctrl-C does;
- :mod:`~streamrag.base.system.terminal` — text from input files made safe to print.

One sub-package because these four are the edges where a command touches the machine
(the file system's folders, processes, signals, the terminal) rather than streamrag's
own data, and each states a rule every command follows; the rest of :mod:`streamrag.base`
is about the data (errors, files, columns, settings). It imports nothing at import time.
"""
