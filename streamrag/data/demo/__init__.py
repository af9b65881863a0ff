"""streamrag's built-in demo set: 32 questions in the CRAG tasks 1&2 v4 format.

Written for streamrag (MIT), with invented companies, teams, bands and films; see
``README.md`` beside this file. It is rebuilt by ``scripts/build_demo.py``.
"""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from importlib.resources import as_file, files
from pathlib import Path

__all__ = ["DEMO_FILE", "demo_path"]

DEMO_FILE = "demo_questions.jsonl"
_extracted: ExitStack | None = None
_cached: Path | None = None


def demo_path() -> Path:
    """The path of the demo set's ``.jsonl`` file.

    From a normal install this is the file inside the package. From a zipped install
    the file is extracted once to a temporary file that lives until the process exits.
    """
    global _extracted, _cached
    resource = files(__name__) / DEMO_FILE
    if isinstance(resource, Path):
        return resource
    if _cached is None:
        _extracted = ExitStack()
        atexit.register(_extracted.close)
        _cached = _extracted.enter_context(as_file(resource))
    return _cached
