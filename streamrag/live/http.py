"""JSON over HTTP for live runs: one client per endpoint, with a timeout and a cap on
calls in flight, whose every failure is one :class:`~streamrag.base.errors.ToolError` line.

Both live HTTP clients go through it: the retrieval tool (``--url``) and the query LLM
(``--llm-url``). A failure names what failed and the endpoint, and says what to check:
no connection (is it running?), no reply within the timeout (which option raises it), a
status other than 200, a body that is not JSON.
"""

from __future__ import annotations

from typing import Any

import anyio

from streamrag.base.errors import ConfigError, ToolError, ToolTimeoutError, ToolUnreachableError
from streamrag.engine.clock import Clock


class JsonEndpoint:
    """``await post(body)`` → the reply's JSON.

    ``what`` names the endpoint in messages (``tool``, ``query LLM``); ``option`` is the
    command-line prefix of its settings (``--url`` and ``--timeout-ms`` for ``""``,
    ``--llm-url`` … for ``"llm-"``), named when one is wrong; ``path`` is appended to
    ``url`` (an API's base URL) to give the URL posted to. At most ``concurrency``
    calls are in flight: the others wait for a slot, and the wait counts in the call's
    duration, as it would for a real client."""

    def __init__(
        self,
        what: str,
        url: str,
        clock: Clock,
        *,
        timeout_ms: float,
        concurrency: int,
        option: str = "",
        path: str = "",
        headers: dict[str, str] | None = None,
    ) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"--{option}url: {url!r} is not an http:// or https:// URL")
        if timeout_ms <= 0:
            raise ConfigError(f"--{option}timeout-ms: must be > 0, got {timeout_ms}")
        if concurrency < 1:
            raise ConfigError(f"--{option}concurrency: must be ≥ 1, got {concurrency}")
        try:
            import aiohttp  # noqa: F401 - checked here, used per call
        except ImportError:
            raise ConfigError(f"--{option}url needs aiohttp: pip install 'streamrag[live]'") from None
        self.what = what
        self.url = url.rstrip("/") + path if path else url
        self.clock = clock
        self.timeout_ms = timeout_ms
        self.option = option
        self.headers = headers or {}
        self._slots = anyio.Semaphore(concurrency)
        self._session: Any = None

    async def post(self, body: dict[str, Any]) -> Any:
        import aiohttp

        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_ms / 1000))
        where = f"{self.what} {self.url}"
        async with self._slots:
            try:
                async with self._session.post(self.url, json=body, headers=self.headers) as reply:
                    if reply.status != 200:
                        raise ToolError(f"{where}: HTTP {reply.status} {reply.reason}")
                    return await reply.json(content_type=None)
            except TimeoutError:
                raise ToolTimeoutError(
                    f"{where}: no reply within {self.timeout_ms:g} ms (raise --{self.option}timeout-ms?)"
                ) from None
            except aiohttp.ClientConnectionError as exc:
                raise ToolUnreachableError(
                    f"{where}: cannot connect ({exc.__class__.__name__}); is the endpoint running?"
                ) from None
            except (aiohttp.ClientError, ValueError) as exc:
                raise ToolError(f"{where}: bad reply ({exc})") from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
