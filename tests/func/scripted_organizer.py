"""Scripted models that organize InfoOrgBench packets through the organizer tools, for tests.

`model-a` files every record where the reference has it (S = 100); `model-b` files each record
under its reference parent group only (the leaf level unresolved). Each lists the records, reads
the first (its hash tells which packet this is), moves, then answers. Tool names may carry a
harness's prefix (`organizer_list_files`); tool results may come as text or as content blocks.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from worldkit.infoorg.reference import load_reference


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return str(content)


class Models:
    def __init__(self, packets: list[Path]) -> None:
        self.references = [load_reference(p) for p in packets]

    def reply(self, body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
        names = [t["function"]["name"] for t in body.get("tools", [])]
        prefix = next(name[: -len("list_files")] for name in names if name.endswith("list_files"))
        tools = [_text(m["content"]) for m in body["messages"] if m["role"] == "tool"]
        usage = {"prompt_tokens": 1000 * (len(tools) + 1), "completion_tokens": 50, "total_tokens": 0}
        if not tools:
            return 200, self._calls([(prefix + "list_files", {})], usage)
        if len(tools) == 1:
            first = json.loads(tools[0])["entries"][0]["id"]
            return 200, self._calls([(prefix + "read_file", {"id": first})], usage)
        if len(tools) == 2:
            ids = [e["id"] for e in json.loads(tools[0])["entries"]]
            digest = hashlib.sha256(json.loads(tools[1])["text"].encode("utf-8")).hexdigest()
            reference = next(r for r in self.references if r.records[ids[0]].sha256 == digest)
            groups: dict[tuple[str, ...], list[str]] = {}
            for record, path in reference.paths().items():
                groups.setdefault(path if body["model"] == "model-a" else path[:1], []).append(record)
            moves = [(prefix + "move_files", {"ids": g, "destination": list(p)}) for p, g in sorted(groups.items())]
            return 200, self._calls(moves, usage)
        return 200, self._completion({"role": "assistant", "content": '{"assignments": []}'}, "stop", usage)

    @classmethod
    def _calls(cls, calls: list[tuple[str, dict[str, Any]]], usage: dict[str, int]) -> dict[str, Any]:
        tool_calls = [{"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                      for i, (name, args) in enumerate(calls)]
        return cls._completion({"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls", usage)

    @staticmethod
    def _completion(message: dict[str, Any], finish: str, usage: dict[str, int]) -> dict[str, Any]:
        return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}  # fmt: skip
