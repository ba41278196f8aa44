"""Jobs: from the form to the reports, one at a time, cancelled, resumed, kept across restarts."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import threading
from pathlib import Path

import pytest
from tiny import broken_model_folder
from webhelpers import (
    CHEATER,
    SAMPLE,
    csrf_token,
    form,
    post_form,
    start_job,
    status,
    stop,
    submit,
    wait_for,
    wait_until,
)

from contamcheck import controls, pipeline
from contamcheck.cli import main
from contamcheck.report import read_report

SLOW = f"{CHEATER}:delay=0.3"  # a pause per batch of model work


def without_run(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "run"}


def test_an_audit_goes_from_the_form_to_the_same_report_as_the_cli(client, capsys):
    job_id = start_job(client)
    page = client.get(f"/jobs/{job_id}")
    assert page.status_code == 200 and "on</span> sample" in page.text
    finished = wait_for(client, job_id)
    assert finished["status"] == "done", finished["message"]
    assert finished["verdict"]["code"] == "likely"
    assert [stage["label"] for stage in finished["stages"]][-2:] == ["model: generating", "analysis: testing"]

    page = client.get(f"/jobs/{job_id}").text
    assert "Likely contaminated" in page and f"/jobs/{job_id}/view" in page
    for kind in ("json", "csv", "html"):
        assert f"/jobs/{job_id}/report.{kind}" in page

    downloaded = client.get(f"/jobs/{job_id}/report.json")
    assert downloaded.headers["content-disposition"] == f'attachment; filename="contamcheck-{job_id}.json"'
    web_report = downloaded.json()

    code = main([CHEATER, "sample", "-n", "40", "--seed", "0", "--tests", "completion,min-k", "--json"])
    cli_report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert without_run(web_report) == without_run(cli_report)

    rows = list(csv.DictReader(io.StringIO(client.get(f"/jobs/{job_id}/report.csv").text)))
    assert len(rows) == 40
    assert {"id", "text", "twin", "completion_flagged", "min-k_diff"} <= set(rows[0])
    flagged = sum(row["completion_flagged"] == "true" for row in rows)
    assert flagged == web_report["tests"][0]["n_flagged"]

    html = client.get(f"/jobs/{job_id}/report.html")
    assert html.headers["content-type"].startswith("text/html")
    assert "Likely contaminated" in html.text and "min-k" in html.text
    view = client.get(f"/jobs/{job_id}/view")
    assert view.text == html.text  # the page shows the very report the download holds

    front = client.get("/").text
    assert f"/jobs/{job_id}" in front and "Likely contaminated" in front


def test_the_result_page_has_skipped_tests_and_caveats(client):
    job_id = start_job(client, tests=["min-k", "canonical-order"], limit="30", no_order="1")
    assert wait_for(client, job_id)["status"] == "done"
    report = client.get(f"/jobs/{job_id}/report.json").json()
    skipped = [t for t in report["tests"] if t["status"] == "skipped"]
    assert [t["name"] for t in skipped] == ["canonical-order"]
    view = client.get(f"/jobs/{job_id}/view").text
    for test in skipped:
        assert test["skip_reason"].split(":")[0].replace("'", "&#39;") in view
    for caveat in report["caveats"]:
        assert caveat[:40].replace("'", "&#39;") in view


def test_the_job_page_says_which_tests_were_asked_for(client):
    every = ["completion", "min-k", "min-k++", "zlib", "guided", "canonical-order"]  # the form's default
    quick = start_job(client, tests=every, quick="1", limit="30", no_order="1")
    assert wait_for(client, quick)["status"] == "done"
    assert "· tests: likelihood tests only (--quick)" in " ".join(client.get(f"/jobs/{quick}").text.split())
    both = start_job(client, tests=["min-k", "completion"], quick="1", limit="30")
    assert wait_for(client, both)["status"] == "done"
    said = " ".join(client.get(f"/jobs/{both}").text.split())
    assert "· tests: min-k, completion (likelihood only: --quick) ·" in said
    # what the reference became, once done: 'auto' alone read as if one had been used
    assert "· reference: auto → none (likelihood tests judged against the bulk of the benchmark) ·" in said
    plain = start_job(client, tests=["min-k"], quick="1", limit="30", reference="none")
    assert wait_for(client, plain)["status"] == "done"
    said = " ".join(client.get(f"/jobs/{plain}").text.split())  # not "none → none (...)"
    assert "· reference: none (likelihood tests judged against the bulk of the benchmark) ·" in said


def test_the_job_page_gives_the_same_audit_as_a_shell_command(client):
    job_id = start_job(client, limit="7", seed="3", tests=["min-k", "zlib"], no_order="1")
    page = client.get(f"/jobs/{job_id}").text
    command = f"contamcheck {CHEATER} sample -n 7 --seed 3 --tests min-k,zlib --no-order"
    assert f"<code>{html.escape(command)}</code>" in page
    wait_for(client, job_id)


def test_questions_without_a_twin_from_the_form(client):
    """The --twinless box reaches the audit, the job page and the form to change it."""
    job_id = start_job(client, tests=["min-k"], twinless="1", limit="30")
    assert wait_for(client, job_id)["status"] == "done"
    page = " ".join(client.get(f"/jobs/{job_id}").text.split())
    assert "· questions without a twin too (--twinless)" in page
    report = client.get(f"/jobs/{job_id}/report.json").json()
    assert report["settings"]["twinless"] is True and report["tests"][0]["kind"] == "bulk"
    again = client.get(f"/?again={job_id}").text
    assert re.search(r'name="twinless" value="1" checked', again)
    plain = start_job(client, tests=["min-k"], limit="30")
    assert wait_for(client, plain)["status"] == "done"
    assert "--twinless)" not in client.get(f"/jobs/{plain}").text
    assert not re.search(r'name="twinless" value="1" checked', client.get(f"/?again={plain}").text)


def test_audits_wait_in_line_and_run_one_at_a_time(client):
    first = start_job(client, model=SLOW, limit="20")
    second = start_job(client, model=SLOW, limit="20", seed="1")
    wait_for(client, first, ("running",))
    waiting = status(client, second)
    assert waiting["status"] == "queued" and waiting["queue_position"] == 1 and waiting["ahead"] == 1
    page = client.get(f"/jobs/{second}").text
    assert "Waiting in line: 1 audit before this one, the running one included." in page
    assert '<span class="badge status-queued">waiting (next)</span>' in client.get("/").text
    done_first, done_second = wait_for(client, first), wait_for(client, second)
    assert done_first["status"] == done_second["status"] == "done"
    assert done_first["finished_at"] <= done_second["started_at"]


def test_cancel_stops_a_running_audit_and_running_it_again_resumes(client):
    job_id = start_job(client, model=SLOW, limit="40")
    wait_until(lambda: any(s["done"] > 0 for s in status(client, job_id)["stages"] if s["total"] > 1))
    response = post_form(client, f"/jobs/{job_id}/cancel")
    assert response.status_code == 303 and response.headers["location"] == f"/jobs/{job_id}"
    cancelled = wait_for(client, job_id)
    assert cancelled["status"] == "cancelled"
    assert "run it again to resume" in cancelled["message"]
    assert client.get(f"/jobs/{job_id}/report.json").status_code == 404
    page = client.get(f"/jobs/{job_id}").text
    assert "Cancelled." in page and "Run again" in page

    again = post_form(client, f"/jobs/{job_id}/rerun")
    assert again.status_code == 303
    new_id = again.headers["location"].rsplit("/", 1)[1]
    assert new_id != job_id
    assert wait_for(client, new_id)["status"] == "done"
    evidence = client.get(f"/jobs/{new_id}/report.json").json()["run"]["evidence"]["model"]
    assert evidence["from_cache"] > 0  # what the cancelled run computed was kept


def _held(monkeypatch, owner, name: str) -> tuple[threading.Event, threading.Event]:
    """``owner.name`` made to wait, each call, until the second event is set: the first tells that the
    audit is inside it, the second lets it go on (once the cancel is in)."""
    real = getattr(owner, name)
    inside, cancelled_now = threading.Event(), threading.Event()

    def held(*args, **kwargs):
        inside.set()
        assert cancelled_now.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, held)
    return inside, cancelled_now


@pytest.mark.parametrize(("tests", "ends"), [(["min-k", "zlib"], "cancelled"), (["min-k"], "done")])
def test_cancel_is_heard_during_the_analysis(client, monkeypatch, tests, ends):
    """The statistics of a large audit take a while after the model's work; a cancel is heard
    between tests, not only between batches of model work. During the last test it comes too
    late: the finished audit is kept, not thrown away."""
    inside, cancelled_now = _held(monkeypatch, pipeline, "run_per_text")  # the first test's statistics
    job_id = start_job(client, limit="20", tests=tests)
    assert inside.wait(60)
    assert post_form(client, f"/jobs/{job_id}/cancel").status_code == 303
    cancelled_now.set()
    finished = wait_for(client, job_id)
    assert finished["status"] == ends
    analysis = next(s for s in finished["stages"] if s["label"] == "analysis: testing")
    if ends == "cancelled":
        assert "run it again to resume" in finished["message"]
        assert analysis["done"] < analysis["total"] == 2
    else:
        assert analysis["done"] == analysis["total"] == 1
        assert client.get(f"/jobs/{job_id}/report.json").status_code == 200


def test_cancel_is_heard_while_a_large_benchmark_makes_its_twins(client, monkeypatch):
    """A million questions take two minutes to twin before any model work; a cancel is heard then."""
    monkeypatch.setattr(pipeline, "TWINS_SAID_FROM", 100)  # the sample's 120 questions count as large
    inside, cancelled_now = _held(monkeypatch, controls, "make_twins")  # the first question's twins
    job_id = start_job(client, limit="20")
    assert inside.wait(60)
    assert post_form(client, f"/jobs/{job_id}/cancel").status_code == 303
    cancelled_now.set()
    finished = wait_for(client, job_id)
    assert finished["status"] == "cancelled" and "run it again to resume" not in finished["message"]
    assert "before any model work: nothing was computed to keep" in finished["message"]
    (twins,) = [s for s in finished["stages"] if s["label"] == pipeline.TWINS]
    assert twins["done"] < twins["total"] == 120
    assert not any(s["label"].startswith("loading") for s in finished["stages"])  # stopped before the model


def test_a_waiting_audit_can_be_cancelled(client):
    first = start_job(client, model=SLOW, limit="20")
    second = start_job(client, model=SLOW, limit="20", seed="1")
    wait_for(client, first, ("running",))
    assert post_form(client, f"/jobs/{second}/cancel").status_code == 303
    assert status(client, second)["status"] == "cancelled"
    assert status(client, second)["message"] == "Cancelled before it started."
    assert wait_for(client, first)["status"] == "done"
    assert status(client, second)["started_at"] is None


def test_past_audits_survive_a_restart(open_client):
    client = open_client()
    job_id = start_job(client)
    assert wait_for(client, job_id)["status"] == "done"
    before = client.get(f"/jobs/{job_id}/report.json").json()
    stop(client)

    restarted = open_client()
    assert [job["id"] for job in restarted.get("/api/jobs").json()] == [job_id]
    assert status(restarted, job_id)["status"] == "done"
    assert restarted.get(f"/jobs/{job_id}/report.json").json() == before
    assert "Likely contaminated" in restarted.get("/").text
    # A form from before the restart carries the old token: refused, with a way out.
    response = restarted.post(f"/jobs/{job_id}/rerun", data={"csrf_token": "old"})
    assert response.status_code == 403 and "Reload the page" in response.text


def test_a_form_from_before_a_restart_comes_back_filled_in_and_then_works(open_client):
    before = open_client()
    old_token, old_cookies = csrf_token(before), dict(before.cookies)
    stop(before)

    restarted = open_client()
    restarted.cookies.update(old_cookies)  # the browser still holds the old server's cookie
    typed = form(model=CHEATER, limit="7", alpha="0.01")
    response = restarted.post("/jobs", data={"csrf_token": old_token, **typed}, follow_redirects=False)
    assert response.status_code == 403 and "nothing was started" in response.text
    assert restarted.get("/api/jobs").json() == []
    page = response.text
    assert f'value="{html.escape(CHEATER)}"' in page and 'value="7"' in page and 'value="0.01"' in page
    fresh = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert fresh is not None and fresh.group(1) != old_token
    # the page came with the new server's cookie: sent again as it is, the form starts the audit
    again = restarted.post("/jobs", data={"csrf_token": fresh.group(1), **typed}, follow_redirects=False)
    assert again.status_code == 303


def test_an_audit_cut_off_by_a_stop_is_interrupted_and_can_run_again(open_client, data_dir):
    client = open_client()
    job_id = start_job(client, model=SLOW, limit="40")
    wait_for(client, job_id, ("running",))
    stop(client)  # the worker stops after the current batch

    restarted = open_client()
    interrupted = status(restarted, job_id)
    assert interrupted["status"] == "interrupted"
    assert "run it again" in interrupted["message"]
    stored = json.loads((data_dir / "jobs" / job_id / "job.json").read_text())
    assert stored["status"] == "interrupted"

    again = post_form(restarted, f"/jobs/{job_id}/rerun")
    new_id = again.headers["location"].rsplit("/", 1)[1]
    assert wait_for(restarted, new_id)["status"] == "done"


def finished_then_stopped(open_client) -> str:
    """A small audit run to its end, then the server stopped, to edit its files as a crash or a hand
    might; the audit's id."""
    client = open_client()
    job_id = start_job(client, limit="20", tests="min-k")
    wait_for(client, job_id)
    stop(client)
    return job_id


