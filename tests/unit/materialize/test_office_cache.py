"""Office bytes cached across processes: keyed by everything they depend on, checked on read,
bypassed by the reproducibility checks (`fresh()`, `WORLDKIT_RENDER_CACHE=off`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from worldkit.materialize.memo import fresh_renders, new_memo
from worldkit.render.office import Meta, render_office
from worldkit.render.office import cache as office_cache

TEXT = "# Annual stability report\n\nLot **24A01** met every specification at 24 months.\n\n- assay 99.1%\n"
META = Meta(title="Annual stability report", date=dt.date(2025, 3, 4), author="Ana Ruiz")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path))
    monkeypatch.delenv(office_cache.ENV, raising=False)
    return tmp_path / "office"


def _counting() -> tuple[list[int], object]:
    calls: list[int] = []

    def render() -> bytes:
        calls.append(1)
        return b"%PDF-rendered"

    return calls, render


def test_a_second_render_of_the_same_inputs_is_read_back(cache: Path) -> None:
    calls, render = _counting()
    first = office_cache.cached(".pdf", TEXT, META, render)
    again = office_cache.cached(".pdf", TEXT, META, render)
    assert first == again == b"%PDF-rendered" and len(calls) == 1
    assert len(list(cache.rglob("*"))) == 2  # one shard folder, one entry


@pytest.mark.parametrize("change", ["text", "title", "date", "author", "format"])
def test_every_input_is_in_the_key(cache: Path, change: str) -> None:
    other = {
        "text": (".pdf", TEXT + "x", META),
        "title": (".pdf", TEXT, Meta(title="Other", date=META.date, author=META.author)),
        "date": (".pdf", TEXT, Meta(title=META.title, date=dt.date(2025, 3, 5), author=META.author)),
        "author": (".pdf", TEXT, Meta(title=META.title, date=META.date, author="")),
        "format": (".docx", TEXT, META),
    }[change]
    assert office_cache.key(".pdf", TEXT, META) != office_cache.key(*other)


def test_a_damaged_or_forged_entry_is_rendered_again(cache: Path) -> None:
    calls, render = _counting()
    office_cache.cached(".pdf", TEXT, META, render)
    (entry,) = [p for p in cache.rglob("*") if p.is_file()]
    head, _, payload = entry.read_bytes().partition(b"\n")
    entry.write_bytes(head + b"\n" + payload + b" smuggled")
    assert office_cache.cached(".pdf", TEXT, META, render) == b"%PDF-rendered" and len(calls) == 2


def test_reproducibility_blocks_and_the_environment_render_anew(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls, render = _counting()
    office_cache.cached(".pdf", TEXT, META, render)
    with fresh_renders():
        office_cache.cached(".pdf", TEXT, META, render)
    monkeypatch.setenv(office_cache.ENV, "off")
    office_cache.cached(".pdf", TEXT, META, render)
    assert len(calls) == 3


def test_a_repeat_round_renders_text_anew_but_reads_office_bytes(cache: Path) -> None:
    calls, render = _counting()
    office_cache.cached(".pdf", TEXT, META, render)
    with new_memo():
        office_cache.cached(".pdf", TEXT, META, render)
    assert len(calls) == 1


@pytest.mark.parametrize("path", ["reports/asr-2024.pdf", "sops/sop-001.docx", "lims/export.xlsx", "mail/note.eml"])
def test_cached_bytes_equal_a_fresh_render(cache: Path, path: str) -> None:
    text = "a,b\n1,2\n" if path.endswith(".xlsx") else (
        "From: a@x.example\nTo: b@x.example\nSubject: note\n\nhello\n" if path.endswith(".eml") else TEXT)
    cold = render_office(path, text, META)
    warm = render_office(path, text, META)
    with fresh_renders():
        fresh = render_office(path, text, META)
    assert cold == warm == fresh and cold is not None


def test_rebuild_repeats_first_fresh_process_renders_office_files_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    from worldkit.verify.checks import frozen

    seen: list[dict[str, str]] = []
    monkeypatch.setattr(frozen.subprocess, "Popen", lambda *args, env, **kw: seen.append(env))
    monkeypatch.delenv(office_cache.ENV, raising=False)
    frozen._spawn_rebuild(Path("w"), Path("o"), "1", office_cache=False)
    frozen._spawn_rebuild(Path("w"), Path("o"), "7920", office_cache=True)
    assert seen[0][office_cache.ENV] == "off" and office_cache.ENV not in seen[1]
    assert (seen[0]["PYTHONHASHSEED"], seen[1]["PYTHONHASHSEED"]) == ("1", "7920")


def _fresh_process_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(office_cache, "_TEXTS", type(office_cache._TEXTS)())
    monkeypatch.setattr(office_cache, "_TEXT_SIZE", [0])


def test_extracted_text_is_read_back_across_processes_keyed_by_the_bytes(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []

    def reader(data: bytes):
        return lambda: calls.append(data) or data.decode().upper()

    assert office_cache.extracted(".pdf", b"report", reader(b"report")) == "REPORT"
    assert office_cache.extracted(".pdf", b"report", reader(b"report")) == "REPORT" and len(calls) == 1
    _fresh_process_memory(monkeypatch)  # what another process finds: only the folder
    assert office_cache.extracted(".pdf", b"report", reader(b"report")) == "REPORT" and len(calls) == 1
    assert office_cache.extracted(".pdf", b"report!", reader(b"report!")) == "REPORT!" and len(calls) == 2
    assert office_cache.text_key(".pdf", b"report") != office_cache.text_key(".docx", b"report")


def test_a_damaged_text_entry_is_read_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    office_cache.extracted(".docx", b"minutes", lambda: calls.append(1) or "minutes")
    (entry,) = [p for p in (cache.parent / "office-text").rglob("*") if p.is_file()]
    head, _, payload = entry.read_bytes().partition(b"\n")
    entry.write_bytes(head + b"\n" + b"forged")
    _fresh_process_memory(monkeypatch)
    assert office_cache.extracted(".docx", b"minutes", lambda: calls.append(1) or "minutes") == "minutes"
    assert len(calls) == 2


def test_extract_text_reads_a_real_file_once(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from worldkit.render.office import FORMATS, extract_text

    data = render_office("report.docx", TEXT, META)
    assert data is not None
    want = FORMATS[".docx"].extract(data)
    calls: list[int] = []
    original = FORMATS[".docx"]
    monkeypatch.setitem(FORMATS, ".docx", type(original)(original.name, original.render,
                                                          lambda b: calls.append(1) or original.extract(b)))
    _fresh_process_memory(monkeypatch)
    assert extract_text("a/report.docx", data) == want == extract_text("b/other.docx", data)
    assert len(calls) == 1
