"""EML (the stdlib `email` package) from headers and a body, and its headers and body back as text."""

from __future__ import annotations

import datetime as dt
import email
import email.policy
import email.utils
from typing import TYPE_CHECKING

from worldkit.render.office._zip import noon

if TYPE_CHECKING:
    from worldkit.render.office import Meta

_SHOWN = ("From", "To", "Cc", "Date", "Subject")


def render(text: str, meta: Meta) -> bytes:
    """`text` is `Name: value` header lines, a blank line, then the body. No Message-ID is made up
    (that would name this host); a Date is the document's own when the text gives none."""
    from email.message import EmailMessage

    head, _, body = text.partition("\n\n")
    message = EmailMessage(policy=email.policy.SMTP)
    for line in head.splitlines():
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"EML header line {line!r} is not `Name: value`")
        message[name.strip()] = value.strip()
    if "Date" not in message:
        message["Date"] = email.utils.format_datetime(noon(meta.date).replace(tzinfo=dt.timezone.utc))
    if "Subject" not in message:
        message["Subject"] = meta.title
    message.set_content(body.rstrip("\n") + "\n", cte="quoted-printable")
    return message.as_bytes()


def extract(data: bytes) -> str:
    message = email.message_from_bytes(data, policy=email.policy.default)
    lines = [f"{name}: {message[name]}" for name in _SHOWN if message[name] is not None]
    part = message.get_body(preferencelist=("plain",)) if message.is_multipart() else message
    body = part.get_content() if part is not None else ""
    return "\n".join(lines) + "\n\n" + body.replace("\r\n", "\n")
