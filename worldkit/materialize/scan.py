"""Walk a staged tree seeing every entry, without following or opening anything but regular files.

`scan` lists each entry by `lstat`: regular files are digested (opened with `O_NOFOLLOW |
O_NONBLOCK` and re-checked with `fstat`, so a file swapped for a FIFO cannot block the scan);
symbolic links (to files or directories), FIFOs, sockets and devices are reported and never
opened or followed; so are modes that matter (setuid, setgid, sticky, an execute bit, a file or
directory anyone may write, a file or directory its owner cannot read) and empty directories. worldkit writes none of these, so any
of them in a staged tree was put there by someone else.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

_CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)

SPECIAL_KINDS = ("symlink", "fifo", "socket", "device")
"""Entry kinds that are never opened: their marker replaces a digest in `scan_tree`."""


@dataclass(frozen=True)
class Finding:
    """One entry of a kind or mode worldkit never writes."""

    kind: str
    """symlink, fifo, socket, device, setuid, setgid, sticky, executable, world-writable, unreadable,
    empty-directory."""
    path: str
    """Path relative to the scanned root, `/`-separated."""
    detail: str
    """One line: what was found."""


@dataclass
class TreeScan:
    """Every regular file's digest and size, and everything else that was found."""

    files: dict[str, str] = field(default_factory=dict)
    """Regular file → sha256."""
    sizes: dict[str, int] = field(default_factory=dict)
    """Regular file → size in bytes."""
    special: dict[str, str] = field(default_factory=dict)
    """Non-regular entry → its kind (symlink, fifo, socket, device)."""
    findings: list[Finding] = field(default_factory=list)


