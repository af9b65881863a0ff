"""The questions a sweep runs on, named by one string in the grid file.

=============================  =====================================================
``table:PATH`` or ``*.csv``    a stabilization table (§7): trace-driven simulation,
                               arithmetic RQ2 cells
``data:PATH`` or ``*.jsonl``,  a CRAG file: analyzed once per (k, grounding) into
``*.jsonl.bz2``                prefix rankings (full mode) or a table
``demo``                       the built-in 32-question demo set (a data file)
``generated:N[:seed=S]``       a synthetic table of N questions calibrated to the
                               anchor study (:func:`generate_stabilization_table`)
=============================  =====================================================

Data inputs read ``split`` (default 0; the demo set: ``all``) and ``limit``; tables take
``limit`` (first N rows). The *fingerprint* — a hash of the input's content and the
selection — enters every point key, so a sweep over changed data never reuses a result.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from streamrag.base.digest import file_sha256
from streamrag.base.errors import ConfigError
from streamrag.base.validation import SettingsModel

if TYPE_CHECKING:
    import pandas as pd

    from streamrag.simulator.questions import QuestionSet

InputKind = Literal["table", "data", "demo", "generated"]
_GENERATED = re.compile(r"generated:(\d+)(?::seed=(\d+))?")


class InputSpec(SettingsModel):
    """A parsed input source (paths absolute)."""

    source: str
    kind: InputKind
    path: str | None = None
    n_questions: int | None = None
    seed: int = 0
    split: int | Literal["all"] | None = None
    """Data inputs: CRAG split (0 = validation) or ``"all"``; ``None`` for tables."""
    limit: int | None = None

    @property
    def trace_driven(self) -> bool:
        """Tables know only t*: no prefix rankings."""
        return self.kind in ("table", "generated")

    @property
    def has_evidence(self) -> bool:
        """Per-prefix evidence comes with the questions: a data file (the analyzer's), a
        generated table (synthetic), or a table with its evidence beside it
        (:func:`~streamrag.analysis.evidence.prefixes.find_evidence`)."""
        if self.kind == "table":
            from streamrag.analysis.evidence.prefixes import find_evidence

            return find_evidence(self.path or "") is not None
        return True

    @property
    def data_path(self) -> Path:
        if self.kind == "demo":
            from streamrag.data.demo import demo_path

            return demo_path()
        if self.kind != "data" or self.path is None:
            raise ConfigError(f"input {self.source!r} is a table, not a data file")
        return Path(self.path)

    def split_arg(self) -> int | None:
        """The split as the analyzer takes it (``None`` = all)."""
        return None if self.split == "all" else self.split


def parse_input(source: str, *, base_dir: Path, split: int | Literal["all"] | None = None, limit: int | None = None) -> InputSpec:
    """Parse an input source string (see the module docstring); check files exist."""
    text = source.strip()
    if text == "demo":
        return InputSpec(source=text, kind="demo", split="all" if split is None else split, limit=limit)
    if text.startswith("generated"):
        m = _GENERATED.fullmatch(text)
        if not m or int(m.group(1)) < 1:
            raise ConfigError(f"{source!r}: expected generated:N or generated:N:seed=S with N ≥ 1")
        _no_split(source, split)
        return InputSpec(source=text, kind="generated", n_questions=int(m.group(1)), seed=int(m.group(2) or 0), limit=limit)
    kind: InputKind
    if text.startswith("table:"):
        kind, raw = "table", text[len("table:") :]
    elif text.startswith("data:"):
        kind, raw = "data", text[len("data:") :]
    elif text.endswith(".csv"):
        kind, raw = "table", text
    elif text.endswith((".jsonl", ".jsonl.bz2", ".jsonl.zst")):
        kind, raw = "data", text
    else:
        raise ConfigError(
            f"{source!r}: unknown input; use table:PATH, data:PATH, demo or generated:N[:seed=S] "
            "(or a path ending in .csv, .jsonl, .jsonl.bz2 or .jsonl.zst)"
        )
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if not path.is_file():
        raise ConfigError(f"{source!r}: no such file {path}")
    if kind == "table":
        _no_split(source, split)
        return InputSpec(source=text, kind="table", path=str(path.resolve()), limit=limit)
    return InputSpec(source=text, kind="data", path=str(path.resolve()), split=0 if split is None else split, limit=limit)


def _no_split(source: str, split: object) -> None:
    if split is not None:
        raise ConfigError(f"{source!r}: split applies to data files only (a table has no split)")


class PreparedInputs:
    """What points read, built once per sweep in the parent process and memoized.

    ``table()`` is the stabilization table (read, generated, or analyzed at the given
    k and grounding); ``questions()`` the simulator's questions (trace-driven from the
    table, or full mode from the data file). Analysis uses the chunk cache ``cache`` and
    ``jobs`` processes reading the records (parse, HTML → chunks, the cache).
    """

    def __init__(self, spec: InputSpec, *, cache: Any = None, jobs: int = 1) -> None:
        self.spec = spec
        self.cache = cache
        self.jobs = jobs
        self._memo: dict[str, Any] = {}
        self._fingerprint: dict[str, Any] | None = None

    def fingerprint(self) -> dict[str, Any]:
        """``{kind, sha256, split, limit}``: the content hash of the file (or of the
        generated table's CSV) and the selection."""
        if self._fingerprint is None:
            spec = self.spec
            if spec.kind == "generated":
                digest = hashlib.sha256(self._generated().to_csv(index=False).encode("utf-8")).hexdigest()
            elif spec.kind == "table":
                digest = file_sha256(Path(spec.path))  # type: ignore[arg-type]
                from streamrag.analysis.evidence.prefixes import find_evidence

                evidence = find_evidence(spec.path)  # type: ignore[arg-type]
                if evidence is not None:  # the replay reads it: its content is part of the input
                    digest = hashlib.sha256((digest + file_sha256(evidence)).encode()).hexdigest()
            else:
                digest = file_sha256(spec.data_path)
            self._fingerprint = {"kind": spec.kind, "sha256": digest, "split": spec.split, "limit": spec.limit}
        return self._fingerprint

    def _generated(self) -> pd.DataFrame:
        if "generated" not in self._memo:
            from streamrag.data.generated.records import generate_stabilization_table

            self._memo["generated"] = generate_stabilization_table(self.spec.n_questions or 0, seed=self.spec.seed)
        return self._memo["generated"]

    def table(self, analysis: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """The stabilization table; a data input is analyzed with ``analysis``
        (:class:`~streamrag.analysis.stabilize.AnalysisSettings` fields, default the paper preset)."""
        spec = self.spec
        memo_key = "table" if spec.trace_driven else f"table:{_canonical(analysis)}"
        if memo_key not in self._memo:
            if spec.kind == "generated":
                df = self._generated()
            elif spec.kind == "table":
                from streamrag.analysis.table import read_table

                df = read_table(spec.path)  # type: ignore[arg-type]
            else:
                df = self._analyze(analysis or {})
            if spec.limit is not None and spec.trace_driven:
                df = df.head(spec.limit).reset_index(drop=True)
            self._memo[memo_key] = df
        return self._memo[memo_key]

    def _analyze(self, analysis: Mapping[str, Any]) -> pd.DataFrame:
        from streamrag.analysis.entry import analyze_input
        from streamrag.analysis.stabilize import AnalysisSettings
        from streamrag.analysis.study import table_frame
        from streamrag.data.selection import Selection
        from streamrag.simulator.questions import questions_from_analyses

        fields = dict(analysis)
        scope, gold = fields.pop("scope", "per-question"), fields.pop("gold", None)
        settings = AnalysisSettings.model_validate(fields)
        selection = Selection(split=self.spec.split_arg(), limit=self.spec.limit, scope=scope)
        analyzed = analyze_input(self.spec.data_path, settings, selection, gold=gold, cache=self.cache, jobs=self.jobs)
        analyses = analyzed.analyses
        # One pass gives every view: the full-mode questions for simulate points, and the
        # analysis's own outputs (what `analyze` writes), which each simulate point keeps.
        self._memo[f"questions:{_canonical(analysis)}"] = questions_from_analyses(analyses, settings.k)
        self._memo[f"study:{_canonical(analysis)}"] = _study_files(analyses, analyzed.parameters)
        return table_frame(analyses)

    def study(self, analysis: Mapping[str, Any] | None = None) -> dict[str, bytes]:
        """A data input's analysis with ``analysis`` as ``analyze`` writes it
        (``stabilization.csv``, and its ``summary.json`` as ``analysis.json``): what a
        simulate point on that input keeps beside its own outputs. Empty for a table or
        generated input (analyzed already)."""
        if self.spec.trace_driven:
            return {}
        self.table(analysis)
        files: dict[str, bytes] = self._memo[f"study:{_canonical(analysis)}"]
        return files

    def questions(self, analysis: Mapping[str, Any] | None = None) -> QuestionSet:
        """The simulator's questions, one entry per input row (a data input is analyzed
        with ``analysis``, as in :meth:`table`). A table input is replayed with the
        evidence beside it when there is one (bound to it), a generated table with
        synthetic evidence (:mod:`streamrag.analysis.evidence.synthetic`); otherwise the
        oracle reflector runs, and the sweep's outputs say so."""
        if self.spec.trace_driven:
            if "questions" not in self._memo:
                from streamrag.simulator.questions import questions_from_frame

                table = self.table()
                evidence, source = self._evidence(table)
                if evidence is None:
                    self._memo["questions"] = questions_from_frame(table)
                else:
                    self._memo["questions"] = questions_from_frame(table, evidence, source=source)
            return self._memo["questions"]
        memo_key = f"questions:{_canonical(analysis)}"
        if memo_key not in self._memo:
            self.table(analysis)
        return self._memo[memo_key]

    def _evidence(self, table: pd.DataFrame) -> tuple[Any, str]:
        from streamrag.simulator.questions import ANALYZER_EVIDENCE

        if self.spec.kind == "generated":
            from streamrag.analysis.evidence.synthetic import MODEL_NAME, synthetic_evidence

            return synthetic_evidence(table, seed=self.spec.seed), MODEL_NAME
        from streamrag.analysis.evidence.prefixes import find_evidence
        from streamrag.analysis.evidence.read import read_evidence

        path = find_evidence(self.spec.path or "")
        return (read_evidence(path), ANALYZER_EVIDENCE) if path is not None else (None, "")


STUDY_FILES = {"stabilization.csv": "stabilization.csv", "summary.json": "analysis.json"}
"""What a simulate point keeps of its data input's analysis: ``analyze``'s file → the point's."""


def _study_files(analyses: Any, parameters: dict[str, Any]) -> dict[str, bytes]:
    import tempfile

    from streamrag.analysis.study import write_study

    with tempfile.TemporaryDirectory(prefix="streamrag-study-") as tmp:
        write_study(analyses, Path(tmp), parameters, figures=False)
        return {mine: (Path(tmp) / theirs).read_bytes() for theirs, mine in STUDY_FILES.items()}


def _canonical(analysis: Mapping[str, Any] | None) -> str:
    """One string per analysis setting (memo and input-reference keys)."""
    return json.dumps(dict(analysis or {}), sort_keys=True, separators=(",", ":"))


def input_ref(view: Literal["table", "questions"], analysis: Mapping[str, Any] | None) -> str:
    """Name of a prepared input: ``table`` / ``questions`` for a table input; for a data
    input, the view and the analysis settings it is built with
    (``questions:{"grounding":"exact","k":3}``)."""
    return view if analysis is None else f"{view}:{_canonical(analysis)}"


def ref_analysis(ref: str | None) -> dict[str, Any] | None:
    """The analysis settings of an input reference (``None`` for a table input)."""
    _, sep, rest = (ref or "").partition(":")
    return json.loads(rest) if sep else None
