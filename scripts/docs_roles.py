"""Sphinx cross-reference roles in docstrings, rendered as code (and links) on the docs site.

The package's docstrings name objects the Sphinx way (``:class:`~a.b.C```, ``:func:`f```,
``:mod:`.sibling```); mkdocstrings renders Markdown and would show those roles as typed.
Rather than rewrite the docstrings, the build converts each role, once, where the text
enters the site:

- docstrings rendered by mkdocstrings: the griffe extension :class:`RolesAsCode`
  (``mkdocs.yml``: the python handler's ``extensions``), which resolves a short or relative
  name in the scope of the object whose docstring holds it;
- docstring text that ``scripts/docs_reference.py`` copies into the generated reference
  pages (the meaning of a configuration key): :func:`roles_to_markdown`, without a scope.

A role becomes its text as code — ``~a.b.c`` shows ``c``, ``a.b.c`` shows ``a.b.c``,
``Title <a.b.c>`` shows ``Title`` — wrapped in an *optional* mkdocs-autorefs reference
(``<autoref identifier="a.b.c" optional>``). Autorefs links it when the identifier is an
object rendered somewhere on the site and otherwise leaves the code unlinked without a
warning, so strict mode holds however many roles name objects the API pages leave out;
which objects are rendered is known only once every page is built, which is when autorefs
decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from html import escape

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const|type):`(?P<target>[^`]+)`")
"""A Sphinx Python-domain role; its target may wrap onto the next line of a docstring."""


def roles_to_markdown(text: str, resolve: Callable[[str], str] | None = None) -> str:
    """``text`` with every role replaced by its shown text as code, referenced optionally.

    ``resolve`` turns a target as written (``C``, ``.sibling.f``) into a full identifier;
    without it a target is its own identifier.
    """

    def replace(match: re.Match[str]) -> str:
        target = " ".join(match["target"].split())
        titled = re.fullmatch(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>", target)
        title, target = (titled["title"], titled["target"]) if titled else (None, target)
        short = target.startswith("~")
        target = target.lstrip("~!")
        shown = title or (target.rsplit(".", 1)[-1] if short else target)
        identifier = resolve(target) if resolve else target.lstrip(".")
        return f'<autoref identifier="{escape(identifier)}" optional>`{shown}`</autoref>'

    return ROLE.sub(replace, text)


def scope_resolver(obj: griffe.Object) -> Callable[[str], str]:
    """Resolve a target in the scope of ``obj``: ``.x`` (one dot per package level, as a
    relative import) from ``obj``'s package; otherwise its first name as Python would see it
    there (a member, a parent's member, an import); a name not found is kept as written."""

    def resolve(target: str) -> str:
        if target.startswith("."):
            module = obj.module
            package = module.path if module.is_init_module else module.path.rpartition(".")[0]
            rest = target.lstrip(".")
            parts = package.split(".")[: len(package.split(".")) - (len(target) - len(rest) - 1)]
            return ".".join([*parts, rest] if rest else parts)
        head, dot, tail = target.partition(".")
        try:
            return obj.resolve(head) + dot + tail
        except griffe.NameResolutionError:
            return target

    return resolve


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:  # an import: its docstring is converted where it is defined
            yield from _objects(member)


class RolesAsCode(griffe.Extension):
    """Converts the roles of every docstring of a loaded package before mkdocstrings parses
    and renders it."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: object) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = roles_to_markdown(obj.docstring.value, scope_resolver(obj))