def test_a_job_left_running_by_a_crash_shows_as_interrupted(open_client, data_dir):
    job_id = finished_then_stopped(open_client)
    path = data_dir / "jobs" / job_id / "job.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "status": "running", "finished_at": None}))  # as after kill -9

    restarted = open_client()
    current = status(restarted, job_id)
    assert current["status"] == "interrupted"
    assert "while this audit was running" in current["message"]
    assert "Run again" in restarted.get(f"/jobs/{job_id}").text


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"limit": "0"}, "-n/--limit must be at least 1 (got 0)"),
        ({"limit": "ten"}, "Questions (-n/--limit) must be a whole number (got &#39;ten&#39;)"),
        ({"alpha": "2"}, "--alpha must be between 0 and 1"),
        ({"tests": []}, "tick at least one test"),
        ({"model": ""}, "Model: give a Hugging Face Hub id"),
        ({"model": "/no/such/model"}, "&#39;/no/such/model&#39; does not exist"),
        ({"benchmark": "gsm8"}, "Did you mean &#39;gsm8k&#39;?"),
        ({"benchmark_path": "/no/such/questions.jsonl"}, "does not exist"),
        ({"field": "no_such_column", "benchmark_path": SAMPLE}, "no_such_column"),
        ({"model": "m" * 300}, "Model: too long to be a name or a path"),
        ({"benchmark_path": "q" * 300 + ".jsonl"}, "BENCHMARK is too long"),
        ({"model": "pkg:nope"}, "Model: Unknown packaged model &#39;nope&#39;"),
        ({"model": "openai:localhost:8000"}, "Model: Can&#39;t read the server address"),
        ({"model": "openai:http://[::1"}, "Model: Can&#39;t read the server address"),  # was a 500
        ({"reference": "/no/such/ref"}, "Reference: &#39;/no/such/ref&#39; does not exist"),
        # what the audit refuses at once is refused here, not after the jobs ahead in line
        ({"model": "fake:memorise=/no/such/file.jsonl"}, "&#39;/no/such/file.jsonl&#39; does not exist"),
        ({"model": "fake:bogus"}, "fake:bogus"),
        ({"quick": "1", "tests": ["completion"]}, "--quick keeps only likelihood tests"),
        ({"field": "nope"}, "Field &#39;nope&#39; is not in the sample benchmark"),
        ({"benchmark_path": "hf:bad"}, "Can&#39;t read the benchmark spec &#39;hf:bad&#39;"),
        ({"model": "fake:clean", "reference": "fake:clean"}, "is the model under audit"),
        ({"field": "ü" * 5000}, "--field is too long to be a name"),
    ],
)
def test_invalid_forms_come_back_with_the_error_and_the_values(client, fields, message):
    response = submit(client, **fields)
    assert response.status_code == 400
    assert message in response.text
    assert 'role="alert"' in response.text
    if fields.get("model"):
        assert f'value="{fields["model"]}"' in response.text  # what was typed is kept
    assert client.get("/api/jobs").json() == []


