"""Query generation G as a real call: a user's OpenAI-compatible chat-completions endpoint.

Off by default (G is then a delay on the clock, fixed or drawn); ``streamrag live
--llm-url URL --llm-model NAME`` turns it on. Each call is::

    POST {URL}/chat/completions
    {"model": NAME, "temperature": 0, "max_tokens": 32,
     "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                  {"role": "user", "content": "<the words heard so far>"}]}

with ``Authorization: Bearer $KEY`` when the key's environment variable (``--llm-key-env``,
default ``OPENAI_API_KEY``) is set — local servers (vLLM, llama.cpp, Ollama) need none.
The reply's ``choices[0].message.content``, stripped, first line, is the query sent to
the tool. A failure (no connection, timeout, a status other than 200, a body of another
shape, an empty query) is a :class:`~streamrag.base.errors.ToolError`, which the pipeline
records as a ``gen_error`` event before searching the prefix words instead.
"""

from __future__ import annotations

import os
from typing import Any

from streamrag.base.errors import ConfigError, ToolError
from streamrag.engine.clock import Clock
from streamrag.live.http import JsonEndpoint

SYSTEM_PROMPT = (
    "You turn the partial utterance of a user who is still speaking into a short search query "
    "for a retrieval system. Reply with the query only, on one line, without quotes or explanation."
)
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class ChatQueryGenerator:
    """A :class:`~streamrag.pipeline.tools.QueryGenerator` calling ``{base_url}/chat/completions``.

    ``key_env``: the environment variable holding the API key; unset or empty, no
    ``Authorization`` header is sent unless ``key_required`` (the user named the
    variable), which makes a missing key a ConfigError."""

    def __init__(
        self,
        base_url: str,
        model: str,
        clock: Clock,
        *,
        key_env: str = DEFAULT_KEY_ENV,
        key_required: bool = False,
        timeout_ms: float = 5000.0,
        concurrency: int = 4,
        max_tokens: int = 32,
    ) -> None:
        if not model.strip():
            raise ConfigError("--llm-model: give the model name the endpoint serves")
        if max_tokens < 1:
            raise ConfigError(f"--llm-max-tokens: must be ≥ 1, got {max_tokens}")
        key = os.environ.get(key_env, "")
        if key_required and not key:
            raise ConfigError(f"--llm-key-env: the environment variable {key_env} is not set (export it, or drop the option)")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.endpoint = JsonEndpoint(
            "query LLM",
            base_url,
            clock,
            timeout_ms=timeout_ms,
            concurrency=concurrency,
            option="llm-",
            path="/chat/completions",
            headers=headers,
        )
        self.model = model
        self.max_tokens = max_tokens
        self.name = f"{model} at {self.endpoint.url}"

    async def generate(self, words: str) -> str:
        body = await self.endpoint.post(
            {
                "model": self.model,
                "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": words}],
                "temperature": 0,
                "max_tokens": self.max_tokens,
            }
        )
        return _query(body, self.endpoint.url)

    async def aclose(self) -> None:
        await self.endpoint.aclose()


def _query(body: Any, url: str) -> str:
    """The query of a chat-completions reply, or ToolError naming what is wrong with it."""
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        content = None
    if not isinstance(content, str):
        raise ToolError(
            f'query LLM {url}: bad reply: expected {{"choices": [{{"message": {{"content": str}}}}]}}, got {str(body)[:80]!r}'
        )
    lines = content.strip().splitlines()
    query = lines[0].strip() if lines else ""
    if not query:
        raise ToolError(f"query LLM {url}: the reply holds no query (empty content)")
    return query
