"""``streamrag fit-input --keystrokes DIR [--hypotheses H.jsonl] [--validate DIR2] --out FIT.json``:
the revision model and the cadence fitted to real typing and speech, with bootstrap CIs,
and the typed model checked on held-out participants or on another folder's
(standard-library imports only at top level)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "fit the revision model and cadence to keystroke logs and recorded hypotheses (bootstrap CIs, held-out check)"

EPILOG = """\
examples:
  streamrag fit-input --keystrokes ../shared/data/keystrokes --out runs/fit.json
  streamrag fit-input --keystrokes ../shared/data/keystrokes --hypotheses runs/spoken/v4.jsonl --out runs/fit.json
  streamrag fit-input --keystrokes mine/fit --validate mine/held-out --strict --out runs/validate.json
  streamrag fit-input --keystrokes ../shared/data/keystrokes --validate ../shared/data/keystrokes --split-participants halves --out runs/validate.json

Typed: participants are split (--held-out-share, --seed) into a fit side and a held-out
side; p (revision events per word arrival), r (words an event rewrote), δ (1 / mean gap)
and cv (the gaps' coefficient of variation) are fitted on the fit side with 95% bootstrap
CIs over participants; then the fit side's typists type the held-out sentences, and their
words/s, inter-word gaps and revisions are compared with the held-out logs' CIs (as is
the fitted revision model with jittered cadence). Spoken: the same parameters fitted to a
hypotheses file (`streamrag speak`), CIs over questions. The defaults of the revision
model stay ours; this only measures.

--validate DIR2: fit on all of --keystrokes instead, type the sentences of DIR2's logs
with the fitted typed model, and print each statistic (words/s, gap quantiles, share of
gaps over 1 s, revisions, backspace share, share of runs across a space, p, r, δ, cv) for
the logs and the model with 95% bootstrap CIs over DIR2's participants, and whether the
model's value is inside the logs' CI (--strict: exit 1 when one is not). A participant in
both folders is refused. One folder split in two: give it to both options with
--split-participants (halves: participants sorted by id, first half fitted, second half
validated; alternate: even positions fitted, odd validated).
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit-input", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--keystrokes", type=Path, metavar="DIR", help="a folder of 136M Keystrokes *_keystrokes.txt")
    p.add_argument("--hypotheses", type=Path, metavar="H.jsonl", help="recorded hypotheses (a recognizer's)")
    p.add_argument(
        "--held-out-share", type=float, default=None, help="participants held out of the fit (default 0.2; not with --validate)"
    )
    p.add_argument(
        "--validate", type=Path, metavar="DIR2", help="keystroke logs to validate the typed model fitted on --keystrokes on"
    )
    p.add_argument(
        "--split-participants",
        choices=("halves", "alternate"),
        help="with --validate naming the --keystrokes folder: fit one part of its participants, validate on the other",
    )
    p.add_argument("--strict", action="store_true", help="with --validate: exit 1 when a statistic falls outside the logs' CI")
    p.add_argument("--seed", type=int, default=0, help="split, typing and bootstrap seed (default 0)")
    p.add_argument(
        "--typings",
        type=int,
        default=1,
        metavar="K",
        help="with --validate: the model types each sentence K times, so its value is its expectation, not one draw's (default 1)",
    )
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="skip malformed or implausible keystroke rows (and sentences with implausible gaps) instead of failing; "
        "counted, the first reasons in FIT.json",
    )
    p.add_argument("--out", type=Path, required=True, metavar="FIT.json")
    p.set_defaults(run=run)