def test_one_benchmark_at_a_time(client):
    files = {"benchmark_file": ("q.jsonl", b'{"question": "What is 2 + 3?"}\n', "application/json")}
    response = submit(client, files=files, benchmark_path=SAMPLE)
    assert response.status_code == 400 and "not both" in response.text


def test_trust_remote_code_stays_off(open_client, data_dir):
    seen = []

    def spy(config, progress):
        seen.append(config)
        return pipeline.audit(config, progress=progress)

    client = open_client(audit=spy)
    assert "remote" not in client.get("/").text.split("<form")[1].split("</form>")[0]  # no such field
    job_id = start_job(client, trust_remote_code="on", limit="20", tests="min-k")
    assert wait_for(client, job_id)["status"] == "done"
    assert [config.trust_remote_code for config in seen] == [False]
    stored = json.loads((data_dir / "jobs" / job_id / "job.json").read_text())
    assert stored["config"]["trust_remote_code"] is False
    # Not even from a tampered job file.
    client.app.state.store.update(job_id, config={**stored["config"], "trust_remote_code": True})
    assert client.app.state.store.get(job_id).audit_config().trust_remote_code is False


def test_the_form_can_be_filled_from_an_earlier_audit(client):
    job_id = start_job(client, limit="7", seed="3", tests=["min-k", "zlib"])
    wait_for(client, job_id)
    page = client.get(f"/?again={job_id}").text
    assert f'value="{CHEATER}"' in page
    assert 'id="limit" name="limit" type="text" inputmode="numeric" value="7"' in page
    assert 'value="min-k" checked' in page and 'value="completion">' in page


