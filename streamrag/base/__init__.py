"""The base layer: leaves every other layer may import (errors, atomic writes, progress,
bundled TOML files, the one TOML reader, the one translator of validation errors,
overrides, processes, JSONL lines, figures, digests, outputs, terminal, correlation,
logging). It imports nothing of streamrag above it."""
