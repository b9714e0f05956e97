"""Describe a world package: revisions with digests, seats, the history's date span, counts."""

from __future__ import annotations

from typing import Any

from worldkit.access import Policy
from worldkit.world.load import WorldPackage


def describe_world(package: WorldPackage, rev: str | None = None) -> dict[str, Any]:
    """Summary of a world (seats and counts from `rev`, default the latest revision)."""
    revisions = [{"name": name, "parent": package.revision_spec(name).parent, "digest": package.revision(name).digest}
                 for name in package.revision_names]
    state = package.revision(rev or package.revision_names[-1])
    policy = Policy(state)
    span = state.date_span()
    return {
        "world": package.id,
        "company": state.company.name,
        "default_date": package.spec.default_date.isoformat() if package.spec.default_date else None,
        "revisions": revisions,
        "seats": [
            {"id": seat.id, "person": seat.person, "name": state.people[seat.person].name,
             "roles": policy.roles_of(seat.person)}
            for seat in state.seats.values()
        ],
        "dates": {"first": span[0].isoformat(), "last": span[1].isoformat()} if span else {"first": None, "last": None},
        "counts": {
            "people": len(state.people),
            "seats": len(state.seats),
            "documents": len(state.documents),
            "records": len(state.records),
            "messages": len(state.messages),
            "templates": len(state.templates),
        },
    }
