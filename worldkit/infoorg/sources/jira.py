"""Thread family source: a Jira REST API v2 JSON export supplied by the user.

Appendix A.4: subtask records join summary, description and status; comment records are the
comment body; the reference path is (parent issue, subtask). Membership comes only from the
recorded parent/subtask links (`fields.parent`, `fields.subtasks`), never from `issuelinks` or
topic. No Jira text ships with worldkit; tests use an export the project writes itself.
Locators are issue keys (`KEY`, `KEY/comment/<id>`), so how the export was split into files
does not matter.

Accepted input: a `.json` file or a folder of them (sorted by name), each holding a search
result (`{"issues": [...]}`), a list of issues, or one issue (`{"key": ..., "fields": ...}`).
Reads files only; never writes, never selects tasks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from worldkit.infoorg.sources.records import InvalidSource, SourceRecord, SourceUnit

_KEY = re.compile(r"^([A-Z][A-Z0-9_]*)-([0-9]+)$")


def key_order(key: str) -> tuple[str, int, str]:
    """Sort Jira keys naturally: project, then issue number (`X-9` before `X-10`)."""
    match = _KEY.match(key)
    return (match.group(1), int(match.group(2)), key) if match else (key, -1, key)


def _issues_in(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict) and isinstance(value.get("issues"), list):
        return list(value["issues"])
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict) and "key" in value and "fields" in value:
        return [value]
    return []


def load_issues(source: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """Issues by key, each with the export file it came from (relative to `source`)."""
    files = sorted(source.glob("*.json")) if source.is_dir() else [source]
    if not files or not files[0].is_file():
        raise InvalidSource(
            f"{source}: no Jira export found; pass --source a REST v2 JSON file or a folder "
            "of them (search results with an `issues` list, lists of issues, or single issues)"
        )
    base = source if source.is_dir() else source.parent
    issues: dict[str, tuple[dict[str, Any], str]] = {}
    for path in files:
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InvalidSource(f"{path}: not UTF-8 JSON ({error}); export it again") from error
        for issue in _issues_in(content):
            key = issue.get("key") if isinstance(issue, dict) else None
            if not isinstance(key, str) or not isinstance(issue.get("fields"), dict):
                raise InvalidSource(f"{path}: an issue without `key` and `fields`; "
                                    "export with the REST API v2 issue format")
            if key in issues and issues[key][0] != issue:
                raise InvalidSource(f"{path}: issue {key} also appears, with different content, "
                                    f"in {issues[key][1]}; export each issue once")
            issues.setdefault(key, (issue, path.relative_to(base).as_posix()))
    if not issues:
        raise InvalidSource(f"{source}: the export holds no issues")
    return issues


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def subtask_text(fields: dict[str, Any]) -> str:
    """Summary, description and status joined by blank lines (empty parts left out)."""
    status = _text((fields.get("status") or {}).get("name")).strip()
    parts = [
        _text(fields.get("summary")).strip(),
        _text(fields.get("description")).strip(),
        f"Status: {status}" if status else "",
    ]
    return "\n\n".join(part for part in parts if part)


def _parent_links(issues: dict[str, tuple[dict[str, Any], str]]) -> dict[str, str]:
    """Subtask key -> parent key, from `fields.parent` and from parents' `fields.subtasks`."""
    links: dict[str, str] = {}
    for key, (issue, origin) in sorted(issues.items()):
        fields = issue["fields"]
        pairs = []
        parent = (fields.get("parent") or {}).get("key")
        if isinstance(parent, str):
            pairs.append((key, parent))
        for child in fields.get("subtasks") or []:
            if isinstance(child, dict) and isinstance(child.get("key"), str):
                pairs.append((child["key"], key))
        for child, owner in pairs:
            if links.setdefault(child, owner) != owner:
                raise InvalidSource(f"{origin}: subtask {child} is linked to two parents "
                                    f"({links[child]} and {owner}); fix the export")
    return links


def _comment_order(comment: dict[str, Any]) -> tuple[str, int, str]:
    ident = str(comment.get("id"))
    return (_text(comment.get("created")), int(ident) if ident.isdigit() else -1, ident)


def subtask_units(source: Path) -> list[SourceUnit]:
    """One unit per subtask present in the export: its own record, then its comments.

    Units come in the fixed candidate order: parents by key, round-robin (first subtask of each
    parent, then the second of each, ...), so consecutive windows span several parents.
    """
    issues = load_issues(source)
    by_parent: dict[str, list[SourceUnit]] = {}
    for child, parent in sorted(_parent_links(issues).items(), key=lambda kv: key_order(kv[0])):
        if child not in issues:
            continue  # listed by its parent but not exported: no text to build a record from
        issue = issues[child][0]
        records = []
        text = subtask_text(issue["fields"])
        if text:
            records.append(SourceRecord(text=text, path=(parent, child), source=child))
        comments = (issue["fields"].get("comment") or {}).get("comments") or []
        for comment in sorted(comments, key=_comment_order):
            body = _text(comment.get("body"))
            if body.strip():
                records.append(
                    SourceRecord(
                        text=body,
                        path=(parent, child),
                        source=f"{child}/comment/{comment.get('id')}",
                    )
                )
        if records:
            by_parent.setdefault(parent, []).append(
                SourceUnit(unit_id=child, group=parent, records=tuple(records))
            )
    queues = [by_parent[parent] for parent in sorted(by_parent, key=key_order)]
    order: list[SourceUnit] = []
    for rank in range(max((len(queue) for queue in queues), default=0)):
        order.extend(queue[rank] for queue in queues if rank < len(queue))
    if not order:
        raise InvalidSource(f"{source}: no subtask with a parent link was found; Thread tasks "
                            "need issues with `fields.parent` or `fields.subtasks`")
    return order


__all__ = ["key_order", "load_issues", "subtask_text", "subtask_units"]
