"""A real headless Chromium driven over the DevTools protocol on a pipe (stdlib only).

``--remote-debugging-pipe`` makes Chromium read protocol messages on fd 3 and write them
on fd 4, each a JSON object ended by a NUL byte: no WebDriver, no websocket library, no
port. The browser runs with networking, sync, updates and first-run work off (the
machine's network is closed) and a throw-away profile.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--remote-debugging-pipe",
]  # fmt: skip


def chromium() -> str | None:
    """The browser's path (``STREAMRAG_CHROMIUM`` wins), or None when none is installed."""
    for name in (os.environ.get("STREAMRAG_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and (path := shutil.which(name)):
            return path
    return None


class Browser:
    """One page in a headless Chromium; ``errors`` collects console errors and uncaught
    exceptions of the page."""

    def __init__(self, executable: str, profile: Path, *, timeout_s: float = 30.0) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def onto_3_and_4() -> None:  # in the child: Chromium expects the pipe on fds 3 (in) and 4 (out)
            os.dup2(to_chrome_r, 100)  # through high numbers: either end may already sit on 3 or 4
            os.dup2(from_chrome_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self._proc = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=onto_3_and_4,  # noqa: PLW1509 (the test starts no threads)
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._next_id = 0
        self._timeout_s = timeout_s
        self.errors: list[str] = []
        self.events: list[dict[str, Any]] = []
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    # --- protocol ----------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self._timeout_s
        while b"\0" not in self._buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._from_chrome], [], [], remaining)[0]:
                raise TimeoutError(f"no answer from Chromium in {self._timeout_s:g} s")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        message = json.loads(raw)
        self._note(message)
        return message

    def _note(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method:
            self.events.append(message)
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", "log error"))

    def _call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._call(method, params, self._session)

    # --- page --------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        seen = len(self.events)
        self.call("Page.navigate", {"url": url})
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events[seen:]):
            self._read()

    def requested(self) -> list[str]:
        """Every URL the page asked for so far (documents, images, scripts, fetches)."""
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (exceptions raise)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000), "scale": 1}
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", params)["data"]))
        return path

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, OSError, TimeoutError):
            self._call("Browser.close")
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
