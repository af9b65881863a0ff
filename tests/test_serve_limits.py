"""``streamrag serve`` cannot be stalled: size limits, a read timeout, 400s for any malformed
body, and ranking on a bounded thread pool so that small queries and ``/health`` are answered
while a large query is ranked (a load test on loopback, bounded in count and time)."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import statistics
import time
from urllib.parse import urlsplit

import pytest

aiohttp = pytest.importorskip("aiohttp", reason="serve needs the live extra (aiohttp)")

from streamrag.cli import main  # noqa: E402
from streamrag.engine.clock import RealClock  # noqa: E402
from streamrag.live import server  # noqa: E402
from streamrag.live.tools import BM25Tool, load_corpus  # noqa: E402


@pytest.fixture(scope="module")
def tool() -> BM25Tool:
    return BM25Tool(load_corpus("demo"), RealClock())


def _serve(tool: BM25Tool, body):
    """Run ``await body(url, session)`` against a server on a free loopback port."""

    async def main_() -> object:
        clock = RealClock()
        async with server.serving(tool, clock, port=0) as url, aiohttp.ClientSession() as session:
            return await body(url, session)

    return asyncio.run(main_())


async def _post(session, url: str, payload: bytes | str) -> tuple[int, dict]:
    # A stream, not bytes: aiohttp warns that a large bytes body could block the client's loop.
    data = io.BytesIO(payload.encode() if isinstance(payload, str) else payload)
    async with session.post(url, data=data, headers={"Content-Type": "application/json"}) as r:
        return r.status, await r.json(content_type=None)


@pytest.mark.parametrize(
    ("payload", "status", "error"),
    [
        ("{oops", 400, "the body is not JSON"),
        ("[" * 30_000 + "]" * 30_000, 400, "the body is nested too deeply"),
        ('{"query": "who", "k": true}', 400, "expected"),
        ('{"query": 3}', 400, "expected"),
        ('{"query": "who", "k": 101}', 400, "expected"),
        (json.dumps({"query": "w " * 9_000}), 413, "at most 16384 are ranked"),
        (json.dumps({"query": "w " * 600_000}), 413, "at most 65536 are read"),
    ],
)
def test_a_bad_request_gets_its_status_and_a_one_line_reason(tool, payload, status, error):
    async def body(url, session):
        return await _post(session, url, payload)

    got_status, got = _serve(tool, body)
    assert got_status == status and error in got["error"] and "\n" not in got["error"]


def test_an_incomplete_body_times_out_with_408(tool, monkeypatch):
    monkeypatch.setattr(server, "READ_TIMEOUT_S", 0.3)

    async def body(url, session):
        host, port = urlsplit(url).hostname, urlsplit(url).port
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b'POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query"')
        await writer.drain()
        started = time.monotonic()
        status_line = await asyncio.wait_for(reader.readline(), timeout=5)
        waited = time.monotonic() - started
        # Meanwhile the server answers others.
        async with session.get(url.replace("/search", "/health")) as r:
            healthy = r.status == 200
        writer.close()
        return status_line, waited, healthy

    status_line, waited, healthy = _serve(tool, body)
    assert status_line.startswith(b"HTTP/1.1 408") and 0.25 <= waited < 5 and healthy


def test_small_queries_are_answered_while_a_large_one_is_ranked(tool, monkeypatch, capsys):
    # Limits raised so that one query takes seconds to rank (the shipped limits refuse it):
    # what is measured is that ranking never runs on the event loop.
    monkeypatch.setattr(server, "MAX_QUERY_CHARS", 2_000_000)
    monkeypatch.setattr(server, "MAX_BODY_BYTES", 4_000_000)
    words = " ".join(tool.chunks).split()
    n_words = 150_000
    while len(large := json.dumps({"query": " ".join(words[i % len(words)] for i in range(n_words)), "k": 3})) < 1 << 20:
        n_words += 10_000  # a body of at least 1 MiB

    small = json.dumps({"query": "who founded the company", "k": 3})
    n_small = 40

    async def small_latencies(session, url) -> list[float]:
        out = []
        for _ in range(n_small):
            t0 = time.monotonic()
            status, _ = await _post(session, url, small)
            assert status == 200
            out.append(time.monotonic() - t0)
        return out

    async def body(url, session):
        alone = await small_latencies(session, url)
        t0 = time.monotonic()
        big = asyncio.ensure_future(_post(session, url, large))
        await asyncio.sleep(0.05)  # the large query is being ranked
        during = await small_latencies(session, url)
        small_done = time.monotonic() - t0
        status, _ = await big
        return alone, during, small_done, time.monotonic() - t0, status

    alone, during, small_done, large_s, status = _serve(tool, body)
    p = {
        name: (statistics.median(xs) * 1e3, sorted(xs)[int(0.99 * (len(xs) - 1))] * 1e3)
        for name, xs in (("alone", alone), ("during", during))
    }
    with capsys.disabled():
        print(
            f"\nserve load test: {n_small} small queries alone p50 {p['alone'][0]:.1f} ms p99 {p['alone'][1]:.1f} ms; "
            f"while a {len(large) / (1 << 20):.2f} MiB query ranked ({large_s:.2f} s) p50 {p['during'][0]:.1f} ms p99 {p['during'][1]:.1f} ms"
        )
    assert status == 200
    # Every small query was answered before the large one finished, not queued behind it.
    assert small_done < large_s


def test_the_real_limits_refuse_a_1_mib_query_at_once(tool):
    payload = json.dumps({"query": "x" * (1 << 20)})

    async def body(url, session):
        t0 = time.monotonic()
        status, _ = await _post(session, url, payload)
        return status, time.monotonic() - t0

    status, took_s = _serve(tool, body)
    assert status == 413 and took_s < 2.0


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_latency_that_is_not_a_finite_number_is_refused(value, capsys):
    assert main(["serve", "demo", "--port", "0", "--latency-ms", value]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--latency-ms: must be a finite number of ms ≥ 0" in err
    assert main(["live", "--out", "/nonexistent/x", "--corpus", "demo", "--latency-ms", value, "--replay", "1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--latency-ms" in err


def test_the_server_listens_on_loopback_only(tool):
    async def body(url, session):
        return urlsplit(url).hostname

    assert _serve(tool, body) == "127.0.0.1"
    assert socket.gethostbyname("localhost").startswith("127.")
