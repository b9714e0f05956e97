"""The sandboxed jinja2 environment: StrictUndefined, no clock, no randomness, no filesystem.

Templates come only from the world package (already read into memory), and the context a template
sees is built from a `Snapshot` — the state as of D, seat-independent — so a template can neither
reach the future nor vary by who reads it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
import weakref
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Any, cast

import jinja2
from jinja2.bccache import Bucket
from jinja2.sandbox import ImmutableSandboxedEnvironment

from worldkit.errors import InvalidWorld
from worldkit.render.dated import ITEM_FIRST, DateLog, watched_world
from worldkit.render.office import LibraryFailed, Meta, format_of, render_office
from worldkit.timeline import Snapshot
from worldkit.timeline.asof import RecordView, fold_record
from worldkit.world.models import Document, Message, Record
from worldkit.world.state import WorldState


def _fmt_date(value: Any, fmt: str = "%d %b %Y") -> str:
    if isinstance(value, str):
        value = dt.date.fromisoformat(value)
    return value.strftime(fmt)


MAX_RENDERED_CHARS = 2_000_000
"""Most characters one template may produce (documents and message bodies alike)."""
MAX_OPERAND_CHARS = 1_000_000
"""Most characters (or items) a `*` or `**` inside a template may produce."""


class TooLarge(Exception):
    """A template's output (or one expression in it) exceeds the size limit."""


