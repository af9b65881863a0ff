"""Moved to :mod:`streamrag.lines` (the base layer), so that the simulation kernel and
the calibration readers share the one JSONL reader. Kept for existing importers."""

from streamrag.lines import iter_json_objects, iter_lines

__all__ = ["iter_json_objects", "iter_lines"]
