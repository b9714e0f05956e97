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


def test_an_earlier_day_shares_a_records_json_only_where_it_is_the_same() -> None:
    """Eve contexts take a record's JSON from the projection day's context when nothing of it changed
    in between; every record on every checked day reads as its own fold would."""
    package = load_world("pharmaco_demo")
    shared = differs = 0
    for rev in package.revision_names:
        state = package.revision(rev)
        final = max(e.date for r in state.records.values() for e in r.events)
        later = env.RenderContext(env.lazy_as_of(state, final))
        days = sorted({e.date - dt.timedelta(days=n) for r in state.records.values() for e in r.events for n in (0, 1)})
        for day in days[::7]:
            snap = env.lazy_as_of(state, day)
            with_later = env.RenderContext(snap, later).world["records"]
            alone = env.RenderContext(env.lazy_as_of(state, day)).world["records"]
            for key in snap.records:
                assert with_later[key] == alone[key], (rev, day, key)
                if with_later[key] is later.world["records"][key]:
                    shared += 1
                else:
                    differs += 1
    assert shared > 100 and differs > 100  # both paths are exercised


def test_a_record_whose_link_comes_into_being_later_is_not_shared() -> None:
    import dataclasses

    state = load_world("pharmaco_demo").revision("r2")
    born = {k: min(e.date for e in r.events) for k, r in state.records.items()}
    last = {k: max(e.date for e in r.events) for k, r in state.records.items()}
    quiet = min(last, key=lambda k: (last[k], k))  # a record nothing happens to after its last event
    newcomer = max(born, key=lambda k: (born[k], k))  # and one that comes into being later
    assert last[quiet] < born[newcomer]
    linked = state.records[quiet].model_copy(update={"links": [*state.records[quiet].links, newcomer]})
    state = dataclasses.replace(state, records={**state.records, quiet: linked})  # the link set without an event
    later = env.RenderContext(env.lazy_as_of(state, born[newcomer]))
    assert newcomer in later.world["records"][quiet]["links"]
    eve = env.RenderContext(env.lazy_as_of(state, born[newcomer] - dt.timedelta(days=1)), later)
    assert newcomer not in eve.world["records"][quiet]["links"]
    assert eve.world["records"][quiet] == env.RenderContext(eve.snapshot).world["records"][quiet]
