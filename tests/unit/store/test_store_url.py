"""Store URLs are parsed by SQLAlchemy: a malformed one is an error naming the fix, never a SQLite file of that name."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit._cli.main import run
from worldkit.errors import ExitCode, UsageError
from worldkit.store.db import normalize_url


@pytest.mark.parametrize(("typo", "meant"), [
    ("postgresql+psycopg//postgres@127.0.0.1:5432/test", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    ("postgresql:/u@h/db", "postgresql://u@h/db"),
    ("sqlite:/tmp/store.db", "sqlite:////tmp/store.db"),
    ("postgres//u@h/db", "postgres://u@h/db"),
])
def test_a_url_missing_its_colon_or_slashes_is_refused_with_the_url_it_meant(typo: str, meant: str) -> None:
    with pytest.raises(UsageError) as caught:
        normalize_url(typo)
    assert f"did you mean {meant!r}" in caught.value.message and caught.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize("url", ["postgresql+psycopg://u@h:notaport/db", "mysql://u@h/db"])
def test_a_url_sqlalchemy_rejects_or_another_database_is_refused(url: str) -> None:
    with pytest.raises(UsageError, match="sqlite:///path/store.db"):
        normalize_url(url)


def test_file_paths_stay_sqlite(tmp_path: Path) -> None:
    for path in (tmp_path / "store.db", tmp_path / "mysql_data" / "s.db", tmp_path / "c:" / "x.db"):
        assert normalize_url(str(path)) == f"sqlite:///{path.resolve()}"


def test_the_cli_exits_2_and_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["log", "list", "--store", "postgresql+psycopg//postgres@127.0.0.1:5432/test"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'postgresql+psycopg://postgres@127.0.0.1:5432/test'" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
