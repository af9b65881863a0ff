"""``streamrag fit-input --keystrokes DIR [--hypotheses H.jsonl] --out FIT.json``: the
revision model and the cadence fitted to real typing and speech, with bootstrap CIs, and
the typed model checked on held-out participants (standard-library imports only at top
level)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "fit the revision model and cadence to keystroke logs and recorded hypotheses (bootstrap CIs, held-out check)"

EPILOG = """\
examples:
  streamrag fit-input --keystrokes ../shared/data/keystrokes --out runs/fit.json
  streamrag fit-input --keystrokes ../shared/data/keystrokes --hypotheses runs/spoken/v4.jsonl --out runs/fit.json

Typed: participants are split (--held-out-share, --seed) into a fit side and a held-out
side; p (revision events per word arrival), r (words an event rewrote), δ (1 / mean gap)
and cv (the gaps' coefficient of variation) are fitted on the fit side with 95% bootstrap
CIs over participants; then the fit side's typists type the held-out sentences, and their
words/s, inter-word gaps and revisions are compared with the held-out logs' CIs (as is
the fitted revision model with jittered cadence). Spoken: the same parameters fitted to a
hypotheses file (`streamrag speak`), CIs over questions. The defaults of the revision
model stay ours; this only measures.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fit-input", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--keystrokes", type=Path, metavar="DIR", help="a folder of 136M Keystrokes *_keystrokes.txt")
    p.add_argument("--hypotheses", type=Path, metavar="H.jsonl", help="recorded hypotheses (a recognizer's)")
    p.add_argument("--held-out-share", type=float, default=0.2, help="participants held out of the fit (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="split, typing and bootstrap seed (default 0)")
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


def run(args: argparse.Namespace) -> int:
    from streamrag.base.atomic import write_text_atomic
    from streamrag.base.errors import ConfigError

    if args.keystrokes is None and args.hypotheses is None:
        raise ConfigError("give --keystrokes DIR, --hypotheses FILE or both")
    if not 0.0 < args.held_out_share < 1.0:
        raise ConfigError(f"--held-out-share: {args.held_out_share:g} is outside (0, 1)")
    from streamrag.data.human.input_fit import held_out_check, spoken_fit

    out: dict = {}
    if args.keystrokes is not None:
        from streamrag.data.human.keystrokes import read_keystrokes
        from streamrag.data.human.typed import split_participants

        logs = read_keystrokes(args.keystrokes, on_error="skip" if args.skip_bad else "raise")
        fit, held = split_participants(sorted(logs.participants), args.held_out_share, args.seed)
        # What --skip-bad left out: its first reason on stderr (the reader's warning), the counts here.
        out["typed"] = {"source": str(args.keystrokes), **logs.left_out.report()} | held_out_check(
            logs, fit, held, seed=args.seed
        )
        typed = out["typed"]
        f = typed["fit"]
        print(
            f"typed ({typed['n_fit_participants']} participants fitted, {typed['n_held_out_participants']} held out): "
            f"p = {f['p']['value']:.4f} [{f['p']['lo']:.4f}, {f['p']['hi']:.4f}], r = {f['r_mean']['value']:.2f}, "
            f"δ = {f['delta_wps']['value']:.3f} w/s [{f['delta_wps']['lo']:.3f}, {f['delta_wps']['hi']:.3f}], "
            f"cv = {f['cv']['value']:.2f}"
        )
        for name, logged in typed["held_out_logged"].items():
            model = typed["held_out_model"]["typed_model"][name]
            mark = "within" if model["within_logged_ci"] else "OUTSIDE"
            print(
                f"  {name}: logged {logged['value']:.4g} [{logged['lo']:.4g}, {logged['hi']:.4g}], typed model {model['value']:.4g} ({mark})"
            )
    if args.hypotheses is not None:
        from streamrag.data.human.asr import read_hypotheses

        recorded = read_hypotheses(args.hypotheses)
        out["spoken"] = {"source": str(args.hypotheses)} | spoken_fit(list(recorded.questions.values()), seed=args.seed)
        f = out["spoken"]["fit"]
        print(
            f"spoken ({out['spoken']['n_questions']} questions): p = {f['p']['value']:.3f} [{f['p']['lo']:.3f}, {f['p']['hi']:.3f}], "
            f"r = {f['r_mean']['value']:.2f} [{f['r_mean']['lo']:.2f}, {f['r_mean']['hi']:.2f}], "
            f"δ = {f['delta_wps']['value']:.2f} hypotheses/s, cv = {f['cv']['value']:.2f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(_finite(out), indent=2, allow_nan=False) + "\n")
    return 0
