"""Settings as files and flags, read the same way by every command.

- :mod:`~streamrag.base.config.tomlfile` — TOML files read (one line naming file and key on
  any problem) and written back;
- :mod:`~streamrag.base.config.overrides` — ``--set KEY=VALUE`` parsed and applied to a
  settings tree;
- :mod:`~streamrag.base.config.bundled` — the TOML files that ship with the package
  (scenarios, grids, profiles, references) found by name.

One sub-package because these three are how a user's settings reach a run — a file, a
flag, a built-in name — and each is read by every command that takes settings; the rest
of :mod:`streamrag.base` is about the data a run reads and writes. It imports nothing at
import time.
"""
