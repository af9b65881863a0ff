"""No Sphinx role reaches the docs site as typed (issue 48).

The docstrings name objects the Sphinx way (``:class:`~a.b.C```); ``scripts/docs_roles.py``
turns each role into code and an optional cross-reference, in the docstrings mkdocstrings
renders (a griffe extension) and in the docstring text the generated reference pages copy.
These tests check the converter on examples, its resolution in a docstring's scope, and
that neither the package's docstrings as the site loads them nor the generated pages keep
a raw role; the site build itself is ``make docs``.
"""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[2]
RAW_ROLE = re.compile(r":[a-z][\w:-]*:`")
"""Any reStructuredText role, wider than the ones the converter knows, so a new kind shows up."""


@pytest.fixture(scope="module")
def roles() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_roles", ROOT / "scripts" / "docs_roles.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ref(identifier: str, shown: str) -> str:
    return f'<autoref identifier="{identifier}" optional>`{shown}`</autoref>'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see :class:`~a.b.C`.", f"see {_ref('a.b.C', 'C')}."),
        ("see :func:`a.b.f`", f"see {_ref('a.b.f', 'a.b.f')}"),
        (":mod:`streamrag.sweep` and :data:`X`", f"{_ref('streamrag.sweep', 'streamrag.sweep')} and {_ref('X', 'X')}"),
        (":py:meth:`the rule <a.B.rule>`", _ref("a.B.rule", "the rule")),
        ("a :attr:`Store.min_df\n    ` wrapped", f"a {_ref('Store.min_df', 'Store.min_df')} wrapped"),
        (":exc:`~.errors.Bad`", _ref("errors.Bad", "Bad")),
        ("``literal`` and :param x: stay", "``literal`` and :param x: stay"),
    ],
)
def test_a_role_becomes_code_and_an_optional_reference(roles: ModuleType, text: str, expected: str) -> None:
    assert roles.roles_to_markdown(text) == expected


def test_a_role_resolves_in_the_scope_of_its_docstring(roles: ModuleType, tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('"""See :mod:`.sub` and :func:`~.sub.mod.go`."""\n')
    (package / "other.py").write_text('"""Other."""\n\n\nclass Thing:\n    """A thing."""\n')
    (package / "sub" / "__init__.py").write_text('"""The sub-package: :mod:`.mod`, :mod:`..other`."""\n')
    (package / "sub" / "mod.py").write_text(
        textwrap.dedent('''\
            """Module."""
            from pkg.other import Thing


            class Local:
                def go(self) -> None:
                    """Go: :class:`Thing`, :meth:`Local.go`, :func:`go`, :class:`Missing`, :mod:`..other`."""
            ''')
    )
    loaded = griffe.load("pkg", search_paths=[tmp_path], extensions=griffe.load_extensions(roles.RolesAsCode))
    assert loaded.docstring.value == f"See {_ref('pkg.sub', '.sub')} and {_ref('pkg.sub.mod.go', 'go')}."
    assert loaded["sub"].docstring.value == f"The sub-package: {_ref('pkg.sub.mod', '.mod')}, {_ref('pkg.other', '..other')}."
    assert loaded["sub.mod.Local.go"].docstring.value == (
        f"Go: {_ref('pkg.other.Thing', 'Thing')}, {_ref('pkg.sub.mod.Local.go', 'Local.go')}, "
        f"{_ref('pkg.sub.mod.Local.go', 'go')}, {_ref('Missing', 'Missing')}, {_ref('pkg.other', '..other')}."
    )


def test_no_docstring_keeps_a_raw_role_as_the_site_loads_it(roles: ModuleType) -> None:
    """The package loaded as mkdocstrings loads it for the API pages, the extension on."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "- scripts/docs_roles.py:RolesAsCode" in config  # the python handler loads the extension
    package = griffe.load("streamrag", search_paths=[ROOT], extensions=griffe.load_extensions(roles.RolesAsCode))
    raw = [
        f"{obj.path}: {obj.docstring.value[m.start() : m.start() + 50]!r}"
        for obj in roles._objects(package)
        if obj.docstring is not None
        for m in RAW_ROLE.finditer(obj.docstring.value)
    ]
    assert not raw, "roles the converter leaves as typed (extend scripts/docs_roles.ROLE):\n" + "\n".join(raw)


def test_no_generated_reference_page_holds_a_raw_role() -> None:
    raw = [
        f"{page.name}:{number}: {line[:80]}"
        for page in sorted((ROOT / "docs" / "reference").glob("*.md"))
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if RAW_ROLE.search(line)
    ]
    assert not raw, "run python scripts/docs_reference.py:\n" + "\n".join(raw)
