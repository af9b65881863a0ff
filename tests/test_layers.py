"""The package's layers import only downward, and only the clock reads the wall clock.

Layers, bottom to top (a module may import its own layer and the layers listed as its
dependencies; lazy imports inside functions count too):

===========  =================================================  ============================================
layer        modules                                            may import
===========  =================================================  ============================================
base         errors, atomic, progress, resources, overrides,    —
             processes, lines, figures, digest, outputs,
             terminal, correlation
data         data.*, text, chunking, grounding, cache           base
retrieval    retrieval.*                                        base, data
analysis     analysis.*                                         base, data, retrieval
engine       engine.* (the simulation kernel)                   base
calibration  calibration.* (measurements → latency models)      base, engine
pipeline     pipeline.*                                         base, engine
simulator    simulator.*                                        everything above but calibration, sweep, cli
live         live.* (real clock, real tools, real words)        everything above but sweep, cli
sweep        sweep.*                                            everything but cli
cli          cli, commands.*, __main__, api                     everything
===========  =================================================  ============================================
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "streamrag"

LAYER_OF_PREFIX = {
    "streamrag.errors": "base", "streamrag.atomic": "base", "streamrag.progress": "base",
    "streamrag.resources": "base", "streamrag.overrides": "base", "streamrag.processes": "base",
    "streamrag.lines": "base", "streamrag.figures": "base", "streamrag.digest": "base", "streamrag.outputs": "base",
    "streamrag.terminal": "base", "streamrag.api": "cli", "streamrag.correlation": "base", "streamrag.logs": "base",
    "streamrag.data": "data", "streamrag.text": "data", "streamrag.chunking": "data",
    "streamrag.grounding": "data", "streamrag.cache": "data",
    "streamrag.retrieval": "retrieval", "streamrag.analysis": "analysis",
    "streamrag.engine": "engine", "streamrag.calibration": "calibration", "streamrag.pipeline": "pipeline", "streamrag.simulator": "simulator",
    "streamrag.live": "live", "streamrag.sweep": "sweep", "streamrag.commands": "cli", "streamrag.cli": "cli", "streamrag.__main__": "cli",
}  # fmt: skip
ALLOWED = {
    "base": set(),
    "data": {"base"},
    "retrieval": {"base", "data"},
    "analysis": {"base", "data", "retrieval"},
    "engine": {"base"},
    "calibration": {"base", "engine"},
    "pipeline": {"base", "engine"},
    "simulator": {"base", "data", "retrieval", "analysis", "engine", "pipeline"},
    "live": {"base", "data", "retrieval", "analysis", "engine", "calibration", "pipeline", "simulator"},
    "sweep": {"base", "data", "retrieval", "analysis", "engine", "calibration", "pipeline", "simulator"},
    "cli": {"base", "data", "retrieval", "analysis", "engine", "calibration", "pipeline", "simulator", "sweep", "live"},
}
WALL_CLOCK = {("time", "time"), ("time", "perf_counter"), ("time", "monotonic"), ("time", "monotonic_ns"),
              ("time", "perf_counter_ns"), ("time", "time_ns"), ("datetime", "now"), ("datetime", "utcnow"),
              ("date", "today"), ("time", "sleep"), ("anyio", "sleep"), ("asyncio", "sleep")}  # fmt: skip
CLOCK_MODULE = "streamrag.engine.clock"


def layer(module: str) -> str | None:
    if module == "streamrag":
        return "base"
    best = max((p for p in LAYER_OF_PREFIX if module == p or module.startswith(p + ".")), key=len, default=None)
    return None if best is None else LAYER_OF_PREFIX[best]


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the package
                base = (
                    module.split(".")[: -node.level]
                    if path.name != "__init__.py"
                    else module.split(".")[: len(module.split(".")) - node.level + 1]
                )
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return found


def test_every_module_has_a_layer():
    assert [m for m, _ in modules() if layer(m) is None] == []


def test_no_module_imports_upward():
    bad = []
    for module, path in modules():
        own = layer(module)
        for line, name in imports(path, module):
            if not name.startswith("streamrag"):
                continue
            target = layer(name)
            if target is not None and target != own and target not in ALLOWED[own]:  # type: ignore[index]
                bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {own} imports {name} ({target})")
    assert bad == []


def test_the_kernel_and_the_pipeline_know_nothing_of_analysis_or_retrieval():
    for module, path in modules():
        if layer(module) in ("engine", "pipeline"):
            names = [n for _, n in imports(path, module)]
            assert not any(n.startswith(("streamrag.analysis", "streamrag.retrieval", "streamrag.data")) for n in names), module


def test_only_the_clock_reads_the_wall_clock():
    bad = []
    for module, path in modules():
        if module == CLOCK_MODULE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if (node.value.id, node.attr) in WALL_CLOCK:
                    bad.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {node.value.id}.{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.module in ("time", "datetime"):
                names = {a.name for a in node.names}
                if names & {"time", "perf_counter", "monotonic", "monotonic_ns", "perf_counter_ns", "time_ns", "sleep"}:
                    bad.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: from {node.module} import {names}")
    assert bad == []


@pytest.mark.parametrize("bad", ["streamrag.simulator.runner", "streamrag.analysis.stats"])
def test_the_check_catches_an_upward_import(tmp_path, bad):
    # The rule fires on a kernel module importing from above (a test that can fail).
    module = "streamrag.engine.fake"
    path = tmp_path / "fake.py"
    path.write_text(f"def f():\n    from {bad} import x\n", encoding="utf-8")
    names = [n for _, n in imports(path, module) if n.startswith("streamrag")]
    assert any(layer(n) not in ALLOWED["engine"] | {"engine"} for n in names)
