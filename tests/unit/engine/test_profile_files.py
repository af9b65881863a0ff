"""Gamma latencies and profile files: a path works wherever a built-in profile name does."""

from __future__ import annotations

import math
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from streamrag.base.errors import ConfigError
from streamrag.engine.latency import GammaLatency
from streamrag.engine.profiles import is_profile_path, load_profile
from streamrag.simulator.scenario import load_scenario
from streamrag.sweep import load_grid, plan
from streamrag.sweep.inputs import PreparedInputs

PROFILE = """
name = "measured"
source = "m.csv"

[stages.G]
kind = "constant"
ms = 400

[stages.L]
kind = "gamma"
shape = 4.0
scale_ms = {scale}

[stages.F]
kind = "constant"
ms = 1000

[stages.rerank]
kind = "constant"
ms = 35

[provenance]
input_sha256 = "00"
"""


def _profile(folder: Path, name: str = "mine.toml", scale: float = 150.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(PROFILE.format(scale=scale)), encoding="utf-8")
    return path


def test_gamma_latency_moments_median_and_samples():
    m = GammaLatency(shape=4.0, scale_ms=150.0)
    assert (m.mean_ms, m.cv) == (600.0, 0.5)
    from scipy.stats import gamma

    assert math.isclose(m.nominal_ms, gamma.ppf(0.5, 4.0, scale=150.0), rel_tol=1e-12)
    assert math.isclose(m.quantile_ms(0.9), gamma.ppf(0.9, 4.0, scale=150.0), rel_tol=1e-12)
    draws_us = m.sample_us(np.random.default_rng(7), 200_000)
    assert draws_us.dtype == np.int64
    # mean within 4 standard errors (σ/√n = 300/√200000 ≈ 0.67 ms)
    assert abs(draws_us.mean() / 1000 - 600.0) < 4 * 300 / math.sqrt(200_000)
    with pytest.raises(ValueError, match="needs a random generator"):
        m.sample_us(None, 1)
    with pytest.raises(ValidationError, match="scale_ms"):
        GammaLatency(shape=2.0, scale_ms=0)


def test_the_path_rule():
    assert not is_profile_path("arora2025")
    assert is_profile_path("mine.toml") and is_profile_path("./mine") and is_profile_path("/abs/p")


def test_a_profile_file_loads_with_extra_stages_and_provenance(tmp_path):
    prof = load_profile(str(_profile(tmp_path)))
    assert list(prof.stages) == ["G", "L", "F", "rerank"]
    assert prof.stages["L"].kind == "gamma" and prof.provenance == {"input_sha256": "00"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('name = "x"\n[stages.L]\nkind = "gamma"\nshape = 2\n', r"profile .*bad\.toml: stages\.L\.scale_ms: Field required"),
        ('name = "x"\n[stages.L]\nkind = "pareto"\n', r"profile .*bad\.toml: stages\.L\.kind: Input tag 'pareto'"),
        ("name = \n", r"latency\.profile: .*bad\.toml:1: invalid TOML"),
        ('name = "x"\n[stages]\n', r"profile .*bad\.toml: stages: Dictionary should have at least 1 item"),
    ],
)
def test_a_bad_profile_file_is_one_line_naming_file_and_key(tmp_path, text, message):
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_profile(str(bad))
    with pytest.raises(ConfigError, match=r"latency\.profile: .*missing\.toml: no such file"):
        load_profile(str(tmp_path / "missing.toml"))


def test_set_profile_path_is_relative_to_the_current_folder(tmp_path, monkeypatch):
    _profile(tmp_path / "profiles")
    monkeypatch.chdir(tmp_path)
    rs = load_scenario("oracle_bound", ["latency.profile=profiles/mine.toml"])
    # oracle_bound sets L_ms = 600; a changed profile drops it (the override rule's shadowing)
    assert (rs.stages.G.ms, rs.stages.L.kind, rs.stages.F.ms) == (400, "gamma", 1000)
    assert rs.scenario.latency.L_ms is None
    assert rs.scenario.latency.profile == str(tmp_path / "profiles" / "mine.toml")  # stored absolute


def test_a_profile_in_a_scenario_file_is_relative_to_that_file(tmp_path, monkeypatch):
    _profile(tmp_path / "cfg")
    (tmp_path / "cfg" / "s.toml").write_text('[latency]\nprofile = "mine.toml"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rs = load_scenario("cfg/s.toml")
    assert (rs.stages.L.kind, rs.stages.L.shape, rs.L_ms) == ("gamma", 4.0, GammaLatency(shape=4.0, scale_ms=150.0).nominal_ms)


def test_a_partial_profile_needs_the_scenario_to_set_the_missing_stages(tmp_path):
    only_l = tmp_path / "only_l.toml"
    only_l.write_text('name = "tool"\n[stages.L]\nkind = "constant"\nms = 250\n', encoding="utf-8")
    scenario = tmp_path / "s.toml"
    scenario.write_text('[latency]\nprofile = "only_l.toml"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"has no stage G or F \(its stages: L\); set latency\.G_ms or \[latency\.stages\.G\]"):
        load_scenario(str(scenario))
    rs = load_scenario(str(scenario), ["latency.G_ms=590", "latency.F_ms=2520"])
    assert (rs.G_ms, rs.L_ms, rs.stages.F.ms) == (590, 250, 2520)


GRID = """
kind = "simulate"
input = "generated:20:seed=1"
scenario = "s.toml"
[axes]
"latency.profile" = ["paper-rq3", "profiles/mine.toml"]
"""


def test_a_grid_profile_path_is_relative_to_the_grid_and_keys_follow_the_content(tmp_path):
    study = tmp_path / "study"
    _profile(study / "profiles")
    (study / "s.toml").write_text('[latency]\nprofile = "paper-rq3"\n', encoding="utf-8")
    grid_path = study / "g.toml"
    grid_path.write_text(GRID, encoding="utf-8")

    def keys(path: Path) -> list[str]:
        grid = load_grid(path)
        points = plan(grid, PreparedInputs(grid.input)).points
        assert points[1].job.settings.stages.L.kind == "gamma"
        return [p.key for p in points]

    first = keys(grid_path)
    assert len(set(first)) == 2
    # the same files in another folder: the same keys (content, not place)
    shutil.copytree(study, tmp_path / "moved")
    assert keys(tmp_path / "moved" / "g.toml") == first
    # an edited profile: the built-in point keeps its key, the file's point gets a new one
    _profile(study / "profiles", scale=160.0)
    edited = keys(grid_path)
    assert edited[0] == first[0] and edited[1] != first[1]
