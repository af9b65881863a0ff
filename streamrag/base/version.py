"""The package version, declared once: ``streamrag.__version__``, the run manifests, and
the wheel's metadata (``pyproject.toml`` reads it from here)."""

__version__ = "0.1.0"
