"""Search over the text of the files a seat can see: literal (case-insensitive substring) and
ranked (BM25 over an in-memory SQLite FTS5 index).

The index holds only what it is given — the seat's projection files and its workspace — so a
search can never return, count or quote anything else. Results come in a fixed order (literal:
by path, then position; ranked: by score, then path), so the same query always gives the same
answer.

This module must never read the filesystem itself; callers hand it the text.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass

__all__ = ["Hit", "SearchIndex"]

SNIPPET_CHARS = 80
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    """One match: where it is and a short excerpt around it."""

    path: str
    line: int | None
    snippet: str
    score: float | None


class SearchIndex:
    """Literal and ranked search over a set of named texts; texts may be replaced one at a time."""

    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._texts: dict[str, str] = {}
        self._lowered: dict[str, str] = {}
        self._sorted: list[str] | None = None
        # One private in-memory database; every use takes the lock.
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._db.execute(
            "create virtual table docs using fts5(path unindexed, body, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        if texts:
            self.put_many(texts)

    def __len__(self) -> int:
        return len(self._texts)

    def put_many(self, texts: dict[str, str]) -> None:
        with self._lock:
            self._db.execute("begin")
            for path, text in texts.items():
                self._put(path, text)
            self._db.execute("commit")

    def put(self, path: str, text: str) -> None:
        """Add or replace the text stored under `path`."""
        with self._lock:
            self._db.execute("begin")
            self._put(path, text)
            self._db.execute("commit")

    def _put(self, path: str, text: str) -> None:
        if path in self._texts:
            self._db.execute("delete from docs where path = ?", (path,))
        else:
            self._sorted = None
        self._texts[path] = text
        self._lowered[path] = text.lower()
        self._db.execute("insert into docs(path, body) values (?, ?)", (path, text))

    def literal(self, query: str, limit: int) -> tuple[list[Hit], bool]:
        """First `limit` case-insensitive occurrences (one per line), by path; and whether more exist."""
        needle = query.lower()
        hits: list[Hit] = []
        with self._lock:
            if self._sorted is None:
                self._sorted = sorted(self._texts)
            for path in self._sorted:
                lowered = self._lowered[path]
                at = lowered.find(needle)
                if at < 0:
                    continue
                text = self._texts[path]
                aligned = len(lowered) == len(text)
                last_line = -1
                while at >= 0:
                    start = at if aligned else _locate(text, query, at)
                    line = text.count("\n", 0, start) + 1
                    if line != last_line:
                        if len(hits) == limit:
                            return hits, True
                        hits.append(Hit(path, line, _excerpt(text, start, len(query)), None))
                        last_line = line
                    at = lowered.find(needle, at + max(1, len(needle)))
        return hits, False

    def ranked(self, query: str, limit: int) -> tuple[list[Hit], bool]:
        """Best `limit` files for the words of `query` by BM25 (any word may match); and whether more exist."""
        words = _WORD.findall(query)
        if not words:
            return [], False
        # Each word quoted as an FTS5 string: the agent's text is never FTS5 syntax.
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in dict.fromkeys(words))
        with self._lock:
            rows = self._db.execute(
                "select path, snippet(docs, 1, '**', '**', '…', 16), bm25(docs) as score "
                "from docs where docs match ? order by score, path limit ?",
                (match, limit + 1),
            ).fetchall()
        hits = [Hit(path, None, " ".join(snippet.split()), round(-score, 6)) for path, snippet, score in rows]
        return hits[:limit], len(hits) > limit


def _locate(text: str, query: str, near: int) -> int:
    """Where `query` occurs case-insensitively in `text` near `near` (lowering changed lengths)."""
    found = re.compile(re.escape(query), re.IGNORECASE).search(text, max(0, near - len(query)))
    return found.start() if found else min(near, len(text))


def _excerpt(text: str, start: int, length: int) -> str:
    """The line around a match, cut to about SNIPPET_CHARS characters on each side."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start + length)
    line_end = len(text) if line_end < 0 else line_end
    left = max(line_start, start - SNIPPET_CHARS)
    right = min(line_end, start + length + SNIPPET_CHARS)
    return ("…" if left > line_start else "") + text[left:right].strip() + ("…" if right < line_end else "")
