"""A small Chrome DevTools Protocol client: headless Chromium driven over its WebSocket with ``websockets``
(a runtime dependency already), so the browser suite needs no Playwright, Selenium or chromedriver.

Only what the suite uses: open pages at a viewport size, evaluate JavaScript, click an element's centre with
real mouse (pointer) events, type text, take a screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import websockets

CHROMIUM = os.environ.get("GAMMOND_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--remote-debugging-port=0",
]


class CdpError(RuntimeError):
    """The browser answered a command with an error, or a page's script threw."""


def chromium_missing() -> str | None:
    """Why the browser suite cannot run here (None: it can)."""
    if not Path(CHROMIUM).exists() and shutil.which(CHROMIUM) is None:
        return f"no Chromium at {CHROMIUM} (set GAMMOND_CHROMIUM to another one)"
    return None


class Browser:
    """One headless Chromium with its own profile; ``await Browser.launch()``, then ``new_page``."""

    def __init__(self, process: subprocess.Popen[bytes], profile: tempfile.TemporaryDirectory[str]) -> None:
        self.process = process
        self.profile = profile
        self.ws: Any = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.console: list[str] = []  # errors the pages logged or threw

    def __repr__(self) -> str:
        return f"<Browser pid={self.process.pid}>"

    @classmethod
    async def launch(cls) -> Browser:
        profile = tempfile.TemporaryDirectory(prefix="gammond-chromium-")
        process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile.name}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        browser = cls(process, profile)
        try:
            url = await asyncio.wait_for(asyncio.to_thread(browser._devtools_url), 20)
            browser.ws = await websockets.connect(url, max_size=None, ping_interval=None)
        except BaseException:
            browser._kill()
            raise
        browser._reader = asyncio.create_task(browser._read())
        return browser

    def _devtools_url(self) -> str:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            found = re.search(rb"DevTools listening on (ws://\S+)", raw)
            if found:
                return found.group(1).decode()
        raise CdpError("Chromium exited before it listened for DevTools")

    async def _read(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for text in self.ws:
                message = json.loads(text)
                future = self._pending.pop(message.get("id", -1), None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(CdpError(message["error"].get("message", str(message["error"]))))
                    else:
                        future.set_result(message.get("result", {}))
                elif message.get("method") == "Runtime.exceptionThrown":
                    details = message["params"]["exceptionDetails"]
                    self.console.append(
                        details.get("exception", {}).get("description", details.get("text", ""))
                    )
                elif message.get("method") == "Runtime.consoleAPICalled":
                    params = message["params"]
                    if params.get("type") in ("error", "assert"):
                        self.console.append(
                            " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
                        )
        for future in self._pending.values():
            if not future.done():
                future.set_exception(CdpError("the browser went away"))

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> Any:
        ident = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        await self.ws.send(json.dumps(message))
        return await asyncio.wait_for(future, 30)

    async def new_page(self, width: int, height: int, *, mobile: bool = False) -> Page:
        # a window each: a background tab renders no frames, and its input events wait for one
        target = (await self.send("Target.createTarget", {"url": "about:blank", "newWindow": True}))[
            "targetId"
        ]
        session = (await self.send("Target.attachToTarget", {"targetId": target, "flatten": True}))[
            "sessionId"
        ]
        page = Page(self, session, width, height, target)
        for method in ("Page.enable", "Runtime.enable"):
            await page.send(method)
        await page.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        await page.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )
        if mobile:
            await page.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        return page

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.send("Browser.close"), 5)
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._kill()

    def _kill(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        with contextlib.suppress(OSError):
            self.profile.cleanup()


class Page:
    """One tab: ``eval`` JavaScript, ``click`` a selector, ``type`` into one, ``screenshot``."""

    def __init__(self, browser: Browser, session: str, width: int, height: int, target: str = "") -> None:
        self.browser = browser
        self.session = session
        self.target = target
        self.width = width
        self.height = height

    def __repr__(self) -> str:
        return f"<Page {self.width}x{self.height}>"

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.browser.send(method, params, self.session)

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", {"url": url})
        await self.wait_for("document.readyState === 'complete' && !!window.gammond", 15)

    async def eval(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise CdpError(
                details.get("exception", {}).get("description", details.get("text", "script error"))
            )
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 10.0, interval: float = 0.05) -> Any:
        """Poll ``expression`` until it is truthy; its value. CdpError on timeout."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = await self.eval(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise CdpError(f"timed out after {timeout} s waiting for {expression}")
            await asyncio.sleep(interval)

    async def click(self, selector: str, timeout: float = 10.0) -> None:
        """A left click at the centre of the first visible element matching ``selector``, as a user's
        (pointer and mouse events, elementFromPoint sees what is on top)."""
        box = await self.wait_for(
            f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
              if (!e || e.disabled) return null; const r = e.getBoundingClientRect();
              if (!r.width || !r.height) return null;
              return [r.left + r.width / 2, r.top + r.height / 2]; }})()""",
            timeout,
        )
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.send(
                "Input.dispatchMouseEvent",
                {
                    "type": kind,
                    "x": x,
                    "y": y,
                    "button": "left",
                    "buttons": 1 if kind == "mousePressed" else 0,
                    "clickCount": 1,
                },
            )

    async def centre(self, selector: str, timeout: float = 10.0) -> tuple[float, float]:
        x, y = await self.wait_for(
            f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
              if (!e) return null; const r = e.getBoundingClientRect();
              return r.width && r.height ? [r.left + r.width / 2, r.top + r.height / 2] : null; }})()""",
            timeout,
        )
        return x, y

    async def drag(self, source: str, target: str) -> None:
        """Press on ``source``, move to ``target`` in a few steps, release there."""
        (x0, y0), (x1, y1) = await self.centre(source), await self.centre(target)
        await self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0, "y": y0})
        await self.send(
            "Input.dispatchMouseEvent",
            {"type": "mousePressed", "x": x0, "y": y0, "button": "left", "buttons": 1, "clickCount": 1},
        )
        for i in range(1, 6):
            x, y = x0 + (x1 - x0) * i / 5, y0 + (y1 - y0) * i / 5
            await self.send(
                "Input.dispatchMouseEvent",
                {"type": "mouseMoved", "x": x, "y": y, "button": "left", "buttons": 1},
            )
        await self.send(
            "Input.dispatchMouseEvent",
            {"type": "mouseReleased", "x": x1, "y": y1, "button": "left", "buttons": 0, "clickCount": 1},
        )

    async def type(self, selector: str, text: str) -> None:
        await self.eval(f"document.querySelector({json.dumps(selector)}).focus({{preventScroll: true}})")
        await self.send("Input.insertText", {"text": text})

    async def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            await self.send(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"},
            )

    async def close(self) -> None:
        with contextlib.suppress(CdpError, TimeoutError):
            await self.browser.send("Target.closeTarget", {"targetId": self.target})

    async def screenshot(self, path: Path) -> None:
        data = (await self.send("Page.captureScreenshot", {"format": "png"}))["data"]
        path.write_bytes(base64.b64decode(data))
