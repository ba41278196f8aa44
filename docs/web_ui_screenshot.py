"""Take docs/web-ui.png: the README's demo audit run from the web UI's form, its result page.

    python docs/web_ui_screenshot.py            # needs the web extra, playwright and /usr/bin/chromium

The audit is the README's (SmolLM2-135M-Instruct on 100 HumanEval prompts). It uses the evidence
cache as the CLI does (CONTAMCHECK_CACHE or the user cache), so after `make demo` it takes seconds;
on an empty cache, the demo's minutes. Past audits go to a temporary data folder, removed after.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

OUT = Path(__file__).resolve().parent / "web-ui.png"
CHROMIUM = "/usr/bin/chromium"
MODEL, BENCHMARK, LIMIT = "pkg:smollm2-135m-instruct", "humaneval", "100"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_serving(url: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(120):
        if server.poll() is not None:
            sys.exit(f"contamcheck serve exited with {server.returncode}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.5)
    sys.exit("contamcheck serve did not answer in a minute")


def main() -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory() as data:
        command = [sys.executable, "-m", "contamcheck", "serve", "--port", str(port), "--data", data]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        try:
            wait_until_serving(url, server)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1100, "height": 1000})
                page.goto(url)
                page.fill("#model", MODEL)
                page.select_option("#benchmark", BENCHMARK)
                page.fill("#limit", LIMIT)
                page.get_by_role("button", name="Start audit").click()
                page.wait_for_url(lambda address: "/jobs/" in address)
                job = page.url.rsplit("/", 1)[1]
                while True:
                    with urllib.request.urlopen(f"{url}api/jobs/{job}") as response:
                        status = json.load(response)
                    if status["status"] not in ("queued", "running"):
                        break
                    time.sleep(1)
                if status["status"] != "done":
                    sys.exit(f"the audit ended {status['status']}: {status['message']}")
                page.goto(f"{url}jobs/{job}")
                page.frame_locator("#report-frame").locator("section.verdict").wait_for()
                page.screenshot(path=str(OUT))
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
