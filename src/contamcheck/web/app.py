"""The web UI's pages and endpoints (FastAPI), over :mod:`.jobs` and :mod:`.forms`.

Pages are rendered on the server with Jinja2 (autoescape on: benchmark text and model output are
never trusted) and use only the CSS and JavaScript in ``web/static``. The result page embeds the
standalone HTML report (``to_html``) in a sandboxed frame, so it shows exactly what the report file
shows; the downloads are ``to_json``, ``to_csv`` and ``to_html`` of the same stored report.

Endpoints::

    GET  /                         the form and the past audits
    POST /jobs                     start an audit (the form)            -> 303 /jobs/<id>
    GET  /jobs/<id>                progress, then the result
    GET  /jobs/<id>/view           the HTML report, for the frame
    GET  /jobs/<id>/report.<json|csv|html>   downloads
    POST /jobs/<id>/cancel | /rerun | /delete
    GET  /api/jobs, /api/jobs/<id>  status as JSON (the progress view polls it)
    DELETE /api/jobs/<id>

Every GET answers HEAD as well (headers only: ``security.LocalOnly``).
"""

from __future__ import annotations

import contextlib
import html
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..benchmarks import BUILTINS, load_benchmark
from ..cli.command import command_line
from ..controls import build_controls
from ..errors import InputError, ReportUnreadable, UnknownNameError
from ..methods import TESTS
from ..pipeline import check_inputs
from ..report.html_report import format_p, format_percent, format_time
from .forms import (
    CHOOSE_AGAIN,
    DEFAULT_MODEL_SUGGESTIONS,
    REFERENCE_SUGGESTIONS,
    UPLOAD_SUFFIXES,
    FormValues,
    Submission,
    Upload,
    absolute_if_local,
    build_config,
    check_model,
    check_upload,
    megabytes,
)
from .jobs import AuditFunction, JobRecord, JobRunner, JobStore, renamed
from .security import (
    CSRF_FIELD,
    CSRF_HEADER,
    STALE,
    STALE_TOKEN,
    BodyTooLarge,
    CsrfToken,
    LocalOnly,
    wants_page,
)

DEFAULT_MAX_UPLOAD_MB = 25
RENDERED_KEPT = 8  # HTML reports kept rendered in memory
# The report frame: the report's own inline CSS and SVG, nothing else (no script at all).
REPORT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"
ASSETS = {
    "web.css": "text/css; charset=utf-8",
    "web.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
DOWNLOADS = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "html": "text/html; charset=utf-8",
}


STALE_FORM = (
    "This form's security token is out of date (the server has restarted since the page was loaded, "
    "or the page came from another server), so nothing was started. What you entered is kept below: "
    "choose any file again and press Start audit."
)


class TokenRejected(Exception):
    """The form's (or header's) CSRF token is missing or wrong (answered 403)."""


