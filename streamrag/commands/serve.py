"""``streamrag serve CORPUS --port P``: a corpus's BM25 over HTTP on 127.0.0.1
(standard-library imports only at top level)."""

from __future__ import annotations

import argparse

HELP = "serve a corpus's BM25 over HTTP on 127.0.0.1 (a retrieval endpoint for live runs)"

EPILOG = """\
examples:
  streamrag serve demo --port 8750
  streamrag serve demo --port 8750 --latency-ms 30      # every answer 30 ms late: a known, constant L
  streamrag serve ../shared/data/crag --port 0          # the CRAG pool, on a free port

CORPUS: demo (the built-in set's pages), a CRAG file, the CRAG data folder or a BEIR
folder, chunked as in global scope. POST /search {"query": str, "k": int} answers
{"hits": [{"id", "score", "text"}], "took_ms"}; GET /health answers {"chunks": N}.
Stop it with Ctrl-C.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("corpus", metavar="CORPUS", help="demo, a CRAG file, the CRAG data folder or a BEIR folder")
    p.add_argument("--port", type=int, default=8750, metavar="P", help="port on 127.0.0.1 (0: a free one; default 8750)")
    p.add_argument("--latency-ms", dest="latency_ms", type=float, default=0.0, metavar="X", help="sleep X ms before each answer")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from streamrag.base.errors import ConfigError
    from streamrag.commands._common import check_latency_ms
    from streamrag.engine.clock import Clock
    from streamrag.engine.loop import run_real
    from streamrag.live.backends import BM25Tool
    from streamrag.live.server import serving

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port: {args.port} is not a port number (0-65535)")
    check_latency_ms(args.latency_ms)

    async def main(clock: Clock) -> None:
        tool = BM25Tool.from_corpus(args.corpus, clock)
        async with serving(tool, clock, port=args.port, latency_ms=args.latency_ms) as url:
            print(
                f"serving {len(tool.chunks)} chunks of {args.corpus} at {url} (latency {args.latency_ms:g} ms); Ctrl-C stops",
                flush=True,
            )
            await anyio.sleep_forever()

    try:
        run_real(main)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    return 0
