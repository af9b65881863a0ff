"""Every user TOML (scenario, sweep grid, latency profile) is read by the one reader, so a
missing, unreadable or malformed file is the same one line everywhere: file, and line."""

from __future__ import annotations

import pytest

from streamrag.base.errors import ConfigError
from streamrag.engine.profiles import load_profile
from streamrag.simulator.scenario import load_scenario
from streamrag.sweep import load_grid

LOADERS = [("scenario", load_scenario), ("grid", load_grid), ("latency.profile:", load_profile)]


@pytest.mark.parametrize(("what", "load"), LOADERS, ids=[w for w, _ in LOADERS])
def test_every_loader_reports_file_and_line_the_same_way(tmp_path, what, load):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nseed = = 3\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load(str(bad))
    assert str(info.value) == f"{what} {bad}:2: invalid TOML: Invalid value (column 8)"
    with pytest.raises(ConfigError) as info:
        load(str(tmp_path / "missing.toml"))
    assert str(info.value) == f"{what} {tmp_path / 'missing.toml'}: no such file"
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(ConfigError, match=rf"^{what} .*folder\.toml: cannot read: "):
        load(str(folder))
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=rf"^{what} .*latin\.toml: cannot read: 'utf-8' codec"):
        load(str(latin))
