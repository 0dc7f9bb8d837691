"""Test support: a real Agent Directory server in a child process, local HTTP helpers.

The suite runs against ``src-api/serve.ts`` from this repository (started with
tsx, as ``npm run serve`` does), on a free port and a temporary data dir.
"""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

TESTS_DIR = Path(__file__).resolve().parent
CLIENT_DIR = TESTS_DIR.parent
REPO_ROOT = CLIENT_DIR.parent.parent
SRC_DIR = CLIENT_DIR / "src"

# Test the source tree, not whatever version may be installed.
if str(SRC_DIR) not in sys.path:
    sys.path.insert(0, str(SRC_DIR))

SERVER_START_TIMEOUT = float(os.environ.get("AGENTDIR_TEST_START_TIMEOUT", "120"))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tsx_command() -> List[str]:
    local = REPO_ROOT / "node_modules" / ".bin" / "tsx"
    if local.exists():
        return [str(local)]
    return ["npx", "tsx"]


def _clean_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AGENTDIR_")}
    env.update(extra or {})
    return env


def cli_available() -> bool:
    return (REPO_ROOT / "src-api" / "cli.ts").exists()


_CLI_HELP: Optional[Tuple[bool, str]] = None


def cli_has(command: str) -> bool:
    """Whether ``npm run cli`` offers ``command`` (e.g. "webhooks"), from its --help.

    A CLI that exists but cannot print its help is broken, not unfinished: then the answer is
    True, so the tests that need it run and show the failure instead of being skipped.
    """
    global _CLI_HELP
    if not cli_available():
        return False
    if _CLI_HELP is None:
        result = subprocess.run(
            _tsx_command() + ["src-api/cli.ts", "--help"],
            cwd=str(REPO_ROOT), env=_clean_env(), capture_output=True, text=True, timeout=120, check=False,
        )
        _CLI_HELP = (result.returncode == 0, result.stdout + result.stderr)
    ok, text = _CLI_HELP
    if not ok:
        return True
    return any(line.strip().startswith(command + " ") or line.strip() == command for line in text.splitlines())


def run_cli(args: Sequence[str], data_dir: str, timeout: float = 120) -> str:
    """Runs ``npm run cli -- ARGS --data-dir DIR`` (as tsx src-api/cli.ts) and returns its stdout."""
    command = _tsx_command() + ["src-api/cli.ts"] + list(args) + ["--data-dir", data_dir]
    result = subprocess.run(
        command, cwd=str(REPO_ROOT), env=_clean_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        raise RuntimeError("cli {} failed ({}):\n{}\n{}".format(" ".join(args), result.returncode, result.stdout, result.stderr))
    return result.stdout


class ServerProcess:
    """``tsx src-api/serve.ts --port P --data-dir D FLAGS`` from the repository root."""

    def __init__(self, flags: Sequence[str] = (), env: Optional[Dict[str, str]] = None) -> None:
        self.flags = list(flags)
        self.env = dict(env or {})
        self.port = 0
        self.data_dir = ""
        self.process: Optional[subprocess.Popen] = None  # type: ignore[type-arg]
        self._output: List[str] = []
        self._reader: Optional[threading.Thread] = None

    @property
    def origin(self) -> str:
        return "http://127.0.0.1:{}".format(self.port)

    @property
    def base_url(self) -> str:
        return self.origin + "/api/v1"

    def output(self) -> str:
        return "".join(self._output)

    def start(self) -> "ServerProcess":
        self.data_dir = tempfile.mkdtemp(prefix="agentdir-pytest-")
        self.port = free_port()
        command = _tsx_command() + ["src-api/serve.ts", "--port", str(self.port), "--data-dir", self.data_dir] + self.flags
        self.process = subprocess.Popen(
            command,
            cwd=str(REPO_ROOT),
            env=_clean_env(self.env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: stop() ends tsx and its node child together
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._reader.join(timeout=2)
                raise RuntimeError("the server exited with {}:\n{}".format(self.process.returncode, self.output()))
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=2) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("the server did not answer /health within {} s:\n{}".format(SERVER_START_TIMEOUT, self.output()))

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self._output.append(line)

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(timeout=5)
        if process is not None and process.stdout is not None:
            process.stdout.close()
        self.process = None
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = ""


class LocalHttpServer:
    """A tiny HTTP server on 127.0.0.1 in a thread.

    ``files`` maps paths to bodies served on GET; every POST is recorded in
    ``posts`` as (path, headers, body bytes) and answered 200.
    """

    def __init__(self) -> None:
        self.files: Dict[str, bytes] = {}
        self.posts: List[Tuple[str, Dict[str, str], bytes]] = []
        self.posted = threading.Condition()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                body = outer.files.get(self.path.split("?")[0])
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "text/plain")
                payload = body if body is not None else b"not found"
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with outer.posted:
                    outer.posts.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    outer.posted.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # silence
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        return "http://127.0.0.1:{}".format(self.port)

    def start(self) -> "LocalHttpServer":
        self.thread.start()
        return self

    def wait_for_post(self, predicate: Callable[[Tuple[str, Dict[str, str], bytes]], bool], timeout: float) -> Optional[Tuple[str, Dict[str, str], bytes]]:
        deadline = time.monotonic() + timeout
        with self.posted:
            while True:
                for post in self.posts:
                    if predicate(post):
                        return post
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.posted.wait(remaining)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class SilentServer:
    """Accepts connections and never answers: for timeout tests."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = int(self.sock.getsockname()[1])
        self.conns: List[socket.socket] = []
        self._stop = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
                self.conns.append(conn)
            except socket.timeout:
                continue
            except OSError:
                return

    def stop(self) -> None:
        self._stop = True
        self.thread.join(timeout=2)
        for conn in self.conns:
            conn.close()
        self.sock.close()


class SleepRecorder:
    """An injectable ``sleep``: records each wait and, when ``real`` is set, really waits."""

    def __init__(self, real: bool = False) -> None:
        self.real = real
        self.calls: List[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        if self.real:
            time.sleep(seconds)


def spy_requests(client: object) -> List[Tuple[str, str]]:
    """Records (method, url) of each HTTP request a client sends (retries included)."""
    calls: List[Tuple[str, str]] = []
    original = getattr(client, "_send")

    def send(method: str, url: str, body: Optional[bytes]):  # type: ignore[no-untyped-def]
        calls.append((method, url))
        return original(method, url, body)

    setattr(client, "_send", send)
    return calls


class ScriptedServer:
    """Answers each request with the next scripted (status, headers, body) and records the requests."""

    def __init__(self, script: Sequence[Tuple[int, Dict[str, str], bytes]]) -> None:
        self.script = list(script)
        self.requests: List[Tuple[str, str, Dict[str, str], bytes]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, headers, payload = outer.script.pop(0) if outer.script else (500, {}, b"script exhausted")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _answer
            do_POST = _answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return "http://127.0.0.1:{}/api/v1".format(self.port)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
