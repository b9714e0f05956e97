"""Put a world's revisions into the store (idempotent; a changed digest is refused)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from worldkit.canon import canonical_bytes

if TYPE_CHECKING:
    from worldkit.store.db import Store
    from worldkit.world.load import WorldPackage


def store_world(store: Store, package: WorldPackage) -> list[dict[str, str]]:
    stored = []
    for name in package.revision_names:
        state = package.revision(name)
        before = store.get_revision(package.id, name)
        store.put_revision(package.id, name, state.digest, state.parent, canonical_bytes(state.canonical()))
        stored.append({"name": name, "digest": state.digest, "status": "unchanged" if before else "stored"})
    return stored
