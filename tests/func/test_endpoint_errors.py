"""An endpoint or port error is a clear message and an exit code, never a traceback (issue 11)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run as cli


def test_a_port_in_use_or_a_bad_host(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cli(["serve", "--transport", "http", "--port", str(port)]) == 5
        err = capsys.readouterr().err
        assert f"cannot listen on 127.0.0.1:{port}" in err and "Traceback" not in err
    assert cli(["serve", "--transport", "http", "--host", "no-such-host.invalid"]) == 2
    assert "does not resolve" in capsys.readouterr().err
    assert cli(["serve", "--transport", "http", "--port", "70000"]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(("url", "code", "words"), [
    ("notaurl", 2, "is not an http(s) URL with a host"),
    ("http://[::1", 2, "is not a valid URL"),
    ("http://127.0.0.1:9", 5, "is unreachable"),
])
def test_a_bad_or_unreachable_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, code: int, words: str
) -> None:
    argv = ["run", "--overlay", str(GOOD), "--agent", "openai", "--base-url", url, "--model", "m", "--retries", "0",
            "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}"]
    assert cli(argv) == code
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and "ExceptionGroup" not in err
