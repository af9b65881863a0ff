"""CLI subcommands: one module each, standard-library imports only at top level."""
