"""The base layer: leaves every other layer may import (errors, atomic writes, progress,
bundled TOML files, overrides, processes, JSONL lines, figures, digests, outputs, terminal,
correlation, logging). It imports nothing of streamrag above it."""
