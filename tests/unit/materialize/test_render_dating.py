"""The eve and message-date contexts see exactly the items `worldkit.timeline` says exist on a day,
though which items exist is read once per state (`worldkit.render.env._dating`)."""

from __future__ import annotations

import datetime as dt
import gc

from worldkit.render import env
from worldkit.timeline.asof import document_exists, fold_record
from worldkit.world.load import load_world


def test_lazy_as_of_lists_what_the_timeline_folds_on_every_day() -> None:
    package = load_world("pharmaco_demo")
    checked = 0
    for rev in package.revision_names:
        state = package.revision(rev)
        days = {e.date for r in state.records.values() for e in r.events}
        days |= {d.visible_from for d in state.documents.values()} | {m.date for m in state.messages.values()}
        days |= {d - dt.timedelta(days=1) for d in days}
        for day in sorted(days)[::5]:
            snap = env.lazy_as_of(state, day)
            assert list(snap.records) == [k for k, r in state.records.items() if fold_record(r, day) is not None]
            assert list(snap.documents.items()) == [(k, d) for k, d in state.documents.items() if document_exists(d, day)]
            assert list(snap.messages.items()) == [(k, m) for k, m in state.messages.items() if m.date <= day]
            checked += 1
    assert checked > 100


def test_what_is_read_once_goes_with_its_state() -> None:
    state = load_world("pharmaco_demo").revision("r1")
    import copy

    twin = copy.copy(state)  # another state object: its own reading, never another's
    env.lazy_as_of(state, dt.date(2026, 3, 1))
    env.lazy_as_of(twin, dt.date(2026, 3, 1))
    assert env._dating(state) is not env._dating(twin)
    key = id(twin)
    del twin
    gc.collect()
    assert key not in env._DATING
