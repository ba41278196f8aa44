"""What keeps a local web UI local: loopback binds, Host and Origin checks, a CSRF token, body limits.

A server on 127.0.0.1 can still be reached by any web page the person opens: a page can post a form
to ``http://127.0.0.1:8000`` (cross-site request forgery) or point its own host name at 127.0.0.1
(DNS rebinding) and then read the answers. So:

* the server binds only to loopback addresses (:func:`loopback_bind_address`);
* every request must name a loopback host in its ``Host`` header, which a rebound name can't;
* every state-changing request (POST, DELETE) must come from our own origin when the browser says
  where it comes from (``Origin``, else ``Referer``), and must carry this process's random token,
  both in a cookie and in the form (or the ``X-CSRF-Token`` header), compared in constant time;
* request bodies are limited in size before they are parsed.

This module imports only the standard library, so ``contamcheck serve --host 0.0.0.0`` is refused
before the web framework is imported.
"""

from __future__ import annotations

import hmac
import html
import ipaddress
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import InputError
from .forms import megabytes

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
FORM_PATH = "/jobs"  # the audit form's target
STALE = "contamcheck.stale_token"  # set in the scope where the cookie did not match

# Pages load only what the package ships: no CDN, no inline script.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-src 'self'; frame-ancestors 'self'; form-action 'self'; base-uri 'none'; object-src 'none'"
)


def loopback_bind_address(host: str) -> str:
    """The address to listen on for ``--host``, or :class:`InputError` when it is not loopback.

    An IP address must be a loopback one (127.0.0.0/8 or ::1); a host name must resolve to loopback
    addresses only. ``[::1]`` is accepted for ``::1``.
    """
    name = host.strip()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if not name:
        raise InputError(_refusal(host, "it is empty"))
    try:
        addresses = [ipaddress.ip_address(name)]
        literal = True
    except ValueError:
        try:
            infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            raise InputError(_refusal(host, "it does not resolve to an address here")) from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
        literal = False
    outside = sorted({str(a) for a in addresses if not a.is_loopback})
    if outside or not addresses:
        reason = (
            "it is not a loopback address"
            if literal
            else f"it resolves to {', '.join(outside) or 'nothing'}, which is not loopback"
        )
        raise InputError(_refusal(host, reason))
    return str(min(addresses, key=lambda a: a.version))  # IPv4 first, as browsers try it first


def _refusal(host: str, reason: str) -> str:
    return (
        f"--host {host!r} is refused: {reason}. The web UI runs models and reads files for whoever "
        "reaches it, so it listens only on 127.0.0.1, ::1 or localhost; from another machine, use a "
        "tunnel (ssh -L 8000:127.0.0.1:8000 THIS_MACHINE)."
    )


def host_name(header: str) -> str | None:
    """The host name of a ``Host`` header (``[::1]:8000`` -> ``::1``), None when malformed."""
    value = header.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return None
    return name or None


def is_loopback_host(header: str | None, extra: Iterable[str] = ()) -> bool:
    """Whether a ``Host`` header names this machine by a loopback name (not a rebound DNS name)."""
    if not header:
        return False
    name = host_name(header)
    return name is not None and (name in LOOPBACK_NAMES or name in set(extra))


def same_origin(host_header: str, origin: str | None, referer: str | None) -> bool:
    """Whether the request says it comes from ``http://<Host header>``; True when it says nothing."""
    own = f"http://{host_header.strip().lower()}"
    if origin is not None:
        return hmac.compare_digest(origin.strip().lower(), own)
    if referer is not None:
        parts = urlsplit(referer.strip())
        return f"{parts.scheme}://{parts.netloc}".lower() == own
    return True  # no browser omits both on a cross-site POST; the CSRF token still has to match


@dataclass(frozen=True)
class CsrfToken:
    """A random secret for this server process: in a cookie and in every form it renders.

    The cookie name carries a random suffix, since cookies ignore ports: two servers on localhost
    must not overwrite each other's token.
    """

    value: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    cookie: str = field(default_factory=lambda: f"contamcheck_csrf_{secrets.token_hex(4)}")

    def matches(self, candidate: object) -> bool:
        """Whether ``candidate`` (a form field, a header, a cookie: anything a request sent) is it."""
        if not isinstance(candidate, str) or not candidate:
            return False
        return hmac.compare_digest(candidate.encode("utf-8", "replace"), self.value.encode("utf-8"))


