"""``streamrag analyze``: stabilization of every question of a CRAG file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from streamrag.commands._common import (
    DEMO,
    RETRIEVER_HELP,
    add_data_options,
    add_entity_context,
    compared_retrievers,
    data_path,
    non_negative_int,
    open_cache,
    positive_int,
    probability,
    require_inputs,
    retriever_setting,
)
from streamrag.commands._global import add_global_options

BM25_AND_DENSE = "bm25,dense"
"""What a bare ``--compare-retrievers`` compares (beside ``--retriever``)."""


def _replacing(args: argparse.Namespace) -> str | None:
    """What ends the refusal of a non-empty ``--out`` (None with ``--force``: replace)."""
    return None if args.force else "pass --force to replace that run, or choose another folder"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze",
        help="prefix retrieval on every question: t_sc, t_suf, phi, H, RQ1/RQ2/RQ4 statistics",
        description="Run retrieval on every word prefix of every question and write "
        "stabilization.csv, summary.json and figures (paper preset, split 0 by default).",
    )
    p.add_argument(
        "data",
        nargs="?",
        metavar="DATA",
        help="CRAG file (.jsonl, .jsonl.bz2 or .jsonl.zst), or demo (the built-in demo set); or use --corpus",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.add_argument("--force", action="store_true", help="replace the files of an earlier run in --out (refused otherwise)")
    p.add_argument("--k", type=positive_int, default=3, help="top-k for t_suf (default 3)")
    p.add_argument("--grounding", choices=("exact", "relaxed"), default="exact", help="gold answer matching rule")
    p.add_argument("--idf", choices=("paper", "okapi"), default="paper", help="BM25 idf variant")
    p.add_argument("--retriever", default="bm25", metavar="KIND|TARGET", help=RETRIEVER_HELP)
    p.add_argument(
        "--asr-revisions",
        type=probability,
        default=None,
        metavar="P",
        help="rank ASR partial hypotheses from the seeded revision model: each word's arrival "
        "rewrites the trailing words with probability P (0: word prefixes, today's results)",
    )
    p.add_argument(
        "--asr-hypotheses",
        type=Path,
        default=None,
        metavar="FILE",
        help="rank recorded ASR partial hypotheses instead: JSON lines of {interaction_id, hypotheses: [{t_ms, text}, ...]}",
    )
    p.add_argument(
        "--asr-timing",
        choices=("audio", "available"),
        default=None,
        help="with --asr-hypotheses: rank each hypothesis at its audio time t_ms (audio, default) or when the "
        "recognizer had produced it, available_ms (available: audio time plus compute delay, as speak records it)",
    )
    p.add_argument(
        "--typed",
        type=Path,
        default=None,
        metavar="KEYSTROKES_DIR",
        help="type each question as a participant of these keystroke logs typed (136M Keystrokes *_keystrokes.txt): "
        "a word is heard at the space after it, a backspace into a heard word revises it (seed: --asr-seed)",
    )
    p.add_argument("--asr-window", type=positive_int, default=2, metavar="R", help="words a revision rewrites (default 2)")
    p.add_argument(
        "--asr-final-words",
        type=positive_int,
        default=3,
        metavar="F",
        help="a word is final once F later words arrived (default 3)",
    )
    p.add_argument(
        "--asr-seed", type=non_negative_int, default=0, help="seed of the revision model or of the typed input (default 0)"
    )
    p.add_argument(
        "--compare-retrievers",
        nargs="?",
        const=BM25_AND_DENSE,
        default=None,
        metavar="LIST",
        help="also rank every question with each retriever of LIST, comma-separated kinds or targets as --retriever "
        "takes them (bm25,dense,overlap.py:WordOverlap); alone: bm25 and dense. --retriever ranks the table and is "
        "compared too. Writes summary.json 'retrievers' (each one's RQ1, RQ2, RQ4 and reflector threshold, fixed "
        "and calibrated), retrievers.csv and the retrievers figure",
    )
    p.add_argument(
        "--entity-predictor",
        action="store_true",
        help="also compute the first named entity's word position (spaCy; needs pip install 'streamrag[ner]'): "
        "t_entity, or t_entity_full with --entity-context full",
    )
    add_entity_context(p)
    p.add_argument(
        "--features",
        action="store_true",
        help="also write features.csv: one row per question x word, the anchor's trigger features and "
        "ours (runs the entity tagger on every prefix; needs pip install 'streamrag[ner]')",
    )
    p.add_argument(
        "--features-context",
        choices=("prefix", "full"),
        default="prefix",
        help="entity and question-word columns from the words heard so far (prefix, default) or from "
        "the full query (full: the anchor's rule, right context); column 'context' says which",
    )
    p.add_argument("--no-figures", action="store_true", help="skip the figures")
    p.add_argument(
        "--label-audit",
        type=positive_int,
        default=None,
        metavar="N",
        help="also write DIR/label_audit.csv: N retrieved-gold questions drawn with --seed S (the anchor's "
        "sampler) with their answers and a gold chunk, for a human to judge the gold label",
    )
    p.add_argument(
        "--audit-passage",
        choices=("paper", "lowest"),
        default=None,
        help="the gold chunk --label-audit shows: the first the anchor's gold set yields (paper, default) "
        "or the lowest-numbered; column passage_rule says which",
    )
    p.add_argument(
        "--hotpotqa",
        type=Path,
        default=None,
        metavar="FILE",
        help="instead of CRAG: a HotpotQA distractor file (the original JSON array or HF-style JSON lines); "
        "writes DIR/dual_gold.csv and dual_gold.json, t_suf with the supporting-fact (clean) gold beside the "
        "string-grounded gold (--k, --grounding, --idf and --limit apply)",
    )
    p.add_argument(
        "--queries-only",
        type=Path,
        default=None,
        metavar="FILE",
        help="no retrieval: write DIR/queries.csv, the query-side columns (n_words, question_word, "
        "t_entity with --entity-predictor) of every question of FILE (JSON lines with interaction_id "
        "and query; no pages needed); join them onto any table with 'stats TABLE --join'",
    )
    add_data_options(p)
    add_global_options(p)
    p.set_defaults(run=run)


def asr_setting(args: argparse.Namespace) -> dict[str, Any] | None:
    """``AnalysisSettings.asr`` from the command line (None: word prefixes)."""
    from streamrag.base.errors import ConfigError

    given = [
        n
        for n, v in (("--asr-revisions", args.asr_revisions), ("--asr-hypotheses", args.asr_hypotheses), ("--typed", args.typed))
        if v is not None
    ]
    if len(given) > 1:
        raise ConfigError(f"give one input of {', '.join(given)}, not several")
    timing = getattr(args, "asr_timing", None)
    if timing is not None and args.asr_hypotheses is None:
        raise ConfigError("--asr-timing applies to recorded hypotheses (--asr-hypotheses FILE)")
    if args.typed is not None:
        return {"kind": "typed", "path": str(args.typed), "seed": args.asr_seed}
    if args.asr_hypotheses is not None:
        return {"kind": "file", "path": str(args.asr_hypotheses)} | ({} if timing is None else {"timing": timing})
    if args.asr_revisions is not None:
        return {"p": args.asr_revisions, "r": args.asr_window, "final_words": args.asr_final_words, "seed": args.asr_seed}
    return None


QUERIES_TABLE = "queries.csv"
"""What ``analyze --queries-only`` writes into its output folder."""


def run_queries_only(args: argparse.Namespace) -> int:
    """``analyze --queries-only FILE``: the query-side columns of every question, no pages read."""
    from streamrag.base.errors import ConfigError

    if args.data is not None:
        raise ConfigError("--queries-only FILE reads no pages: give no DATA (--corpus DIR gives t_anchor's corpus)")
    require_inputs(args.queries_only, args.corpus)
    from streamrag.analysis.studies.entity import ENTITY_COLUMNS
    from streamrag.analysis.studies.query_side import query_columns, write_query_table
    from streamrag.base.progress import advancing, task_progress
    from streamrag.base.system.outputs import check_out_dir

    out = check_out_dir(args.out, refuse_nonempty=_replacing(args))
    index = None
    if args.corpus is not None:  # t_anchor's document frequencies: the corpus' global index
        from streamrag.analysis.entry import open_source
        from streamrag.analysis.global_scope.analyze import pool_index
        from streamrag.analysis.stabilize import AnalysisSettings
        from streamrag.data.chunking import ChunkSettings
        from streamrag.data.selection import Selection
        from streamrag.retrieval.bm25 import BM25Params

        settings = AnalysisSettings(chunks=ChunkSettings(parser=args.parser), bm25=BM25Params(idf=args.idf))
        source = open_source(args.corpus, settings, Selection(split=args.split, scope="global"), cache=open_cache(args))
        index = pool_index(source, settings, index_dir=args.index_dir)
    with task_progress(f"query columns of {args.queries_only.name}", None) as update:
        entity = args.entity_context if args.entity_predictor else None
        rows = query_columns(args.queries_only, entity=entity, progress=advancing(update), anchor_index=index)
    out.mkdir(parents=True, exist_ok=True)
    target = write_query_table(rows, out / QUERIES_TABLE)
    said = ""
    if entity is not None:
        column = ENTITY_COLUMNS[entity]
        said = f", {sum(1 for r in rows if r.get(column) is not None)} with a named entity ({column})"
    print(f"{args.queries_only}: {len(rows)} questions{said}\nwrote {target}")
    return 0


DUAL_TABLE, DUAL_SUMMARY = "dual_gold.csv", "dual_gold.json"
"""What ``analyze --hotpotqa`` writes into its output folder."""


def run_hotpotqa(args: argparse.Namespace) -> int:
    """``analyze --hotpotqa FILE``: clean (supporting facts) vs string-grounded t_suf."""
    from streamrag.base.errors import ConfigError

    if args.data is not None or args.corpus is not None:
        raise ConfigError("--hotpotqa FILE is the input: give no DATA and no --corpus")
    require_inputs(args.hotpotqa)
    from streamrag.analysis.stats.report import write_summary
    from streamrag.analysis.studies.dual_gold import dual_row, dual_summary, write_dual_table
    from streamrag.base.progress import advancing, task_progress
    from streamrag.base.system.outputs import check_out_dir
    from streamrag.data.hotpotqa import read_hotpotqa
    from streamrag.retrieval.bm25 import BM25Params

    out = check_out_dir(args.out, refuse_nonempty=_replacing(args))
    bm25 = BM25Params(idf=args.idf)
    rows = []
    with task_progress(f"dual gold of {args.hotpotqa.name}", args.limit) as update:
        advance = advancing(update)
        for question in read_hotpotqa(args.hotpotqa, limit=args.limit):
            rows.append(dual_row(question, k=args.k, grounding=args.grounding, bm25=bm25))
            if advance is not None:
                advance(1)
    if not rows:
        raise ConfigError(f"{args.hotpotqa}: no usable question (each needs paragraphs, query words and supporting facts)")
    summary = {
        "parameters": {
            "data": str(args.hotpotqa),
            "k": args.k,
            "grounding": args.grounding,
            "idf": args.idf,
            "limit": args.limit,
        },
        **dual_summary(rows),
    }
    out.mkdir(parents=True, exist_ok=True)
    write_dual_table(rows, out / DUAL_TABLE)
    write_summary(summary, out / DUAL_SUMMARY)

    def cell(c: dict) -> str:
        if not c["n"]:
            return "n 0"
        return (
            f"n {c['n']}, phi_suf mean {c['mean_phi_suf']:.4f} median {c['median_phi_suf']:.4f}, t_suf=1 {c['share_t_suf_1']:.1%}"
        )

    print(
        f"{args.hotpotqa}: {summary['n_questions']} questions ({summary['n_string_ungroundable']} with the answer in no paragraph)\n"
        f"  clean (supporting facts): {cell(summary['clean'])}\n  string-grounded: {cell(summary['string'])}\n"
        f"  retrieved-gold in both {summary['n_retrieved_gold_both']}: string earlier on {summary['n_string_earlier']}, "
        f"later on {summary['n_string_later']}\nwrote {out / DUAL_TABLE} and {out / DUAL_SUMMARY}"
    )
    return 0


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError

    if args.queries_only is not None:
        return run_queries_only(args)
    if args.hotpotqa is not None:
        return run_hotpotqa(args)
    if (args.data is None) == (args.corpus is None):
        raise ConfigError("give DATA (a CRAG file) or --corpus DIR, one of the two")
    if args.data == DEMO and not args.split_given:  # the word (a file of that name is ./demo)
        args.split = None  # the demo set's questions of every split, as --input demo reads them
    args.data = data_path(args.data)
    require_inputs(args.data, args.corpus)  # before the imports below: a typo costs milliseconds
    args.retriever = retriever_setting(args.retriever, args.scope)  # a user's class is imported now, before any data is read
    args.compare_retrievers = compared_retrievers(args.compare_retrievers, args.scope)

    from streamrag.base.system.outputs import check_out_dir

    if args.audit_passage is not None and args.label_audit is None:
        raise ConfigError("--audit-passage chooses the passage --label-audit shows: give --label-audit N with it")
    if args.label_audit is not None and (args.corpus is not None or args.scope != "per-question"):
        raise ConfigError(
            "--label-audit samples a CRAG file's questions in per-question scope: give DATA, not --corpus or --scope global"
        )
    check_out_dir(args.out, refuse_nonempty=_replacing(args))
    from streamrag.commands._common import Written

    written = Written(args.out)
    try:
        return _run_study(args, written)
    except KeyboardInterrupt as exc:  # the analysis' files land together or not at all
        raise written.interrupted(exc) from None


def _run_study(args: argparse.Namespace, written: Any) -> int:
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.analysis.study import run_study
    from streamrag.base.progress import file_progress
    from streamrag.base.validation import validated
    from streamrag.data.chunking import ChunkSettings
    from streamrag.data.selection import Selection, read_ids
    from streamrag.retrieval.bm25 import BM25Params

    given = {
        "chunks": ChunkSettings(parser=args.parser),
        "bm25": BM25Params(idf=args.idf),
        "k": args.k,
        "grounding": args.grounding,
        "retriever": args.retriever,
        "compare_retrievers": args.compare_retrievers,
        "entity_predictor": args.entity_predictor or args.features,
        "entity_context": args.entity_context,
        "asr": asr_setting(args),
    }
    # One line, not a traceback, for a refused combination (--asr-* or --compare-retrievers with a retriever).
    settings = validated(AnalysisSettings, given)
    selection = Selection(split=args.split, ids=read_ids(args.ids) if args.ids else None, limit=args.limit, scope=args.scope)
    source = args.corpus or args.data
    options = {
        "gold": args.gold,
        "cache": open_cache(args),
        "jobs": args.jobs,
        "on_error": "skip" if args.skip_bad else "raise",
        "parallel_decompression": args.parallel_bz2,
        "index_dir": args.index_dir,
        "qrels_split": args.qrels,
        "distractors": args.distractors,
        "seed": args.seed,
    }
    if args.corpus is None and args.scope == "per-question":
        with file_progress(args.data, "analyzing") as progress:
            result = run_study(source, args.out, settings, selection, figures=not args.no_figures, progress=progress, **options)
    else:
        result = run_study(source, args.out, settings, selection, figures=not args.no_figures, **options)
    extras = [name for name, on in (("features.csv", args.features), ("label_audit.csv", args.label_audit is not None)) if on]
    written.done, written.still = True, extras
    if args.features:
        from streamrag.analysis.features.compute import FEATURE_FILE
        from streamrag.analysis.features.table import study_feature_rows, write_feature_table

        write_feature_table(study_feature_rows(result.analyses, context=args.features_context), args.out / FEATURE_FILE)
    from streamrag.analysis.console import format_study  # (its statistics' imports ran during the analysis)

    print(format_study(result.summary, args.out))
    if args.label_audit is not None:
        from streamrag.analysis.studies.label_audit import AUDIT_FILE, label_audit, write_audit

        rows = label_audit(
            args.data,
            result.analyses,
            args.label_audit,
            args.seed,
            chunks=settings.chunks,
            grounding=settings.grounding,
            cache=options["cache"],
            passage=args.audit_passage or "paper",
        )
        target = write_audit(rows, args.out / AUDIT_FILE)
        print(f"wrote {target}: {len(rows)} questions to judge (seed {args.seed}, {args.audit_passage or 'paper'} passage rule)")
    written.still = []
    return 0