def test_changing_an_audit_of_an_uploaded_file_asks_for_the_file_again(client):
    files = {"benchmark_file": ("mine.jsonl", Path(SAMPLE).read_bytes(), "application/json")}
    job_id = start_job(client, files=files, limit="20", tests="min-k")
    wait_for(client, job_id)
    page = client.get(f"/?again={job_id}").text
    assert 'id="uploaded-again"' in page and "uploaded benchmark file, mine.jsonl." in page
    builtin = start_job(client, limit="20", tests="min-k")  # a built-in benchmark needs no notice
    wait_for(client, builtin)
    assert 'id="uploaded-again"' not in client.get(f"/?again={builtin}").text
    # The select holds no built-in for it: sent as it stands, the form asks for the file, not
    # for an audit of the sample.
    assert '<option value="" selected>(choose the file again)</option>' in page
    refused = submit(client, benchmark="", limit="20", tests="min-k")
    assert refused.status_code == 400 and "choose the file again" in refused.text
    assert len(client.get("/api/jobs").json()) == 2


def test_changing_an_audit_with_an_uploaded_control_file_asks_for_it_or_its_removal(client):
    controls = "".join(
        json.dumps({"question": f"Bo has {n} pens and {n + 2} pencils in his bag at school."}) + "\n"
        for n in range(30)
    )
    files = {"control_file": ("late.jsonl", controls.encode(), "application/json")}
    job_id = start_job(client, files=files, limit="10", tests="min-k")
    wait_for(client, job_id)
    page = client.get(f"/?again={job_id}").text
    assert '<input type="checkbox" name="control_again" value="late.jsonl" checked>' in page
    assert 'id="uploaded-again"' not in page  # the benchmark was a built-in: no notice under it
    refused = submit(client, control_again="late.jsonl", limit="10", tests="min-k")
    assert refused.status_code == 400 and "used &#39;late.jsonl&#39;" in refused.text
    assert 'name="control_again" value="late.jsonl" checked' in refused.text  # still offered
    dropped = start_job(client, limit="10", tests="min-k")  # unticked: number twins
    assert client.app.state.store.get(dropped).audit_config().control is None
    again = start_job(client, files=files, control_again="late.jsonl", limit="10", tests="min-k")
    assert client.app.state.store.get(again).audit_config().control is not None


