"""``streamrag serve`` cannot be stalled: size limits, a read timeout, a headers timeout that
closes silent, trickling and idle connections, 400s for any malformed body, no traceback when a
client leaves mid-request, and ranking on a bounded thread pool so that small queries and
``/health`` are answered while a large query is ranked (a load test on loopback, bounded in count
and time).

Timeouts are shortened through ``serving``'s keywords; a test waits for a connection to close
with a generous bound (:data:`CLOSED_WITHIN_S`) and never asserts how soon it closed."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import logging
import socket
import statistics
import time
from urllib.parse import urlsplit

import pytest

aiohttp = pytest.importorskip("aiohttp", reason="serve needs the live extra (aiohttp)")

from streamrag.cli import main  # noqa: E402
from streamrag.engine.clock import RealClock  # noqa: E402
from streamrag.live import server  # noqa: E402
from streamrag.live.backends import BM25Tool, load_corpus  # noqa: E402


@pytest.fixture(scope="module")
def tool() -> BM25Tool:
    return BM25Tool(load_corpus("demo"), RealClock())


CLOSED_WITHIN_S = 30.0
"""How long a test waits for the server to close a connection: only a server that holds it
fails, however busy the machine."""


def _serve(tool: BM25Tool, body, **serving):
    """Run ``await body(url, session)`` against a server on a free loopback port
    (``serving``: keywords of :func:`server.serving`, such as shortened timeouts)."""

    async def main_() -> object:
        clock = RealClock()
        async with server.serving(tool, clock, port=0, **serving) as url, aiohttp.ClientSession() as session:
            return await body(url, session)

    return asyncio.run(main_())


async def _connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    parts = urlsplit(url)
    return await asyncio.open_connection(parts.hostname, parts.port)


async def _until_closed(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection."""

    async def read_all() -> bytes:
        got = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := await reader.read(65_536):
                got += chunk
        return got

    try:
        return await asyncio.wait_for(read_all(), timeout=CLOSED_WITHIN_S)
    except TimeoutError:
        raise AssertionError(f"the server still holds the connection after {CLOSED_WITHIN_S:g} s") from None


async def _trickle(writer: asyncio.StreamWriter, head: bytes) -> None:
    """Send ``head`` then a header that never ends, a byte at a time, until the server closes
    (one long header: many short ones would reach aiohttp's header count and get a 400)."""
    with contextlib.suppress(ConnectionError):
        for byte in itertools.chain(head, b"X-Pad: ", itertools.repeat(ord("y"))):
            writer.write(bytes([byte]))
            await writer.drain()  # raises once the server has closed
            await asyncio.sleep(0.01)


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


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


def test_an_incomplete_body_times_out_with_408_and_its_connection_is_closed(tool):
    async def body(url, session):
        reader, writer = await _connect(url)
        writer.write(
            b'POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"query"'
        )
        await writer.drain()
        started = time.monotonic()
        status_line = await asyncio.wait_for(reader.readline(), timeout=5)
        waited = time.monotonic() - started
        # Meanwhile the server answers others.
        async with session.get(url.replace("/search", "/health")) as r:
            healthy = r.status == 200
        rest = await _until_closed(reader)  # the body never comes: the server still closes
        await _close(writer)
        return status_line, rest, waited, healthy

    status_line, rest, waited, healthy = _serve(tool, body, read_timeout_s=0.3)
    assert status_line.startswith(b"HTTP/1.1 408") and 0.25 <= waited < 5 and healthy
    assert b"Connection: close\r\n" in rest and b"did not arrive within 0.3 s" in rest


@pytest.mark.parametrize("client", ["silent", "trickling", "trickling after an answer"])
def test_a_connection_whose_headers_never_end_is_closed(tool, client):
    # A client that connects and sends nothing, one that sends its headers a byte at a time
    # (slowloris), and one that does so for its second request on a kept-alive connection.
    first = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" if client == "trickling after an answer" else b""
    n_connections = 10

    async def hold(url) -> bytes:
        reader, writer = await _connect(url)
        writer.write(first)
        trickling = (
            asyncio.ensure_future(_trickle(writer, b"POST /search HTTP/1.1\r\nHost: x\r\n")) if client != "silent" else None
        )
        try:
            return await _until_closed(reader)
        finally:
            if trickling is not None:
                trickling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await trickling
            await _close(writer)

    async def body(url, session):
        sent = await asyncio.gather(*(hold(url) for _ in range(n_connections)))
        async with session.get(url.replace("/search", "/health")) as r:
            return sent, r.status

    sent, health_status = _serve(tool, body, headers_timeout_s=0.3)
    # Closed without an answer (but the first request's), not refused, and the server still serves.
    assert all(s.count(b"HTTP/") == (1 if first else 0) for s in sent), sent[0]
    assert all(s.startswith(b"HTTP/1.1 200 ") for s in sent if first) and health_status == 200


def test_the_headers_timeout_does_not_cut_a_request_whose_headers_arrived(tool):
    # The timeout is on the headers alone: a body sent later, and an answer slower than the
    # timeout, are both answered.
    query = json.dumps({"query": "who founded the company", "k": 3}).encode()

    async def body(url, session):
        reader, writer = await _connect(url)
        writer.write(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(query))
        await writer.drain()
        await asyncio.sleep(0.5)
        writer.write(query)
        status_line = await asyncio.wait_for(reader.readline(), timeout=CLOSED_WITHIN_S)
        await _close(writer)
        status, got = await _post(session, url, query)
        return status_line, status, got

    status_line, status, got = _serve(tool, body, headers_timeout_s=0.2, latency_ms=500)
    assert status_line.startswith(b"HTTP/1.1 200") and status == 200 and got["hits"]


@pytest.mark.parametrize("leaves", ["close", "abort"])
@pytest.mark.parametrize("when", ["mid-body", "while the answer is delayed"])
def test_a_client_that_leaves_mid_request_logs_no_traceback(tool, when, leaves, caplog, capfd):
    query = json.dumps({"query": "who founded the company", "k": 3}).encode()
    sent = query[:5] if when == "mid-body" else query

    async def body(url, session):
        _, writer = await _connect(url)
        writer.write(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(query), sent))
        await writer.drain()
        await asyncio.sleep(0.1)  # the handler is reading the body, or sleeping the latency
        if leaves == "abort":
            writer.transport.abort()  # a reset, not a clean close
        await _close(writer)
        status, _ = await _post(session, url, query)
        return status

    # Leaving serving() waits for the abandoned handler to finish: whatever it logs is logged by then.
    assert _serve(tool, body, latency_ms=300) == 200
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "Traceback" not in capfd.readouterr().err


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


def test_a_request_aiohttp_cannot_parse_is_answered_400_and_logged_without_a_traceback(tool, caplog, capfd):
    async def body(url, session):
        reader, writer = await _connect(url)
        writer.write(b"GARBAGE \x00\x01 NOT HTTP\r\nbad header line\r\n\r\n")
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), timeout=CLOSED_WITHIN_S)
        await _close(writer)
        status, _ = await _post(session, url, json.dumps({"query": "who founded the company", "k": 3}).encode())
        return status_line, status

    with caplog.at_level(logging.DEBUG, logger="streamrag.serve.http"):
        status_line, status = _serve(tool, body)
    assert status_line.split()[1] == b"400" and status == 200
    assert all(r.exc_info is None for r in caplog.records)
    assert "Traceback" not in capfd.readouterr().err