def create_app(
    data_dir: Path,
    *,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_MB * 2**20,
    bind_host: str = "127.0.0.1",
    audit: AuditFunction | None = None,
) -> FastAPI:
    """The web UI over the jobs stored in ``data_dir``; its worker thread runs with the app's lifespan.

    ``audit`` replaces the pipeline (tests only).
    """
    store = JobStore(Path(data_dir))
    runner = JobRunner(store, audit)
    token = CsrfToken()
    templates = _environment()
    assets = {
        name: resources.files("contamcheck.web").joinpath("static", name).read_bytes() for name in ASSETS
    }

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        runner.start()
        try:
            yield
        finally:
            await run_in_threadpool(runner.stop)
            store.close()

    app = FastAPI(title="contamcheck", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store, app.state.runner, app.state.token = store, runner, token
    app.add_middleware(LocalOnly, token=token, max_upload=max_upload_bytes, extra_hosts=[bind_host])

    def page(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = templates.get_template(name).render(
            version=__version__, data_dir=str(store.root), csrf_token=token.value, **context
        )
        response = HTMLResponse(html, status_code=status_code)
        response.set_cookie(token.cookie, token.value, httponly=True, samesite="strict", path="/")
        return response

    def front_page(
        values: FormValues, error: str | None = None, status_code: int = 200, notice: str | None = None
    ) -> HTMLResponse:
        return page(
            "index.html.j2",
            status_code,
            values=values,
            error=error,
            notice=notice,
            jobs=[(job, runner.queue_position(job.id)) for job in store.all()],
            builtins=list(BUILTINS.values()),
            tests=[TESTS.get(name) for name in TESTS.names()],
            model_suggestions=DEFAULT_MODEL_SUGGESTIONS,
            reference_suggestions=REFERENCE_SUGGESTIONS,
            upload_suffixes=",".join(UPLOAD_SUFFIXES),
            max_upload_mb=megabytes(max_upload_bytes),
        )

    # matplotlib's pyplot (the report's figures) is not thread-safe: render one report at a time.
    # A finished report never changes, so the last few renderings are kept.
    render_lock = threading.Lock()
    rendered: OrderedDict[str, tuple[tuple[int, int, int] | None, str]] = OrderedDict()

    def report_html(job_id: str) -> str | None:
        """The report of a finished job as the page shows it and the download holds it; None when
        the job has none (not finished, deleted)."""
        if store.report_path(job_id) is None:  # before the kept rendering: a deleted job has none
            return None
        with render_lock:
            identity = store.report_identity(job_id)  # a file changed since is read and checked again
            if job_id not in rendered or rendered[job_id][0] != identity:
                report = store.read_report(job_id)
                if report is None:
                    return None
                from ..report.html_report import to_html

                rendered[job_id] = (identity, to_html(report))
                if len(rendered) > RENDERED_KEPT:
                    rendered.popitem(last=False)
            return rendered[job_id][1]

    def not_found() -> HTMLResponse:
        return page("missing.html.j2", 404)

    def require_token(candidate: object) -> None:
        if not token.matches(candidate):
            raise TokenRejected()

    @app.exception_handler(TokenRejected)
    async def token_rejected(_: Request, __: Exception) -> Response:
        return PlainTextResponse(STALE_TOKEN, status_code=403)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, exc: Exception) -> Response:
        """A body that went over the limit as it was read (one that said its length is refused
        before, by LocalOnly, in the same words)."""
        if wants_page(request.url.path, request.headers.get("accept")):
            return page("problem.html.j2", 413, title="The file is too large", message=str(exc), hint=None)
        return PlainTextResponse(str(exc), status_code=413)

    @app.exception_handler(ReportUnreadable)
    async def unreadable(request: Request, exc: Exception) -> Response:
        """A saved report that no longer reads (edited, cut short): its message, not a bare 500."""
        title = "This audit's report can't be read"
        hint = (
            "The file was changed or damaged after the audit finished. Run the audit again from "
            "its page (the evidence cache keeps what it computed), or delete it."
        )
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": str(exc)}, status_code=500)
        if request.url.path.endswith("/view"):  # shown in the job page's frame: no page in a page
            said = "".join(f"<p>{html.escape(text)}</p>" for text in (f"{title}: {exc}", hint))
            response = HTMLResponse(
                f'<!DOCTYPE html><html lang="en"><meta charset="utf-8">{said}</html>', 500
            )
            response.headers["content-security-policy"] = REPORT_POLICY
            return response
        return page("problem.html.j2", 500, title=title, message=str(exc), hint=hint)

    @app.exception_handler(StarletteHTTPException)
    async def no_route(request: Request, exc: Exception) -> Response:
        """Unknown addresses get the same page as an unknown audit; the API keeps JSON."""
        assert isinstance(exc, StarletteHTTPException)
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)
        if exc.status_code == 404:
            return not_found()
        response = page(
            "problem.html.j2", exc.status_code, title="Can't do that here", message=exc.detail, hint=None
        )
        response.headers.update(exc.headers or {})  # a 405's Allow
        return response

    @app.get("/", response_class=HTMLResponse)  # HEAD too: LocalOnly answers it as GET
    def index(again: str | None = None) -> HTMLResponse:
        values = FormValues()
        source = store.get(again) if again else None
        if source is not None:
            values = FormValues.from_config(
                source.audit_config(), source.benchmark_label, source.control_label
            )
        elif again:  # a link kept from an audit deleted since, or one of another server's
            return front_page(
                values, notice="That audit is no longer here, so the form starts from the defaults."
            )
        return front_page(values)

    @app.post("/jobs")
    async def create_job(request: Request) -> Response:
        try:
            form = await request.form(max_files=2, max_fields=60)
        except StarletteHTTPException as exc:  # a part over 1 MB, too many fields: nothing was read
            return front_page(FormValues(), f"The form could not be read: {exc.detail}", 400)
        tests = [value for value in form.getlist("tests") if isinstance(value, str)]
        values = FormValues.from_form({k: v for k, v in form.items() if isinstance(v, str)}, tests)
        candidate = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
        if request.scope.get(STALE) or not token.matches(candidate):
            # nothing is started; the page comes back filled in, with a token that works
            return front_page(values, STALE_FORM, 403)
        try:
            benchmark_file = await _read_upload(form, "benchmark_file", max_upload_bytes)
            control_file = await _read_upload(form, "control_file", max_upload_bytes)
            submission = await run_in_threadpool(
                prepare, store, values, benchmark_file, control_file, max_upload_bytes
            )
        except InputError as exc:
            return front_page(values, str(exc), 413 if isinstance(exc, UploadTooLarge) else 400)
        record = store.create(
            submission.config, submission.benchmark_label, submission.control_label, submission.uploads
        )
        runner.submit(record.id)
        return RedirectResponse(f"/jobs/{record.id}", status_code=303)

    @app.get("/jobs/{job_id}", response_class=HTMLResponse)
    def job_page(job_id: str) -> HTMLResponse:
        record = store.get(job_id)
        if record is None:
            return not_found()
        config = record.audit_config()
        return page(
            "job.html.j2",
            job=record,
            config=config,
            command=command_line(config),
            ahead=runner.ahead(record.id),
            cancelling=runner.cancelling(record.id),
        )

    @app.get("/api/jobs")
    def list_jobs() -> JSONResponse:
        return JSONResponse([job_status(job, runner) for job in store.all()])

    @app.get("/api/jobs/{job_id}")
    def job_json(job_id: str) -> JSONResponse:
        record = store.get(job_id)
        if record is None:
            return JSONResponse({"detail": "no such audit"}, status_code=404)
        return JSONResponse(job_status(record, runner))

    @app.post("/jobs/{job_id}/cancel")
    async def cancel_job(job_id: str, request: Request) -> Response:
        await _require_form_token(request, require_token)
        if store.get(job_id) is None:
            return not_found()
        runner.cancel(job_id)
        return RedirectResponse(f"/jobs/{job_id}", status_code=303)

    @app.post("/jobs/{job_id}/rerun")
    async def rerun_job(job_id: str, request: Request) -> Response:
        await _require_form_token(request, require_token)
        record = store.get(job_id)
        if record is None:
            return not_found()
        try:
            config = record.audit_config()
        except InputError as exc:
            return page(
                "problem.html.j2", 400, title="This audit can't be run again", message=str(exc), hint=None
            )
        missing = [u for u in record.uploads if not (store.uploads_dir / u).is_file()]
        if missing:
            return page(
                "problem.html.j2",
                409,
                title="This audit can't be run again",
                message="Its uploaded file is gone from the data folder.",
                hint="Start a new audit, choosing the file again.",
            )
        new = store.create(config, record.benchmark_label, record.control_label, record.uploads, record.id)
        runner.submit(new.id)
        return RedirectResponse(f"/jobs/{new.id}", status_code=303)

    def delete(job_id: str, api: bool = False) -> Response | None:
        record = store.get(job_id)
        running = "Cancel the audit before deleting it."
        if record is None:
            return JSONResponse({"detail": "no such audit"}, status_code=404) if api else not_found()
        if not record.finished:
            if api:
                return JSONResponse({"detail": running}, status_code=409)
            return page(
                "problem.html.j2", 409, title="This audit is not finished", message=running, hint=None
            )
        store.delete(job_id)
        return None

    @app.post("/jobs/{job_id}/delete")
    async def delete_job_form(job_id: str, request: Request) -> Response:
        await _require_form_token(request, require_token)
        return delete(job_id) or RedirectResponse("/", status_code=303)

    @app.delete("/api/jobs/{job_id}")
    def delete_job_api(job_id: str, request: Request) -> Response:
        require_token(request.headers.get(CSRF_HEADER))
        return delete(job_id, api=True) or JSONResponse({"deleted": job_id})

    @app.get("/jobs/{job_id}/view", response_class=HTMLResponse)
    def report_view(job_id: str) -> Response:
        html = report_html(job_id)
        if html is None:
            return not_found()
        response = HTMLResponse(html)
        response.headers["content-security-policy"] = REPORT_POLICY
        return response

    @app.get("/jobs/{job_id}/report.{kind}")
    def download(job_id: str, kind: str) -> Response:
        if kind not in DOWNLOADS:
            return not_found()
        if kind == "html":  # the page the job shows, rendered once for both
            text = report_html(job_id)
        else:
            from ..report import to_csv, to_json

            report = store.read_report(job_id)
            text = None if report is None else to_json(report) if kind == "json" else to_csv(report)
        if text is None:
            return not_found()
        filename = f"contamcheck-{job_id}.{kind}"
        return Response(
            text,
            media_type=DOWNLOADS[kind],
            headers={"content-disposition": f'attachment; filename="{filename}"'},
        )

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in assets:  # looked up by name, never joined to a path
            return PlainTextResponse("not found", status_code=404)
        return Response(assets[name], media_type=ASSETS[name], headers={"cache-control": "no-cache"})

    return app


