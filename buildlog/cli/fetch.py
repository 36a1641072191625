"""`explain --url URL`: download one log, safely, into memory; the stages never touch the network.

What "safely" means here, each a decision:

- https only; plain http only to this machine (localhost, 127.0.0.0/8, ::1), where nothing on the
  way can read or change it (and no proxy is used for it). A redirect is held to the same rule
  (https never drops to http). Proxies from the environment (https_proxy, no_proxy) are honoured.
- At most MAX_REDIRECTS redirects. Credentials in the URL (https://user:token@host/...) are sent
  as HTTP basic auth to that host alone, never to where it redirects.
- At most `limit` bytes (default 64 MiB, what stdin and the store accept): a Content-Length over
  it is refused before the body is read, and a body that runs past it is cut off and refused.
- `timeout` seconds for connecting and for each wait on data; the whole download is stopped after
  TOTAL_FACTOR times that, so a server dripping bytes cannot hold a job for ever.
- Whatever is shown (messages, the report's source) is the URL with its user, password and
  query values masked: `https://***@host/path?token=***`.
- The body is handed on as bytes, so a .gz, .xz, .bz2, .zst or .zip is recognised by its first
  bytes and unpacked exactly as a file would be.

Every failure is a BuildlogError with one line that names the URL (masked) and says what to do.
"""

from __future__ import annotations

import base64
import http.client
import ipaddress
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from buildlog import __version__
from buildlog.errors import BuildlogError
from buildlog.ingest.reader import netloc, shown_url

MIB = 1024 * 1024
DEFAULT_LIMIT_MIB = 64
DEFAULT_TIMEOUT = 30.0
MAX_REDIRECTS = 5
TOTAL_FACTOR = 10
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Download:
    """A downloaded log: the URL as given, in the form it may be shown, and the bytes."""

    shown: str
    data: bytes


def is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_url(url: str, shown: str) -> urllib.parse.SplitResult:
    """The URL's parts, or a message when its scheme or host is not one buildlog downloads from."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname
        _ = parts.port  # a bad port raises here
    except ValueError:
        raise BuildlogError(f"{shown}: not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not host:
        raise BuildlogError(f"{shown}: not an https URL (--url downloads https://HOST/PATH)")
    if scheme == "http" and not is_loopback(host):
        raise BuildlogError(
            f"{shown}: plain http is refused except to this machine (anything on the way could read or change "
            "it); use the https URL, or download it yourself and give the file"
        )
    return parts


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows at most MAX_REDIRECTS redirects, each held to the rules of the first URL."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        target = shown_url(newurl)
        parts = check_url(newurl, target)
        if urllib.parse.urlsplit(req.full_url).scheme == "https" and parts.scheme.lower() != "https":
            raise BuildlogError(f"{shown_url(req.full_url)}: redirected from https to plain http ({target}); refused")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch(url: str, limit: int = DEFAULT_LIMIT_MIB * MIB, timeout: float = DEFAULT_TIMEOUT) -> Download:
    """Download one log into memory under the rules above."""
    shown = shown_url(url)
    parts = check_url(url, shown)
    clean = urllib.parse.urlunsplit(
        (parts.scheme, netloc(parts), parts.path or "/", parts.query, "")
    )  # no user, password or fragment on the wire's request line
    request = urllib.request.Request(
        clean,
        headers={"User-Agent": f"buildlog/{__version__}", "Accept": "text/plain, */*", "Accept-Encoding": "identity"},
    )
    if parts.username is not None or parts.password is not None:
        pair = f"{urllib.parse.unquote(parts.username or '')}:{urllib.parse.unquote(parts.password or '')}"
        request.add_unredirected_header("Authorization", "Basic " + base64.b64encode(pair.encode()).decode())
    handlers: list[Any] = [_Redirects(), urllib.request.HTTPSHandler(context=ssl.create_default_context())]
    if is_loopback(parts.hostname or ""):  # this machine: straight there, never through a proxy
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    deadline = time.monotonic() + timeout * TOTAL_FACTOR
    try:
        with opener.open(request, timeout=timeout) as response:
            where = shown_url(response.geturl())
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > limit:
                raise BuildlogError(f"{where}: {_size(int(length))} is over the download limit of {_size(limit)} "
                                    "(--download-limit MIB raises it)")  # fmt: skip
            kind = response.headers.get_content_type()
            data = _read(response, limit, deadline, where, timeout)
    except BuildlogError:
        raise
    except urllib.error.HTTPError as exc:
        raise BuildlogError(_http_message(shown, exc.code, exc.reason)) from None
    except urllib.error.URLError as exc:
        raise BuildlogError(_network_message(shown, parts, exc.reason, timeout)) from None
    except TimeoutError:
        raise BuildlogError(f"{shown}: no answer within {timeout:g} s (--download-timeout SECONDS)") from None
    except (http.client.HTTPException, ConnectionError) as exc:
        raise BuildlogError(f"{shown}: the connection broke off ({type(exc).__name__}); try again") from None
    except ssl.SSLError as exc:
        raise BuildlogError(f"{shown}: TLS failed ({exc.reason or exc})") from None
    except OSError as exc:
        raise BuildlogError(f"{shown}: cannot download ({exc.strerror or exc})") from None
    except ValueError:
        raise BuildlogError(f"{shown}: not a valid URL") from None
    if kind == "text/html" and data.lstrip()[:1] == b"<":
        raise BuildlogError(f"{where}: the server sent a web page, not a log; give the URL of the raw log "
                            "(GitHub: gh run view RUN_ID --log-failed > build.log; GitLab: the job's /raw URL)")  # fmt: skip
    return Download(shown, data)  # named as the user gave it (masked), not where it was redirected


def _read(response: Any, limit: int, deadline: float, where: str, timeout: float) -> bytes:
    data = bytearray()
    while True:
        chunk = response.read(CHUNK)
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise BuildlogError(
                f"{where}: more than the download limit of {_size(limit)} (--download-limit MIB raises it)"
            )
        if time.monotonic() > deadline:
            raise BuildlogError(f"{where}: the download took longer than {timeout * TOTAL_FACTOR:g} s; stopped")


def _size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{n} bytes"


def _http_message(shown: str, code: int, reason: Any) -> str:
    text = f"{shown}: HTTP {code} {reason or ''}".rstrip()
    if 300 <= code < 400:
        return f"{shown}: more than {MAX_REDIRECTS} redirects (HTTP {code}); give the final URL"
    if code in (401, 403):
        return f"{text}: the server wants credentials; download the log with them and give the file"
    if code == 404:
        return f"{text}: no log at this URL (logs expire; check the address)"
    if code >= 500:
        return f"{text}: the server failed; try again later"
    return text


def _network_message(shown: str, parts: urllib.parse.SplitResult, reason: Any, timeout: float) -> str:
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if isinstance(reason, socket.gaierror):
        return f"{shown}: cannot find the host {host} ({reason.strerror or reason}); check the name and the network"
    if isinstance(reason, ConnectionRefusedError):
        return f"{shown}: connection refused by {host} port {port}"
    if isinstance(reason, TimeoutError):
        return f"{shown}: no answer from {host} within {timeout:g} s (--download-timeout SECONDS)"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"{shown}: the certificate of {host} cannot be trusted ({reason.verify_message or reason})"
    if isinstance(reason, ssl.SSLError):
        return f"{shown}: TLS failed ({reason.reason or reason})"
    if isinstance(reason, OSError):
        return f"{shown}: cannot connect to {host} ({reason.strerror or reason})"
    return f"{shown}: cannot download ({reason})"
