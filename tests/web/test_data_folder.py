"""What the server trusts in its data folder: one server per folder, and a finished audit's verdict as
its report gives it, read back and checked (found by a black-box pass: job.json was believed)."""

from __future__ import annotations

import html
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from live_server import running_server
from webhelpers import SAMPLE, post_form, start_job, status, stop, submit, wait_for

from contamcheck.cli import main

ANOTHER_AUDIT = Path(__file__).parents[2] / "docs" / "validation" / "gsm8k-seed0" / "default-leak-10.json"


def finished(open_client, data_dir: Path) -> tuple[str, Path]:
    """A small audit run to its end ("likely contaminated"), the server stopped; its id and folder."""
    client = open_client()
    job_id = start_job(client)
    assert wait_for(client, job_id)["verdict"]["code"] == "likely"
    stop(client)
    return job_id, data_dir / "jobs" / job_id


def edit(path: Path, **changes: object) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}), encoding="utf-8")


def test_a_verdict_changed_in_job_json_is_not_shown(open_client, data_dir):
    job_id, folder = finished(open_client, data_dir)
    edit(folder / "job.json", verdict_code="clean", verdict_label="No evidence found", index_value=0.0)
    client = open_client()
    assert status(client, job_id)["verdict"]["code"] == "likely"  # as the report says
    assert "Likely contaminated" in client.get(f"/jobs/{job_id}").text
    assert "No evidence found" not in client.get("/").text


@pytest.mark.parametrize("change", ["edited", "gone", "another audit's"])
def test_a_report_changed_after_the_audit_shows_no_verdict_and_says_why(open_client, data_dir, change):
    job_id, folder = finished(open_client, data_dir)
    report = folder / "report.json"
    if change == "edited":  # the verdict laundered in both files: the report's own numbers refuse it
        edit(folder / "job.json", verdict_code="clean", verdict_label="No evidence found")
        data = json.loads(report.read_text())
        data["verdict"].update(code="clean", label="No evidence found", exit_code=0)
        report.write_text(json.dumps(data))
        said = "does not follow from the tests' statuses"
    elif change == "gone":
        report.unlink()
        said = "Its report (report.json) is gone from the data folder."
    else:  # a valid report of another model put in its place
        shutil.copyfile(ANOTHER_AUDIT, report)
        said = "Its report.json is another audit's"
    client = open_client()
    current = status(client, job_id)
    assert current["verdict"] is None and said in current["report_problem"]
    assert set(current["links"]) == {"page"}  # no downloads offered
    page = html.unescape(client.get(f"/jobs/{job_id}").text)
    assert "This audit's report can't be read." in page and said in page
    assert 'id="report-frame"' not in page and 'id="download-json"' not in page and "Run again" in page
    assert "report unreadable" in client.get("/").text
    if change != "gone":  # the addresses refuse it too, a replaced report included
        assert said in html.unescape(client.get(f"/jobs/{job_id}/report.json").text)


def test_a_report_changed_while_the_server_runs_is_read_again(client, data_dir):
    """The HTML kept in memory was served after its file changed (found by a black-box pass)."""
    job_id = start_job(client)
    wait_for(client, job_id)
    assert "Likely contaminated" in client.get(f"/jobs/{job_id}/view").text  # rendered, and kept
    report = data_dir / "jobs" / job_id / "report.json"
    original = report.read_bytes()
    shutil.copyfile(ANOTHER_AUDIT, report)
    assert "another audit's" in html.unescape(client.get(f"/jobs/{job_id}/view").text)
    report.write_bytes(original)  # put back: its size differs from the other's
    assert client.get(f"/jobs/{job_id}/view").status_code == 200
    assert status(client, job_id)["verdict"]["code"] == "likely"


def test_a_job_file_with_a_number_no_json_holds_is_skipped_not_a_500(open_client, data_dir):
    _, folder = finished(open_client, data_dir)
    text = (folder / "job.json").read_text()
    (folder / "job.json").write_text(text.replace('"index_value": ', '"index_value": NaN, "x": '))
    client = open_client()
    assert client.get("/api/jobs").json() == []  # skipped, with one line in the log
    assert client.get("/").status_code == 200


