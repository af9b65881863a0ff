"""The base layer: leaves every other layer may import (errors, atomic writes, progress,
bundled TOML files, the one TOML reader, the one translator of validation errors,
overrides, JSONL lines, figures, digests, column types, format versions, correlation,
logging; and, in :mod:`~streamrag.base.system`, output paths, processes, signals and the
terminal). It imports nothing of streamrag above it."""
