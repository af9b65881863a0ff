"""Query generation G by an OpenAI-compatible chat-completions endpoint (``--llm-url``).

A fake endpoint (aiohttp, on a free local port, in a thread of its own) answers each
partial utterance with its words reversed, plus a second line that must be dropped; it
can also fail (HTTP 500), talk nonsense (not JSON) or be slow. No network, no model.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from _livehelpers import FAST, replay_setup

from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.engine.clock import Clock
from streamrag.engine.loop import run_real
from streamrag.engine.trace import read_trace
from streamrag.live.backends import BM25Tool, load_corpus
from streamrag.live.llm import SYSTEM_PROMPT, ChatQueryGenerator
from streamrag.live.session import run_turn


class FakeChat:
    """``POST /v1/chat/completions``; ``mode``: ok, error, garbage, slow."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.requests: list[tuple[dict[str, str], dict]] = []
        self.url = ""

    async def handle(self, request):
        from aiohttp import web

        body = await request.json()
        self.requests.append((dict(request.headers), body))
        if self.mode == "slow":
            await asyncio.sleep(0.5)
        if self.mode == "error":
            return web.Response(status=500, text="boom")
        if self.mode == "garbage":
            return web.Response(text="this is not JSON")
        words = body["messages"][1]["content"].split()
        content = "  " + " ".join(reversed(words)) + "  \nA second line the query must not hold."
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": content}}]})


@pytest.fixture
def chat():
    """Start a :class:`FakeChat` (``chat(mode)`` → it, with its base URL); stopped after the test."""
    from aiohttp import web

    loop = asyncio.new_event_loop()
    runners = []

    async def start(fake: FakeChat) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", fake.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        host, port = runner.addresses[0][:2]
        fake.url = f"http://{host}:{port}/v1"

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def make(mode: str = "ok") -> FakeChat:
        fake = FakeChat(mode)
        asyncio.run_coroutine_threadsafe(start(fake), loop).result(timeout=10)
        return fake

    yield make
    for runner in runners:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def test_each_call_searches_the_query_the_llm_generated(chat, monkeypatch):
    fake = chat("ok")
    monkeypatch.setenv("TEST_LLM_KEY", "sekrit")
    rs, _, turns = replay_setup(2, FAST[1::2])
    chunks = load_corpus("demo")
    searched: list[str] = []

    class Recording:
        name = "recording bm25"

        def __init__(self, inner: BM25Tool) -> None:
            self.inner = inner

        async def search(self, query: str, k: int):
            searched.append(query)
            return await self.inner.search(query, k)

    async def main_(clock: Clock):
        bm25 = BM25Tool(chunks, clock)
        llm = ChatQueryGenerator(fake.url, "tiny-model", clock, key_env="TEST_LLM_KEY", key_required=True, max_tokens=12)
        try:
            return [await run_turn(clock, turn, Recording(bm25), bm25, rs, lambda e: None, generator=llm) for turn in turns]
        finally:
            await llm.aclose()

    outcomes = run_real(main_)
    events = [e for o in outcomes for e in o.events]
    generated = [e for e in events if e["kind"] == "gen_query"]
    by_call = {(e["qid"], e["arm"], e["call"]): e for e in generated}
    for o in outcomes:
        for e in o.events:
            if e["kind"] == "gen_done":  # every call that reached L had its query generated
                g = by_call[(e["qid"], e["arm"], e["call"])]
                assert g["query"] == " ".join(reversed(o.words[: g["prefix_t"]]))  # stripped, first line only
                assert 0 < g["elapsed_us"] < 2_000_000
    # the tool searched exactly the generated queries, not the words heard
    assert sorted(searched) == sorted(e["query"] for e in generated)
    assert any(len(q.split()) > 1 for q in searched)  # reversed: not the words heard
    assert not [e for e in events if e["kind"] in ("gen_error", "tool_error")]
    assert len(fake.requests) == len(generated) >= 2
    headers, body = fake.requests[0]
    assert headers["Authorization"] == "Bearer sekrit"
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("tiny-model", 0, 12)
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == SYSTEM_PROMPT


def _generation_events(out: Path) -> tuple[list, list]:
    events = read_trace(out / "trace.jsonl")
    return [e for e in events if e.kind == "gen_error"], [e for e in events if e.kind == "tool_done"]


@pytest.mark.parametrize(
    ("mode", "options", "line"),
    [
        ("error", [], "HTTP 500"),
        ("garbage", [], "bad reply"),
        ("slow", ["--llm-timeout-ms", "50"], "no reply within 50 ms (raise --llm-timeout-ms?)"),
    ],
)
def test_a_failing_llm_is_a_recorded_event_and_the_call_searches_the_words(chat, tmp_path, capsys, mode, options, line):
    fake = chat(mode)
    out = tmp_path / mode
    args = ["live", "--replay", "1", "--llm-url", fake.url, "--llm-model", "m", *options, "--out", str(out), *FAST]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert f"query LLM {fake.url}/chat/completions: {line}" in printed
    assert "querying the prefix words instead" in printed
    errors, results = _generation_events(out)
    assert errors and all(line in e.error for e in errors)
    # each failed generation fell back to the words heard: the call still went to the tool
    assert len(results) >= len(errors)
    assert all(e.query and not e.query.startswith(" ") for e in errors)
    rows = (out / "results.csv").read_text().splitlines()
    assert len(rows) == 2 and "tool error" not in rows[1]


def test_the_live_command_shows_and_records_generated_queries(chat, tmp_path, capsys):
    fake = chat("ok")
    out = tmp_path / "ok"
    assert main(["live", "--replay", "1", "--llm-url", fake.url, "--llm-model", "m", "--out", str(out), *FAST]) == 0
    printed = capsys.readouterr().out
    generated = [e for e in read_trace(out / "trace.jsonl") if e.kind == "gen_query"]
    assert generated
    assert f"query “{generated[0].query}”" in printed
    assert main(["trace", str(out), generated[0].qid]) == 0
    assert f"query {generated[0].query!r}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--llm-url", "http://127.0.0.1:9/v1"], "--llm-url: give the model too (--llm-model NAME)"),
        (["--llm-model", "m"], "--llm-model and --llm-key-env need --llm-url"),
        (["--llm-url", "ftp://x", "--llm-model", "m"], "--llm-url: 'ftp://x' is not an http:// or https:// URL"),
        (["--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--llm-key-env", "STREAMRAG_TEST_UNSET_KEY"],
         "the environment variable STREAMRAG_TEST_UNSET_KEY is not set"),
    ],
)  # fmt: skip
def test_bad_llm_options_are_one_line(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.delenv("STREAMRAG_TEST_UNSET_KEY", raising=False)
    assert main(["live", "--replay", "1", *args, "--out", str(tmp_path / "x"), *FAST]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_without_a_key_no_authorization_header_is_sent(chat, monkeypatch):
    fake = chat("ok")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def ask(clock: Clock):
        llm = ChatQueryGenerator(fake.url, "m", clock)
        try:
            return await llm.generate("what is the capital")
        finally:
            await llm.aclose()

    assert run_real(ask) == "capital the is what"
    assert "Authorization" not in fake.requests[0][0]


def test_an_empty_model_name_is_a_config_error():
    from streamrag.engine.clock import RealClock

    with pytest.raises(ConfigError, match="--llm-model"):
        ChatQueryGenerator("http://127.0.0.1:9/v1", " ", RealClock())
