"""Office Open XML packages with nothing of the moment or the machine in them."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile

_CORE = "docProps/core.xml"
_STAMP = re.compile(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*(</dcterms:(?:created|modified)>)")


def fixed_package(data: bytes, when: dt.datetime) -> bytes:
    """Rewrite a zip package deterministically: the writer's entry order, every entry dated `when`,
    deflated at level 6 (zlib's output for a level has been stable across its releases; a zlib-ng build
    would differ, which `projection-rebuild` reports), Unix mode 0644, and the core
    properties' created/modified set to `when` (writers stamp the save time there)."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == _CORE:
                body = _STAMP.sub(lambda m: m.group(1) + stamp + m.group(2), body)
            entry = zipfile.ZipInfo(info.filename, date_time=when.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.create_system = 3
            entry.external_attr = 0o100644 << 16
            package.writestr(entry, body, compresslevel=6)
    return out.getvalue()


def noon(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12, 0))