class _BoundedSandbox(ImmutableSandboxedEnvironment):
    """The sandbox, with `*` and `**` unable to build a huge string, list or number in one step."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int) and len(seq) * count > MAX_OPERAND_CHARS:
                    raise TooLarge(f"`*` would make {len(seq) * count:,} items (at most {MAX_OPERAND_CHARS:,})")
        if operator == "**" and isinstance(right, int) and isinstance(left, int) and abs(right) > 1000:
            raise TooLarge(f"`**` with exponent {right} (at most 1000)")
        return super().call_binop(context, operator, left, right)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """`doc.title` on a plain dict, `world.people` on the render's `world`: the sandbox's own answer
        (`SandboxedEnvironment.getattr`), without its failed attribute lookup first. Such an object has
        no attributes but its type's (`_ITEM_FIRST`), so for any other name that lookup raises and the
        sandbox returns the item, or undefined when there is none."""
        names = _ITEM_FIRST.get(type(obj))
        if names is not None and attribute not in names:
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


_ITEM_FIRST: dict[type, frozenset[str]] = {cls: frozenset(dir(cls)) for cls in (dict, *ITEM_FIRST)}
"""Types whose instances hold no attributes of their own (a plain dict; the render's slotted mappings),
with the names their type gives them."""


class _TemplateCache(jinja2.BytecodeCache):
    """Compiled templates kept across processes in the world cache (`.worldkit/cache/templates/`).

    Compiling PharmaCo's templates costs a fresh process a quarter of a second. An entry is keyed
    by the SHA-256 of the template's name and source, this module's source (the sandbox and the
    environment's options decide the compiled code) and the jinja2 and Python versions; it is read
    through `worldkit.world.cache.read_entry`, which trusts it only when its key and payload digest
    match, and is otherwise compiled anew and rewritten.
    """

    KEEP = 2048

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        digest = hashlib.sha256(Path(__file__).read_bytes())
        digest.update(f"{jinja2.__version__}\0{sys.version}\0".encode())
        self.salt = digest.digest()

    def get_bucket(self, environment: Any, name: str, filename: str | None, source: str) -> Bucket:
        key = hashlib.sha256(self.salt + name.encode() + b"\0" + source.encode()).hexdigest()
        bucket = Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        from worldkit.world.cache import read_entry

        found = read_entry(bucket.key, self.folder, kind="templates")
        if isinstance(found, bytes):
            bucket.bytecode_from_string(found)

    def dump_bytecode(self, bucket: Bucket) -> None:
        from worldkit.world.cache import write_entry

        write_entry(bucket.key, bucket.bytecode_to_string(), self.folder, kind="templates", keep=self.KEEP)


def _template_cache() -> _TemplateCache | None:
    from worldkit.world.cache import cache_root

    folder = cache_root()
    return None if folder is None else _TemplateCache(folder)


def build_environment(templates: Mapping[str, str]) -> ImmutableSandboxedEnvironment:
    env = _BoundedSandbox(
        bytecode_cache=_template_cache(),
        loader=jinja2.DictLoader(dict(templates)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    # lipsum draws random text; cycler/joiner are harmless but unneeded: keep the globals minimal.
    for name in ("lipsum", "cycler", "joiner"):
        env.globals.pop(name, None)
    env.filters["fmt_date"] = _fmt_date
    return env


_ENVIRONMENTS: dict[tuple[tuple[str, str], ...], tuple[ImmutableSandboxedEnvironment, dict[str, _Compiled]]] = {}


def _environment_for(
    templates: Mapping[str, str],
) -> tuple[ImmutableSandboxedEnvironment, dict[str, _Compiled]]:
    """One environment (and compiled-template cache) per distinct set of template sources."""
    key = tuple(sorted(templates.items()))
    cached = _ENVIRONMENTS.get(key)
    if cached is None:
        if len(_ENVIRONMENTS) > 16:
            _ENVIRONMENTS.clear()
        cached = _ENVIRONMENTS[key] = (build_environment(templates), {})
    return cached


class _Compiled:
    """A compiled template and what each of its renders starts from: its globals as one plain dict.

    `Template.new_context` merges the template's globals (a `ChainMap` over the environment's) into
    each render's variables, walking the chain twice per render — a third of jinja's cost for a
    short document. The globals are fixed once the environment is built (`build_environment`), so
    they are read into a dict once; each render's context is then the one `new_context` makes: the
    globals overlaid with the variables, the same globals' names, the template's blocks."""

    __slots__ = ("template", "globals")

    def __init__(self, template: jinja2.Template) -> None:
        self.template = template
        self.globals = dict(template.globals)

    def context(self, variables: dict[str, Any]) -> jinja2.runtime.Context:
        template = self.template
        env = template.environment
        return env.context_class(env, {**self.globals, **variables}, template.name, template.blocks, globals=self.globals)


def _bounded(compiled: _Compiled, variables: dict[str, Any]) -> str:
    """The template's output, joined from its stream a block of chunks at a time and refused as soon
    as it passes `MAX_RENDERED_CHARS` (a block holds at most `_BLOCK` chunks, so a loop stops there)."""
    stream = compiled.template.root_render_func(compiled.context(variables))
    parts = list(islice(stream, _BLOCK))
    total = sum(map(len, parts))
    if len(parts) == _BLOCK:
        while more := list(islice(stream, _BLOCK)):
            total += sum(map(len, more))
            if total > MAX_RENDERED_CHARS:
                break
            parts += more
    if total > MAX_RENDERED_CHARS:
        raise TooLarge(f"more than {MAX_RENDERED_CHARS:,} characters")
    return "".join(parts)


_BLOCK = 256


class _LazyRecords(Mapping[str, RecordView]):
    """The records that exist on a date, each folded only when first read (for the eve and message-date
    contexts, which templates read a few records of)."""

    def __init__(self, state: WorldState, date: dt.date) -> None:
        self._records = state.records
        self._date = date
        self._views: dict[str, RecordView] = {}
        self._keys, self._known = _dating(state).records_on(date)

    def __getitem__(self, key: str) -> RecordView:
        view = self._views.get(key)
        if view is None:
            if key not in self._known:
                raise KeyError(key)
            view = fold_record(self._records[key], self._date)
            assert view is not None
            self._views[key] = view
        return view

    def __contains__(self, key: object) -> bool:
        return key in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class _Dating:
    """When each item of one state exists, read once: the eve and message-date contexts of every
    materialization of the state ask which records, documents and messages exist on a day, for the
    same few days again and again. Which items exist is a function of the (immutable) state and the
    day alone; the items themselves are the state's, and records are still folded per context."""

    def __init__(self, state: WorldState) -> None:
        # `fold_record(record, D) is not None` iff the earliest event dated <= D is a creation; that
        # event is the earliest of all whenever that one is dated <= D (and there is none otherwise).
        self.records: list[tuple[str, dt.date]] = []
        for key, record in state.records.items():
            first = min(((e.date, i) for i, e in enumerate(record.events)), default=None)
            if first is not None and record.events[first[1]].kind == "created":
                self.records.append((key, first[0]))
        self.documents = [(k, d, d.visible_from, d.visible_until) for k, d in state.documents.items()]
        self.messages = [(k, m, m.date) for k, m in state.messages.items()]
        self._records_on: dict[dt.date, tuple[list[str], frozenset[str]]] = {}
        self._state = weakref.proxy(state)

    @cached_property
    def undated(self) -> dict[str, Any]:
        """What templates see of the world that no date changes (the company, its departments,
        products and people), dumped once and shared by every context: the sandbox is immutable,
        so no template can change what another one reads."""
        state = self._state
        return {
            "company": state.company.model_dump(mode="json"),
            "departments": {d.id: d.model_dump(mode="json") for d in state.company.departments},
            "products": {p.id: p.model_dump(mode="json") for p in state.company.products},
            "people": {k: p.model_dump(mode="json") for k, p in state.people.items()},
        }

    @cached_property
    def _record_days(self) -> tuple[dict[str, dt.date], dict[str, tuple[dt.date, ...]]]:
        """Each existing record's first day, and the sorted days of every record's events."""
        state = self._state
        first = dict(self.records)
        days = {key: tuple(sorted({e.date for e in record.events})) for key, record in state.records.items()}
        return first, days

    def unchanged_between(self, day: dt.date, later: dt.date) -> Callable[[str], bool]:
        """Whether a record existing on `day` folds the same on `later` and links the same records:
        no event of it dated in (day, later], and each of its links exists on both days or on neither."""
        first, days = self._record_days
        links = self._state.records

        def same(key: str) -> bool:
            own = days[key]
            at = bisect_right(own, day)
            if at < len(own) and own[at] <= later:
                return False
            for link in links[key].links:
                born = first.get(link)
                if born is not None and day < born <= later:
                    return False
            return True

        return same

    def records_on(self, date: dt.date) -> tuple[list[str], frozenset[str]]:
        """The keys of the records that exist on `date`, in the state's order (and as a set); shared, read only."""
        found = self._records_on.get(date)
        if found is None:
            if len(self._records_on) > 512:
                self._records_on.clear()
            keys = [k for k, first in self.records if first <= date]
            found = self._records_on[date] = (keys, frozenset(keys))
        return found

    def documents_on(self, date: dt.date) -> dict[str, Document]:
        """The documents that exist on `date` (`worldkit.timeline.asof.document_exists`), in the state's order."""
        return {k: d for k, d, start, until in self.documents if start <= date and (until is None or date < until)}

    def messages_on(self, date: dt.date) -> dict[str, Message]:
        return {k: m for k, m, day in self.messages if day <= date}


_DATING: dict[int, tuple[Any, _Dating]] = {}
"""id(state) → (a weak reference to the state, its `_Dating`): states are immutable but unhashable."""


def _dating(state: WorldState) -> _Dating:
    key = id(state)
    held = _DATING.get(key)
    if held is not None and held[0]() is state:
        return held[1]
    if len(_DATING) >= 32:
        _DATING.clear()
    dating = _Dating(state)
    # the entry goes with its state (it holds the state's items, which must not outlive it)
    _DATING[key] = (weakref.ref(state, lambda _, key=key: _DATING.pop(key, None)), dating)
    return dating


def lazy_as_of(state: WorldState, date: dt.date) -> Snapshot:
    """`as_of`, with records folded on first read."""
    dating = _dating(state)
    records = cast("dict[str, RecordView]", _LazyRecords(state, date))
    return Snapshot(state=state, date=date, documents=dating.documents_on(date), records=records,
                    messages=dating.messages_on(date))


class _BuiltOnRead(Mapping[str, Any]):
    """A view of `source` whose values are built by `build(key)` when first read (`world.records`:
    each record's JSON; `world.documents`: each document's summary; a world may hold 100,000)."""

    def __init__(self, source: Mapping[str, Any], build: Callable[[str], Any]) -> None:
        self._source = source
        self._build = build
        self._built: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = self._build(key)
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._source

    def __iter__(self) -> Iterator[str]:
        return iter(self._source)

    def __len__(self) -> int:
        return len(self._source)


def _record_json(snapshot: Snapshot, later: RenderContext | None = None) -> Callable[[str], Any]:
    """Record id → its JSON as of the snapshot date. With `later` (a context of a later day of the
    same state), a record whose JSON is the same on both days is `later`'s own, built once: one
    with no event between the two days, none of whose links' records came into being between them."""
    records = snapshot.records
    same = None
    if later is not None and later.snapshot.state is snapshot.state and snapshot.date <= later.snapshot.date:
        same = _dating(snapshot.state).unchanged_between(snapshot.date, later.snapshot.date)
        shared = later.record_json

    def build(key: str) -> Any:
        if same is not None and same(key):
            return shared[key]
        view = records[key]
        return view.as_json(sorted(x for x in view.record.links if x in records))

    return build


def _document_summary(snapshot: Snapshot) -> Callable[[str], Any]:
    documents = snapshot.documents

    def build(key: str) -> Any:
        d = documents[key]
        return {"id": d.id, "title": d.title, "path": d.path, "visible_from": d.visible_from.isoformat()}

    return build


@dataclass(frozen=True)
class RenderContext:
    """What every template sees besides its own item: the world as of the snapshot date."""

    snapshot: Snapshot
    later: RenderContext | None = None
    """A context of a later day whose records' JSON this one may share where it is the same."""

    @cached_property
    def record_json(self) -> Mapping[str, Any]:
        """`world.records`: each record's JSON on the snapshot date, built when first read."""
        return _BuiltOnRead(self.snapshot.records, _record_json(self.snapshot, self.later))

    @cached_property
    def world(self) -> dict[str, Any]:
        snap = self.snapshot
        state = snap.state
        return {
            "as_of": snap.date,
            **_dating(state).undated,
            "records": self.record_json,
            "documents": _BuiltOnRead(snap.documents, _document_summary(snap)),
        }


class Renderer:
    """Renders documents and messages for one snapshot; templates compile once."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.context = RenderContext(snapshot)
        self.env, self._compiled = _environment_for(snapshot.state.templates)
        self._contexts: dict[dt.date, RenderContext] = {snapshot.date: self.context}

    def _context_on(self, date: dt.date) -> RenderContext:
        """A message is frozen when sent: its body sees the world as of its own date."""
        context = self._contexts.get(date)
        if context is None:
            context = self._contexts[date] = RenderContext(lazy_as_of(self.context.snapshot.state, date), self.context)
        return context

    def _template(self, name: str) -> _Compiled:
        compiled = self._compiled.get(name)
        if compiled is None:
            compiled = self._compiled[name] = _Compiled(self.env.get_template(name))
        return compiled

    def _render(
        self, template: str, item: dict[str, Any], what: str, context: RenderContext | None = None, log: DateLog | None = None
    ) -> str:
        context = context or self.context
        world: Any = context.world if log is None else watched_world(context.world, context.snapshot, log)
        try:
            return _bounded(self._template(template), {"doc": item, "world": world})
        except TooLarge as error:
            raise InvalidWorld(
                f"template {template!r} for {what} produces too much output: {error}. Templates render "
                f"documents and messages of at most {MAX_RENDERED_CHARS:,} characters; fix the template",
                file=f"templates/{template}",
                entity=item.get("id"),
            ) from None
        except Exception as error:  # noqa: BLE001 - jinja errors and errors raised inside templates alike
            raise InvalidWorld(
                f"template {template!r} failed for {what}: {error}. Fix the template or the item's vars "
                "(templates see only `doc` and `world`, as of the projection date)",
                file=f"templates/{template}",
                entity=item.get("id"),
            ) from None

    def document(self, doc: Document) -> bytes:
        return self.document_dated(doc)[0]

    def document_dated(self, doc: Document) -> tuple[bytes, dt.date]:
        """The document's bytes and its intended date: the last day on or before D its content changed.

        The render notes the days its content could have changed on (`worldkit.render.dated`); from
        the latest down, a day whose eve renders the same text is passed over, so a page that only
        filters a record it does not show keeps its own date. A `.docx`, `.xlsx`, `.pdf` or `.eml`
        document is then written in that format, dated that day (`worldkit.render.office`).
        """
        text, day = self._document_text_dated(doc)
        if format_of(doc.path) is None:  # a text file: its bytes are its text
            return text.encode("utf-8"), day
        state = self.context.snapshot.state
        owner = state.people.get(doc.owner) if doc.owner else None
        meta = Meta(title=doc.title or doc.path.rsplit("/", 1)[-1].rsplit(".", 1)[0], date=day,
                    author=owner.name if owner is not None else "")
        try:
            office = render_office(doc.path, text, meta)
        except LibraryFailed as error:
            raise error.for_document(f"{doc.id} ({doc.path})") from error.error
        except Exception as error:  # noqa: BLE001 - a format library refusing the template's text
            raise InvalidWorld(
                f"document {doc.id} ({doc.path}) cannot be written as {doc.path.rsplit('.', 1)[-1].upper()}: {error}. "
                "Fix its template's text (Markdown for DOCX/PDF, CSV for XLSX, headers and a body for EML)",
                file=f"templates/{doc.template}" if doc.template else None,
                entity=doc.id,
            ) from None
        return (office if office is not None else text.encode("utf-8")), day

    def document_text(self, doc: Document) -> str:
        """The text the document's template renders (before any office format is written)."""
        return self._document_text_dated(doc)[0]

    def _document_text_dated(self, doc: Document) -> tuple[str, dt.date]:
        if doc.text is not None:
            return doc.text, doc.visible_from
        log = DateLog(doc.visible_from)
        data = self._document_on(doc, self.context, log)
        for day in sorted(log.days, reverse=True):
            if day <= doc.visible_from:
                break
            try:
                eve = self._document_on(doc, self._context_on(day - dt.timedelta(days=1)), None)
            except InvalidWorld:  # the template cannot render the day before (a record it shows did not exist)
                return data, day
            if eve != data:
                return data, day
        return data, doc.visible_from

    def _document_on(self, doc: Document, context: RenderContext, log: DateLog | None) -> str:
        snap = context.snapshot
        successor = None
        if doc.superseded_by:
            later = snap.state.documents[doc.superseded_by]
            if later.visible_from <= snap.date:
                successor = {"id": later.id, "title": later.title, "path": later.path}
                if log is not None:
                    log.note(later.visible_from)
        item = {
            "id": doc.id,
            "title": doc.title,
            "path": doc.path,
            "owner": doc.owner,
            "department": doc.department,
            "classification": doc.classification.value,
            "visible_from": doc.visible_from,
            "superseded_by": successor,
            "vars": doc.vars,
        }
        assert doc.template is not None
        return self._render(doc.template, item, f"document {doc.id}", context, log)

    def message_body(self, msg: Message) -> str:
        if msg.template is None:
            return msg.body
        item = {"id": msg.id, "subject": msg.subject, "date": msg.date, "sender": msg.sender, "vars": msg.vars}
        day = min(msg.date, self.context.snapshot.date)
        return self._render(msg.template, item, f"message {msg.id}", self._context_on(day))
