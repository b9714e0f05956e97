"""The judge as an instrument: verdict parsing, retries to `grader_error`, its own settings,
deliverables read only inside the workspace, and what it is (not) shown."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2 as httpx
import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit.chat import ChatEndpoint, EndpointError
from worldkit.errors import UsageError
from worldkit.grade.judge import (
    JudgeItem,
    deliverable_paths,
    judge_item,
    make_judge,
    read_deliverables,
)
from worldkit.grade.llm_judge import OpenAIJudge, parse_verdict
from worldkit.overlay import load_overlay
from worldkit.overlay.context import GradingContext


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ('{"verdict": "PASS", "reason": "names the approval entry"}', True),
        ('{"verdict": "fail", "reason": "no approval"}', False),
        ("PASS - the memo names the approval entry", True),
        ("FAIL: the memo calls CC-1 pending", False),
        ("**PASS** — it points to the QMS history", True),
        ("Verdict: FAIL\nThe report omits the approval.", False),
        ("```json\n{\"result\": \"pass\", \"reason\": \"ok\"}\n```", True),
        ("Final verdict: passed. It cites Lee Lead's approval.", True),
        ('{"passed": false, "explanation": "missing"}', False),
    ],
)
def test_verdicts_parse_in_any_reasonable_form(reply: str, passed: bool) -> None:
    found = parse_verdict(reply)
    assert found is not None and found[0] is passed


@pytest.mark.parametrize("reply", ["", "I think it is mostly fine.", "Passable work overall", '{"verdict": "maybe"}'])
def test_unclear_replies_are_not_verdicts(reply: str) -> None:
    assert parse_verdict(reply) is None


ITEM = JudgeItem(criterion_id="S1", criterion="Says where the approval is recorded.", files={"report.md": "x"})


def _judge(handler, retries: int = 2) -> tuple[OpenAIJudge, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request, len(seen))

    endpoint = ChatEndpoint("http://judge.test/v1", "judge-m", api_key="sk-judge", max_retries=retries,
                            backoff_s=0.01, transport=httpx.MockTransport(record), sleep=lambda s: None)  # fmt: skip
    return OpenAIJudge(endpoint), seen


def _reply(content: str) -> httpx.Response:
    return httpx.Response(200, json={"choices": [{"message": {"role": "assistant", "content": content}}]})


def test_500s_are_retried_then_a_grader_error() -> None:
    judge, seen = _judge(lambda request, n: httpx.Response(500, text="overloaded"))
    verdict = judge.judge(ITEM)
    assert verdict.result == "grader_error" and verdict.attempts == 3 and "HTTP 500" in verdict.reason
    assert len(seen) == 3 and seen[0].headers["Authorization"] == "Bearer sk-judge"


def test_a_transient_500_then_a_verdict() -> None:
    judge, seen = _judge(lambda request, n: httpx.Response(503) if n == 1 else _reply("FAIL - no entry named"))
    verdict = judge.judge(ITEM)
    assert verdict.result == "fail" and verdict.reason == "no entry named" and len(seen) == 2


def test_a_4xx_is_not_retried_and_an_unreadable_reply_is_asked_again() -> None:
    judge, seen = _judge(lambda request, n: httpx.Response(401, text="bad key"))
    assert judge.judge(ITEM).result == "grader_error" and len(seen) == 1
    judge, seen = _judge(lambda request, n: _reply("Hmm, hard to say."))
    verdict = judge.judge(ITEM)
    assert verdict.result == "grader_error" and "unreadable" in verdict.reason and len(seen) == 2


def test_the_request_is_structured_and_the_config_frozen() -> None:
    judge, seen = _judge(lambda request, n: _reply('{"verdict": "PASS", "reason": "ok"}'))
    assert judge.judge(ITEM).result == "pass"
    body = json.loads(seen[0].content)
    assert body["response_format"]["json_schema"]["strict"] is True and body["temperature"] == 0
    config = judge.describe()
    assert config["id"] == "openai:judge-m" and len(config["prompt_sha256"]) == 64
    assert "sk-judge" not in json.dumps(config)


def test_the_judge_reads_only_its_own_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WORLDKIT_JUDGE_BASE_URL", "WORLDKIT_JUDGE_MODEL", "WORLDKIT_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORLDKIT_OPENAI_BASE_URL", "http://agent.test/v1")
    monkeypatch.setenv("WORLDKIT_OPENAI_MODEL", "agent-m")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-agent")
    with pytest.raises(UsageError, match="its own endpoint"):
        make_judge("openai", {})
    monkeypatch.setenv("WORLDKIT_JUDGE_BASE_URL", "http://judge.test/v1")
    monkeypatch.setenv("WORLDKIT_JUDGE_MODEL", "judge-m")
    judge = make_judge("openai", {})
    assert judge.endpoint.base_url == "http://judge.test/v1" and judge.endpoint.api_key == ""
    with pytest.raises(UsageError, match="unknown judge"):
        make_judge("gpt-judge")


def test_every_deliverable_file_inside_the_workspace_and_nothing_else(tmp_path: Path) -> None:
    overlay = load_overlay(GOOD)
    assert deliverable_paths(overlay) == ["report.json", "report.md", "status.csv"]
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "report.md").write_text("CC-1 approved by Lee Lead on 2025-04-01.\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("verifier secret\n")
    (workspace / "status.csv").symlink_to(secret)
    found = read_deliverables(workspace, ["report.md", "status.csv", "../secret.txt", str(secret), "report.json"])
    assert found == {"report.md": "CC-1 approved by Lee Lead on 2025-04-01.\n", "status.csv": None,
                     "../secret.txt": None, str(secret): None, "report.json": None}  # fmt: skip


def test_the_item_names_no_run_agent_or_condition(tmp_path: Path) -> None:
    overlay = load_overlay(GOOD)
    workspace = tmp_path / "cc1-report.oracle.curated-curator-1.abc" / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "report.md").write_text("CC-1 is approved.\n")
    from worldkit.overlay import apply_overlay

    package = apply_overlay(overlay, tmp_path / "pkg", "curated:curator-1")
    ctx = GradingContext(workspace=workspace, records={}, sent=[{"to": ["P3"], "subject": "CC-1", "body": "done"}],
                         events=[], projection=package.candidate / "projection")  # fmt: skip
    item = judge_item(overlay, overlay.criterion("S1"), ctx, "Write report.md")
    text = item.model_dump_json()
    assert item.files["report.md"] == "CC-1 is approved.\n" and item.sent[0]["to"] == ["P3"]
    assert item.facts == list(overlay.truth.facts)
    for leak in ("oracle", "curator", "curated", "abc", str(tmp_path)):
        assert leak not in text


def test_endpoint_errors_name_the_endpoint() -> None:
    endpoint = ChatEndpoint("http://nowhere.test/v1", "m", max_retries=0,
                            transport=httpx.MockTransport(lambda r: (_ for _ in ()).throw(httpx.ConnectError("refused"))))  # fmt: skip
    with pytest.raises(EndpointError, match=r"nowhere.test/v1 \(model m\) is unreachable"):
        endpoint.complete({"model": "m", "messages": []})


class _StateJudge:
    """A judge written against the run's state (`grade(overlay, criterion, ctx)`), like an offline one."""

    def describe(self) -> dict:
        return {"kind": "state-test", "id": "state-test"}

    def grade(self, overlay, criterion, ctx):
        from worldkit.overlay.context import CheckResult

        text = (ctx.workspace / "report.md").read_text() if (ctx.workspace / "report.md").is_file() else ""
        return CheckResult(passed="Lee Lead" in text, detail="names Lee Lead" if "Lee Lead" in text else "no approver")


