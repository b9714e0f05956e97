"""Office Open XML packages with nothing of the moment or the machine in them.

A package is written here rather than by `zipfile`, byte for byte as `zipfile` writes it (a test
holds the two equal), so that a member whose body never changes — python-docx's template parts,
most of a DOCX — is deflated once per process (`Member.of`) and not again for every document.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

_CORE = "docProps/core.xml"
_STAMP = re.compile(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:(?:created|modified)>)")
LEVEL = 6
"""Deflate level of every member (zlib's output for a level has been stable across its releases; a
zlib-ng build would differ, which `projection-rebuild` reports)."""

_VERSION = 20  # zipfile.DEFAULT_VERSION: what it writes as "version needed" and "made by" for deflate
_UNIX = 3
_MODE = 0o100644 << 16
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # zipfile.structFileHeader
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # zipfile.structCentralDir
_END = struct.Struct("<4s4H2LH")  # zipfile.structEndArchive
_LIMIT = ((1 << 31) - 1) // 2  # well below zipfile.ZIP64_LIMIT, past which zipfile writes ZIP64 records (not written here)


@dataclass(frozen=True)
class Member:
    """One package member, deflated: its name, CRC-32, length and deflated bytes."""

    name: str
    crc: int
    size: int
    deflated: bytes

    @classmethod
    def of(cls, name: str, body: bytes) -> Member:
        packer = zlib.compressobj(LEVEL, zlib.DEFLATED, -15)  # what zipfile uses for ZIP_DEFLATED
        return cls(name, zlib.crc32(body), len(body), packer.compress(body) + packer.flush())


def write_package(members: Iterable[Member], when: dt.datetime) -> bytes:
    """The zip archive of `members` in their order, each dated `when`, deflated, Unix mode 0644:
    what `zipfile.ZipFile.writestr` gives for such `ZipInfo`s on a seekable file."""
    stamp = when.timetuple()
    if stamp[0] < 1980:
        raise ValueError("ZIP does not support timestamps before 1980")
    dosdate = (stamp[0] - 1980) << 9 | stamp[1] << 5 | stamp[2]
    dostime = stamp[3] << 11 | stamp[4] << 5 | (stamp[5] // 2)
    out: list[bytes] = []
    central: list[bytes] = []
    offset = 0
    for member in members:
        name, flags = _encoded(member.name)
        if max(member.size, len(member.deflated), offset) > _LIMIT:
            raise ValueError(f"package member {member.name!r} needs ZIP64 records, which office packages do not use")
        local = _LOCAL.pack(b"PK\003\004", _VERSION, 0, flags, zipfile.ZIP_DEFLATED, dostime, dosdate,
                            member.crc, len(member.deflated), member.size, len(name), 0)
        central.append(_CENTRAL.pack(b"PK\001\002", _VERSION, _UNIX, _VERSION, 0, flags, zipfile.ZIP_DEFLATED,
                                     dostime, dosdate, member.crc, len(member.deflated), member.size, len(name),
                                     0, 0, 0, 0, _MODE, offset) + name)
        out += (local, name, member.deflated)
        offset += len(local) + len(name) + len(member.deflated)
    directory = b"".join(central)
    if offset > _LIMIT or len(central) > 0xFFFF:
        raise ValueError("package needs ZIP64 records, which office packages do not use")
    out += (directory, _END.pack(b"PK\005\006", 0, 0, len(central), len(central), len(directory), offset, 0))
    return b"".join(out)


def _encoded(name: str) -> tuple[bytes, int]:
    try:
        return name.encode("ascii"), 0
    except UnicodeEncodeError:
        return name.encode("utf-8"), 0x800


def stamped_core(body: bytes, when: dt.datetime) -> bytes:
    """The core properties with created/modified set to `when` (writers stamp the save time there)."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    return _STAMP.sub(lambda m: m.group(1) + stamp + m.group(2), body)


def fixed_package(data: bytes, when: dt.datetime) -> bytes:
    """Rewrite a zip package deterministically: the writer's entry order, every entry dated `when`,
    deflated at `LEVEL`, Unix mode 0644, and the core properties' created/modified set to `when`."""
    source = zipfile.ZipFile(io.BytesIO(data))
    members = []
    for info in source.infolist():
        body = source.read(info.filename)
        if info.filename == _CORE:
            body = stamped_core(body, when)
        members.append(Member.of(info.filename, body))
    return write_package(members, when)


def noon(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12, 0))
