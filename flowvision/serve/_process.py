"""Run ``flowvision serve`` as a child process on 127.0.0.1 (tests, benchmarks, scripts)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import List, Optional, Sequence


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``flowvision serve ARGS --host 127.0.0.1 --port P`` in a subprocess, usable as a context manager.

    Args:
        args: the ``serve`` options (models, limits), without host and port.
        port: the port; a free one when None.
        startup_timeout_s: how long ``start`` waits for ``/healthz`` to answer 200.
        env: extra environment variables for the child.
    """

    def __init__(self, args: Sequence[str], port: Optional[int] = None, startup_timeout_s: float = 180.0,
                 env: Optional[dict] = None):
        self.args = list(args)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.startup_timeout_s = startup_timeout_s
        self.env = env
        self.proc: Optional[subprocess.Popen] = None
        self._log = None

    @property
    def command(self) -> List[str]:
        return [sys.executable, "-m", "flowvision.cli", "serve", *self.args, "--host", "127.0.0.1",
                "--port", str(self.port)]

    def start(self) -> "ServerProcess":
        """Start the server and wait until ``/healthz`` says ok; raises with the server's log otherwise."""
        import httpx
        env = dict(os.environ, **(self.env or {}))
        self._log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.command, stdout=self._log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"flowvision serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"flowvision serve did not become healthy in {self.startup_timeout_s:g} s:\n{self.log()}")

    def log(self) -> str:
        """Everything the server printed so far."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")

    def stop(self, timeout_s: float = 60.0) -> Optional[int]:
        """SIGTERM, wait for a graceful exit (SIGKILL after ``timeout_s``); returns the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def __enter__(self) -> "ServerProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._log is not None:
            self._log.close()
