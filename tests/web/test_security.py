"""A local web UI can still be attacked from a browser: Host, origin, CSRF, uploads, paths, escaping."""

from __future__ import annotations

import html
import json
import re

import pytest
from webhelpers import CHEATER, ORIGIN, csrf_token, start_job, submit, wait_for

from contamcheck.web.security import PAGE_POLICY, is_loopback_host, same_origin

JOB_ROUTE_ID = "20260101-000000-0123abcd"


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8000", "localhost", "localhost:8000", "[::1]", "[::1]:8000"]
)
def test_loopback_host_headers_are_answered(client, host):
    response = client.get("/", headers={"host": host})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8000",
        "127.0.0.1.evil.example",
        "localhost.evil.example:8000",
        "testserver",
        "192.168.1.20:8000",
        "[::1]evil",
        "localhost:80x",
        "",
    ],
)
def test_other_host_headers_are_refused_against_dns_rebinding(client, host):
    response = client.get("/", headers={"host": host})
    assert response.status_code == 400
    assert "Host" in response.text
    assert "csrf_token" not in response.text  # nothing of the page leaks


def test_host_check_covers_every_route(client):
    for path in [
        "/api/jobs",
        f"/api/jobs/{JOB_ROUTE_ID}",
        "/static/web.js",
        f"/jobs/{JOB_ROUTE_ID}/report.json",
    ]:
        assert client.get(path, headers={"host": "evil.example:8000"}).status_code == 400


def test_host_header_parsing():
    assert is_loopback_host("LOCALHOST:8000")
    assert is_loopback_host("127.0.0.2:8000", extra=["127.0.0.2"])
    assert not is_loopback_host("127.0.0.2:8000")
    assert not is_loopback_host(None)
    assert same_origin("127.0.0.1:8000", "http://127.0.0.1:8000", None)
    assert not same_origin("127.0.0.1:8000", "http://127.0.0.1:9000", None)
    assert not same_origin("127.0.0.1:8000", "null", None)
    assert same_origin("127.0.0.1:8000", None, "http://127.0.0.1:8000/jobs/x")
    assert not same_origin("127.0.0.1:8000", None, "https://evil.example/")


def test_a_post_without_the_token_is_refused(client):
    csrf_token(client)  # the cookie is set, the field is missing
    response = client.post("/jobs", data={"model": CHEATER, "benchmark": "sample"})
    assert response.status_code == 403
    assert "security token" in response.text
    assert client.get("/api/jobs").json() == []


def test_a_post_with_a_wrong_token_is_refused(client):
    csrf_token(client)
    response = client.post("/jobs", data={"csrf_token": "x" * 43, "model": CHEATER, "benchmark": "sample"})
    assert response.status_code == 403
    assert client.get("/api/jobs").json() == []


def test_the_token_alone_is_not_enough_without_the_cookie(client):
    token = csrf_token(client)
    client.cookies.clear()
    response = client.post("/jobs", data={"csrf_token": token, "model": CHEATER, "benchmark": "sample"})
    assert response.status_code == 403
    assert client.get("/api/jobs").json() == []  # nothing started, though the form's token was right
    client.cookies.clear()
    # only the form's POST reaches its route without the cookie (to be shown again); nothing else
    for method in ("PUT", "PATCH", "DELETE"):
        refused = client.request(method, "/jobs", headers={"x-csrf-token": token})
        assert refused.status_code == 403 and "security token" in refused.text, method


def test_the_cookie_is_strict_and_http_only(client):
    cookie = client.get("/").headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1:9999"},  # another local service
        {"origin": "https://127.0.0.1:8000"},
        {"referer": "http://evil.example/page"},
    ],
)
def test_cross_origin_posts_are_refused_even_with_the_token(client, headers):
    response = submit(client, **{})  # a same-origin post works …
    assert response.status_code == 303
    token = csrf_token(client)
    response = client.post(
        "/jobs",
        data={"csrf_token": token, "model": CHEATER, "benchmark": "sample", "tests": "min-k"},
        headers=headers,
        follow_redirects=False,
    )
    assert response.status_code == 403  # … a cross-origin one does not
    assert len(client.get("/api/jobs").json()) == 1


