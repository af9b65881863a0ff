"""``streamrag serve``: a corpus's BM25 over HTTP on 127.0.0.1, on aiohttp.

``POST /search`` with ``{"query": str, "k": int}`` answers ``{"hits": [{"id", "score",
"text"}], "took_ms"}`` (the contract of :mod:`streamrag.live.tools`); ``GET /health``
answers ``{"chunks": N}``. ``latency_ms`` is slept before each answer (on the clock
passed in), to stand in for a remote backend with a known, constant L.

aiohttp because it is maintained, asyncio-native (the server and a live run can share
one event loop, as the tests do) and serves both sides: the HTTP tool is its client.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from streamrag.engine.clock import Clock
from streamrag.live.tools import BM25Tool

MAX_K = 100
"""Largest ``k`` a request may ask for."""


def make_app(tool: BM25Tool, clock: Clock, latency_ms: float = 0.0) -> Any:
    """The aiohttp application serving ``tool``."""
    web = _aiohttp_web()

    delay_us = round(latency_ms * 1000)

    async def search(request: Any) -> Any:
        start = clock.now_us()
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": "the body is not JSON"}, status=400)
        query, k = (body.get("query"), body.get("k", 3)) if isinstance(body, dict) else (None, None)
        if not isinstance(query, str) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            return web.json_response({"error": f'expected {{"query": str, "k": int in 1..{MAX_K}}}'}, status=400)
        if delay_us:
            await clock.sleep_us(delay_us)
        hits = [{"id": h.chunk_id, "score": h.score, "text": h.text} for h in tool.rank(query, k)]
        return web.json_response({"hits": hits, "took_ms": (clock.now_us() - start) / 1000})

    async def health(request: Any) -> Any:
        return web.json_response({"chunks": len(tool.chunks)})

    app = web.Application()
    app.router.add_post("/search", search)
    app.router.add_get("/health", health)
    return app


@asynccontextmanager
async def serving(
    tool: BM25Tool, clock: Clock, *, port: int = 0, latency_ms: float = 0.0, host: str = "127.0.0.1"
) -> AsyncIterator[str]:
    """Serve ``tool`` on ``host:port`` (0: a free port) while the block runs; yields the
    search URL."""
    web = _aiohttp_web()
    runner = web.AppRunner(make_app(tool, clock, latency_ms), access_log=None)
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