def test_a_relative_path_is_kept_as_the_file_it_named(client, tmp_path, monkeypatch):
    """A job run again from a server started in another folder reads the same file, or none."""
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "mine.jsonl").write_bytes(Path(SAMPLE).read_bytes())
    monkeypatch.chdir(tmp_path)
    job_id = start_job(client, benchmark_path="files/mine.jsonl", limit="20", tests="min-k")
    stored = client.app.state.store.get(job_id)
    assert stored.audit_config().benchmark == str(tmp_path / "files" / "mine.jsonl")
    assert stored.benchmark_label == str(tmp_path / "files" / "mine.jsonl")
    assert wait_for(client, job_id)["status"] == "done"
    monkeypatch.chdir(tmp_path / "files")
    rerun = post_form(client, f"/jobs/{job_id}/rerun")
    assert wait_for(client, rerun.headers["location"].rsplit("/", 1)[1])["status"] == "done"
    (tmp_path / "files" / "current.jsonl").symlink_to("mine.jsonl")  # a link stays the link typed
    linked = start_job(client, benchmark_path="current.jsonl", limit="20", tests="min-k")
    assert client.app.state.store.get(linked).benchmark_label == str(tmp_path / "files" / "current.jsonl")
    wait_for(client, linked)


@pytest.mark.parametrize(
    ("fields", "opens"), [({}, False), ({"alpha": "0.01"}, True), ({"alpha": "abc"}, True)]
)
def test_more_settings_open_where_one_differs_from_its_default(client, fields, opens):
    """A value under "More settings" (or one in error there) is never hidden in a closed panel."""
    page = submit(client, limit="0", **fields).text  # refused, so the form comes back
    assert ('<details class="more" open>' in page) is opens


