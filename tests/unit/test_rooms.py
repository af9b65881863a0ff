"""Rooms small enough to scan: the package's modules, folders and names stay within bounds.

- A module holds at most :data:`MAX_LINES` lines: past that it is split by responsibility.
- A folder (a package) holds at most :data:`MAX_MODULES` modules, its ``__init__.py``
  counted, unless its ``__init__`` docstring has a paragraph starting
  :data:`ANY_NUMBER` that says why (``commands/``: one module per subcommand).
- A basename held in two folders or more is named, as ````name.py````, in the ``__init__``
  docstring of every folder that holds it, beside the reason; a folder whose docstring has
  a paragraph starting :data:`ANY_BASENAME` (``commands/``: each module is named after its
  subcommand) takes no part in the comparison.

Each rule is checked on the package and, on a made-up tree, shown to fail
(:func:`test_each_rule_catches_its_breach`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "streamrag"
MAX_LINES = 400
MAX_MODULES = 15
ANY_NUMBER = "Any number of modules:"
ANY_BASENAME = "Any basename:"
OVER_THE_LIMIT: dict[str, str] = {}
"""Modules known to be over :data:`MAX_LINES`, each with why it is not split yet. An entry
fails once its module is back within the limit, so the list only shrinks."""


def _packages(root: Path) -> list[Path]:
    """Every folder of the package that is a package (has an ``__init__.py``)."""
    return sorted(p.parent for p in root.rglob("__init__.py") if "__pycache__" not in p.parts)


def _docstring(folder: Path) -> str:
    return ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""


def _declares(folder: Path, marker: str) -> bool:
    """The folder's ``__init__`` docstring has a paragraph starting ``marker``."""
    return any(line.startswith(marker) for line in _docstring(folder).splitlines())


def long_modules(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out.append(f"{path.relative_to(root.parent)}: {n} lines (at most {MAX_LINES}: split it by responsibility)")
    return out


def crowded_folders(root: Path) -> list[str]:
    out = []
    for folder in _packages(root):
        n = len(list(folder.glob("*.py")))
        if n > MAX_MODULES and not _declares(folder, ANY_NUMBER):
            out.append(
                f"{folder.relative_to(root.parent)}: {n} modules (at most {MAX_MODULES}: group related ones into a "
                f"sub-package, or start a paragraph of its __init__ docstring with {ANY_NUMBER!r} and say why)"
            )
    return out


def unexplained_basenames(root: Path) -> list[str]:
    holders: dict[str, list[Path]] = defaultdict(list)
    for folder in _packages(root):
        if _declares(folder, ANY_BASENAME):
            continue
        for path in folder.glob("*.py"):
            if path.name != "__init__.py":
                holders[path.name].append(folder)
    out = []
    for name, folders in sorted(holders.items()):
        if len(folders) < 2:
            continue
        for folder in folders:
            if f"``{name}``" not in _docstring(folder):
                others = ", ".join(str(f.relative_to(root.parent)) for f in folders if f != folder)
                out.append(
                    f"{folder.relative_to(root.parent)}/{name}: its name is also in {others}; rename it, or name "
                    f"``{name}`` in {folder.relative_to(root.parent)}/__init__.py's docstring and say why"
                )
    return out


def test_no_module_over_the_line_limit() -> None:
    over = {line.split(":")[0]: line for line in long_modules(ROOT)}
    assert {path: line for path, line in over.items() if path not in OVER_THE_LIMIT} == {}
    assert sorted(path for path in OVER_THE_LIMIT if path not in over) == []  # back within: drop it from the list


def test_no_folder_over_the_module_limit() -> None:
    assert crowded_folders(ROOT) == []


def test_every_repeated_basename_is_explained() -> None:
    assert unexplained_basenames(ROOT) == []


def test_the_exemptions_are_declared_where_they_apply() -> None:
    """Exactly ``commands/`` is exempt, so a new exemption is a decision someone makes here."""
    assert [f.name for f in _packages(ROOT) if _declares(f, ANY_NUMBER)] == ["commands"]
    assert [f.name for f in _packages(ROOT) if _declares(f, ANY_BASENAME)] == ["commands"]


def _package(folder: Path, doc: str, modules: dict[str, int]) -> None:
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(f'"""{doc}"""\n', encoding="utf-8")
    for name, n_lines in modules.items():
        (folder / name).write_text("x = 1\n" * n_lines, encoding="utf-8")


@pytest.mark.parametrize("breach", ["long", "crowded", "basename"])
def test_each_rule_catches_its_breach(tmp_path: Path, breach: str) -> None:
    root = tmp_path / "pkg"
    _package(root, "The root.", {"a.py": MAX_LINES})
    _package(root / "one", "One: ``table.py`` is one's table.", {"table.py": 3})
    _package(root / "cli", f"Commands.\n\n{ANY_NUMBER} one per command.\n\n{ANY_BASENAME} named after commands.", {
        f"c{i}.py": 1 for i in range(MAX_MODULES)
    } | {"table.py": 1})  # fmt: skip
    two_doc = "Two." if breach == "basename" else "Two: ``table.py`` is two's table."
    _package(root / "two", two_doc, {"table.py": MAX_LINES + 1 if breach == "long" else 1})
    if breach == "crowded":
        _package(root / "three", "Three.", {f"m{i}.py": 1 for i in range(MAX_MODULES)})
    found = {"long": long_modules(root), "crowded": crowded_folders(root), "basename": unexplained_basenames(root)}
    assert {rule: bool(lines) for rule, lines in found.items()} == {rule: rule == breach for rule in found}
    assert all(("two" if breach != "crowded" else "three") in line for line in found[breach])
