"""The folder tree is the layer table: a module's layer is its folder under ``streamrag/``.

Layers, bottom to top. A module may import its own layer and the layers listed as its
dependencies (lazy imports inside functions count too, and so do ``__import__`` and
``importlib.import_module`` of a string, an f-string or a module-level constant; an
import whose target cannot be read is refused outside the few modules that say how theirs
is checked, :data:`DYNAMIC_IMPORTERS`); the table lists exactly the edges the code has, so
an allowed edge nobody uses fails as well as a forbidden one.

===========  ====================================================  ====================================================
layer        what                                                  imports
===========  ====================================================  ====================================================
base         errors, atomic writes, progress, bundled TOML files,  —
             overrides, processes, JSONL lines, figures, digests,
             outputs, terminal, correlation, logging, version
data         readers, validation, text, chunking, grounding,       base
             chunk cache, generated data, the demo set
retrieval    tokenizer, indexes, prefix scoring, dense, rankings   base
analysis     stabilization metrics, statistics, plots, reports     base, data, retrieval
engine       the simulation kernel: clock, loop, latency, trace    base
calibration  measurements → latency models                         base, engine
pipeline     Trigger, Reflector, threads (async components)        base, engine
learn        fit the learned trigger (scikit-learn), its analytic  base, analysis, pipeline
             evaluation
simulator    scenarios, questions, runs, results, load             base, data, retrieval, analysis, engine, pipeline
speculate    the Speculator (agents), LiveKit and Pipecat adapters base, engine, pipeline, simulator
live         real clock, real tools, real words                    everything above but sweep
sweep        grids, points, executors, the sweep table             base, data, analysis, engine, simulator
report       a run folder as one self-contained HTML page          base, analysis, simulator, sweep
commands     one module per ``streamrag`` subcommand               everything above
(root)       ``streamrag``, ``api``, ``cli``, ``__main__``,        base, data, analysis, engine, calibration,
             ``plots`` (every plot function, public)               simulator, speculate, sweep, report, commands
===========  ====================================================  ====================================================

There are no import circles between modules (a package's ``__init__`` and its own
submodule importing each other at module level is one), and only the clock reads the wall
clock.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "streamrag"
ENTRY = "(root)"

ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "data": {"base"},
    "retrieval": {"base"},
    "analysis": {"base", "data", "retrieval"},
    "engine": {"base"},
    "calibration": {"base", "engine"},
    "pipeline": {"base", "engine"},
    "learn": {"base", "analysis", "pipeline"},
    "simulator": {"base", "data", "retrieval", "analysis", "engine", "pipeline"},
    "speculate": {"base", "engine", "pipeline", "simulator"},
    "live": {"base", "data", "retrieval", "analysis", "engine", "calibration", "pipeline", "simulator", "speculate"},
    "sweep": {"base", "data", "analysis", "engine", "simulator"},
    "report": {"base", "analysis", "simulator", "sweep"},
    "commands": {
        "base",
        "data",
        "retrieval",
        "analysis",
        "engine",
        "calibration",
        "pipeline",
        "simulator",
        "live",
        "sweep",
        "report",
        "learn",
    },
    ENTRY: {"base", "data", "analysis", "engine", "calibration", "simulator", "speculate", "sweep", "report", "commands"},
}
CLOCK_MODULE = "streamrag.engine.clock"
# Modules that import ``datetime`` for something other than reading the clock (``time`` is
# never allowed); in them, any wall-clock name is still refused (test below).
TIME_IMPORTS_WITHOUT_CLOCK = {
    "streamrag.calibration.measurements": "parses the timestamps of span exports (datetime.fromisoformat)",
}
WALL_CLOCK_NAMES = {
    "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time",
    "process_time_ns", "thread_time", "thread_time_ns", "sleep", "now", "utcnow", "today", "clock_gettime",
}  # fmt: skip


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 2 and (ROOT / parts[1]).is_dir():
        return parts[1]
    return ENTRY


def modules(root: Path = ROOT) -> list[tuple[str, Path]]:
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


UNREAD = "<a dynamic import whose target the guard cannot read>"
IMPORTERS = {"import_module", "__import__", "import_in_background"}
"""Calls that import the module(s) named by their first argument."""
IMPORT_KEYWORDS = {"preload"}
"""Keyword arguments that name modules the callee imports (``analyze_input(preload=…)``); a
variable of that name passed on is its caller's, counted where the caller writes it."""
DYNAMIC_IMPORTERS = {
    "streamrag": "imports the module of a public name on first use (``_PUBLIC``): every module string among its "
    "constants counts as its import",
    "streamrag.base.processes": "imports, in a thread, the modules its caller passes (``import_in_background``): "
    "counted as the caller's imports where it calls",
}
"""Modules allowed a dynamic import the guard cannot read, and why that is still checked."""