def test_deleting_an_audit_removes_its_files(client, data_dir):
    files = {"benchmark_file": ("mine.jsonl", Path(SAMPLE).read_bytes(), "application/json")}
    job_id = start_job(client, files=files, limit="20", tests="min-k")
    wait_for(client, job_id)
    assert any((data_dir / "uploads").iterdir())
    response = post_form(client, f"/jobs/{job_id}/delete")
    assert response.status_code == 303 and response.headers["location"] == "/"
    assert not (data_dir / "jobs" / job_id).exists()
    assert not any((data_dir / "uploads").iterdir())
    assert client.get(f"/jobs/{job_id}").status_code == 404
    # a "Run again with changes" link kept from before says why the form is empty
    again = client.get(f"/?again={job_id}")
    assert again.status_code == 200 and 'id="again-gone"' in again.text
    assert "no longer here, so the form starts from the defaults" in again.text
    assert 'id="again-gone"' not in client.get("/").text


def test_a_running_audit_is_not_deleted(client):
    job_id = start_job(client, model=SLOW, limit="20")
    wait_for(client, job_id, ("running",))
    token = csrf_token(client)
    assert client.delete(f"/api/jobs/{job_id}", headers={"x-csrf-token": token}).status_code == 409
    wait_for(client, job_id)


def test_a_stored_report_reads_back_with_the_report_reader(client, data_dir):
    job_id = start_job(client, limit="20", tests="min-k")
    wait_for(client, job_id)
    report = read_report(data_dir / "jobs" / job_id / "report.json")
    assert report.settings.limit == 20 and report.model.spec == CHEATER


def test_a_report_damaged_after_the_audit_says_why_on_every_address(open_client, data_dir):
    """Was a bare 500 and a traceback in the server's log (found by a black-box pass)."""
    job_id = finished_then_stopped(open_client)
    path = data_dir / "jobs" / job_id / "report.json"
    path.write_text(path.read_text()[:500])
    restarted = open_client()
    for address in ("view", "report.json", "report.csv", "report.html"):
        response = restarted.get(f"/jobs/{job_id}/{address}")
        assert response.status_code == 500 and "is not a JSON report" in response.text, address
        text = html.unescape(response.text)
        assert "This audit's report can't be read" in text and "Run the audit again" in text
        assert ("<footer" in text) is (address != "view")  # the frame's answer is no site page
    assert restarted.get(f"/jobs/{job_id}").status_code == 200  # its page, with Run again and Delete


def test_every_page_answers_head_as_curl_i_sends_it(client):
    """HEAD is GET's headers without its body, on every page (FastAPI's routes answer 405 to it)."""
    job_id = start_job(client)
    wait_for(client, job_id, "done")
    for path in ["/", f"/jobs/{job_id}", f"/jobs/{job_id}/report.json", "/api/jobs", "/static/web.css"]:
        got, head = client.get(path), client.head(path)
        # (TestClient drops a HEAD's body itself: test_security.py checks LocalOnly drops it)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == str(len(got.content)), path
    assert client.head("/jobs").status_code == 405  # as GET: the form's address takes POST only
    assert client.head("/jobs/nosuchjob").status_code == 404


