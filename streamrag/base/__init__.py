"""The base layer: leaves every other layer may import (errors, atomic writes, progress,
bundled TOML files, the TOML reader, the validation-error translator, overrides, processes, JSONL lines, figures, digests, outputs, terminal,
correlation, logging). It imports nothing of streamrag above it."""
