"""The staged-workspace check: a folder on disk against the `manifest.json` it carries.

Understands the three manifests worldkit writes — a projection manifest (fingerprint over its
entries), a candidate package manifest (`candidate_sha256`, plus the projection manifest nested
under `projection/`) and a verifier package manifest (`verifier_sha256`) — and, failing those,
any JSON object with `files: [{path, sha256}]`. A manifest whose own digest no longer matches
its content is reported as tampered, before any file is compared, and so is one (or a
package.json) that names a key twice or is not in the one byte form worldkit writes. Run before every run.

The folder is scanned entry by entry with `lstat` (`worldkit.materialize.scan`): a link (to a
file or a directory), a FIFO, a socket or a device is reported and never opened or followed, and
so are setuid/setgid/sticky or execute bits, unreadable entries and empty directories (only a
candidate's `workspace/` may be empty). Nothing here can block. This check proves the folder
agrees with its own manifest; `worldkit.frozen.staged` proves the manifest is a frozen one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from worldkit.canon import pretty_json, sha256_json, strict_loads
from worldkit.check_result import CheckResult, Item, result
from worldkit.errors import WorldkitError
from worldkit.materialize.manifest import MANIFEST_NAME, Manifest, manifest_bytes, read_manifest
from worldkit.materialize.scan import entry_kind, read_regular, scan

CHECK_ID = "staged-workspace"
PACKAGE_NAME = "package.json"
PURPOSE = "The staged folder holds exactly the files and bytes its manifest lists."
FIX = (
    "Do not run on this folder: re-stage it (`worldkit overlay apply … --force` or `worldkit materialize … --force`) "
    "and find what modified it after staging."
)


def verify_workspace(directory: str | Path) -> CheckResult:
    """Compare `directory` with its `manifest.json`: missing, changed and unexpected files (by path)."""
    root = Path(directory)
    items: list[Item] = []
    counts: dict[str, Any] = {}
    manifest_file = root / MANIFEST_NAME
    if not root.is_dir():
        items.append(Item(kind="missing", path=str(root), detail="no such folder"))
        return result(CHECK_ID, PURPOSE, items, fix=FIX)
    if not _exists(manifest_file) and _exists(root / PACKAGE_NAME):
        return _applied_package(root)
    data = read_regular(manifest_file)
    if data is None:
        if not _exists(manifest_file):
            items.append(Item(kind="missing", path=MANIFEST_NAME, detail="the folder has no manifest.json to check against"))
        else:
            items.append(Item(kind="tampered-manifest", path=MANIFEST_NAME, detail="not a regular file"))
        return result(CHECK_ID, PURPOSE, items, fix=FIX)
    try:
        body = strict_loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        items.append(Item(kind="tampered-manifest", path=MANIFEST_NAME, detail=f"not valid JSON ({error})"))
        return result(CHECK_ID, PURPOSE, items, fix=FIX)
    if not isinstance(body, dict) or not isinstance(body.get("files"), list):
        items.append(Item(kind="tampered-manifest", path=MANIFEST_NAME, detail="no `files` list"))
        return result(CHECK_ID, PURPOSE, items, fix=FIX)
    kind, ignore = _kind(body)
    counts["manifest"] = kind
    items += _self_digest(kind, body, root)
    if kind == "candidate" and _exists(root / "projection" / MANIFEST_NAME):
        items += _nested_projection(root / "projection", body)
    try:
        expected = {str(e["path"]): str(e["sha256"]) for e in body["files"]}
    except (KeyError, TypeError):
        items.append(Item(kind="tampered-manifest", path=MANIFEST_NAME, detail="a file entry lacks path or sha256"))
        return result(CHECK_ID, PURPOSE, items, fix=FIX)
    found = scan(root, ignore, allow_empty=frozenset({"workspace"}) if kind == "candidate" else frozenset())
    actual = found.files
    counts["files"] = len(expected)
    counts["entries_refused"] = len(found.findings)
    items += [Item(kind=f.kind, path=f.path, detail=f.detail) for f in found.findings]
    items += [Item(kind="missing", path=p, expected=expected[p]) for p in sorted(set(expected) - set(actual))
              if p not in found.special]
    items += [
        Item(kind="changed", path=p, expected=expected[p], actual=actual[p])
        for p in sorted(set(expected) & set(actual))
        if expected[p] != actual[p]
    ]
    items += [Item(kind="unexpected", path=p, actual=actual[p]) for p in sorted(set(actual) - set(expected))]
    return result(CHECK_ID, PURPOSE, items, fix=FIX, counts=counts)


def _exists(path: Path) -> bool:
    """Whether anything (a dangling link included) is at `path`, without following it."""
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def _kind(body: dict[str, Any]) -> tuple[str, frozenset[str]]:
    if "candidate_sha256" in body:
        return "candidate", frozenset({MANIFEST_NAME, f"projection/{MANIFEST_NAME}"})
    if "verifier_sha256" in body:
        return "verifier", frozenset({MANIFEST_NAME})
    if "fingerprint" in body and "inputs" in body:
        return "projection", frozenset({MANIFEST_NAME})
    return "generic", frozenset({MANIFEST_NAME})


def _pretty_canonical(body: Any, data: bytes | None, rel: str) -> list[Item]:
    """A package manifest or package.json is written in exactly one byte form (`pretty_json`)."""
    if data is not None and pretty_json(body).encode("utf-8") == data:
        return []
    return [Item(kind="tampered-manifest", path=rel, detail="not the canonical bytes worldkit writes (edited by hand?)")]


def _self_digest(kind: str, body: dict[str, Any], root: Path) -> list[Item]:
    if kind in ("candidate", "verifier"):
        canonical = _pretty_canonical(body, read_regular(root / MANIFEST_NAME), MANIFEST_NAME)
        if canonical:
            return canonical
        field = f"{kind}_sha256"
        head = {k: v for k, v in body.items() if k != field}
        actual = sha256_json(head)
        if actual != body[field]:
            return [Item(kind="tampered-manifest", path=MANIFEST_NAME, expected=body[field], actual=actual,
                         detail=f"{field} does not match the manifest's content")]
    if kind == "projection":
        try:
            manifest = read_manifest(root)
        except WorldkitError as error:
            return [Item(kind="tampered-manifest", path=MANIFEST_NAME, detail=error.message)]
        return _canonical(manifest, root / MANIFEST_NAME, MANIFEST_NAME)
    return []


def _canonical(manifest: Manifest, file: Path, rel: str) -> list[Item]:
    """A projection manifest is written in exactly one byte form; any other form was edited."""
    if manifest_bytes(manifest) == read_regular(file):
        return []
    return [Item(kind="tampered-manifest", path=rel, detail="not the canonical bytes worldkit writes (edited by hand?)")]


def _nested_projection(projection: Path, body: dict[str, Any]) -> list[Item]:
    """The candidate's `projection/manifest.json` is untampered and agrees with the package manifest."""
    rel = f"projection/{MANIFEST_NAME}"
    try:
        manifest: Manifest = read_manifest(projection)
    except WorldkitError as error:
        return [Item(kind="tampered-manifest", path=rel, detail=error.message)]
    items = _canonical(manifest, projection / MANIFEST_NAME, rel)
    fingerprint = body.get("fingerprint")
    if fingerprint is not None and manifest.fingerprint != fingerprint:
        items.append(Item(kind="tampered-manifest", path=rel, expected=fingerprint, actual=manifest.fingerprint,
                          detail="the projection manifest is not the one the candidate package was staged with"))
    listed = {str(e.get("path")): e.get("sha256") for e in body.get("files", []) if isinstance(e, dict)}
    for entry in manifest.files:
        other = listed.get(f"projection/{entry.path}")
        if other is not None and other != entry.sha256:
            items.append(Item(kind="tampered-manifest", path=f"projection/{entry.path}", expected=entry.sha256,
                              actual=str(other), detail="projection/manifest.json and manifest.json disagree"))
    return items


