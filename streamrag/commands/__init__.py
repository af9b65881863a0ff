"""CLI subcommands: one module each, named after its subcommand (so ``commands/analyze.py``
runs ``streamrag analyze`` while the work itself lives in its layer, whatever that module is
called there), standard-library imports only at top level."""