class UploadTooLarge(InputError):
    """An uploaded file is over the limit (answered 413)."""


async def _read_upload(form: FormData, name: str, max_bytes: int) -> Upload | None:
    value = form.get(name)
    if not isinstance(value, UploadFile) or not value.filename:
        return None
    data = await value.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UploadTooLarge(f"{value.filename!r} is larger than the limit of {megabytes(max_bytes)} MB.")
    return Upload(value.filename, data)


async def _require_form_token(request: Request, require: Any) -> None:
    candidate: object = request.headers.get(CSRF_HEADER)
    if candidate is None:
        form = await request.form(max_files=0, max_fields=10)
        candidate = form.get(CSRF_FIELD)
    require(candidate)


def prepare(
    store: JobStore,
    values: FormValues,
    benchmark_file: Upload | None,
    control_file: Upload | None,
    max_bytes: int,
) -> Submission:
    """Check the form, store its uploads and build the config; InputError says what to fix."""
    saved: list[str] = []

    def keep(upload: Upload, what: str) -> str:
        stem, suffix = check_upload(upload, what, max_bytes)
        path, name = store.save_upload(upload.data, stem, suffix)
        saved.append(name)
        return str(path)

    try:
        check_model(values.model)
        if values.reference not in ("auto", "none", ""):
            check_model(values.reference, "Reference")
        if benchmark_file is not None and values.benchmark_path:
            raise InputError("Benchmark: give one, a typed path or an uploaded file, not both.")
        if benchmark_file is not None:
            benchmark = keep(benchmark_file, "Benchmark file")
            label = Path(benchmark_file.filename.replace("\\", "/")).name[:200]
        elif values.benchmark_path:
            typed = values.benchmark_path
            benchmark = label = typed if typed in BUILTINS else absolute_if_local(typed)
        elif values.benchmark == CHOOSE_AGAIN:
            raise InputError(
                "Benchmark: none was chosen. Pick a built-in, type a path, or upload a file (when "
                "changing an audit of an uploaded file, choose the file again: a form can't keep it)."
            )
        elif values.benchmark in BUILTINS:
            benchmark = label = values.benchmark
        else:
            raise UnknownNameError("benchmark", values.benchmark, BUILTINS)
        if values.control_again and control_file is None:
            raise InputError(
                f"Control questions (--control): the audit you are changing used {values.control_again!r}, "
                "and a form can't keep a file: choose it again, or untick it to audit with number twins."
            )
        control = keep(control_file, "Control file") if control_file is not None else None
        control_label = Path(control_file.filename.replace("\\", "/")).name[:200] if control_file else None
        config = build_config(values, benchmark, control)
        check_inputs(config)  # what the audit would refuse at once, refused before it waits in line
        # Files are read now, so that a wrong path, field or format shows in the form at once; an
        # upload is named as the person chose it, not by where the server keeps it. The bundled
        # sample is read too (a column it lacks); a Hub dataset is the audit's to fetch.
        questions = None
        with named_as_uploaded(benchmark, label if benchmark_file is not None else None):
            bundled = benchmark in BUILTINS and BUILTINS[benchmark].dataset is None
            if bundled or (benchmark not in BUILTINS and not benchmark.startswith("hf:")):
                questions = load_benchmark(benchmark, config.field, ordered=config.ordered)
        if control is not None:
            with named_as_uploaded(control, control_label):
                controls = load_benchmark(control, config.control_field, role="control")
                if questions is not None:  # a control file that repeats the benchmark, say
                    build_controls(
                        questions, config.limit, config.seed, controls, config.twins, config.twinless
                    )
    except BaseException:
        for name in saved:
            store.remove_upload(name)
        raise
    return Submission(config, label, control_label, saved)