def entry_kind(mode: int) -> str:
    """file, directory, symlink, fifo, socket or device for an `lstat` mode."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def mode_findings(rel: str, st: os.stat_result, is_dir: bool) -> list[Finding]:
    """The modes worldkit never writes that `st` has (one finding each)."""
    mode = st.st_mode
    found: list[Finding] = []
    octal = f"{stat.S_IMODE(mode):04o}"
    if mode & stat.S_ISUID:
        found.append(Finding("setuid", rel, f"mode {octal} has the setuid bit"))
    if mode & stat.S_ISGID and not is_dir:  # directories inherit setgid from their parent on Linux
        found.append(Finding("setgid", rel, f"mode {octal} has the setgid bit"))
    if mode & stat.S_ISVTX:
        found.append(Finding("sticky", rel, f"mode {octal} has the sticky bit"))
    if not is_dir and mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
        found.append(Finding("executable", rel, f"mode {octal}: worldkit never writes executable files"))
    if mode & stat.S_IWOTH:
        found.append(Finding("world-writable", rel, f"mode {octal}: anyone may change it; worldkit never writes such modes"))
    need = stat.S_IRUSR | (stat.S_IXUSR if is_dir else 0)
    if mode & need != need:
        found.append(Finding("unreadable", rel, f"mode {octal}: its owner cannot {'list' if is_dir else 'read'} it"))
    return found


_Signature = tuple[int, int, int]
"""(size, mtime_ns, ctime_ns) of a file: any write, truncation or chmod changes its ctime."""

_REMEMBERED: list[dict[tuple[int, int], tuple[_Signature, str, int]]] = []
"""The digest memos in force (`remembered_digests`); the innermost one is used."""

_SETTLED_NS = 200_000_000
"""A digest is remembered only for a file unchanged this long (its ctime this far in the past): the
kernel's file clock is coarse (a tick), so a write within the tick of the last change could leave
the signature as it was; a file last changed well before the digest was taken cannot."""

_REMEMBER_AT_MOST = 1 << 18


@contextmanager
def remembered_digests() -> Iterator[None]:
    """Within the block, `digest_regular` remembers each regular file's digest by (device, inode)
    and gives it again while the file's size, mtime and ctime are unchanged (no read). For scans
    that see the same files again and again: the mutation campaign lends its untouched staged
    packages to every mutation's checks. A file written in place, truncated, replaced or chmod'ed
    has a new ctime (or inode), so it is read again. Blocks nest; a memo lives as long as its block."""
    _REMEMBERED.append({})
    try:
        yield
    finally:
        _REMEMBERED.pop()


def _signature(st: os.stat_result) -> _Signature:
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def digest_regular(path: str | Path, st: os.stat_result | None = None) -> tuple[str, int] | None:
    """(sha256, size) of a regular file, or None if it is not one (never blocks, never follows).

    `st` is the file's `lstat`, if the caller has it: a file remembered with that very signature
    (`remembered_digests`) is not even opened."""
    memo = _REMEMBERED[-1] if _REMEMBERED else None
    if memo is not None and st is not None and stat.S_ISREG(st.st_mode):
        known = memo.get((st.st_dev, st.st_ino))
        if known is not None and known[0] == _signature(st):
            return known[1], known[2]
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (st is not None and (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev)):
            return None
        if memo is not None:
            known = memo.get((now.st_dev, now.st_ino))
            if known is not None and known[0] == _signature(now):
                return known[1], known[2]
        digest = hashlib.sha256()
        size = 0
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            size += len(chunk)
        if memo is not None:
            after = os.fstat(fd)
            if _signature(after) == _signature(now) and time.time_ns() - now.st_ctime_ns > _SETTLED_NS:
                if len(memo) >= _REMEMBER_AT_MOST:
                    memo.clear()
                memo[(now.st_dev, now.st_ino)] = (_signature(now), digest.hexdigest(), size)
        return digest.hexdigest(), size
    finally:
        os.close(fd)


def read_regular(path: str | Path, limit: int = 256 << 20) -> bytes | None:
    """The bytes of a regular file (None for anything else: a FIFO, a link, a missing file)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        parts: list[bytes] = []
        total = 0
        while (chunk := os.read(fd, _CHUNK)) and total <= limit:
            parts.append(chunk)
            total += len(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def scan(
    root: str | Path,
    ignore: frozenset[str] = frozenset(),
    *,
    allow_empty: frozenset[str] = frozenset(),
) -> TreeScan:
    """Every entry under `root` (see module docstring); `ignore` paths are skipped entirely.

    `allow_empty` names directories (relative paths) that may legitimately be empty.
    """
    result = TreeScan()
    base = os.fspath(root)
    stack: list[str] = [""]
    while stack:
        rel_dir = stack.pop()
        full_dir = os.path.join(base, rel_dir) if rel_dir else base
        try:
            with os.scandir(full_dir) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as error:
            result.findings.append(Finding("unreadable", rel_dir or ".", f"cannot list the directory ({error.strerror})"))
            continue
        visible = 0
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if rel in ignore:
                visible += 1
                continue
            visible += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as error:
                result.findings.append(Finding("unreadable", rel, f"cannot stat ({error.strerror})"))
                continue
            kind = entry_kind(st.st_mode)
            if kind == "directory":
                result.findings += mode_findings(rel, st, is_dir=True)
                stack.append(rel)
                continue
            if kind != "file":
                detail = f"a {kind}; staged trees hold only regular files and directories"
                if kind == "symlink":
                    try:
                        detail = f"a symbolic link to {os.readlink(entry.path)!r}; links are never followed"
                    except OSError:
                        pass
                result.special[rel] = kind
                result.findings.append(Finding(kind, rel, detail))
                continue
            result.findings += mode_findings(rel, st, is_dir=False)
            digested = digest_regular(entry.path, st)
            if digested is None:
                result.special[rel] = "unreadable"
                result.findings.append(Finding("unreadable", rel, "changed type or could not be opened while scanned"))
                continue
            result.files[rel], result.sizes[rel] = digested
        if rel_dir and not visible and rel_dir not in allow_empty:
            result.findings.append(Finding("empty-directory", rel_dir, "an empty directory; worldkit stages none here"))
    result.findings.sort(key=lambda f: (f.path, f.kind))
    return result
