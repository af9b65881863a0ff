"""What :func:`~streamrag.advice.run.advise` answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .situation import Situation

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Advice:
    """What :func:`advise` answers: ``rows`` (one per G/F end × policy, the columns of
    ``advice.csv``), the ``recommendation`` and its ``answer`` in words, and the files."""

    situation: Situation
    rows: pd.DataFrame
    recommendation: dict[str, Any]
    answer: str
    ends: list[dict[str, str]]
    files: list[Path] = field(default_factory=list)
