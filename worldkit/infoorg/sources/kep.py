"""Design family source: Kubernetes Enhancement Proposals read from a local enhancements checkout.

Appendix A.4: a proposal is eligible if it has a README and a `kep.yaml` with the same owning
group, a title and a numeric identifier. Excerpts come from 2nd- to 4th-level README sections in
a fixed order of preference; comments, code blocks, links, URLs and table rows are removed;
excerpts hold 400 to 1,600 characters; excerpts naming the owning SIG or the proposal are
rejected. A proposal is identified by `<sig>/<dir>` (`kep-number` is not unique), and
`kep.yaml` is read with a string-only loader (two upstream files carry impossible dates).

Reads files only; never writes, never selects tasks.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from worldkit.infoorg.sources.markdown import clean_text, cut_excerpt, link_labels, split_sections
from worldkit.infoorg.sources.records import InvalidSource, SourceRecord, SourceUnit

EXCERPTS_PER_KEP = 3
EXCERPT_MIN_CHARS = 400
EXCERPT_MAX_CHARS = 1600

PREFERENCE: tuple[str, ...] = (
    "summary",
    "motivation",
    "goals",
    "non-goals",
    "proposal",
    "design details",
    "user stories",
    "risks and mitigations",
    "drawbacks",
    "alternatives",
)
"""Section names in the paper's order of preference (matched after `normalize_heading`)."""

TEMPLATE_SUBSECTIONS = re.compile(
    r"^(?:test plan|prerequisite testing|unit tests?|integration tests?|e2e tests?|"
    r"end[- ]to[- ]end tests?|graduation|alpha|beta|ga\b|stable|deprecation|"
    r"removing a deprecated|upgrade|version skew|production readiness|feature enablement|"
    r"rollout, upgrade|monitoring requirements|dependencies|scalability|troubleshooting|"
    r"implementation history|infrastructure needed|release signoff|"
    r"(?:alpha|beta|ga)\s*(?:->|→|to)\s*)",
    re.IGNORECASE,
)
"""Subsections of a preferred section that hold the KEP template's checklists (test plan,
graduation, skew, PRR questions), not the proposal's substance; their lines are left out."""

_OPTIONAL = re.compile(r"[\(\[]\s*optional\s*[\)\]]", re.IGNORECASE)
_NUMBERING = re.compile(r"^\d+(?:\.\d+)*\.?\s+")
_NON_GOALS = re.compile(r"^non[\s_-]*goals$")
_SLUG_DROP = re.compile(r"[^\w\- ]")


@dataclass(frozen=True)
class Kep:
    """An eligible proposal: identity, metadata and README text."""

    sig: str
    dir: str
    title: str
    number: str
    readme: str

    @property
    def kep_id(self) -> str:
        return f"{self.sig}/{self.dir}"


def normalize_heading(title: str) -> str:
    """Lower-case heading text without `(Optional)`, numbering, trailing colon or extra spaces."""
    text = _OPTIONAL.sub("", title).strip().rstrip(":").strip().lower()
    text = " ".join(_NUMBERING.sub("", text).split())
    return "non-goals" if _NON_GOALS.match(text) else text


def _keps_root(source: Path) -> Path:
    for candidate in (source / "keps", source):
        if candidate.is_dir() and any(candidate.glob("sig-*")):
            return candidate
    raise InvalidSource(
        f"{source}: no `keps/sig-*` folders found; pass --source the root of a "
        "kubernetes/enhancements checkout (the folder that contains `keps/`)"
    )


