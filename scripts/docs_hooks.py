"""MkDocs hooks (``mkdocs.yml``: ``hooks``): pages of the site whose source lives outside
``docs/``, brought in as they are so that nothing is copied by hand.

- ``changelog.md`` is ``CHANGELOG.md``;
- ``results.md`` is ``benchmarks/RESULTS.md`` (generated from the benchmarks' result
  records by ``scripts/bench_results.py``);
- ``notebooks/*.ipynb``, rendered by mkdocs-jupyter without executing them (the tests
  execute them: ``tests/integration/test_notebooks.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
PAGES = {"changelog.md": ROOT / "CHANGELOG.md", "results.md": ROOT / "benchmarks" / "RESULTS.md"}


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns the notebooks into pages
def on_files(files: Files, config: Any) -> Files:
    for uri, source in PAGES.items():
        files.append(File.generated(config, uri, abs_src_path=str(source)))
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        files.append(File(f"notebooks/{notebook.name}", str(ROOT), config["site_dir"], config["use_directory_urls"]))
    return files
