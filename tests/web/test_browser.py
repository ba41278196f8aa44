"""End to end: the real server, Debian's headless Chromium driven by Playwright, a tiny real model.

Playwright never downloads a browser here: it launches /usr/bin/chromium. Without it these tests
are skipped with the reason (CI installs it in .ci/run).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import LiveServer, running_server
from webhelpers import CHEATER

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
LONG = 300_000  # ms: a tiny model on two busy cores

pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="browser tests need Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with running_server(tmp_path / "web") as live:
        yield live


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(accept_downloads=True, viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.dialogs = []  # every alert/confirm the page opens (none should)
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    context.close()


def fill_form(page: Any, url: str, model: str, tests: set[str], limit: str, **fields: str) -> None:
    page.goto(url)
    page.fill("#model", model)
    for checkbox in page.locator("input[name=tests]").all():
        checkbox.set_checked(checkbox.get_attribute("value") in tests)
    page.fill("#limit", limit)
    for name, value in fields.items():
        page.fill(f"#{name}", value)


def start(page: Any) -> None:
    page.get_by_role("button", name="Start audit").click()
    page.wait_for_url(re.compile(r"/jobs/[0-9]{8}-[0-9]{6}-[0-9a-f]{8}$"))


def download(page: Any, link: str) -> tuple[str, str]:
    with page.expect_download() as info:
        page.click(link)
    return info.value.suggested_filename, Path(info.value.path()).read_text(encoding="utf-8")


def test_audit_a_tiny_model_from_the_browser(tiny_setup, server, page):
    fill_form(
        page,
        server.url,
        str(tiny_setup.cheater),
        {"completion", "min-k"},
        "60",
        benchmark_path=str(tiny_setup.benchmark),
        reference="none",
    )
    start(page)

    # The progress view: live stages, each with a bar and a count.
    stage = page.locator("#stages li").first
    stage.wait_for(timeout=LONG)
    assert page.locator("#cancel").is_visible()
    assert page.locator("#stages progress").count() >= 1

    page.locator("#verdict").wait_for(timeout=LONG)
    label = page.locator("#verdict .label").inner_text()
    report_frame = page.frame_locator("#report-frame")
    report_frame.locator("section.verdict").wait_for(timeout=60_000)
    assert label in report_frame.locator("section.verdict").inner_text()
    assert "Evidence index" in report_frame.locator("#index").inner_text()

    name, text = download(page, "#download-json")
    assert name.endswith(".json")
    report = json.loads(text)
    assert report["verdict"]["label"] == label
    assert report["model"]["spec"] == str(tiny_setup.cheater)
    assert report["benchmark"]["spec"] == str(tiny_setup.benchmark)
    assert report["settings"]["tests"] == ["completion", "min-k"]
    assert report["reference"]["status"] == "none"
    assert report["sample"]["tested"] > 0
    index = report["index"]
    shown = page.locator("#verdict").inner_text()
    if index["value"] is not None:
        assert f"{index['value']:.2f}" in shown and index["band"] in shown

    name, text = download(page, "#download-csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert name.endswith(".csv") and len(rows) == report["sample"]["tested"]
    assert list(rows[0])[:3] == ["id", "text", "twin"]
    completion = next(t for t in report["tests"] if t["name"] == "completion")
    assert sum(row["completion_flagged"] == "true" for row in rows) == completion["n_flagged"]

    name, text = download(page, "#download-html")
    assert name.endswith(".html") and text.startswith("<!DOCTYPE html>")
    assert label in text and str(tiny_setup.cheater.name) in text

    page.goto(server.url)
    assert label in page.locator("table.jobs").inner_text()
    assert page.dialogs == []


def test_watch_cancel_and_run_again_from_the_browser(server, page):
    fill_form(page, server.url, f"{CHEATER}:delay=0.5", {"completion", "min-k"}, "60")
    start(page)
    page.locator("#stages li").first.wait_for(timeout=60_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('#stages progress')].some(bar => bar.max > 1 && bar.value > 0)",
        timeout=60_000,
    )
    page.get_by_role("button", name="Cancel").click()
    page.locator("#message").wait_for(timeout=60_000)
    assert "Cancelled." in page.locator("#message").inner_text()
    cancelled_url = page.url

    page.get_by_role("button", name="Run again").click()
    page.wait_for_url(lambda url: url != cancelled_url and "/jobs/" in url)
    page.locator("#verdict").wait_for(timeout=120_000)
    assert "Likely contaminated" in page.locator("#verdict").inner_text()
    page.goto(server.url)
    statuses = page.locator("table.jobs tbody tr").all_inner_texts()
    assert len(statuses) == 2 and any("cancelled" in row for row in statuses)


HOSTILE = "<script>alert(1)</script> Tom has 12 marbles and wins 30 more. How many marbles does he have now?"


def test_a_hostile_question_shows_as_text(server, page, tmp_path):
    questions = [HOSTILE] + [
        f"A farmer has {n} cows and buys {n + 5} more. How many cows does the farmer have?"
        for n in range(2, 14)
    ]
    content = "".join(json.dumps({"question": q}) + "\n" for q in questions).encode()
    memorised = tmp_path / "memorised.jsonl"
    memorised.write_bytes(content)

    fill_form(page, server.url, f"fake:memorise={memorised}", {"completion", "min-k"}, str(len(questions)))
    page.set_input_files(
        "#benchmark_file",
        files=[{"name": "hostile.jsonl", "mimeType": "application/json", "buffer": content}],
    )
    start(page)
    page.locator("#verdict").wait_for(timeout=60_000)
    report_frame = page.frame_locator("#report-frame")
    report_frame.locator("section.verdict").wait_for(timeout=60_000)
    page.wait_for_timeout(500)  # time for a script, were one to run

    text = report_frame.locator("body").inner_text()
    assert "<script>alert(1)</script>" in text  # shown as text …
    assert report_frame.locator("script").count() == 0  # … and not a script
    assert page.dialogs == []
    assert "hostile.jsonl" in page.locator("#job-heading").inner_text()