@contextlib.contextmanager
def named_as_uploaded(stored: str, name: str | None) -> Iterator[None]:
    """Errors about a stored upload name the file as uploaded (``name``), not its path on the server."""
    try:
        yield
    except InputError as exc:
        if name is None:
            raise
        raise InputError(renamed(str(exc), stored, name)) from None


def job_status(record: JobRecord, runner: JobRunner) -> dict[str, Any]:
    done = record.status == "done"
    return {
        "id": record.id,
        "status": record.status,
        "message": record.message,
        "model": record.config.get("model"),
        "benchmark": record.benchmark_label,
        "created_at": record.created_at,
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "queue_position": runner.queue_position(record.id),
        "ahead": runner.ahead(record.id),
        "cancelling": runner.cancelling(record.id),
        "stages": [stage.model_dump() for stage in record.stages],
        "verdict": (
            {
                "code": record.verdict_code,
                "label": record.verdict_label,
                "index": record.index_value,
                "band": record.index_band,
            }
            if done and record.report_problem is None
            else None
        ),
        "report_problem": record.report_problem,  # a finished audit's report that can't be read back
        "links": {
            "page": f"/jobs/{record.id}",
            **(
                {kind: f"/jobs/{record.id}/report.{kind}" for kind in DOWNLOADS}
                if done and record.report_problem is None
                else {}
            ),
        },
    }


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("contamcheck.web", "templates"),
        autoescape=True,  # every {{ value }} is escaped: questions and model output are never trusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(when=format_time, percent=format_percent, pvalue=format_p)
    return environment