def test_run_again_takes_only_what_the_form_sets_from_a_stored_job(open_client, data_dir, tmp_path):
    job_id, folder = finished(open_client, data_dir)
    record = json.loads((folder / "job.json").read_text())
    elsewhere = tmp_path / "elsewhere"
    record["config"].update(cache=str(elsewhere), trust_remote_code=True, device="cuda")
    (folder / "job.json").write_text(json.dumps(record))
    client = open_client()
    again = post_form(client, f"/jobs/{job_id}/rerun")
    new_id = again.headers["location"].rsplit("/", 1)[1]
    assert wait_for(client, new_id)["status"] == "done"
    assert not elsewhere.exists()
    page = client.get(f"/jobs/{new_id}").text
    assert "--cache" not in page and "--trust-remote-code" not in page and "cuda" not in page


def test_a_control_file_that_repeats_the_benchmark_is_refused_by_the_form_by_its_name(client, data_dir):
    lines = Path(SAMPLE).read_text(encoding="utf-8").splitlines()[20:60]
    files = {"control_file": ("c.jsonl", ("\n".join(lines) + "\n").encode(), "application/json")}
    refused = submit(client, files=files, limit="10", tests=["min-k"])
    text = html.unescape(refused.text)
    assert refused.status_code == 400 and "Every question of the control file 'c.jsonl'" in text
    assert str(data_dir / "uploads") not in text and not any((data_dir / "uploads").iterdir())


def test_a_file_a_stand_in_memorised_is_kept_as_an_absolute_path(client, tmp_path, monkeypatch):
    shutil.copyfile(SAMPLE, tmp_path / "memorised.jsonl")
    monkeypatch.chdir(tmp_path)
    job_id = start_job(client, model="fake:memorise=memorised.jsonl:strength=-0.1", limit="10")
    record = json.loads((tmp_path / "web" / "jobs" / job_id / "job.json").read_text())
    assert record["config"]["model"] == f"fake:memorise={tmp_path / 'memorised.jsonl'}:strength=-0.1"
    wait_for(client, job_id)


def test_a_second_server_on_the_same_data_folder_is_refused(tmp_path, capsys):
    """It marked the first one's running audits interrupted, and could delete them."""
    with running_server(tmp_path / "web") as server:
        assert main(["serve", "--port", "0", "--data", str(tmp_path / "web")]) == 2
        err = capsys.readouterr().err
        assert "Another contamcheck serve uses the data folder" in err and "pass --data" in err
        assert f"process {server.process.pid} on" in err
        server.process.send_signal(signal.SIGTERM)
        out, _ = server.process.communicate(timeout=30)
        assert server.process.returncode == 143  # said, as Ctrl-C's stop is
        assert "contamcheck web UI stopped. (SIGTERM)" in out
    command = [sys.executable, "-m", "contamcheck", "serve", "--port", "0", "--data", str(tmp_path / "web")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as again:  # the lock went with it
        try:
            assert "contamcheck web UI: http://127.0.0.1:" in (
                again.stdout.readline() if again.stdout else ""
            )
        finally:
            again.terminate()


@pytest.mark.parametrize("limit", ["nan", "inf", "-1", "0", "1e-9"])
def test_an_upload_limit_no_file_can_meet_is_refused(limit, capsys):
    assert main(["serve", "--max-upload-mb", limit]) == 2
    err = capsys.readouterr().err
    assert "--max-upload-mb" in err and "megabytes from 0.001" in err and "Traceback" not in err


def test_run_again_without_its_uploaded_file_says_so_on_a_page(client, data_dir):
    lines = Path(SAMPLE).read_text(encoding="utf-8")
    files = {"benchmark_file": ("mine.jsonl", lines.encode(), "application/json")}
    job_id = start_job(client, files=files, limit="20", tests="min-k")
    wait_for(client, job_id)
    shutil.rmtree(data_dir / "uploads")
    (data_dir / "uploads").mkdir()
    response = post_form(client, f"/jobs/{job_id}/rerun")
    assert response.status_code == 409 and response.headers["content-type"].startswith("text/html")
    text = html.unescape(response.text)
    assert "This audit can't be run again" in text and "Its uploaded file is gone" in text


def test_a_long_number_typed_in_the_form_is_repeated_by_its_start(client):
    refused = submit(client, limit="9" * 3000 + "x")
    text = html.unescape(refused.text)
    said = "must be a whole number (got '" + "9" * 40 + "'… (3,001 characters))"
    assert refused.status_code == 400 and said in text  # the field itself keeps all of it