class BodyTooLarge(Exception):
    """A request body went over the server's limit (answered 413), said as the per-file limit the
    form shows: the body may hold two files and the form's fields."""

    def __init__(self, max_upload: int) -> None:
        super().__init__(
            f"The form is larger than this server accepts: each chosen file may be up to "
            f"{megabytes(max_upload)} MB. Go back and choose a smaller one (contamcheck serve "
            "--max-upload-mb sets the limit)."
        )
        self.max_upload = max_upload


def body_limit(max_upload: int) -> int:
    """The most a request body may hold: two uploads and the form's fields."""
    return 2 * max_upload + 2**20


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class LocalOnly:
    """ASGI middleware: the Host check, the origin and cookie checks, the body limit, safe headers.

    The form field (or header) half of the CSRF check needs the parsed form, so the routes make it
    (see ``app.require_token``); a test checks that every state-changing route does. The audit form
    (POST /jobs, same origin) is let through without a matching cookie, marked ``STALE`` in the
    scope: its route refuses it, starting nothing, and shows the form again filled in.
    """

    def __init__(self, app: ASGIApp, *, token: CsrfToken, max_upload: int, extra_hosts: Iterable[str] = ()):
        self.app = app
        self.token = token
        self.max_upload = max_upload
        self.extra_hosts = frozenset(extra_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets here
            return
        if scope["method"] == "HEAD":  # every address answers HEAD as its GET, headers only (`curl -I`)
            scope, send = {**scope, "method": "GET"}, _without_body(send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host")
        if not is_loopback_host(host, self.extra_hosts):
            await _plain(
                send, 400, "Bad Host header: this server answers only to localhost / 127.0.0.1 / [::1]."
            )
            return
        assert host is not None
        if scope["method"] in UNSAFE_METHODS:
            if not same_origin(host, headers.get("origin"), headers.get("referer")):
                await _plain(
                    send, 403, "Cross-origin request refused: forms are accepted only from this page."
                )
                return
            if not self.token.matches(_cookie(headers.get("cookie", ""), self.token.cookie)):
                if (scope["method"], scope["path"]) != ("POST", FORM_PATH):
                    await _plain(send, 403, STALE_TOKEN)
                    return
                # the audit form, from this page: refused by its route, which shows it again as
                # filled in (a form from before a restart would otherwise lose what was typed)
                scope[STALE] = True
            length = headers.get("content-length", "")
            if length.isdigit() and int(length) > body_limit(self.max_upload):
                refusal = str(BodyTooLarge(self.max_upload))
                if wants_page(scope["path"], headers.get("accept")):  # a browser's form: not bare text
                    await _page(send, 413, "The file is too large", refusal)
                else:
                    await _plain(send, 413, refusal)
                return
            receive = _limited(receive, self.max_upload)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


STALE_TOKEN = (
    "The form's security token is missing or out of date (the server may have restarted). "
    "Reload the page and try again."
)

SECURITY_HEADERS = [
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"SAMEORIGIN"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def wants_page(path: str, accept: str | None) -> bool:
    """Whether a refusal is a page (a browser, outside the API) rather than text or JSON."""
    return not path.startswith("/api/") and "text/html" in (accept or "")


def _without_body(send: Send) -> Send:
    """``send`` for a HEAD request: the GET's headers (its content-length too), no body."""

    async def headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return headers_only


def _limited(receive: Receive, max_upload: int) -> Receive:
    received = 0

    async def wrapped() -> Message:
        nonlocal received
        message = await receive()
        received += len(message.get("body", b""))
        if received > body_limit(max_upload):
            raise BodyTooLarge(max_upload)
        return message

    return wrapped


async def _plain(send: Send, status: int, text: str) -> None:
    await _send(send, status, b"text/plain; charset=utf-8", (text + "\n").encode())


async def _page(send: Send, status: int, title: str, text: str) -> None:
    """A refusal as a page in the UI's style, for a browser: the app's templates are not at hand here."""
    title, text = html.escape(title), html.escape(text)
    page = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title} · contamcheck</title>"
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/web.css"></head>'
        f'<body><main class="wrap"><h1>{title}</h1><p class="error" role="alert">{text}</p>'
        '<p><a href="/">Back to the audits</a>.</p></main></body></html>\n'
    )
    await _send(send, status, b"text/html; charset=utf-8", page.encode())


async def _send(send: Send, status: int, content_type: bytes, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
