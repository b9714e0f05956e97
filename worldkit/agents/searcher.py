"""`searcher`: an agent without a language model that searches like an employee with a budget.

It works only through the seat's tools and knows only the request. It builds queries from the
request (identifiers, dates, the longer words), lists what the seat can see (files, records, mail
and chat), searches the files for the identifiers, ranks every candidate with BM25 (`bm25s`) over
what the listings and searches showed of it, and opens the best candidates — with seeded noise
in the ranking, so repeats differ as an employee's would — until its budget of tool calls is
spent. Under a curated packet the seat simply sees fewer items; the agent is never told the
condition.

It cannot read prose, so what it states comes from the runner's answer key
(`worldkit.run.answer_key.EvidenceGatedKey`): the key releases a criterion's correct content only
when the run's logged calls cover a sufficient evidence set for it (the access rules of grading,
checked by the key, not by the agent). For each released criterion the agent states the correct
content with probability `skill`; everything else is a wrong or missing answer the key's
wrong-answer plug-in makes. It never sees the evidence map, the checks, the verifier package or
the reference. Given its `seed` and the run id, it is deterministic.

Options: `budget` (tool calls for looking: listings, searches, reads; writing the deliverable is
not counted; also the spec's argument, `searcher:30`), `skill` (0–1), `seed`, `noise` (scale of
the Gumbel noise added to the ranking, in BM25 score units; 0 ranks strictly by score).
"""

from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from typing import Any, Protocol

from worldkit.agents.registry import AgentResult, AgentTask, register_agent
from worldkit.agents.session import ToolSession
from worldkit.errors import UsageError

__all__ = ["AnswerKey", "SearcherAgent", "make_searcher", "query_terms"]

_IDENTIFIER = re.compile(r"\b[A-Z][A-Za-z]*[-/]?\d[\w./-]*\b|\b[A-Z]{2,}[-/][\w-]+\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")
_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "about after again also before being below between both could does each every from have into more most "
    "must only other over same should some such than that their them then there these they this those "
    "through under until very what when where which while with would your yours today write wants want "
    "file files workspace columns column please need needs draft short".split()
)
_LISTINGS = ("list_files", "query_records", "list_messages")
_READERS = {"file": "read_file", "record": "get_record", "message": "read_message"}


class AnswerKey(Protocol):
    """What the runner gives the searcher instead of understanding (see `worldkit.run.answer_key`)."""

    @property
    def criteria(self) -> tuple[str, ...]: ...

    @property
    def wrong_answers(self) -> str: ...

    def released(self) -> frozenset[str]: ...

    def deliverable(self, correct: Any, seed: int) -> list[tuple[str, dict[str, Any]]]: ...


def query_terms(request: str) -> list[str]:
    """Queries from the request: identifiers and dates first (in order of appearance), then the
    longer words, each once."""
    seen: dict[str, None] = {}
    for pattern in (_IDENTIFIER, _DATE):
        for match in pattern.finditer(request):
            seen.setdefault(match.group(0).strip(".,;:()`'\""), None)
    for match in _WORD.finditer(request):
        word = match.group(0).lower().strip("-")
        if word not in _STOP and len(word) > 4:
            seen.setdefault(word, None)
    return [t for t in seen if t]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass
class _Candidate:
    kind: str
    id: str
    text: str