def _finite(value: object) -> object:
    """NaN (a statistic undefined on no data) as null: JSON has no NaN."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    return value


def _check(args: argparse.Namespace) -> None:
    from streamrag.base.errors import ConfigError

    if args.keystrokes is None and args.hypotheses is None:
        raise ConfigError("give --keystrokes DIR, --hypotheses FILE or both")
    if args.validate is None:
        given_typings = args.typings != 1
        for flag, given in (
            ("--split-participants", args.split_participants),
            ("--strict", args.strict),
            ("--typings", given_typings),
        ):
            if given:
                raise ConfigError(f"{flag} applies with --validate DIR2 only")
        args.held_out_share = 0.2 if args.held_out_share is None else args.held_out_share
        if not 0.0 < args.held_out_share < 1.0:
            raise ConfigError(f"--held-out-share: {args.held_out_share:g} is outside (0, 1)")
        return
    if args.typings < 1:
        raise ConfigError(f"--typings: the model types each sentence at least once, got {args.typings}")
    if args.keystrokes is None:
        raise ConfigError("--validate DIR2 needs --keystrokes DIR: the logs to fit the typed model on")
    if args.held_out_share is not None:
        raise ConfigError("--held-out-share applies without --validate (with it, the fit is --keystrokes, the check DIR2)")
    if args.split_participants and args.keystrokes.resolve() != args.validate.resolve():
        raise ConfigError(
            f"--split-participants splits one folder: --validate {args.validate} is not --keystrokes {args.keystrokes}"
        )


def _typed(args: argparse.Namespace) -> dict:
    """The typed fit (and its held-out check, or its validation on --validate's logs)."""
    from streamrag.data.human.input_fit import bootstrap, fitted, held_out_check, logged_sessions, run_structure
    from streamrag.data.human.keystrokes import OnError, read_keystrokes
    from streamrag.data.human.typed import split_participants
    from streamrag.data.human.typed_validate import split_half, table, validate

    on_error: OnError = "skip" if args.skip_bad else "raise"
    logs = read_keystrokes(args.keystrokes, on_error=on_error)
    # What --skip-bad left out: its first reason on stderr (the reader's warning), the counts here.
    typed = {"source": str(args.keystrokes), **logs.left_out.report()}
    if args.validate is None:
        fit, held = split_participants(sorted(logs.participants), args.held_out_share, args.seed)
        typed |= held_out_check(logs, fit, held, seed=args.seed)
        _print_fit(
            typed["fit"], f"{typed['n_fit_participants']} participants fitted, {typed['n_held_out_participants']} held out"
        )
        for name, logged in typed["held_out_logged"].items():
            model = typed["held_out_model"]["typed_model"][name]
            mark = "within" if model["within_logged_ci"] else "OUTSIDE"
            print(
                f"  {name}: logged {logged['value']:.4g} [{logged['lo']:.4g}, {logged['hi']:.4g}], typed model {model['value']:.4g} ({mark})"
            )
        return {"typed": typed}
    if args.split_participants:
        val_logs = logs
        ids = sorted(logs.participants)
        fit, val = split_half(ids) if args.split_participants == "halves" else (ids[0::2], ids[1::2])
    else:
        val_logs = read_keystrokes(args.validate, on_error=on_error)
        fit, val = sorted(logs.participants), sorted(val_logs.participants)
    result = validate(logs, fit, val_logs, val, seed=args.seed, typings=args.typings)
    typed |= {
        "n_fit_participants": len(fit),
        "fit": bootstrap(logged_sessions(logs, fit), fitted, seed=args.seed),
        "backspace_runs": run_structure(logs, fit),
    }
    _print_fit(typed["fit"], f"{len(fit)} participants fitted, {result['n_validate_participants']} validated")
    print(table(result))
    return {"typed": typed, "validate": {"split_participants": args.split_participants, **result}}


def _print_fit(f: dict, who: str) -> None:
    print(
        f"typed ({who}): p = {f['p']['value']:.4f} [{f['p']['lo']:.4f}, {f['p']['hi']:.4f}], r = {f['r_mean']['value']:.2f}, "
        f"δ = {f['delta_wps']['value']:.3f} w/s [{f['delta_wps']['lo']:.3f}, {f['delta_wps']['hi']:.3f}], "
        f"cv = {f['cv']['value']:.2f}"
    )


def run(args: argparse.Namespace) -> int:
    from streamrag.base.atomic import write_text_atomic
    from streamrag.data.human.input_fit import fit_file

    _check(args)
    from streamrag.data.human.input_fit import spoken_fit

    out: dict = {}
    if args.keystrokes is not None:
        out |= _typed(args)
    if args.hypotheses is not None:
        from streamrag.data.human.hypotheses_file import read_hypotheses

        recorded = read_hypotheses(args.hypotheses)
        out["spoken"] = {"source": str(args.hypotheses)} | spoken_fit(list(recorded.questions.values()), seed=args.seed)
        f = out["spoken"]["fit"]
        print(
            f"spoken ({out['spoken']['n_questions']} questions): p = {f['p']['value']:.3f} [{f['p']['lo']:.3f}, {f['p']['hi']:.3f}], "
            f"r = {f['r_mean']['value']:.2f} [{f['r_mean']['lo']:.2f}, {f['r_mean']['hi']:.2f}], "
            f"δ = {f['delta_wps']['value']:.2f} hypotheses/s, cv = {f['cv']['value']:.2f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(_finite(fit_file(out)), indent=2, allow_nan=False) + "\n")
    outside = out.get("validate", {}).get("outside", [])
    if args.strict and outside:
        from streamrag.commands._logging import say

        say(
            f"streamrag: fit-input: {len(outside)} statistic{'s' * (len(outside) != 1)} outside the logs' CIs: {', '.join(outside)}",
            level="error",
        )
        return 1
    return 0