def _applied_package(root: Path) -> CheckResult:
    """An applied overlay (`package.json`, `candidate/`, `verifier/`): both sides, and their digests."""
    items: list[Item] = []
    data = read_regular(root / PACKAGE_NAME)
    try:
        summary = strict_loads(data if data is not None else b"")
        if not isinstance(summary, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as error:
        detail = "not a regular file" if data is None else str(error)
        return result(CHECK_ID, PURPOSE, [Item(kind="tampered-manifest", path=PACKAGE_NAME, detail=detail)], fix=FIX)
    items += _pretty_canonical(summary, data, PACKAGE_NAME)
    items += _package_root(root)
    files = 0
    for side in ("candidate", "verifier"):
        if not (root / side).is_dir() or (root / side).is_symlink():
            items.append(Item(kind="missing", path=side, detail=f"the package has no {side}/ directory"))
            continue
        outcome = verify_workspace(root / side)
        files += int(outcome.counts.get("files", 0))
        items += [i.model_copy(update={"path": f"{side}/{i.path}"}) for i in outcome.items]
        try:
            digest = strict_loads(read_regular(root / side / MANIFEST_NAME) or b"").get(f"{side}_sha256")
        except (ValueError, AttributeError):
            continue
        if digest != summary.get(f"{side}_sha256"):
            items.append(Item(kind="tampered-manifest", path=f"{side}/{MANIFEST_NAME}", expected=summary.get(f"{side}_sha256"),
                              actual=digest, detail=f"the {side} package is not the one package.json names"))
    return result(CHECK_ID, PURPOSE, items, fix=FIX, counts={"manifest": "package", "files": files})


PACKAGE_ENTRIES = {PACKAGE_NAME: "file", "candidate": "directory", "verifier": "directory"}


def _package_root(root: Path) -> list[Item]:
    """An applied package's top level holds `package.json`, `candidate/` and `verifier/`, nothing else."""
    items: list[Item] = []
    for name in sorted(os.listdir(root)):
        kind = entry_kind(os.lstat(root / name).st_mode)
        want = PACKAGE_ENTRIES.get(name)
        if want is None:
            items.append(Item(kind="unexpected", path=name, detail=f"a {kind} beside package.json, candidate/ and verifier/"))
        elif kind != want:
            items.append(Item(kind=kind, path=name, detail=f"a {kind} where the package has a {want}"))
    return items