def test_same_origin_headers_are_accepted(client):
    token = csrf_token(client)
    response = client.post(
        "/jobs",
        data={"csrf_token": token, "model": CHEATER, "benchmark": "sample", "limit": "5", "tests": "min-k"},
        headers={"origin": ORIGIN, "referer": f"{ORIGIN}/"},
        follow_redirects=False,
    )
    assert response.status_code == 303


def test_every_state_changing_route_needs_the_token(client):
    job_id = start_job(client, limit="20", tests="min-k")
    wait_for(client, job_id)
    csrf_token(client)  # cookie present: only the token is missing
    routes = [
        (method, route.path.replace("{job_id}", job_id))
        for route in client.app.routes
        for method in getattr(route, "methods", ()) or ()
        if method in ("POST", "PUT", "PATCH", "DELETE")
    ]
    assert {path for _, path in routes} >= {"/jobs", f"/jobs/{job_id}/cancel", f"/api/jobs/{job_id}"}
    for method, path in routes:
        response = client.request(method, path, data={"csrf_token": "wrong"} if method == "POST" else None)
        assert response.status_code == 403, (method, path)
    assert len(client.get("/api/jobs").json()) == 1  # nothing was deleted or re-run


def test_delete_through_the_api_takes_the_token_in_a_header(client):
    job_id = start_job(client, limit="20", tests="min-k")
    wait_for(client, job_id)
    token = csrf_token(client)
    assert client.delete(f"/api/jobs/{job_id}").status_code == 403
    response = client.delete(f"/api/jobs/{job_id}", headers={"x-csrf-token": token})
    assert response.status_code == 200
    assert client.get(f"/api/jobs/{job_id}").status_code == 404
    gone = client.delete(f"/api/jobs/{job_id}", headers={"x-csrf-token": token})  # the API answers JSON
    assert gone.status_code == 404 and gone.json() == {"detail": "no such audit"}


def jsonl(*questions: str) -> bytes:
    return "".join(json.dumps({"question": q}) + "\n" for q in questions).encode()


QUESTIONS = [
    f"Ann has {n} apples and buys {n + 7} more at the market. How many apples does she have now?"
    for n in range(3, 30)
]


def test_uploads_over_the_limit_are_refused(open_client, data_dir):
    client = open_client(max_upload_bytes=int(0.002 * 2**20))  # as `serve --max-upload-mb 0.002` sets it
    assert "up to 0.002 MB." in client.get("/").text  # as set, not 0.00199986
    big = jsonl(*QUESTIONS * 3)
    assert len(big) > 2097
    response = submit(client, files={"benchmark_file": ("big.jsonl", big, "application/json")})
    assert response.status_code == 413
    assert "is larger than the limit of 0.002 MB." in response.text
    assert client.get("/api/jobs").json() == []
    assert not any((data_dir / "uploads").iterdir())  # nothing kept


def test_a_body_far_over_the_limit_is_refused_before_it_is_read(open_client):
    client = open_client(max_upload_bytes=1000)
    token = csrf_token(client)
    form = {"data": {"csrf_token": token}, "files": {"benchmark_file": ("big.jsonl", b"x" * 2**21, "x")}}
    response = client.post("/jobs", **form)  # a script: the reason as text
    assert response.status_code == 413 and response.headers["content-type"].startswith("text/plain")
    said = "each chosen file may be up to 0.000954 MB."  # the form's limit, not the body's
    assert said in response.text and "--max-upload-mb" in response.text
    # a browser: a page in the UI's style, with the way back
    page = client.post("/jobs", headers={"accept": "text/html,application/xhtml+xml"}, **form)
    assert page.status_code == 413 and page.headers["content-type"].startswith("text/html")
    text = html.unescape(page.text)
    assert said in text and 'href="/static/web.css"' in text and 'href="/"' in text
    assert page.headers["content-security-policy"] == PAGE_POLICY
    assert client.get("/api/jobs").json() == []


