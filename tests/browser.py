"""Open a local HTML page in headless Chromium through the DevTools protocol.

:func:`inspect_page` loads the page, waits for it, and returns what a test checks: the
console errors and exceptions, every network request that is not the page itself, the
size of each chart, a full-page PNG screenshot and a PDF print. Chromium is the system's
(Debian package ``chromium``); ``websocket-client`` talks to it.

Run as a script to render the report of the generated history repository
(tests/history_repo.py) into a screenshot, as the docs show it::

    python tests/browser.py docs/img/report.png
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio", "--remote-debugging-port=0"]
CHART_PROBE = """JSON.stringify([...document.querySelectorAll('figure.chart')].map(f => {
  const svg = f.querySelector('svg'); const r = svg ? svg.getBoundingClientRect() : null;
  return {id: f.id, width: r ? r.width : 0, height: r ? r.height : 0,
          shapes: svg ? svg.querySelectorAll('path, use').length : 0};
}))"""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageReport:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # URLs other than the page itself
    charts: list[dict] = field(default_factory=list)
    screenshot: bytes = b""
    pdf: bytes = b""


class _Session:
    def __init__(self, ws_url: str):
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            event = json.loads(self.ws.recv())
            self.events.append(event)
            if event.get("method") == method:
                return event
        raise TimeoutError(method)


def inspect_page(page: Path, *, width: int = 1100, chromium: str | None = None,
                 shot_height: int | None = None) -> PageReport:
    """Load ``page``; the screenshot is the whole page, or its top ``shot_height`` pixels."""
    chromium = chromium or find_chromium()
    if chromium is None:
        raise FileNotFoundError("chromium")
    page = Path(page).resolve()
    url = page.as_uri()
    profile = tempfile.mkdtemp(prefix="vaultkit-chromium-")
    proc = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        ws_url = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and ws_url is None:
            line = proc.stderr.readline().decode("utf-8", "replace")
            if not line and proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                ws_url = m.group(1)
        if ws_url is None:
            raise RuntimeError("chromium did not start its DevTools endpoint")
        cdp = _Session(ws_url)
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.send("Target.attachToTarget", {"targetId": target,
                                                     "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.send(f"{domain}.enable", session=session)
        cdp.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session)
        cdp.events.clear()
        cdp.send("Page.navigate", {"url": url}, session=session)
        cdp.wait_for("Page.loadEventFired")
        report = PageReport()
        probe = cdp.send("Runtime.evaluate", {"expression": CHART_PROBE,
                                              "returnByValue": True}, session=session)
        report.charts = json.loads(probe["result"]["value"])
        metrics = cdp.send("Page.getLayoutMetrics", session=session)
        height = int(metrics.get("cssContentSize", metrics.get("contentSize"))["height"])
        cdp.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session)
        params = {"format": "png"}
        if shot_height:
            params["clip"] = {"x": 0, "y": 0, "width": width,
                              "height": min(shot_height, height), "scale": 1}
        shot = cdp.send("Page.captureScreenshot", params, session=session)
        report.screenshot = base64.b64decode(shot["data"])
        pdf = cdp.send("Page.printToPDF", {"printBackground": True}, session=session,
                       timeout=60)
        report.pdf = base64.b64decode(pdf["data"])
        for event in cdp.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                               "assert"):
                report.console_errors.append(json.dumps(params.get("args"))[:300])
            elif method == "Runtime.exceptionThrown":
                report.console_errors.append(json.dumps(params.get("exceptionDetails"))[:300])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                report.console_errors.append(params["entry"].get("text", "")[:300])
            elif method == "Network.requestWillBeSent":
                requested = params.get("request", {}).get("url", "")
                if requested != url:
                    report.requests.append(requested)
        cdp.ws.close()
        return report
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def _main(argv: list[str]) -> int:
    """Render the generated repository's report and save its screenshot."""
    import sys

    import history_repo

    out = Path(argv[0] if argv else "docs/img/report.png").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        repo = history_repo.build(Path(tmp) / "demo")
        env = {**repo.env, "NO_COLOR": "1"}
        page = Path(tmp) / "report.html"
        subprocess.run([sys.executable, "-m", "vaultkit", "report", str(repo.path), "-o",
                        str(page)], env=env, check=True)
        result = inspect_page(page, shot_height=2000)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(result.screenshot)
    print(f"wrote {out} ({len(result.screenshot) // 1024} KB); charts: "
          f"{[c['id'] for c in result.charts]}; console errors: {result.console_errors}; "
          f"requests: {result.requests}")
    return 0


if __name__ == "__main__":
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(_main(sys.argv[1:]))
