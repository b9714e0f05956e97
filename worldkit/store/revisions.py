"""Loaded world revisions in the store: immutable, keyed by (world, name), checked by digest.

This module must never overwrite a stored revision: a name, once stored with a digest, keeps it.
It does not compute digests either; the world model owns what a revision's state and digest are.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa
from pydantic import AwareDatetime, BaseModel, ConfigDict

from worldkit.errors import StoreError
from worldkit.store.times import format_time, parse_time, utc_now
from worldkit.store.schema import revisions as table

if TYPE_CHECKING:
    from worldkit.store.db import Store

_DIGEST = re.compile(r"[0-9a-f]{64}")


class RevisionInfo(BaseModel):
    """What the store knows about a revision, without its state."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    world: str
    """Name of the world the revision belongs to."""
    name: str
    """Revision name within the world (`r1`, `r2`, …)."""
    digest: str
    """SHA-256 (hex) of the revision's canonical state, as given when it was stored."""
    parent: str | None
    """Name of the parent revision, or None for a root revision."""
    size: int
    """Length in bytes of the stored state JSON."""
    stored_at: AwareDatetime
    """When the revision was first stored (UTC); not part of any digest."""


class StoredRevision(RevisionInfo):
    """A stored revision together with its state."""

    state_json: bytes
    """The revision's state exactly as it was stored."""


def put_revision(
    store: Store, world: str, name: str, digest: str, parent: str | None, state_json: bytes
) -> RevisionInfo:
    _check_name("world", world)
    _check_name("revision name", name)
    if parent is not None:
        _check_name("parent revision name", parent)
    if not _DIGEST.fullmatch(digest):
        raise StoreError(
            f"revision {name} of world {world}: digest {digest!r} is not a lowercase hex "
            "SHA-256; pass the revision's canonical digest (64 hex characters)"
        )
    if not isinstance(state_json, bytes):
        raise StoreError(
            f"revision {name} of world {world}: state_json must be bytes, got "
            f"{type(state_json).__name__}; pass the canonical JSON encoded as UTF-8"
        )
    row = {
        "world": world,
        "name": name,
        "digest": digest,
        "parent": parent,
        "state_json": state_json,
        "size": len(state_json),
        "stored_at": format_time(utc_now()),
    }
    with store.write() as conn:
        conn.execute(_insert_if_absent(conn.dialect.name).values(**row))
        stored = conn.execute(_select_info().where(_key(world, name))).one()
    info = _info(stored)
    if info.digest != digest:
        raise StoreError(
            f"revision {name} of world {world} is already stored with digest {info.digest}, "
            f"not {digest}; stored revisions are immutable: give the changed revision a new "
            "name, or load it into another store (--store URL)"
        )
    if info.parent != parent:
        raise StoreError(
            f"revision {name} of world {world} is already stored with parent {info.parent!r}, "
            f"not {parent!r}; fix the revision's parent in the world, or use another store"
        )
    return info


def get_revision(store: Store, world: str, name: str) -> StoredRevision | None:
    query = sa.select(*_info_columns(), table.c.state_json).where(_key(world, name))
    with store.engine.connect() as conn:
        row = conn.execute(query).one_or_none()
    if row is None:
        return None
    return StoredRevision(**_info(row).model_dump(), state_json=bytes(row.state_json))


def list_revisions(store: Store, world: str) -> list[RevisionInfo]:
    query = _select_info().where(table.c.world == world).order_by(table.c.name)
    with store.engine.connect() as conn:
        return [_info(row) for row in conn.execute(query)]


def _check_name(what: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise StoreError(f"{what} {value!r} must be a non-empty string of at most 200 characters")


def _insert_if_absent(dialect: str) -> sa.Insert:
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert(table).on_conflict_do_nothing(index_elements=["world", "name"])


def _key(world: str, name: str) -> sa.ColumnElement[bool]:
    return sa.and_(table.c.world == world, table.c.name == name)


def _info_columns() -> list[sa.Column]:
    return [table.c[name] for name in ("world", "name", "digest", "parent", "size", "stored_at")]


def _select_info() -> sa.Select:
    return sa.select(*_info_columns())


def _info(row: sa.Row) -> RevisionInfo:
    stored_at: datetime = parse_time(row.stored_at)
    return RevisionInfo(
        world=row.world,
        name=row.name,
        digest=row.digest,
        parent=row.parent,
        size=row.size,
        stored_at=stored_at,
    )
