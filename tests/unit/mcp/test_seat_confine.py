"""A hostile corpus against every tool argument that names a path or an id: each call is refused
with a clear tool error, changes nothing, and is logged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.mcp.seat_support import Run, error_text, project
from worldkit.errors import PathRefused
from worldkit.mcp.confine import check_id, check_path, open_confined, write_confined
from worldkit.mcp.seat import default_tool_config
from worldkit.overlay.toolconfig import SendMessages, UpdateRecords, WriteFiles

pytestmark = pytest.mark.anyio

# Inputs that break confinement: `check_path` must refuse every one, whatever the projection holds.
ESCAPES = [
    # traversal, absolute, home, drive, URL
    "..", "../", "../..", "../../etc/passwd", "../manifest.json", "../../verifier/rubric.md",
    "Shared/../../manifest.json", "Shared/../HR/Reviews/P1 review.md", "Shared/SOPs/../../../etc/passwd",
    "workspace/../manifest.json", "workspace/../../outside.md", "./Shared/SOPs/SOP-001.md",
    "Shared/./SOPs/SOP-001.md", "Shared//SOPs/SOP-001.md", "Shared/SOPs/SOP-001.md/", "/", "//",
    "/etc/passwd", "/Shared/SOPs/SOP-001.md", "//server/share/x", "/proc/self/environ", "/dev/zero",
    "~", "~/x", "~root/.ssh/id_rsa", "C:/Windows/win.ini", "c:x", "file:///etc/passwd", "http://evil.example/x",
    "...", "a/../b",
    # percent-encoding
    "%2e%2e%2f", "%2e%2e/%2e%2e/etc/passwd", "..%2f..%2fetc%2fpasswd", "%2E%2E%2F", "..%252f..%252f",
    "%c0%ae%c0%ae/", "%u002e%u002e/", "Shared%2fSOPs%2fSOP-001.md", "..%5c..%5c", "%00", "Shared/SOPs/SOP-001.md%00",
    # NUL and control characters
    "Shared/SOPs/SOP-001.md\x00.txt", "\x00", "Shared/\x00/x", "a\nb", "a\rb", "a\tb", "\x1b[31mred", "\x7f", "x\x08",
    # backslashes
    "..\\..\\etc\\passwd", "Shared\\SOPs\\SOP-001.md", "\\\\server\\share", "..\\", "\\", "C:\\Windows\\win.ini",
    # Unicode look-alike separators and dots
    "..\u2215..\u2215etc\u2215passwd", "Shared\u2215SOPs\u2215SOP-001.md", "..\uff0f..\uff0fetc", "\u2044etc",
    "..\u2044x", "\uff0e\uff0e/x", "\u2024\u2024/x", "..\u29f8x", "\ufe52\ufe52/x", "Shared\uff3cx", "..\u2216..",
    "\u3002\u3002/x", "x\u2025", "\uff61\uff61/x", "Shared\u29f5x", "\ufe68x", "x\uff1ay", "\uff05\u0032\u0065",
    # invisible and bidirectional characters, separators of lines
    "Shared/\u200bSOPs/SOP-001.md", "\u202e/dm.txt", "\ufeff../x", "Shared/SOPs/SOP-001.md\u200d", "a\u2028b",
    "a\u2029b", "\u2066x\u2069", "\ue000",
    # unpaired surrogates
    "\ud800", "a\udfff/b",
    # over-long names
    "a" * 1100, "a/" * 600 + "b", "x" * 256, "n" * 300 + ".md", "é" * 200, "Shared/" + "z" * 400,
    # names that start or end with spaces, or end with a dot
    " Shared/SOPs/SOP-001.md", "Shared/SOPs/SOP-001.md ", "Shared /SOPs/SOP-001.md", "Shared/SOPs/SOP-001.md.",
    " ", "", "Shared/ ",
]

# Well-formed names of things the seat cannot see (other seats, the future, the verifier, the
# projection's own bookkeeping): allowed by confinement, refused as not visible.
INVISIBLE = [
    "HR/Reviews/P1 review.md", "Shared/Notes/future.md", "Desk/P2/todo.md", "manifest.json", "tools.json",
    "seat.json", "records/qms/CC-1.json", "files/Shared/SOPs/SOP-001.md", "verifier/rubric.md", "CON", "NUL",
    "aux.txt", "*", "Shared/*", "?", "[a-z]*", "Shared/SOPs/sop-001.md", "workspace/secret.md",
]


def test_the_corpus_is_large_enough() -> None:
    assert len(ESCAPES) + len(INVISIBLE) >= 100


@pytest.mark.parametrize("raw", ESCAPES)
def test_check_path_refuses_every_escape(raw: str) -> None:
    with pytest.raises(PathRefused) as refused:
        check_path(raw)
    assert "refused: " in refused.value.message and refused.value.message.endswith("as list_files shows it")


@pytest.mark.parametrize("raw", [r for r in ESCAPES if r not in ("...", "c:x", "x\u2025")] + ["a/b", "CC-1/x"])
def test_check_id_refuses_escapes_and_paths(raw: str) -> None:
    with pytest.raises(PathRefused):
        check_id(raw)


@pytest.mark.parametrize(
    "raw",
    ["Shared/SOPs/SOP-001.md", "Desk/P-QC-002/notes on RVX trend.md", "QC/Management/QC budget 2026.csv",
     "SiteShare/SOPs/QC/SOP-QC-014 Stability Program v3.md", ".hidden", "a.b/c-d_e (1).md", "Überblick/Qualität.md",
     "資料/報告.md", "a" * 255],
)
def test_check_path_accepts_plain_names(raw: str) -> None:
    assert check_path(raw) == raw


@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6).map("/".join))
def test_an_accepted_path_never_leaves_its_root(raw: str) -> None:
    try:
        check_path(raw)
    except PathRefused:
        return
    root = Path("/confined/root")
    assert os.path.normpath(root / raw).startswith(str(root) + "/")
    assert not any(seg in ("", ".", "..") for seg in raw.split("/"))


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "dir").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("secret")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    (root / "linkdir").symlink_to(tmp_path)
    for rel in ("link.txt", "linkdir/secret.txt"):
        with pytest.raises(PathRefused, match="symlink"):
            open_confined(root, rel)
        with pytest.raises(PathRefused, match="symlink"):
            write_confined(root, rel, b"x")
    assert (tmp_path / "secret.txt").read_text() == "secret"
    write_confined(root, "dir/new/file.md", b"ok")
    assert open_confined(root, "dir/new/file.md") == b"ok"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def projection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project(tmp_path_factory.mktemp("confine"), "S1")


@pytest.fixture
def run(projection: Path, tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "draft.md").write_text("draft\n")
    (tmp_path / "outside.md").write_text("outside\n")
    (workspace / "escape.md").symlink_to(tmp_path / "outside.md")
    (workspace / "escape-dir").symlink_to(tmp_path)
    config = default_tool_config(projection).model_copy(
        update={
            "permitted": [
                WriteFiles(paths=["report.md"]),
                UpdateRecords(action="comment", records=["*"]),
                UpdateRecords(action="attach", records=["*"]),
                SendMessages(to=["P3"]),
            ]
        }
    )
    served = Run(projection, config, workspace=workspace)
    yield served
    served.close()


def _slots(value: str) -> list[tuple[str, dict]]:
    """Every tool argument that names a path or an id, filled with `value`."""
    return [
        ("read_file", {"path": value}),
        ("write_file", {"path": value, "content": "pwned"}),
        ("get_record", {"id": value}),
        ("update_record", {"id": value, "action": "comment", "text": "pwned"}),
        ("update_record", {"id": "CC-1", "action": "attach", "text": value}),
        ("read_message", {"id": value}),
        ("send_message", {"to": [value], "subject": "s", "body": "pwned"}),
        ("send_message", {"to": ["P3"], "subject": "s", "body": "pwned", "reply_to": value}),
    ]


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): (b"->" + os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
        for p in sorted(root.rglob("*")) if p.is_symlink() or p.is_file()
    }


async def test_hostile_corpus_against_every_path_and_id_argument(run: Run, projection: Path) -> None:
    state_before, workspace_before, projection_before = run.state.digest(), _tree(run.workspace), _tree(projection)
    outside_before = _tree(run.workspace.parent)
    calls = 0
    async with run.client() as client:
        for value in ESCAPES + INVISIBLE + ["escape.md", "escape-dir/outside.md", "workspace/escape.md"]:
            for tool, arguments in _slots(value):
                result = await client.call_tool(tool, arguments)
                calls += 1
                message = error_text(result)
                assert any(word in message for word in ("refused", "no file", "no record", "no message", "not allowed", "needs `text`")) or (
                    "invalid arguments: `" in message
                ), (tool, arguments, message)
    assert run.state.digest() == state_before
    assert _tree(run.workspace) == workspace_before and _tree(projection) == projection_before
    assert _tree(run.workspace.parent) == outside_before
    events = run.events()
    assert len(events) == calls
    assert {e.outcome for e in events} <= {"denied", "error"}
    assert all(e.state_change is None for e in events)
    assert sum(e.outcome == "denied" for e in events) > 0.95 * calls


def test_a_symlink_planted_in_the_projection_stops_the_server(tmp_path: Path) -> None:
    from worldkit.errors import InvalidWorld
    from worldkit.mcp.server import build_seat_server

    projection = project(tmp_path, "S1")
    target = projection / "files" / "Shared" / "SOPs" / "SOP-001.md"
    target.unlink()
    target.symlink_to(projection / "files" / "Desk" / "P1" / "todo.md")
    with pytest.raises((PathRefused, InvalidWorld), match="symlink|differs"):
        build_seat_server(projection, default_tool_config(projection))


def test_every_ascii_character_is_judged_as_the_character_loop_judges_it() -> None:
    """ASCII paths skip the per-character loop: only the control characters are refused there."""
    import unicodedata

    from worldkit.errors import WorldkitError
    from worldkit.mcp.confine import _REFUSED_CATEGORIES, check_path

    for code in range(1, 128):
        char = chr(code)
        if char in "\\%/.~:" or char.isspace() and code != 32 and unicodedata.category(char) != "Cc":
            continue
        raw = f"files/a{char}b.md"
        refused = unicodedata.category(char) in _REFUSED_CATEGORIES
        try:
            check_path(raw)
        except WorldkitError as error:
            assert refused, (code, error)
            assert f"U+{code:04X}" in str(error)
        else:
            assert not refused, code