def test_a_head_request_gets_the_gets_headers_and_no_body_from_the_app_or_a_refusal():
    """Called as the server calls it (TestClient drops a HEAD's body itself, so it can't tell)."""
    import asyncio

    from contamcheck.web.security import CsrfToken, LocalOnly

    seen_methods = []

    async def app(scope, receive, send):
        seen_methods.append(scope["method"])
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
        await send({"type": "http.response.body", "body": b"hello"})

    def head(host: str) -> list[dict]:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        scope = {"type": "http", "method": "HEAD", "path": "/", "headers": [(b"host", host.encode())]}
        asyncio.run(LocalOnly(app, token=CsrfToken(), max_upload=1000)(scope, receive, send))
        return sent

    start, body = head("127.0.0.1:8000")
    assert seen_methods == ["GET"] and start["status"] == 200 and body["body"] == b""
    assert (b"content-length", b"5") in start["headers"]  # the GET's length
    start, body = head("evil.example")  # refused before the app: no body either
    assert start["status"] == 400 and body["body"] == b"" and seen_methods == ["GET"]


def test_a_body_over_the_limit_without_its_length_is_refused_as_it_is_read(open_client):
    """Chunked (no content-length): the limit holds as the body arrives, in the same words."""
    client = open_client(max_upload_bytes=1000)
    token = csrf_token(client)
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{token}\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="benchmark_file"; filename="big.jsonl"'
        f"\r\nContent-Type: application/json\r\n\r\n{'x' * 2**21}\r\n--{boundary}--\r\n"
    ).encode()

    def chunks():
        for start in range(0, len(body), 65536):
            yield body[start : start + 65536]

    headers = {"content-type": f"multipart/form-data; boundary={boundary}", "accept": "text/html"}
    response = client.post("/jobs", content=chunks(), headers=headers)
    assert response.status_code == 413 and response.headers["content-type"].startswith("text/html")
    assert "each chosen file may be up to 0.000954 MB." in html.unescape(response.text)
    assert client.get("/api/jobs").json() == []


def test_uploads_are_stored_under_generated_names_inside_the_data_folder(client, data_dir, tmp_path):
    response = submit(
        client,
        files={"benchmark_file": ("../../../outside/evil name.jsonl", jsonl(*QUESTIONS), "application/json")},
        limit="20",
        tests="min-k",
    )
    assert response.status_code == 303
    stored = [p for p in (data_dir / "uploads").rglob("*") if p.is_file()]
    assert len(stored) == 1
    path = stored[0]
    assert path.parent.parent == data_dir / "uploads"
    assert re.fullmatch(r"[0-9a-f]{32}", path.parent.name)
    assert path.name == "evil_name.jsonl"
    assert not (tmp_path / "outside").exists()
    job = client.get("/api/jobs").json()[0]
    assert job["benchmark"] == "evil name.jsonl"  # shown as the person named it


@pytest.mark.parametrize("name", ["questions.exe", "questions.jsonl.sh", "questions", "q.parquet"])
def test_uploads_must_be_question_files(client, data_dir, name):
    response = submit(client, files={"benchmark_file": (name, jsonl(*QUESTIONS), "text/plain")})
    assert response.status_code == 400
    assert "upload a .jsonl, .json, .csv, .txt file" in response.text
    assert not any((data_dir / "uploads").iterdir())


def test_a_malformed_upload_is_named_as_uploaded_not_by_its_server_path(client, data_dir):
    bad = b'{"question": "What is 2 + 3?"}\n{oops\n'
    response = submit(client, files={"benchmark_file": ("bad.jsonl", bad, "application/json")})
    assert response.status_code == 400
    assert "Line 2 of &#39;bad.jsonl&#39;" in response.text and "uploads" not in response.text
    assert not any((data_dir / "uploads").iterdir())


