"""Office bytes kept across processes: a file's format bytes are a function of its text and metadata.

Rendering DOCX and PDF costs far more than the template that produced the text (python-docx's
style lookups, fpdf2's line breaking), and every process that materializes a world — each CLI
call, each test worker, each of verify's rebuilds — would otherwise pay it again for the same
text. The bytes are stored under `<cache>/office/<k[:2]>/<k>` (the world cache's folder, see
`worldkit.world.cache.cache_root`), keyed by the SHA-256 of everything they depend on: the format,
the text, the title, date and author, the source of this package and the versions of the format
libraries. An entry carries the digest of its payload and is used only when both match; anything
else is ignored and rendered again. Nothing in the cache is needed for correctness.

The reproducibility checks must render anew: `WORLDKIT_RENDER_CACHE=off` in the environment
(set for verify's fresh-process rebuilds) or a `fresh()` block (seat repeats) bypass the cache.
With the cache off, a `once_each()` block (verify's fresh-process rebuild, which rebuilds both
revisions of a world) renders each distinct input anew exactly once and reuses those bytes, in
this process only, for the block's later files with the very same key: a document that did not
change between two revisions is rendered by the format libraries once, not twice.

Reading a file back (`extract_text`: python-docx, openpyxl and pypdf parsing the bytes) costs as
much again; its text is a function of the bytes, so `extracted` keeps it the same way, under
`<cache>/office-text/`, keyed by the SHA-256 of the bytes, the format and the same code digest,
and in this process too (bounded), since staging the task overlays of one world reads the same
evidence files many times.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from worldkit._fs import replace_file
from worldkit.canon import sha256_parts

if TYPE_CHECKING:
    from worldkit.render.office import Meta

ENV = "WORLDKIT_RENDER_CACHE"
_MAGIC = b"worldkit-office-1 "
_LIBRARIES = ("python-docx", "openpyxl", "fpdf2", "pypdf", "lxml")
_FRESH: list[bool] = [False]


class _Once:
    """Bytes rendered (with the caches off) inside one `once_each()` block, by `key`."""

    def __init__(self) -> None:
        self.found: dict[str, bytes] = {}
        self.size = 0

    def through(self, name: str, render: Callable[[], bytes]) -> bytes:
        data = self.found.get(name)
        if data is None:
            data = render()
            if self.size + len(data) <= ONCE_BUDGET:
                self.found[name] = data
                self.size += len(data)
        return data


_ONCE: list[_Once | None] = [None]
ONCE_BUDGET = 128 * 1024 * 1024
"""Bytes a `once_each()` block keeps at most; beyond it, further files are rendered every time."""
_CODE: dict[str, str] = {}
_TEXTS: OrderedDict[str, str] = OrderedDict()
"""Extracted texts of this process, by `text_key`, least recently used first."""
TEXT_BUDGET = 32 * 1024 * 1024
"""Characters of extracted text kept in this process at most."""
_TEXT_SIZE: list[int] = [0]


@contextmanager
def fresh() -> Iterator[None]:
    """Within the block, office bytes are rendered anew (nothing read from or added to the cache)."""
    _FRESH.append(True)
    try:
        yield
    finally:
        _FRESH.pop()


@contextmanager
def once_each() -> Iterator[None]:
    """Within the block, where the caches are off, each distinct office input is rendered anew once:
    later files with the same key (format, text, title, date, author, code) get the bytes this block
    rendered for it. Nothing is read from or written to the cache folder, and nothing rendered outside
    the block is used."""
    _ONCE.append(_Once())
    try:
        yield
    finally:
        _ONCE.pop()


def cache_folder(name: str = "office") -> Path | None:
    """`<cache>/<name>`, or None when render caches are off (`fresh()`, `WORLDKIT_RENDER_CACHE=off`, no cache root)."""
    if _FRESH[-1] or os.environ.get(ENV, "").strip().lower() in {"off", "0", "no", "false"}:
        return None
    from worldkit.world.cache import cache_root

    root = cache_root()
    return None if root is None else root / name


def code_digest() -> str:
    """The renderers' own source and the format libraries' versions, digested once per process."""
    if "code" not in _CODE:
        digest = hashlib.sha256()
        for path in sorted(Path(__file__).parent.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        for name in _LIBRARIES:
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                version = "-"
            digest.update(f"{name}={version}\0".encode())
        _CODE["code"] = digest.hexdigest()
    return _CODE["code"]


def key(extension: str, text: str, meta: Meta) -> str:
    return sha256_parts(code_digest(), extension, meta.title, meta.date.isoformat(), meta.author, text)


def cached(extension: str, text: str, meta: Meta, render: Callable[[], bytes]) -> bytes:
    """`render()`, or the bytes a previous render of the very same inputs stored."""
    folder = cache_folder()
    if folder is None:
        once = _ONCE[-1] if not _FRESH[-1] else None
        if once is None:
            return render()
        return once.through(key(extension, text, meta), render)
    name = key(extension, text, meta)
    path = folder / name[:2] / name
    found = _read(path)
    if found is not None:
        return found
    data = render()
    _write(path, data)
    return data


def text_key(extension: str, data: bytes) -> str:
    return sha256_parts(b"extract", code_digest(), extension, hashlib.sha256(data).digest())


def extracted(extension: str, data: bytes, extract: Callable[[], str]) -> str:
    """`extract()` (the text read from office bytes `data`), or the text an earlier read of the same bytes gave."""
    name = text_key(extension, data)
    found = _TEXTS.get(name)
    if found is not None:
        _TEXTS.move_to_end(name)
        return found
    folder = cache_folder("office-text")
    path = folder / name[:2] / name if folder is not None else None
    raw = _read(path) if path is not None else None
    try:
        text = raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        text = None
    if text is None:
        text = extract()
        if path is not None:
            _write(path, text.encode("utf-8"))
    _remember(name, text)
    return text


def _remember(name: str, text: str) -> None:
    if len(text) > TEXT_BUDGET // 8:
        return
    _TEXTS[name] = text
    _TEXT_SIZE[0] += len(text)
    while _TEXT_SIZE[0] > TEXT_BUDGET:
        _, old = _TEXTS.popitem(last=False)
        _TEXT_SIZE[0] -= len(old)


def _read(path: Path) -> bytes | None:
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    head, sep, payload = raw.partition(b"\n")
    if not sep or not head.startswith(_MAGIC) or head[len(_MAGIC):] != hashlib.sha256(payload).hexdigest().encode():
        return None
    return payload


def _write(path: Path, data: bytes) -> None:
    # a read-only or full disk only costs time
    replace_file(path, _MAGIC + hashlib.sha256(data).hexdigest().encode() + b"\n", data)
