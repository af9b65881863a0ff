"""Package discovery that pyproject.toml cannot express: the top-level ``calibration/``
and ``sim/`` folders ship inside the wheel as the data packages ``streamrag._calibration``
and ``streamrag._sim``, so built-in profiles and scenarios load from an installed wheel."""

from setuptools import find_packages, setup

DATA_PACKAGES = {
    "streamrag._calibration": "calibration",
    "streamrag._calibration.profiles": "calibration/profiles",
    "streamrag._sim": "sim",
    "streamrag._sim.grids": "sim/grids",
    "streamrag._sim.models": "sim/models",
    "streamrag._sim.reference": "sim/reference",
}

# Folders of data files only (no __init__.py) are packages too: listed here, or setuptools
# would warn that it ships them only by accident of the package-data globs.
DATA_ONLY = ["streamrag.schemas"]

setup(
    packages=[*find_packages(include=["streamrag*"]), *DATA_ONLY, *DATA_PACKAGES],
    package_dir=DATA_PACKAGES,
)