def test_the_html_download_reads_the_report_once_and_the_page_reuses_it(client, monkeypatch):
    from contamcheck.report import io as report_io

    job_id = start_job(client, tests=["min-k"], quick="1", limit="30", no_order="1")
    assert wait_for(client, job_id)["status"] == "done"
    reads = []
    read = report_io.read_report
    monkeypatch.setattr(report_io, "read_report", lambda path: reads.append(path) or read(path))
    download = client.get(f"/jobs/{job_id}/report.html")
    assert download.status_code == 200 and len(reads) == 1  # was read twice: checked, then rendered
    assert client.get(f"/jobs/{job_id}/view").text == download.text and len(reads) == 1


def test_a_form_too_large_to_read_and_a_wrong_method_get_pages_not_json(client):
    """Were FastAPI's raw JSON ({"detail": "Part exceeded maximum size of 1024KB."})."""
    token = csrf_token(client)
    big = client.post("/jobs", data={"csrf_token": token, "model": "x" * (2 * 2**20)})
    assert big.status_code == 400 and big.headers["content-type"].startswith("text/html")
    assert "The form could not be read" in big.text and "maximum size" in big.text
    many = client.post("/jobs", data={"csrf_token": token, **{f"f{i}": "1" for i in range(80)}})
    assert many.status_code == 400 and "Too many fields" in many.text
    wrong = client.get("/jobs")
    assert wrong.status_code == 405 and "POST" in wrong.headers["allow"]
    assert "Can't do that here" in html.unescape(wrong.text)
    assert client.post("/api/jobs").json() == {"detail": "Method Not Allowed"}  # the API keeps JSON


def test_unreadable_or_invalid_job_files_are_skipped_not_fatal(open_client, data_dir):
    job_id = finished_then_stopped(open_client)
    broken = data_dir / "jobs" / "20200101-000000-00000000"
    broken.mkdir()
    (broken / "job.json").write_text("{not json")
    invalid = data_dir / "jobs" / "20200101-000000-11111111"
    invalid.mkdir()
    record = json.loads((data_dir / "jobs" / job_id / "job.json").read_text())
    record.update(id=invalid.name, config={**record["config"], "limit": 0})
    (invalid / "job.json").write_text(json.dumps(record))

    restarted = open_client()
    assert [job["id"] for job in restarted.get("/api/jobs").json()] == [job_id]
    assert restarted.get("/?again=20200101-000000-11111111").status_code == 200
    assert restarted.get("/?again=../../etc").status_code == 200


def test_a_failed_stage_that_starts_again_gets_a_new_clock(tmp_path, monkeypatch):
    # An automatic reference passed over (the model under another name): the next one scores under
    # the same label, and its stage counts its own seconds.
    from contamcheck import AuditConfig
    from contamcheck.evidence.engine import FAILED
    from contamcheck.web import jobs
    from contamcheck.web.jobs import JobStore

    now = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: now[0])
    store = JobStore(tmp_path)
    job = store.create(AuditConfig(model="fake:clean", benchmark="sample"), "sample").id
    for at, done, total in [(100, 0, 40), (160, 0, FAILED), (161, 0, 40), (163, 40, 40)]:
        now[0] = at
        store.progress(job, "reference: scoring", done, total)
    (stage,) = store.get(job).stages
    assert (stage.done, stage.total, stage.seconds) == (40, 40, 2.0)


def test_a_second_wait_for_the_cache_adds_its_seconds_not_the_time_between(tmp_path, monkeypatch):
    from contamcheck import AuditConfig
    from contamcheck.evidence.engine import CACHE_WAIT
    from contamcheck.web import jobs
    from contamcheck.web.jobs import JobStore

    now = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: now[0])
    store = JobStore(tmp_path)
    job = store.create(AuditConfig(model="fake:clean", benchmark="sample"), "sample").id
    # waited 3 s, worked for a minute, waited 2 s more (the pipeline says a wait as 0/0, its end as 1/1)
    for at, done, total in [(100, 0, 0), (103, 1, 1), (163, 0, 0), (164, 0, 0), (165, 1, 1)]:
        now[0] = at
        store.progress(job, CACHE_WAIT, done, total)
        if at == 164:
            assert store.get(job).stages[0].seconds == 4.0  # while it waits
    (stage,) = store.get(job).stages
    assert (stage.done, stage.total, stage.seconds) == (1, 1, 5.0)  # was 65 s, from the first wait