def _read_kep(folder: Path) -> Kep | None:
    """The KEP in `folder` if it is eligible, else None."""
    readme, metadata = folder / "README.md", folder / "kep.yaml"
    if not readme.is_file() or not metadata.is_file():
        return None
    try:
        meta = yaml.load(metadata.read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    sig = str(meta.get("owning-sig") or "").strip()
    title = " ".join(str(meta.get("title") or "").split())
    number = str(meta.get("kep-number") or "").strip()
    if sig != folder.parent.name or not title or not number.isdigit():
        return None
    return Kep(
        sig=sig,
        dir=folder.name,
        title=title,
        number=number,
        readme=readme.read_text(encoding="utf-8"),
    )


def load_keps(source: Path) -> list[Kep]:
    """Every eligible KEP under `source`, sorted by `<sig>/<dir>`."""
    root = _keps_root(source)
    keps = [
        kep
        for folder in sorted(root.glob("sig-*/*"))
        if folder.is_dir() and (kep := _read_kep(folder)) is not None
    ]
    if not keps:
        raise InvalidSource(f"{root}: no eligible KEP (README.md + kep.yaml with owning-sig, "
                            "title and numeric kep-number) was found")
    return keps


def _naming_patterns(kep: Kep) -> list[re.Pattern[str]]:
    sig_words = kep.sig.removeprefix("sig-").split("-")
    patterns = [
        r"\bsig[\s_-]*" + r"[\s_-]*".join(map(re.escape, sig_words)) + r"\b",
        r"(?<![\w-])" + r"\s+".join(map(re.escape, kep.title.split())) + r"(?![\w-])",
        r"(?<![\w-])" + re.escape(kep.dir) + r"(?![\w-])",
    ]
    slug = kep.dir.split("-", 1)[1] if "-" in kep.dir else ""
    if "-" in slug:
        patterns.append(r"(?<![\w-])" + re.escape(slug) + r"(?![\w-])")
    if kep.number.strip("0"):
        patterns.append(r"\bkep[\s_-]*#?0*" + kep.number.lstrip("0") + r"\b")
    return [re.compile(pattern, re.IGNORECASE) for pattern in patterns]


_TITLE_STOP_WORDS = frozenset({"a", "an", "the", "for", "of", "to", "in", "on", "and", "with", "by"})
NEAR_TITLE_RATIO = 0.9
"""Token-sequence similarity (difflib ratio) at which a passage of a long title's length counts
as the title written out nearly verbatim (one word in five changed, added or dropped)."""
NEAR_TITLE_MIN_TOKENS = 5


def title_tokens(text: str) -> list[str]:
    """Lower-case word tokens without punctuation, hyphens, short stop words and plural `s`."""
    tokens = []
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in _TITLE_STOP_WORDS:
            continue
        tokens.append(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return tokens


def names_title_nearly(title: str, text: str) -> bool:
    """True if `text` writes out `title` verbatim up to case, punctuation, hyphens, plurals and
    short stop words or, for a title of five or more such words, with at most about one word
    in five different (a contiguous passage of k-1 to k+1 words with difflib ratio >= 0.9)."""
    wanted = title_tokens(title)
    if len(wanted) < 2:
        return False  # a one-word title is matched exactly by `names_owner_or_proposal`
    words = title_tokens(text)
    k = len(wanted)
    if any(words[i : i + k] == wanted for i in range(len(words) - k + 1)):
        return True
    if k < NEAR_TITLE_MIN_TOKENS:
        return False
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)
    vocabulary = set(wanted)
    for size in (k - 1, k, k + 1):
        for i in range(len(words) - size + 1):
            window = words[i : i + size]
            if len(vocabulary.intersection(window)) < k - 1:
                continue  # cannot reach the ratio; skip the costly comparison
            matcher.set_seq1(window)
            if matcher.ratio() >= NEAR_TITLE_RATIO:
                return True
    return False


def names_owner_or_proposal(kep: Kep, text: str) -> bool:
    """True if `text` names the owning SIG, the proposal title (also nearly verbatim, see
    `names_title_nearly`), its directory or KEP number."""
    return any(pattern.search(text) for pattern in _naming_patterns(kep)) or names_title_nearly(
        kep.title, text
    )


def _slug(title: str) -> str:
    return _SLUG_DROP.sub("", title.lower()).strip().replace(" ", "-")


def preferred_sections(readme: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(preference name, anchor, body lines) of each 2nd-4th level preferred section, by preference.

    A section's body runs to the next heading of the same or a higher level, or to the next
    preferred heading, so `Proposal` does not swallow its `User Stories` subsection. Template
    subsections (`TEMPLATE_SUBSECTIONS`, with everything below them) are left out of the body.
    """
    sections = split_sections(readme)
    names = [normalize_heading(s.title) if 2 <= s.level <= 4 else "" for s in sections]
    anchors: list[str] = []
    seen: dict[str, int] = {}
    for section in sections:
        slug = _slug(section.title)
        anchors.append(f"{slug}-{seen[slug]}" if seen.get(slug) else slug)
        seen[slug] = seen.get(slug, 0) + 1
    found: list[tuple[int, int, str, tuple[str, ...]]] = []
    for index, section in enumerate(sections):
        if names[index] not in PREFERENCE:
            continue
        body: list[str] = list(section.lines)
        skip_below: int | None = None
        for sub in sections[index + 1 :]:
            if sub.level <= section.level or normalize_heading(sub.title) in PREFERENCE:
                break
            if skip_below is not None and sub.level > skip_below:
                continue
            skip_below = None
            if TEMPLATE_SUBSECTIONS.match(normalize_heading(sub.title)):
                skip_below = sub.level
                continue
            body.extend(["", *sub.lines])
        found.append((PREFERENCE.index(names[index]), index, anchors[index], tuple(body)))
    found.sort(key=lambda item: (item[0], item[1]))
    return [(PREFERENCE[rank], anchor, body) for rank, _, anchor, body in found]


def kep_excerpts(kep: Kep) -> list[SourceRecord]:
    """Up to three valid excerpts of `kep`, in the order of preference."""
    records: list[SourceRecord] = []
    labels = link_labels(kep.readme)
    for _, anchor, body in preferred_sections(kep.readme):
        excerpt = cut_excerpt(clean_text(body, labels), EXCERPT_MIN_CHARS, EXCERPT_MAX_CHARS)
        if excerpt is None or names_owner_or_proposal(kep, excerpt):
            continue
        if any(record.text == excerpt for record in records):
            continue
        records.append(
            SourceRecord(
                text=excerpt,
                path=(kep.sig, kep.dir),
                source=f"keps/{kep.sig}/{kep.dir}/README.md#{anchor}",
            )
        )
        if len(records) == EXCERPTS_PER_KEP:
            break
    return records


def kep_units(source: Path) -> list[SourceUnit]:
    """One unit per eligible KEP that yields three valid excerpts, sorted by `<sig>/<dir>`."""
    units = []
    for kep in load_keps(source):
        excerpts = kep_excerpts(kep)
        if len(excerpts) == EXCERPTS_PER_KEP:
            units.append(SourceUnit(unit_id=kep.kep_id, group=kep.sig, records=tuple(excerpts)))
    return units


__all__ = [
    "EXCERPTS_PER_KEP",
    "PREFERENCE",
    "Kep",
    "kep_excerpts",
    "kep_units",
    "load_keps",
    "names_owner_or_proposal",
    "normalize_heading",
    "preferred_sections",
]
