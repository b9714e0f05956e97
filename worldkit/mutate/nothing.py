"""The do-nothing family: final states in which no work was done, which must pass no criterion.

Built for every task from what it declares: an empty workspace; the request saved as each
deliverable; a memo restating the question (and header-only tables beside it); header-only
tables alone; copies of the evidence documents in the workspace without an answer. None replays a
state change of the reference.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from worldkit.mutate.variant import Variant
from worldkit.overlay.models import Overlay


def _nothing(family: str, files: dict[str, bytes], detail: str) -> Variant:
    return Variant(family=family, kind="nothing", target="*", files=tuple(sorted(files.items())), detail=detail,
                   keep_state_changes=False, start_empty=True)  # fmt: skip


def _is_table(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in (".csv", ".tsv", ".xlsx")


def _header(reference: str) -> bytes:
    first = next((line for line in reference.splitlines() if line.strip()), "")
    return (first + "\n").encode("utf-8")


def evidence_files(overlay: Overlay, projection: Path) -> list[tuple[str, bytes]]:
    """(name, bytes) of each evidence file and record the overlay maps (sorted by name, distinct)."""
    found: dict[str, bytes] = {}
    for sets in overlay.evidence.values():
        for members in sets:
            for item in members:
                if item.surface == "files":
                    file = projection / item.locator
                elif item.surface == "records":
                    matches = sorted((projection / "records").glob(f"*/{item.locator}.json"))
                    file = matches[0] if matches else projection / "missing"
                else:
                    continue
                if file.is_file():
                    found.setdefault(file.name, file.read_bytes())
    return sorted(found.items())


def nothing_variants(overlay: Overlay, references: dict[str, str], projection: Path) -> Iterator[Variant]:
    """The do-nothing family (module docstring). `references`: deliverable path → reference text."""
    paths = sorted(references)
    request = overlay.request.strip() + "\n"
    yield _nothing("empty-workspace", {}, "nothing written, nothing changed")
    if paths:
        yield _nothing("request-as-deliverable", {p: request.encode("utf-8") for p in paths},
                       "the request's text saved as each deliverable")  # fmt: skip
        restated = (f"# {overlay.title}\n\nYou asked me the following:\n\n{request}\n"
                    "I will look into this and come back to you with the answer.\n")  # fmt: skip
        yield _nothing("question-restated",
                       {p: _header(references[p]) if _is_table(p) else restated.encode("utf-8") for p in paths},
                       "a memo restating the question, header-only tables")  # fmt: skip
    tables = {p: _header(references[p]) for p in paths if _is_table(p)}
    if tables:
        yield _nothing("header-only-table", tables, "only the tables' header rows")
    evidence = evidence_files(overlay, projection)
    if evidence:
        yield _nothing("evidence-copies", {f"evidence/{name}": data for name, data in evidence},
                       "copies of the evidence documents, no answer")  # fmt: skip
