"""An exported Harbor task's HTTP sidecar and its solution, run on this machine, for the export tests.

`subprocess_env()` is what a worldkit subprocess needs (this interpreter's `sys.path` and bin folder);
`free_port()` a free local TCP port. `solve_through_sidecar(argv, port, solve_sh, tries=...)` starts the
sidecar command, waits until it accepts connections on the port (failing with its stderr if it
exits first), runs `bash solve.sh` against `http://127.0.0.1:<port>/mcp`, stops the sidecar (SIGTERM)
and returns the solution's completed process.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def solve_through_sidecar(argv: list[str], port: int, solve_sh: Path, *, tries: int) -> subprocess.CompletedProcess[str]:
    server = subprocess.Popen(argv, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(tries):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                time.sleep(0.1)
        return subprocess.run(["bash", str(solve_sh)], capture_output=True, text=True, timeout=60,
                              env={**subprocess_env(), "WORLDKIT_MCP_URL": f"http://127.0.0.1:{port}/mcp"})  # fmt: skip
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