def test_audits_created_within_one_second_are_listed_newest_first(tmp_path):
    from contamcheck import AuditConfig
    from contamcheck.web.jobs import JobStore

    store = JobStore(tmp_path)
    config = AuditConfig(model="fake:clean", benchmark="sample")
    created = [store.create(config, "sample").id for _ in range(6)]
    assert [record.id for record in store.all()] == created[::-1]

    listed = store.all()  # a job file edited by hand, its time without a zone or not a time, still lists
    store.update(created[0], created_at="2026-12-04T22:00:00")
    store.update(created[1], created_at="yesterday")
    assert len(store.all()) == len(listed) and store.all()[-1].id == created[1]


def test_an_audit_that_outlasts_the_stop_is_marked_interrupted_before_the_server_exits(tmp_path):
    import threading

    from contamcheck import AuditConfig
    from contamcheck.web.jobs import JobRunner, JobStore

    store, release = JobStore(tmp_path), threading.Event()
    started = threading.Event()

    def stuck_audit(config, progress):  # inside one long step: no progress call to stop at
        started.set()
        release.wait(30)
        raise RuntimeError("released")

    runner = JobRunner(store, stuck_audit)
    runner.start()
    job = store.create(AuditConfig(model="fake:clean", benchmark="sample"), "sample")
    runner.submit(job.id)
    assert started.wait(10)
    runner.stop(timeout=0.2)
    assert runner.running()  # serve() exits the process without it
    stored = store.get(job.id)
    assert stored is not None and stored.status == "interrupted" and "run it again" in (stored.message or "")
    release.set()


def test_a_model_that_fails_to_load_shows_its_stage_as_failed(client, tmp_path):
    reference = broken_model_folder(tmp_path / "broken")
    job_id = start_job(client, reference=str(reference))
    finished = wait_for(client, job_id)
    assert finished["status"] == "failed" and "Can't load model" in finished["message"]
    stage = next(s for s in finished["stages"] if s["label"] == f"loading {reference}")
    assert stage["total"] == -1
    page = client.get(f"/jobs/{job_id}").text
    assert (
        f'<span class="label">loading {html.escape(str(reference))}</span><span class="count">failed</span>'
        in page
    )
    assert "Can&#39;t load model" in page  # the reason, on the page
    # in the list too, said to be the reference
    listed = re.search(r'<div class="muted small why" title="[^"]*">([^<]*)</div>', client.get("/").text)
    assert listed is not None and listed.group(1).startswith("--reference: Can&#39;t load model")


def test_a_control_file_with_its_own_column_is_uploaded_with_the_form(client):
    rows = [
        {"prob": f"A farmer plants {n} rows of {n + 3} beans each. How many beans are planted in all?"}
        for n in range(11, 41)
    ]
    upload = "".join(json.dumps(row) + "\n" for row in rows).encode()
    files = {"control_file": ("late.jsonl", upload, "application/json")}
    refused = submit(client, files=files, limit="10", tests=["min-k"])
    assert refused.status_code == 400 and "Pass --control-field with one of: prob" in html.unescape(
        refused.text
    )
    assert 'id="control_field"' in refused.text  # the field the message names is on the form
    job_id = start_job(client, files=files, limit="10", tests=["min-k"], control_field="prob")
    assert wait_for(client, job_id)["status"] == "done"
    report = client.get(f"/jobs/{job_id}/report.json").json()
    assert report["control"]["kind"] == "file" and report["control"]["n_controls"] == 20
    again = client.get(f"/?again={job_id}").text
    assert 'name="control_field" type="text" value="prob"' in again
    assert 'name="control_again" value="late.jsonl" checked' in again
    without_file = submit(client, limit="10", tests=["min-k"], control_field="prob")  # not chosen again
    assert without_file.status_code == 400
    assert "choose the control file (again, when changing an earlier audit)" in without_file.text