@pytest.mark.parametrize(
    "path",
    [
        "/jobs/..%2F..%2Fetc%2Fpasswd/report.json",
        "/jobs/../../etc/passwd",
        "/jobs/not-an-id/report.json",
        "/jobs/20260101-000000-0123ABCD/report.json",  # upper case: not an id we make
        f"/jobs/{JOB_ROUTE_ID}/report.json",  # well formed, but no such job
        f"/jobs/{JOB_ROUTE_ID}/report.exe",
        "/static/..%2F__init__.py",
        "/static/report.css",
    ],
)
def test_nothing_is_served_by_a_path_from_the_request(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "root:" not in response.text and "import" not in response.text


def test_an_unknown_address_gets_the_not_found_page_and_the_api_json(client):
    page = client.get("/no/such/page")
    assert page.status_code == 404 and "<h1>Not found</h1>" in page.text
    api = client.get("/api/no-such-thing")
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    assert client.get("/jobs/x/cancel").status_code in (404, 405)


def test_a_running_job_has_no_downloads_yet(client):
    job_id = start_job(client, model=f"{CHEATER}:delay=0.3", limit="20")
    assert client.get(f"/jobs/{job_id}/report.json").status_code == 404
    wait_for(client, job_id)


HOSTILE = "<script>alert(1)</script> Tom has 12 marbles and wins 30 more. How many marbles does he have?"


def test_hostile_question_text_is_escaped_everywhere(client):
    questions = [HOSTILE, *QUESTIONS[:12]]
    files = {"benchmark_file": ("<img src=x onerror=alert(2)>.jsonl", jsonl(*questions), "application/json")}
    model_file = client.app.state.store.root.parent / "memorised.jsonl"
    model_file.write_bytes(jsonl(*questions))
    job_id = start_job(client, files=files, model=f"fake:memorise={model_file}", limit="13")
    assert wait_for(client, job_id)["status"] == "done"
    pages = {
        "front": client.get("/").text,
        "job": client.get(f"/jobs/{job_id}").text,
        "report": client.get(f"/jobs/{job_id}/view").text,
    }
    # Numbers that differ from the twin's are marked up; the text around them stays escaped.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in re.sub(r"</?mark>", "", pages["report"])
    assert "&lt;img src=x onerror=alert(2)&gt;" in pages["job"]
    for name, text in pages.items():
        assert "<script>alert(1)" not in text, name
        assert "<img src=x" not in text, name


def test_the_report_frame_may_run_no_script(client):
    job_id = start_job(client, limit="20", tests="min-k")
    wait_for(client, job_id)
    policy = client.get(f"/jobs/{job_id}/view").headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    page = client.get(f"/jobs/{job_id}").text
    assert 'sandbox="allow-same-origin"' in page  # and never allow-scripts


def test_pages_load_nothing_from_elsewhere(client):
    page = client.get("/")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert page.headers["x-frame-options"] == "SAMEORIGIN"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert not re.search(r'(src|href)="(https?:)?//', page.text)
    assert "<script>" not in page.text  # no inline script: the CSP would block it anyway
    for asset, kind in [("web.css", "text/css"), ("web.js", "text/javascript")]:
        response = client.get(f"/static/{asset}")
        assert response.status_code == 200 and response.headers["content-type"].startswith(kind)
        assert "http://" not in response.text and "https://" not in response.text


@pytest.mark.parametrize("mb", ["0.01", "0.002", "1", "12.345", "150.5", "1234.5", "0.00001", "25"])
def test_an_upload_limit_is_shown_as_it_was_set(mb):
    from contamcheck.web.forms import megabytes

    assert megabytes(int(float(mb) * 2**20)) == mb
