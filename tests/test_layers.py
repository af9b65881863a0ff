"""The folder tree is the layer table: a module's layer is its folder under ``streamrag/``.

Layers, bottom to top. A module may import its own layer and the layers listed as its
dependencies (lazy imports inside functions count too, and so does
``importlib.import_module("streamrag.…")``); the table lists exactly the edges the code
has, so an allowed edge nobody uses fails as well as a forbidden one.

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
             ``plots`` (every plot function, public)               simulator, sweep, report, commands
===========  ====================================================  ====================================================

There are no import circles between modules, and only the clock reads the wall clock.
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
    ENTRY: {"base", "data", "analysis", "engine", "calibration", "simulator", "sweep", "report", "commands"},
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


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


def _dynamic_target(node: ast.Call) -> str | None:
    """``importlib.import_module("streamrag.x.y")`` or ``(f"streamrag.x.{name}")``: the static part."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name != "import_module" or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        text = arg.value
    elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        text = str(arg.values[0].value).rstrip(".")
    else:
        return None
    return text if text.startswith("streamrag") else None


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package
                package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                base = package[: len(package) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Call) and (target := _dynamic_target(node)):
            found.append((node.lineno, target))
    return found


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


def test_no_import_circles():
    # Module graph over every import (top level, lazy, TYPE_CHECKING): strongly connected
    # components of more than one module are circles (Tarjan).
    known = _module_names()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in modules():
        for _, name in imports(path, module):
            if name.startswith("streamrag"):
                target = _resolve(name, known)
                # A package's __init__ importing its own submodules lazily is not a circle.
                if target and target != module and not (target.startswith(module + ".") and path.name == "__init__.py"):
                    graph[module].add(target)
    for module in known:  # a submodule's import of its package's __init__ is the package, not a circle
        graph[module] = {t for t in graph[module] if not module.startswith(t + ".")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

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
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert circles == []


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


@pytest.mark.parametrize("bad", ["streamrag.simulator.simulate", "streamrag.analysis.stats"])
def test_the_check_catches_an_upward_import(tmp_path, bad):
    # The rule fires on a kernel module importing from above (a test that can fail).
    path = tmp_path / "fake.py"
    path.write_text(f"def f():\n    from {bad} import x\n", encoding="utf-8")
    names = [n for _, n in imports(path, "streamrag.engine.fake") if n.startswith("streamrag")]
    assert any(layer(n) not in ALLOWED["engine"] | {"engine"} for n in names)
