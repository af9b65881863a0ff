"""Small helpers shared by the statistics modules: column access and JSON-ready values."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd


def to_float(x: Any) -> float | None:
    """A plain float, or None for None/NA/NaN/inf (undefined)."""
    if x is None or x is pd.NA:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def share(count: int, n: int) -> float | None:
    """``count / n``; None when there is nothing to share (n = 0)."""
    return count / n if n else None


def skipped_mask(df: pd.DataFrame) -> np.ndarray:
    """True for rows with a non-empty ``skip_reason`` (all False when the column is absent)."""
    if "skip_reason" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    reason = df["skip_reason"]
    return (reason.notna() & (reason.astype(str).str.strip() != "")).to_numpy(dtype=bool)


def active(df: pd.DataFrame) -> pd.DataFrame:
    """The questions that enter the statistics: rows without a ``skip_reason``."""
    mask = skipped_mask(df)
    return df[~mask] if mask.any() else df


def bool_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """A boolean column as a numpy bool array (undefined → False)."""
    return df[column].to_numpy(dtype=bool, na_value=False)


def num_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """A numeric column as a float array (undefined → NaN)."""
    return pd.to_numeric(df[column]).to_numpy(dtype=float, na_value=np.nan)


def label_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """A label column as an object array of ``str`` or None (empty/NA → None)."""
    out = np.empty(len(df), dtype=object)
    for i, value in enumerate(df[column].tolist()):
        undefined = value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
        out[i] = None if undefined else (str(value).strip() or None)
    return out
