"""streamrag's built-in demo set: 32 questions in the CRAG tasks 1&2 v4 format.

Written for streamrag (MIT), with invented companies, teams, bands and films; see
``README.md`` beside this file. It is rebuilt by ``scripts/build_demo.py``.
"""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from functools import cache
from importlib.resources import as_file, files
from pathlib import Path

__all__ = ["DEMO_FILE", "demo_path"]

DEMO_FILE = "demo_questions.jsonl"


def demo_path() -> Path:
    """The path of the demo set's ``.jsonl`` file.

    From a normal install this is the file inside the package. From a zipped install
    the file is extracted once to a temporary file that lives until the process exits.
    """
    resource = files(__name__) / DEMO_FILE
    if isinstance(resource, Path):
        return resource
    return _extracted_demo()


@cache
def _extracted_demo() -> Path:
    """The demo file extracted from a zipped install, once; removed at exit."""
    stack = ExitStack()
    atexit.register(stack.close)
    return stack.enter_context(as_file(files(__name__) / DEMO_FILE))