def _constants(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level names bound to strings: a string, or a tuple, list or dict of them."""
    out: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        else:
            continue
        if isinstance(value, ast.Dict):
            items = list(value.values)
        elif isinstance(value, ast.Tuple | ast.List):
            items = list(value.elts)
        else:
            items = [value]
        strings = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        if strings:
            out[name] = strings
    return out


def _dynamic_targets(node: ast.Call, constants: dict[str, list[str]]) -> list[str] | None:
    """The modules an importing call names (a string, an f-string's static part, a tuple of
    strings, or a module-level constant of them); ``[UNREAD]`` when its argument is anything
    else; None when the call imports nothing."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    named = [k.value for k in node.keywords if k.arg in IMPORT_KEYWORDS]
    if named:
        arg = named[0]
    elif name in IMPORTERS and node.args:
        arg = node.args[0]
    else:
        return None
    if isinstance(arg, ast.Name) and arg.id in IMPORT_KEYWORDS:
        return []  # passed on from the caller
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        texts = [arg.value]
    elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        texts = [str(arg.values[0].value).rstrip(".")]
    elif isinstance(arg, ast.Tuple | ast.List) and all(isinstance(e, ast.Constant) for e in arg.elts):
        texts = [str(e.value) for e in arg.elts if isinstance(e, ast.Constant)]
    elif isinstance(arg, ast.Name) and arg.id in constants:
        texts = constants[arg.id]
    else:
        return [UNREAD]
    return [t for t in texts if t.startswith("streamrag")]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Every import of a module, each marked eager (run when the module is imported: at
    module level, outside ``if TYPE_CHECKING``) or lazy."""

    def __init__(self, module: str, is_package: bool, constants: dict[str, list[str]]) -> None:
        self.module, self.is_package, self.constants = module, is_package, constants
        self.found: list[tuple[int, str, bool]] = []
        self.depth = 0

    def _lazy(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _lazy  # noqa: N815 (ast.NodeVisitor names)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            self._lazy(node)
        else:
            self.generic_visit(node)

    def add(self, line: int, name: str) -> None:
        self.found.append((line, name, self.depth == 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.add(node.lineno, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:  # relative: resolve against the package
            package = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
            base = package[: len(package) - node.level + 1]
            name = ".".join([*base, node.module] if node.module else base)
        else:
            name = node.module or ""
        self.add(node.lineno, name)
        for alias in node.names:
            self.add(node.lineno, f"{name}.{alias.name}")

    def visit_Call(self, node: ast.Call) -> None:
        for target in _dynamic_targets(node, self.constants) or ():
            self.add(node.lineno, target)
        self.generic_visit(node)


def all_imports(path: Path, module: str) -> list[tuple[int, str, bool]]:
    """``(line, name, eager)`` of every import (static, lazy, dynamic) of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = _constants(tree)
    visitor = _Imports(module, path.name == "__init__.py", constants)
    visitor.visit(tree)
    if module in DYNAMIC_IMPORTERS:
        visitor.found += [(0, s, False) for strings in constants.values() for s in strings if s.startswith("streamrag.")]
    return visitor.found


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    return [(line, name) for line, name, _ in all_imports(path, module)]


def _module_names() -> set[str]:
    return {m for m, _ in modules()}


def _resolve(name: str, known: set[str]) -> str | None:
    """The module an imported name lives in (``a.b.c`` → ``a.b`` when ``c`` is a name in it)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def layer_edges() -> dict[tuple[str, str], list[str]]:
    edges: dict[tuple[str, str], list[str]] = {}
    for module, path in modules():
        for line, name in imports(path, module):
            if name.startswith("streamrag"):
                a, b = layer(module), layer(name)
                if a != b:
                    edges.setdefault((a, b), []).append(f"{path.relative_to(ROOT.parent)}:{line}: {name}")
    return edges


def test_every_folder_is_a_layer_and_every_layer_a_folder():
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(ALLOWED) - {ENTRY}
    root_modules = sorted(p.stem for p in ROOT.glob("*.py"))
    assert root_modules == ["__init__", "__main__", "api", "cli", "plots"], "only the entry points sit at the package root"


def test_no_module_imports_upward():
    bad = [f"{where} ({a} → {b})" for (a, b), ex in layer_edges().items() if b not in ALLOWED[a] for where in ex]
    assert bad == []


def test_the_table_allows_only_the_edges_the_code_has():
    used = set(layer_edges())
    unused = sorted((a, b) for a, deps in ALLOWED.items() for b in deps if (a, b) not in used)
    assert unused == []


def import_graph(mods: list[tuple[str, Path]]) -> dict[str, set[str]]:
    """Module → the modules it imports (top level, lazy, TYPE_CHECKING, dynamic). Between a
    package and its own submodules only eager imports count: a package's ``__init__``
    importing a submodule lazily, or a submodule its package inside a function, runs after
    both are loaded; both at module level is a circle Python resolves half-loaded."""
    known = {m for m, _ in mods}
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in mods:
        for _, name, eager in all_imports(path, module):
            target = _resolve(name, known) if name.startswith("streamrag") else None
            if target is None or target == module:
                continue
            family = target.startswith(module + ".") or module.startswith(target + ".")
            if eager or not family:
                graph[module].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    assert circles(import_graph(modules())) == []


def test_every_dynamic_import_can_be_read():
    # ``importlib.import_module(name)`` with a name the guard cannot read would hide an
    # upward import; only the modules that say how theirs are still checked may have one.
    unread = [f"{m}:{line}" for m, path in modules() for line, name, _ in all_imports(path, m) if name == UNREAD]
    assert all(entry.rpartition(":")[0] in DYNAMIC_IMPORTERS for entry in unread), unread
    assert {entry.rpartition(":")[0] for entry in unread} == set(DYNAMIC_IMPORTERS)  # no stale entry


def _wall_clock_reads(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in WALL_CLOCK_NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id in {"time", "datetime", "date", "anyio", "asyncio"}
        ):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "time" and not node.args:
            found.append((node.lineno, "….time() (an event loop's clock)"))
    return found


def _time_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] in {"time", "datetime"}]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in {"time", "datetime"}:
            found.append((node.lineno, f"from {node.module} import {', '.join(a.name for a in node.names)}"))
            if node.module == "time":
                found += [(node.lineno, f"time.{a.name}") for a in node.names if a.name in WALL_CLOCK_NAMES]
    return found


def clock_violations(module: str, source: str) -> list[str]:
    if module in (CLOCK_MODULE, "streamrag.engine.loop"):  # the clock, and the loop it drives
        return []
    tree = ast.parse(source)
    bad = [f"{line}: {what}" for line, what in _wall_clock_reads(tree)]
    allowed = module in TIME_IMPORTS_WITHOUT_CLOCK
    bad += [f"{line}: {what}" for line, what in _time_imports(tree) if not (allowed and "datetime" in what)]
    return bad


def test_only_the_clock_reads_the_wall_clock():
    bad = [f"{m}:{v}" for m, path in modules() for v in clock_violations(m, path.read_text(encoding="utf-8"))]
    assert bad == []


@pytest.mark.parametrize(
    "source",
    [
        "import time\n",
        "import time as t\nt.sleep(1)\n",
        "from time import process_time\n",
        "import datetime\n",
        "from datetime import datetime\nx = datetime.now()\n",
        "def f(loop):\n    return loop.time()\n",
        "import asyncio\nasync def f():\n    await asyncio.sleep(0)\n",
    ],
)
def test_the_clock_guard_catches(source):
    assert clock_violations("streamrag.simulator.fake", source) != []
    # An allowed importer of datetime still may not read the clock with it.
    if "now" in source or "sleep" in source or "time()" in source:
        assert clock_violations("streamrag.calibration.measurements", source) != []


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    from streamrag.simulator.simulate import x\n",
        "def f():\n    from streamrag.analysis.stats.rq import x\n",
        "def f():\n    return __import__('streamrag.simulator.simulate')\n",
        "import importlib\nNAME = 'streamrag.simulator.simulate'\ndef f():\n    return importlib.import_module(NAME)\n",
        "import importlib\nNAMES = {'x': 'streamrag.sweep.grid'}\ndef f(k):\n    return importlib.import_module(NAMES[k])\n",
        "import importlib\ndef f(name):\n    return importlib.import_module(name)\n",
        "from streamrag.base.processes import import_in_background\nimport_in_background(('streamrag.report.page',))\n",
    ],
)
def test_the_check_catches_an_upward_or_unreadable_import(tmp_path, source):
    # The rule fires on a kernel module importing from above, however it imports (a test
    # that can fail): statically, lazily, by __import__, through a constant, or by a name
    # it cannot read at all.
    path = tmp_path / "fake.py"
    path.write_text(source, encoding="utf-8")
    names = [n for _, n in imports(path, "streamrag.engine.fake")]
    assert any(n == UNREAD or (n.startswith("streamrag") and layer(n) not in ALLOWED["engine"] | {"engine"}) for n in names)


@pytest.mark.parametrize(
    ("sub", "circle"),
    [
        ("from streamrag.pkg import helper\n", True),  # both at module level: a circle
        ("def f():\n    from streamrag.pkg import helper\n", False),  # the submodule's import is lazy
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from streamrag.pkg import helper\n", False),
    ],
)
def test_a_circle_through_a_package_init_is_caught(tmp_path, sub, circle):
    root = tmp_path / "streamrag"
    (root / "pkg").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text("from streamrag.pkg.sub import thing\nhelper = 1\n", encoding="utf-8")
    (root / "pkg" / "sub.py").write_text(sub + "thing = 2\n", encoding="utf-8")
    assert circles(import_graph(modules(root))) == ([["streamrag.pkg", "streamrag.pkg.sub"]] if circle else [])