def test_a_state_judge_registers_and_labels_its_verdicts(tmp_path: Path) -> None:
    from worldkit.grade.judge import register_judge
    from worldkit.run.regrade import grade_workspace

    register_judge("state-test")(lambda options: _StateJudge())
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "report.md").write_text("CC-1 was approved by Lee Lead (QMS history).\n")
    record = grade_workspace(GOOD, workspace, judge=make_judge("state-test"))
    s1 = next(c for c in record.criteria if c.id == "S1")
    assert (s1.result, s1.graded_by, s1.detail) == ("pass", "state-test", "names Lee Lead")
    assert record.judge == {"kind": "state-test", "id": "state-test"}


def test_a_server_without_structured_output_is_asked_in_plain_text() -> None:
    def handler(request, n):
        body = json.loads(request.content)
        if "response_format" in body:
            return httpx.Response(400, json={"error": "response_format is not supported"})
        return _reply("PASS - the report names the approval entry")

    judge, seen = _judge(handler)
    verdict = judge.judge(ITEM)
    assert verdict.result == "pass" and verdict.attempts == 2 and len(seen) == 2


def test_a_judge_plugin_is_found_through_its_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "wk_plugin_judge.py").write_text(
        "class Always:\n"
        "    def describe(self):\n        return {'kind': 'always', 'id': 'always'}\n"
        "    def judge(self, item):\n"
        "        from worldkit.grade.judge import Verdict\n"
        "        return Verdict(result='fail', reason='plug-in says no')\n"
        "def make(options):\n    return Always()\n"
    )
    info = tmp_path / "wk_plugin_judge-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wk-plugin-judge\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[worldkit.judges]\nalways = wk_plugin_judge:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    judge = make_judge("always")
    assert judge.judge(ITEM).reason == "plug-in says no"
    from worldkit.grade.judge import judge_names

    assert {"always", "facts", "openai"} <= set(judge_names())


def test_retry_after_is_honoured() -> None:
    waits: list[float] = []
    calls = iter([httpx.Response(429, headers={"Retry-After": "7"}), _reply("PASS - ok")])
    endpoint = ChatEndpoint("http://j.test/v1", "m", backoff_s=0.5, sleep=waits.append,
                            transport=httpx.MockTransport(lambda request: next(calls)))  # fmt: skip
    assert endpoint.complete({"model": "m", "messages": []})["choices"]
    assert waits == [7.0]
