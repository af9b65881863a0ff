"""The parameters of ``streamrag stats`` (and of the statistics ``analyze`` writes), declared once.

:class:`StatsParams` holds each parameter's default (the ``paper`` preset's configured
point and robustness settings: the anchor study's 10,000 bootstrap resamples), its range
and its command-line flag; :data:`DEFAULT_PARAMS`, :func:`resolve_params` and the flags of
``streamrag stats`` (:func:`add_arguments`) are read off it. Standard library only: the
CLI builds its parser from it without importing the statistics.
"""

from __future__ import annotations

import argparse
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Annotated, Any, get_type_hints

from streamrag.base.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Param:
    """A parameter's range and flag. A number ≥ ``minimum`` (``> minimum`` unless
    ``allow_minimum``; ``at_most``: an upper bound), for ``int`` parameters an integer
    ≥ ``minimum``, for ``str`` parameters one of ``choices``. ``help`` is formatted with
    ``default``."""

    flag: str
    help: str
    metavar: str | None = None
    minimum: float = 0
    allow_minimum: bool = False
    at_most: float | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StatsParams:
    """The statistics' parameters, with the ``paper`` preset's values as defaults."""

    L_ms: Annotated[float, Param("--L-ms", "tool latency L of the configured point, ms (default: {default:g})", "MS")] = 600.0
    delta_wps: Annotated[float, Param("--delta-wps", "input cadence delta, words per second (default: {default:g})", "WPS")] = 3.0
    theta: Annotated[
        float, Param("--theta", "coverage: streamable when H >= theta * L (default: {default:g})", allow_minimum=True)
    ] = 0.8
    G_ms: Annotated[
        float, Param("--G-ms", "query-generation latency G for H_G and H', ms (default: {default:g})", "MS", allow_minimum=True)
    ] = 590.0
    density_cap: Annotated[
        float,
        Param(
            "--density-cap",
            "gold density at most CAP = 'specifically grounded' (default: {default:g})",
            "CAP",
            allow_minimum=True,
            at_most=1,
        ),
    ] = 0.05
    n_resamples: Annotated[
        int,
        Param(
            "--bootstrap",
            "bootstrap resamples for the median CIs (default: the paper preset's {default:,}, as the anchor study)",
            "N",
            minimum=1,
        ),
    ] = 10_000
    seed: Annotated[int, Param("--seed", "seed of the bootstrap (default: {default})")] = 0
    bootstrap_streams: Annotated[
        str,
        Param(
            "--bootstrap-streams",
            "the bootstrap's random draws: paper (default: one stream from --seed per grouping, its groups in "
            "order of first appearance, as the anchor's stats.py) or per-group (a stream keyed by each group's "
            "name: adding or removing a group never changes another's interval)",
            choices=("paper", "per-group"),
        ),
    ] = "paper"


def _declared() -> dict[str, tuple[type, Param, Any]]:
    hints = get_type_hints(StatsParams, include_extras=True)
    return {
        f.name: (hints[f.name].__origin__, next(m for m in hints[f.name].__metadata__ if isinstance(m, Param)), f.default)
        for f in fields(StatsParams)
    }


PARAMS: dict[str, tuple[type, Param, Any]] = _declared()
"""Each parameter's type, :class:`Param` and default, in declaration order."""

DEFAULT_PARAMS: dict[str, Any] = {name: default for name, (_, _, default) in PARAMS.items()}
"""The ``paper`` preset's configured point and robustness settings (the anchor study's
10,000 bootstrap resamples)."""


def _number(name: str, value: Any, param: Param) -> float:
    allow_zero = param.allow_minimum
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"parameter {name}: {value!r} is not a number") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero):
        raise ConfigError(f"parameter {name}: {value!r} must be a finite number {'≥' if allow_zero else '>'} 0")
    if param.at_most is not None and x > param.at_most:
        raise ConfigError(f"parameter {name}: {value!r} must be in [0, {param.at_most:g}]")
    return x


def _choice(name: str, value: Any, param: Param) -> str:
    if value not in param.choices:
        raise ConfigError(f"parameter {name}: {value!r} is not one of {', '.join(param.choices)}")
    return str(value)


def _count(name: str, value: Any, param: Param) -> int:
    minimum = int(param.minimum)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:  # numpy's too
        raise ConfigError(f"parameter {name}: {value!r} must be an integer ≥ {minimum}")
    return int(value)


def resolve_params(params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """:data:`DEFAULT_PARAMS` overridden by ``params``, validated (``ConfigError``).

    An optional ``"table"`` entry (the input's path, for provenance) is passed through.
    """
    params = dict(params or {})
    unknown = sorted(set(params) - set(DEFAULT_PARAMS) - {"table"})
    if unknown:
        raise ConfigError(f"unknown parameter(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_PARAMS)}")
    p = {**DEFAULT_PARAMS, **params}
    out: dict[str, Any] = {}
    if "table" in p:
        out["table"] = str(p["table"])
    for name, (kind, param, _) in PARAMS.items():
        read = _count if kind is int else _choice if kind is str else _number
        out[name] = read(name, p[name], param)
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per parameter (``dest`` its name, its default the declaration's)."""
    for name, (kind, param, default) in PARAMS.items():
        parser.add_argument(
            param.flag,
            dest=name,
            type=kind,
            default=default,
            choices=param.choices or None,
            metavar=param.metavar,
            help=param.help.format(default=default),
        )
