"""The `openai` judge: a language model behind an OpenAI-compatible endpoint of its own.

Its endpoint, model and key come from its own options or `WORLDKIT_JUDGE_BASE_URL`,
`WORLDKIT_JUDGE_MODEL`, `WORLDKIT_JUDGE_API_KEY` — never from the agent's `--base-url`,
`WORLDKIT_OPENAI_*` or `OPENAI_API_KEY`. It asks for a strict structured verdict (a JSON-schema
`response_format`) at temperature 0 and reads plain replies too (`PASS - the memo …`,
`Verdict: FAIL`, a fenced JSON object). HTTP errors are retried with backoff by the chat client;
an endpoint that keeps failing, or a reply that cannot be read after the retries, is a
`grader_error` verdict, never an exception.
"""

from __future__ import annotations

import json
import re
from typing import Any

from worldkit.canon import sha256_json
from worldkit.chat import ChatEndpoint, EndpointError, endpoint_from_options
from worldkit.grade.judge import JudgeItem, Verdict, register_judge

__all__ = ["PROMPT_TEMPLATE", "OpenAIJudge", "judge_endpoint", "parse_verdict", "render_prompt"]

SYSTEM_PROMPT = (
    "You grade one criterion of a workplace deliverable. Decide only from the deliverable shown and "
    "the reference truth; a claim the deliverable does not make is not made. Answer PASS only when "
    "the deliverable meets the criterion in substance, in any wording or format, and makes none of "
    "the unsafe claims relevant to it; otherwise FAIL."
)

PROMPT_TEMPLATE = """\
# Criterion {criterion_id}
{criterion}

## Guidance for the grader
{guidance}

## Reference truth
Facts:
{facts}
Unsafe claims (a deliverable that makes one fails):
{unsafe_claims}

## The request the deliverable answers
{request}

## Deliverable files
{files}

## Mail sent
{sent}

## Record changes made
{record_changes}

Reply with a JSON object {{"verdict": "PASS" or "FAIL", "reason": "one sentence"}}.
"""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["PASS", "FAIL"]},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT_SCHEMA}}
PROMPT_SHA256 = sha256_json({"system": SYSTEM_PROMPT, "template": PROMPT_TEMPLATE, "response_format": RESPONSE_FORMAT})


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items) or "(none)"


def render_prompt(item: JudgeItem) -> str:
    files = "\n\n".join(
        f"### {path}\n" + ("(not produced)" if text is None else f"```\n{text}\n```") for path, text in item.files.items()
    )
    sent = "\n\n".join(
        f"To: {', '.join(m.get('to') or [])}\nSubject: {m.get('subject') or ''}\n\n{m.get('body') or ''}" for m in item.sent
    )
    changes = "\n".join(f"- {c['record']}: {c['kind']} {c.get('text') or ''}".rstrip() for c in item.record_changes)
    return PROMPT_TEMPLATE.format(
        criterion_id=item.criterion_id,
        criterion=item.criterion,
        guidance=item.guidance or "(none)",
        facts=_bullets(item.facts),
        unsafe_claims=_bullets(item.unsafe_claims),
        request=item.request.strip() or "(not given)",
        files=files or "(none)",
        sent=sent or "(none)",
        record_changes=changes or "(none)",
    )


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_PLAIN = re.compile(
    r"^[\s*_#>`\"'\[(]*(?:(?:final\s+)?(?:verdict|result|decision|grade|answer)\s*[:=\-–—]?\s*[*_`\"']*\s*)?"
    r"(PASS(?:ED|ES)?|FAIL(?:ED|S)?)\b[\s*_`\"'\])]*(?:[:.,;\-–—]+\s*)?(.*)$",
    re.IGNORECASE,
)
_TRUE = {"pass", "passed", "passes", "true", "yes", "met"}
_FALSE = {"fail", "failed", "fails", "false", "no", "not met"}


def _from_json(data: Any) -> tuple[bool, str] | None:
    if not isinstance(data, dict):
        return None
    lowered = {str(k).lower(): v for k, v in data.items()}
    for key in ("verdict", "result", "decision", "grade", "pass", "passed"):
        if key in lowered:
            value = lowered[key]
            word = str(value).strip().lower() if not isinstance(value, bool) else ("true" if value else "false")
            reason = str(lowered.get("reason") or lowered.get("explanation") or lowered.get("rationale") or "")
            if word in _TRUE:
                return True, reason
            if word in _FALSE:
                return False, reason
    return None


