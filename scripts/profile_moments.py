"""How well a calibrated profile keeps its sample's mean and E[S²] (the README's table).

    python scripts/profile_moments.py [--n 2000] [--seeds 7 8 9] [--draws 1000000]

For each family (log-normal median 600 ms σ 0.45; gamma shape 4 scale 150 ms; Weibull
shape 1.5 scale 500 ms; Pareto x_m 200 ms shape 1.5, whose variance is infinite) and
seed: the model ``streamrag calibrate`` chooses, its mean and E[S²] over the sample's
(exact, from the model), the same over ``--draws`` draws from it (what a simulation
samples), and the ratios of the 101-percentile model the tail replaced.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from streamrag.calibration.fit import fit_stage
from streamrag.engine.latency import QuantileLatency


def sample(family: str, seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if family == "lognormal":
        return rng.lognormal(math.log(600), 0.45, n)
    if family == "gamma":
        return rng.gamma(4.0, 150.0, n)
    if family == "weibull":
        return 500.0 * rng.weibull(1.5, n)
    return 200.0 * (1 + rng.pareto(1.5, n))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--seeds", type=int, nargs="+", default=[7, 8, 9])
    p.add_argument("--draws", type=int, default=1_000_000)
    args = p.parse_args(argv)
    print(
        "| data | seed | chosen | mean, model / sample | E[S²], model / sample | drawn: mean, E[S²] | 101 percentiles: mean, E[S²] |"
    )
    print("|---|---|---|---|---|---|---|")
    for family in ("lognormal", "gamma", "weibull", "pareto"):
        for seed in args.seeds:
            x = sample(family, seed, args.n)
            fit = fit_stage("L", x, origin=family)
            mean, second = float(x.mean()), float(np.mean(x * x))
            drawn = fit.model.sample_us(np.random.default_rng(seed + 100), args.draws) / 1000
            levels = [i / 100 for i in range(101)]
            old = QuantileLatency(points=tuple(zip(levels, np.round(np.quantile(x, levels), 3).tolist(), strict=True)))
            print(
                f"| {family} | {seed} | {fit.chosen} | {fit.model.mean_ms / mean:.3f} | {fit.model.second_moment_ms2 / second:.3f} | "
                f"{drawn.mean() / mean:.3f}, {np.mean(drawn * drawn) / second:.3f} | {old.mean_ms / mean:.3f}, {old.second_moment_ms2 / second:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
