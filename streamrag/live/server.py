"""``streamrag serve``: a corpus's BM25 over HTTP on 127.0.0.1, on aiohttp.

``POST /search`` with ``{"query": str, "k": int}`` answers ``{"hits": [{"id", "score",
"text"}], "took_ms"}`` (the contract of :mod:`streamrag.live.backends`); ``GET /health``
answers ``{"chunks": N}``. ``latency_ms`` is slept before each answer (on the clock
passed in), to stand in for a remote backend with a known, constant L.

aiohttp because it is maintained, asyncio-native (the server and a live run can share
one event loop, as the tests do) and serves both sides: the HTTP tool is its client.

Nothing a client sends can stall the server:

- a body over :data:`MAX_BODY_BYTES` is refused (413) before it is read, a query over
  :data:`MAX_QUERY_CHARS` (413) before it is ranked: ranking time grows with the
  query's characters, and the 1 MiB query aiohttp's default admits took seconds;
- ranking runs on a bounded pool of :data:`RANK_THREADS` threads, never on the event loop,
  so ``/health`` and small queries are answered while a large one is ranked (the test suite
  measures it); requests beyond the pool wait their turn;
- a connection whose request headers are not complete within :data:`HEADERS_TIMEOUT_S` of
  its opening or of its previous answer is closed: a client that connects and sends nothing,
  or sends its headers a byte at a time, or keeps an idle connection, holds it that long;
- a body that does not arrive within :data:`READ_TIMEOUT_S` gets 408 and its connection is
  closed at most :data:`READ_TIMEOUT_S` later (a slow or incomplete request holds only its
  own connection, and not forever);
- malformed JSON of any shape, deeply nested included, gets 400 with a one-line reason;
- a client that disconnects mid-request costs the rest of that request's work and logs
  nothing: its answer is dropped.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from streamrag.engine.clock import Clock
from streamrag.live.backends import BM25Tool

MAX_K = 100
"""Largest ``k`` a request may ask for."""
MAX_QUERY_CHARS = 16_384
"""Longest query ranked (a spoken or typed question is a few hundred characters)."""
MAX_BODY_BYTES = 65_536
"""Largest request body read."""
READ_TIMEOUT_S = 10.0
"""Time a client has to send its whole body; also the time the rest of a refused body is
read and discarded before its connection closes (so that the client reads the refusal)."""
HEADERS_TIMEOUT_S = 30.0
"""Time a connection has to complete a request's headers, counted from its opening or from
its previous answer; an idle connection is closed when it runs out. Longer than HTTP clients
keep an idle pooled connection (aiohttp's: 15 s), so that a client never sends its next
request on a connection the server is closing."""
RANK_THREADS = 2
"""Queries ranked at once (threads; one per core of the machines this is made for)."""


class _NoTraceback(logging.Filter):
    """aiohttp's report of a request it could not parse, as its one line (no traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text = None, None
        return True


_ONE_LINE = logging.getLogger("streamrag.serve.http")
_ONE_LINE.addFilter(_NoTraceback())


def make_app(tool: BM25Tool, clock: Clock, latency_ms: float = 0.0, *, read_timeout_s: float = READ_TIMEOUT_S) -> Any:
    """The aiohttp application serving ``tool`` (``read_timeout_s``: :data:`READ_TIMEOUT_S`)."""
    import anyio

    web = _aiohttp_web()
    delay_us = round(latency_ms * 1000)
    limiter = anyio.CapacityLimiter(RANK_THREADS)

    def refuse(status: int, error: str) -> Any:
        return web.json_response({"error": error}, status=status)

    async def search(request: Any) -> Any:
        start = clock.now_us()
        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            return refuse(413, f"the body is {request.content_length} bytes; at most {MAX_BODY_BYTES} are read")
        try:
            with anyio.fail_after(read_timeout_s):
                raw = await request.read()
        except TimeoutError:
            late = refuse(408, f"the body did not arrive within {read_timeout_s:g} s")
            late.force_close()  # says "Connection: close": the connection is not reused
            return late
        except ConnectionError:  # the client left mid-body; aiohttp drops an answer nobody reads
            return refuse(400, "the connection closed before the body arrived")
        except web.HTTPRequestEntityTooLarge:  # a chunked body that grew past the limit
            return refuse(413, f"the body is over {MAX_BODY_BYTES} bytes")
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else "not JSON"
            return refuse(400, f"the body is {reason}")
        query, k = (body.get("query"), body.get("k", 3)) if isinstance(body, dict) else (None, None)
        if not isinstance(query, str) or isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            return refuse(400, f'expected {{"query": str, "k": int in 1..{MAX_K}}}')
        if len(query) > MAX_QUERY_CHARS:
            return refuse(413, f"the query is {len(query)} characters; at most {MAX_QUERY_CHARS} are ranked")
        if delay_us:
            await clock.sleep_us(delay_us)
        ranked = await anyio.to_thread.run_sync(tool.rank, query, k, limiter=limiter)
        hits = [{"id": h.chunk_id, "score": h.score, "text": h.text} for h in ranked]
        return web.json_response({"hits": hits, "took_ms": (clock.now_us() - start) / 1000})

    async def health(request: Any) -> Any:
        return web.json_response({"chunks": len(tool.chunks)})

    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_post("/search", search)
    app.router.add_get("/health", health)
    return app


@asynccontextmanager
async def serving(
    tool: BM25Tool,
    clock: Clock,
    *,
    port: int = 0,
    latency_ms: float = 0.0,
    host: str = "127.0.0.1",
    read_timeout_s: float = READ_TIMEOUT_S,
    headers_timeout_s: float = HEADERS_TIMEOUT_S,
) -> AsyncIterator[str]:
    """Serve ``tool`` on ``host:port`` (0: a free port) while the block runs; yields the
    search URL. The timeouts default to :data:`READ_TIMEOUT_S` and :data:`HEADERS_TIMEOUT_S`."""
    web = _aiohttp_web()
    runner = web.AppRunner(
        make_app(tool, clock, latency_ms, read_timeout_s=read_timeout_s),
        access_log=None,
        # aiohttp's keep-alive timer closes a connection still waiting for headers; it
        # starts at the opening and at each answer (aiohttp ≥ 3.14.4, the floor for this).
        keepalive_timeout=headers_timeout_s,
        lingering_time=read_timeout_s,
        logger=_ONE_LINE,
    )
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        await runner.cleanup()
        from streamrag.base.errors import ConfigError

        raise ConfigError(f"--port: cannot listen on {host}:{port} ({exc.strerror})") from None
    site = web.SockSite(runner, sock)
    await site.start()
    try:
        yield f"http://{host}:{sock.getsockname()[1]}/search"
    finally:
        await runner.cleanup()


def _aiohttp_web() -> Any:
    try:
        from aiohttp import web
    except ImportError:
        from streamrag.base.errors import ConfigError

        raise ConfigError("streamrag serve needs aiohttp: pip install 'streamrag[live]'") from None
    return web
