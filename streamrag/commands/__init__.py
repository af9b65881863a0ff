"""CLI subcommands: one module each, named after its subcommand (so ``commands/analyze.py``
runs ``streamrag analyze`` while the work itself lives in its layer, whatever that module is
called there), standard-library imports only at top level.

Exempt from two of the room rules (``tests/unit/test_rooms.py``), for one reason, the CLI's
own shape:

Any number of modules: one per subcommand, so adding a command adds a module here and
a reader finds a command's code by its name.

Any basename: each module is named after its subcommand, so it may share its name with the
module of a lower layer that does the work (``analyze.py``, ``calibrate.py``, ``ingest.py``,
``report.py``, ``schema.py``, ``trace.py``, ...).
"""
