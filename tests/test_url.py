"""`explain --url`: a log downloaded as a user would, from a real HTTP server on this machine."""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from buildlog.cli.fetch import MIB, fetch, shown_url
from buildlog.errors import BuildlogError
from tests.conftest import CORPUS

LOG = (CORPUS / "apex-pip-no-build-isolation-cuda-13-2-vs-torch-cu130.log").read_bytes()
OTHER = (CORPUS / "mamba-ssm-arch-linux-gcc14-cuda-12-6-minor-mismatch-noise.log").read_bytes()
SECRET = "s3cr3t-pa55"
PROXIES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("build/1_Set up job.txt", LOG)
        archive.writestr("build/2_Build.txt", OTHER)
    return out.getvalue()


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []  # (path, Authorization header) of every request

    def log_message(self, *args):  # keep the test output quiet
        pass

    def _send(self, code: int, body: bytes, kind: str = "text/plain", length: bool = True, **headers: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        if length:
            self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - the name http.server calls
        Handler.seen.append((self.path, self.headers.get("Authorization")))
        path = self.path.split("?")[0]
        if path == "/build.log":
            self._send(200, LOG)
        elif path == "/build.log.gz":
            self._send(200, gzip.compress(LOG), "application/gzip")
        elif path == "/logs.zip":
            self._send(200, _zip(), "application/zip")
        elif path == "/private.log":
            wanted = "Basic " + base64.b64encode(f"me:{SECRET}".encode()).decode()
            if self.headers.get("Authorization") == wanted:
                self._send(200, LOG)
            else:
                self._send(401, b"who are you", WWW_Authenticate='Basic realm="logs"')
        elif path.startswith("/hop/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, b"", Location=f"/hop/{n - 1}" if n > 0 else "/build.log")
        elif path == "/down":  # to plain http on this very machine: still a downgrade from https
            self._send(302, b"", Location="http://127.0.0.1:9/build.log")
        elif path == "/away":
            self._send(302, b"", Location="http://index.example/build.log")
        elif path == "/big":
            self._send(200, b"x" * (3 * 1024 * 1024))
        elif path == "/big-unannounced":
            self.close_connection = True
            self._send(200, b"log line\n" * 400_000, length=False)
        elif path == "/slow":
            time.sleep(3)
            self._send(200, LOG)
        elif path == "/broken":
            self._send(500, b"oops")
        elif path == "/page":
            self._send(200, b"<!DOCTYPE html><html><body>a run page</body></html>", "text/html")
        else:
            self._send(404, b"no")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a client that stops reading (over the limit) is expected
        pass


@pytest.fixture(scope="module")
def server():
    httpd = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def buildlog(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in PROXIES}
    return subprocess.run(
        [sys.executable, "-m", "buildlog", "explain", *args, "--no-seen-before"], capture_output=True, text=True,
        timeout=120, env={**base, "NO_COLOR": "1", "no_proxy": "*", **(env or {})},
    )  # fmt: skip


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr


def test_a_downloaded_log_is_explained_as_the_file_would_be(server, tmp_path):
    (tmp_path / "b.log").write_bytes(LOG)
    local = json.loads(buildlog(str(tmp_path / "b.log"), "-f", "json").stdout)
    for path in ("/build.log", "/build.log.gz"):  # compressed: unpacked by its first bytes
        proc = buildlog("--url", server + path, "-f", "json")
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        assert [c["id"] for c in got["root_causes"]] == [c["id"] for c in local["root_causes"]]
        assert got["lines"] == local["lines"] and got["source"] == server + path


def test_a_zip_is_every_log_in_it_and_urls_follow_the_files(server, tmp_path):
    (tmp_path / "b.log").write_bytes(OTHER)
    proc = buildlog(str(tmp_path / "b.log"), "--url", server + "/logs.zip", "-f", "json")
    reports = json.loads(proc.stdout)
    assert [r["source"] for r in reports] == [
        str(tmp_path / "b.log"), f"{server}/logs.zip:build/1_Set up job.txt", f"{server}/logs.zip:build/2_Build.txt"
    ]  # fmt: skip


def test_credentials_are_used_for_that_host_only_and_never_shown(server):
    host = server.split("//", 1)[1]
    proc = buildlog("--url", f"http://me:{SECRET}@{host}/private.log?private_token={SECRET}", "-o", "json:/dev/null")
    assert proc.returncode == 0, proc.stderr
    assert SECRET not in proc.stdout + proc.stderr and "private_token=***" in proc.stdout
    refused = buildlog("--url", f"http://me:wrong-{SECRET}@{host}/private.log")
    assert "HTTP 401" in one_line_error(refused) and SECRET not in refused.stderr
    Handler.seen.clear()
    redirected = buildlog("--url", f"http://me:{SECRET}@{host}/hop/1")
    assert redirected.returncode == 0 and [p for p, _ in Handler.seen] == ["/hop/1", "/hop/0", "/build.log"]
    assert f"http://***@{host}/hop/1 · " in redirected.stdout  # the report names the URL given, masked
    assert Handler.seen[0][1] and not any(auth for _, auth in Handler.seen[1:])  # not passed on by a redirect


def test_redirects_are_followed_a_few_times_and_never_to_plain_http_elsewhere(server):
    assert buildlog("--url", server + "/hop/4").returncode == 0
    assert "redirects" in one_line_error(buildlog("--url", server + "/hop/9"))
    assert "plain http is refused" in one_line_error(buildlog("--url", server + "/away"))


@pytest.mark.parametrize(
    ("path", "limit", "timeout", "said"),
    [
        ("/big", 1, 30, "over the download limit of 1.0 MiB"),
        ("/big-unannounced", 1, 30, "more than the download limit of 1.0 MiB"),
        ("/slow", 64, 0.5, "within 0.5 s"),
        ("/broken", 64, 30, "HTTP 500"),
        ("/gone", 64, 30, "HTTP 404"),
        ("/page", 64, 30, "a web page, not a log"),
    ],
)
def test_every_failure_is_a_one_line_message(server, path, limit, timeout, said):
    with pytest.raises(BuildlogError) as caught:
        fetch(server + path, limit * MIB, timeout)
    assert said in str(caught.value) and "\n" not in str(caught.value) and str(caught.value).startswith(server)


def test_the_command_line_takes_the_limits_and_exits_2(server):
    assert "over the download limit of 1.0 MiB" in one_line_error(
        buildlog("--url", server + "/big", "--download-limit", "1")
    )
    assert "within 0.5 s" in one_line_error(buildlog("--url", server + "/slow", "--download-timeout", "0.5"))


def test_refused_unresolvable_and_not_https_fail_before_reading_anything():
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for url, said in (
        (f"http://127.0.0.1:{port}/b.log", "connection refused"),
        ("http://index.example/b.log", "plain http is refused"),
        ("ftp://index.example/b.log", "not an https URL"),
        ("https://no-such-host.invalid/b.log", "cannot find the host"),
        ("https://index.example:99999/b.log", "not a valid URL"),
    ):
        with pytest.raises(BuildlogError, match=said):
            fetch(url, MIB, 5)
    assert "connection refused" in one_line_error(buildlog("--url", f"http://127.0.0.1:{port}/b.log"))
    assert "give it as --url" in one_line_error(buildlog("https://index.example/b.log?token=abc"))
    assert "give a LOG" in one_line_error(buildlog())


def test_shown_urls_hold_no_secret():
    assert (
        shown_url("https://u:p@h.example:8443/a/b.log?sig=xyz&job=3#frag")
        == "https://***@h.example:8443/a/b.log?sig=***&job=***"
    )
    assert shown_url("https://token@h.example/x") == "https://***@h.example/x"
    assert shown_url("https://h.example/x?flag") == "https://h.example/x?flag"


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    httpd = Server(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"https://localhost:{httpd.server_address[1]}", cert
    httpd.shutdown()
    httpd.server_close()


def test_https_checks_the_certificate(tls_server):
    base, cert = tls_server
    assert "certificate" in one_line_error(buildlog("--url", base + "/build.log"))
    trusted = buildlog("--url", base + "/build.log.gz", "-f", "json", env={"SSL_CERT_FILE": str(cert)})
    assert trusted.returncode == 0 and json.loads(trusted.stdout)["status"] == "failure"
    downgrade = buildlog("--url", base + "/down", env={"SSL_CERT_FILE": str(cert)})
    assert "from https to plain http" in one_line_error(downgrade)


def test_this_machine_is_reached_directly_never_through_a_proxy(server):
    dead_proxy = {"http_proxy": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "no_proxy": ""}
    proc = buildlog("--url", server + "/build.log", "-f", "json", env=dead_proxy)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("command", ["facts", "similar"])
def test_a_url_given_where_only_files_are_read_is_refused_without_its_secrets(command):
    url = "https://bob:ghp_abcdefghijklmnopqrstuvwxyz0123456789@example.com/x.log?token=s3cr3t"
    done = subprocess.run([sys.executable, "-m", "buildlog", command, url], capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "is a URL" in done.stderr and "--url" in done.stderr
    assert "ghp_" not in done.stderr + done.stdout and "s3cr3t" not in done.stderr + done.stdout