def parse_verdict(text: str) -> tuple[bool, str] | None:
    """(passed, reason) from a structured or plain reply; None when it says neither clearly."""
    stripped = (text or "").strip()
    if not stripped:
        return None
    candidates = [stripped, *(m.group(1) for m in _FENCE.finditer(stripped))]
    brace = stripped.find("{")
    if brace >= 0:
        candidates.append(stripped[brace : stripped.rfind("}") + 1])
    for candidate in candidates:
        try:
            found = _from_json(json.loads(candidate))
        except (json.JSONDecodeError, ValueError):
            continue
        if found is not None:
            return found
    lines = [line for line in stripped.splitlines() if line.strip()]
    for line in lines[:3]:
        match = _PLAIN.match(line.strip())
        if match:
            passed = match.group(1).lower().startswith("pass")
            reason = match.group(2).strip(" *_`") or " ".join(lines[1:2]).strip()
            return passed, reason
    return None


def judge_endpoint(options: dict[str, Any]) -> ChatEndpoint:
    """The judge's own endpoint: its options, else WORLDKIT_JUDGE_* — never the agent's settings."""
    return endpoint_from_options(
        options,
        base_url_vars=["WORLDKIT_JUDGE_BASE_URL"],
        model_vars=["WORLDKIT_JUDGE_MODEL"],
        api_key_vars=["WORLDKIT_JUDGE_API_KEY"],
        missing="the openai judge needs its own endpoint and model: pass --judge-base-url and --judge-model "
        "or set WORLDKIT_JUDGE_BASE_URL and WORLDKIT_JUDGE_MODEL (the agent's --base-url is never used)",
        max_retries=3,
    )


class OpenAIJudge:
    """Asks the judge's endpoint for a structured PASS/FAIL verdict with a one-line reason."""

    kind = "openai"

    def __init__(self, endpoint: ChatEndpoint, *, temperature: float = 0.0, parse_retries: int = 1) -> None:
        self.endpoint = endpoint
        self.temperature = temperature
        self.parse_retries = parse_retries

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "id": f"openai:{self.endpoint.model}",
            **self.endpoint.describe(),
            "temperature": self.temperature,
            "parse_retries": self.parse_retries,
            "prompt_sha256": PROMPT_SHA256,
            "response_format": "json_schema",
        }

    def judge(self, item: JudgeItem) -> Verdict:
        payload = {
            "model": self.endpoint.model,
            "temperature": self.temperature,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": render_prompt(item)},
            ],
            "response_format": RESPONSE_FORMAT,
        }
        attempts = 0
        last = ""
        for _ in range(self.parse_retries + 1):
            try:
                reply = self.endpoint.complete(payload)
            except EndpointError as error:
                if error.status == 400 and "response_format" in payload:
                    # A server without structured outputs: ask again in plain text (parsed tolerantly).
                    attempts += error.attempts
                    payload = {k: v for k, v in payload.items() if k != "response_format"}
                    try:
                        reply = self.endpoint.complete(payload)
                    except EndpointError as again:
                        return _endpoint_failed(again, attempts)
                else:
                    return _endpoint_failed(error, attempts)
            attempts += 1
            message = reply["choices"][0]["message"]
            text = message.get("content") or ""
            for call in message.get("tool_calls") or []:  # a verdict given as a tool call
                text = text or (call.get("function") or {}).get("arguments") or ""
            found = parse_verdict(text)
            if found is not None:
                passed, reason = found
                return Verdict(result="pass" if passed else "fail", reason=reason[:500] or ("PASS" if passed else "FAIL"),
                               attempts=attempts)  # fmt: skip
            last = text
        return Verdict(result="grader_error", reason=f"unreadable judge reply: {last[:200]!r}", attempts=attempts)


def _endpoint_failed(error: EndpointError, attempts: int) -> Verdict:
    return Verdict(result="grader_error", reason=error.message[:500], attempts=attempts + error.attempts,
                   endpoint_failed=True)  # fmt: skip


@register_judge("openai")
def _make(options: dict[str, Any]) -> OpenAIJudge:
    return OpenAIJudge(
        judge_endpoint(options),
        temperature=float(options.get("temperature") or 0.0),
        parse_retries=int(options.get("parse_retries", 1)),
    )
