"""Measurements file in, profile TOML and figure out: what ``streamrag calibrate`` runs."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from streamrag.calibration.fit import MIN_N, ModelChoice, StageFit, fit_stage
from streamrag.calibration.measurements import Measurements, read_measurements
from streamrag.calibration.profile import profile_tables, write_profile


@dataclass(frozen=True, slots=True)
class Calibration:
    """What a calibration read, fitted and wrote."""

    measurements: Measurements
    fits: list[StageFit]
    profile_path: Path
    figure_path: Path | None


def calibrate(
    measurements: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    spans: Mapping[str, str] | Sequence[str] | None = None,
    turn: str | None = None,
    name: str | None = None,
    description: str | None = None,
    min_n: int = MIN_N,
    choice: ModelChoice = "auto",
    figure: str | os.PathLike[str] | None = None,
) -> Calibration:
    """Fit every stage of ``measurements`` and write the profile ``out`` (and the figure
    ``figure``, when given). Nothing is written unless every stage can be fitted."""
    meas = read_measurements(measurements, spans, turn=turn)
    fits = [fit_stage(s.stage, s.durations_ms, origin=str(meas.path), min_n=min_n, choice=choice) for s in meas.stages.values()]
    out_path = Path(out)
    tables = profile_tables(meas, fits, name=name or out_path.stem, description=description, min_n=min_n)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_profile(out_path, tables)
    figure_path = None
    if figure is not None:
        from streamrag.base.figures import save_figure
        from streamrag.calibration.figure import plot_fits

        figure_path = save_figure(plot_fits(meas, fits), figure)
    return Calibration(meas, fits, out_path, figure_path)
