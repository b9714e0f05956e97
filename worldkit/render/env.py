"""The sandboxed jinja2 environment: StrictUndefined, no clock, no randomness, no filesystem.

Templates come only from the world package (already read into memory), and the context a template
sees is built from a `Snapshot` — the state as of D, seat-independent — so a template can neither
reach the future nor vary by who reads it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2
from jinja2.bccache import Bucket
from jinja2.sandbox import ImmutableSandboxedEnvironment

from worldkit.errors import InvalidWorld
from worldkit.timeline import Snapshot, as_of
from worldkit.world.models import Document, Message


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


_ENVIRONMENTS: dict[tuple[tuple[str, str], ...], tuple[ImmutableSandboxedEnvironment, dict[str, jinja2.Template]]] = {}


def _environment_for(
    templates: Mapping[str, str],
) -> tuple[ImmutableSandboxedEnvironment, dict[str, jinja2.Template]]:
    """One environment (and compiled-template cache) per distinct set of template sources."""
    key = tuple(sorted(templates.items()))
    cached = _ENVIRONMENTS.get(key)
    if cached is None:
        if len(_ENVIRONMENTS) > 16:
            _ENVIRONMENTS.clear()
        cached = _ENVIRONMENTS[key] = (build_environment(templates), {})
    return cached


def _bounded(chunks: Any) -> str:
    """Join a template's streamed output, stopping as soon as it passes `MAX_RENDERED_CHARS`."""
    parts: list[str] = []
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_RENDERED_CHARS:
            raise TooLarge(f"more than {MAX_RENDERED_CHARS:,} characters")
        parts.append(chunk)
    return "".join(parts)


@dataclass(frozen=True)
class RenderContext:
    """What every template sees besides its own item: the world as of the snapshot date."""

    snapshot: Snapshot

    @cached_property
    def world(self) -> dict[str, Any]:
        snap = self.snapshot
        state = snap.state
        return {
            "as_of": snap.date,
            "company": state.company.model_dump(mode="json"),
            "departments": {d.id: d.model_dump(mode="json") for d in state.company.departments},
            "products": {p.id: p.model_dump(mode="json") for p in state.company.products},
            "people": {k: p.model_dump(mode="json") for k, p in state.people.items()},
            "records": {k: v.as_json(sorted(x for x in v.record.links if x in snap.records)) for k, v in snap.records.items()},
            "documents": {
                k: {"id": d.id, "title": d.title, "path": d.path, "visible_from": d.visible_from.isoformat()}
                for k, d in snap.documents.items()
            },
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
            context = self._contexts[date] = RenderContext(as_of(self.context.snapshot.state, date))
        return context

    def _template(self, name: str) -> jinja2.Template:
        compiled = self._compiled.get(name)
        if compiled is None:
            compiled = self._compiled[name] = self.env.get_template(name)
        return compiled

    def _render(self, template: str, item: dict[str, Any], what: str, context: RenderContext | None = None) -> str:
        try:
            return _bounded(self._template(template).generate(doc=item, world=(context or self.context).world))
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
        if doc.text is not None:
            return doc.text.encode("utf-8")
        snap = self.context.snapshot
        successor = None
        if doc.superseded_by:
            later = snap.state.documents[doc.superseded_by]
            if later.visible_from <= snap.date:
                successor = {"id": later.id, "title": later.title, "path": later.path}
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
        return self._render(doc.template, item, f"document {doc.id}").encode("utf-8")

    def message_body(self, msg: Message) -> str:
        if msg.template is None:
            return msg.body
        item = {"id": msg.id, "subject": msg.subject, "date": msg.date, "sender": msg.sender, "vars": msg.vars}
        day = min(msg.date, self.context.snapshot.date)
        return self._render(msg.template, item, f"message {msg.id}", self._context_on(day))