class SearcherAgent:
    """Looks within a budget, ranks with BM25, reads the best, and states what the key releases."""

    name = "searcher"
    uses_answer_key = True

    def __init__(self, budget: int = 20, skill: float = 0.9, seed: int = 0, noise: float = 1.0) -> None:
        if budget < 1:
            raise UsageError(f"searcher: budget must be at least 1 tool call (got {budget})")
        if not 0.0 <= skill <= 1.0:
            raise UsageError(f"searcher: skill is a probability between 0 and 1 (got {skill})")
        if noise < 0:
            raise UsageError(f"searcher: noise must be 0 or more (got {noise})")
        self.budget, self.skill, self.seed, self.noise = budget, skill, seed, noise

    @property
    def id(self) -> str:
        return f"searcher:{self.budget}"

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "budget": self.budget, "skill": self.skill, "seed": self.seed, "noise": self.noise,
                "ranker": "bm25s"}  # fmt: skip

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        key: AnswerKey | None = task.answer_key
        if key is None:
            raise UsageError("the searcher needs the runner's answer key (run it with `worldkit run` or a campaign)")
        rng = random.Random(f"searcher:{self.seed}:{task.run_id}")
        result = AgentResult()
        available = {t.name for t in await tools.list_tools()}
        terms = query_terms(task.request)
        candidates: dict[tuple[str, str], _Candidate] = {}
        spent = 0

        async def call(name: str, args: dict[str, Any]) -> Any:
            nonlocal spent
            spent += 1
            result.steps += 1
            outcome = await tools.call(name, args)
            if outcome.is_error:
                result.notes.append(f"{name}: {outcome.text[:200]}")
                return None
            return outcome.structured if outcome.structured is not None else _json(outcome.text)

        for listing in _LISTINGS:
            if listing in available and spent < self.budget:
                self._add_listing(listing, await call(listing, {"limit": 500}), candidates)
        searches = max(1, self.budget // 4)
        for term in terms[:searches]:
            if "search_files" not in available or spent >= self.budget:
                break
            found = await call("search_files", {"query": term, "mode": "literal", "limit": 20})
            for match in (found or {}).get("matches", []):
                item = candidates.setdefault(("file", match["path"]), _Candidate("file", match["path"], match["path"]))
                item.text += f"\n{term}\n{match.get('snippet', '')}"

        order = self._rank(terms, list(candidates.values()), rng)
        read = 0
        for item in order:
            if spent >= self.budget:
                break
            reader = _READERS[item.kind]
            if reader in available:
                await call(reader, {"path": item.id} if item.kind == "file" else {"id": item.id})
                read += 1

        released = key.released()
        stated = sorted(c for c in key.criteria if c in released and rng.random() < self.skill)
        for tool, args in key.deliverable(stated, seed=rng.randrange(2**31)):
            outcome = await tools.call(tool, args)
            result.steps += 1
            if outcome.is_error:
                result.notes.append(f"{tool}: {outcome.text[:200]}")
        result.notes.append("stated: " + ",".join(stated))
        result.notes.append("released: " + ",".join(sorted(released)))
        result.final_message = (
            f"looked with {spent} tool calls ({read} reads); stated {len(stated)} of {len(key.criteria)} criteria "
            f"from what was found; other answers by {key.wrong_answers}"
        )
        return result

    @staticmethod
    def _add_listing(listing: str, found: Any, candidates: dict[tuple[str, str], _Candidate]) -> None:
        if not found:
            return
        if listing == "list_files":
            for entry in found.get("entries", []):
                if not entry["path"].startswith("workspace/"):
                    candidates.setdefault(("file", entry["path"]), _Candidate("file", entry["path"], entry["path"]))
        elif listing == "query_records":
            for record in found.get("records", []):
                text = " ".join(str(record.get(k) or "") for k in ("id", "system", "type", "title", "status"))
                candidates.setdefault(("record", record["id"]), _Candidate("record", record["id"], text))
        else:
            for message in found.get("messages", []):
                if message.get("sent_by_you"):
                    continue
                text = " ".join(str(message.get(k) or "") for k in ("id", "kind", "sender", "subject", "channel", "date"))
                candidates.setdefault(("message", message["id"]), _Candidate("message", message["id"], text))

    def _rank(self, terms: list[str], items: list[_Candidate], rng: random.Random) -> list[_Candidate]:
        """Candidates by BM25 score over what was seen of them, plus seeded Gumbel noise."""
        import bm25s

        if not items:
            return []
        items = sorted(items, key=lambda c: (c.kind, c.id))
        corpus = [_tokens(c.text.replace("/", " ")) or ["_"] for c in items]
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        query = [t for term in terms for t in _tokens(term)]
        scores = retriever.get_scores(query) if query else [0.0] * len(items)
        noisy = [
            (float(s) + self.noise * -math.log(-math.log(max(rng.random(), 1e-12))), i) for i, s in enumerate(scores)
        ]
        return [items[i] for _, i in sorted(noisy, key=lambda pair: (-pair[0], pair[1]))]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@register_agent("searcher", arg="budget")
def make_searcher(options: dict[str, Any]) -> SearcherAgent:
    try:
        return SearcherAgent(
            budget=int(options.get("budget", 20)), skill=float(options.get("skill", 0.9)),
            seed=int(options.get("seed", 0)), noise=float(options.get("noise", 1.0)),
        )  # fmt: skip
    except (TypeError, ValueError) as error:
        raise UsageError(f"searcher: options budget, seed (integers), skill, noise (numbers): {error}") from None
