"""Design source: markdown cleaning, KEP eligibility and excerpt extraction (Appendix A.4).

Synthetic KEPs are written here in a few lines; no upstream KEP text is copied into the tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.infoorg.sources.kep import (
    PREFERENCE,
    kep_excerpts,
    kep_units,
    load_keps,
    names_owner_or_proposal,
    names_title_nearly,
    normalize_heading,
    preferred_sections,
)
from worldkit.infoorg.sources.markdown import clean_text, cut_excerpt, split_sections
from worldkit.infoorg.sources.records import InvalidSource


def paragraph(topic: str, n: int = 7) -> str:
    """A plain paragraph of about 75 * n characters about `topic`."""
    return " ".join(
        f"The {topic} component keeps its state consistent across restarts in step {i}."
        for i in range(n)
    )


def write_kep(root: Path, sig: str, name: str, readme: str, meta: str | None = None) -> Path:
    folder = root / "keps" / sig / name
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(readme, encoding="utf-8")
    number = name.split("-", 1)[0]
    (folder / "kep.yaml").write_text(
        meta
        if meta is not None
        else f"title: Widget Rotation\nkep-number: {number}\nowning-sig: {sig}\n"
        "creation-date: 2023-14-05\nstatus: implementable\n",
        encoding="utf-8",
    )
    return folder


def standard_readme(topic: str = "scheduler") -> str:
    return "\n".join(
        [
            "# KEP-4242: Widget Rotation",
            "<!-- toc -->\n- [Summary](#summary)\n<!-- /toc -->",
            "## Release Signoff Checklist",
            "- [ ] (R) Enhancement issue",
            "## Summary",
            "<!--\n## Motivation\nThis commented heading must not count.\n-->",
            paragraph(topic),
            "## Motivation",
            paragraph(f"{topic} cache"),
            "### Goals",
            paragraph(f"{topic} queue"),
            "### Non-Goals",
            "Too short.",
            "## Proposal",
            paragraph(f"{topic} planner"),
            "## Design Details",
            paragraph(f"{topic} store"),
        ]
    )


def test_split_sections_ignores_headings_in_comments_and_fences() -> None:
    text = "# T\n<!--\n## Hidden\n-->\n## Real\n```sh\n# not a heading\n```\nbody\n"
    titles = [(s.level, s.title) for s in split_sections(text)]
    assert titles == [(0, ""), (1, "T"), (2, "Real")]


def test_clean_text_removes_code_tables_links_urls_and_comments() -> None:
    lines = [
        "Intro with a [link text](https://example.com/a_(b)) and <https://x.org>.",
        "Bare https://example.com/path?q=1, and www.example.org too.",
        "![diagram](img.png)",
        "```go",
        "func main() {}",
        "```",
        "| a | b |",
        "|---|---|",
        "| 1 | 2 |",
        "",
        "x | y",
        "--- | ---",
        "1 | 2",
        "",
        "- https://github.com/org/repo/issues/1",
        "- a kept item with [ref text][ref]",
        "[ref]: https://example.com/ref",
        "#### Sub heading",
        "Closing words.<br/>",
    ]
    cleaned = clean_text(lines)
    assert cleaned == (
        "Intro with a link text and .\nBare , and too.\n\n- a kept item with ref text\n"
        "Closing words."
    )


def test_clean_text_works_on_whole_paragraphs() -> None:
    lines = [
        "This proposes [Common Expression",
        "Language (CEL)](https://example.com/cel) and [a wrapped",
        "shortcut] link.",
        "",
        "- [CRD structural",
        "  schemas](https://example.com/s):",
        "  provide type checking.",
        "",
        "[X] I/we understand the owners of the involved components may require updates to",
        "existing tests to make this code solid enough prior to committing the changes.",
        "",
        "None.",
        "",
        "- `<package>`: `<date>` - `<test coverage>`",
        "- [ ] an unchecked template box",
        "  that wraps",
        "- A real item.",
        "",
        "N/A",
        "",
        "None required.",
        "",
        "Keep [0, 100] ranges and [bracketed] words that are no links.",
    ]
    cleaned = clean_text(lines, frozenset({"a wrapped shortcut"}))
    assert cleaned == (
        "This proposes Common Expression\nLanguage (CEL) and a wrapped\nshortcut link.\n\n"
        "- CRD structural\n schemas:\n provide type checking.\n\n- A real item.\n\n"
        "Keep [0, 100] ranges and [bracketed] words that are no links."
    )
    assert "](" not in cleaned and "[X]" not in cleaned and "None" not in cleaned
    # A section holding nothing but template answers leaves nothing to excerpt.
    assert clean_text(["None.", "", "N/A", "", "- [x] done"]) == ""


@pytest.mark.parametrize(
    ("title", "text", "named"),
    [
        ("Volume Populators", "We add volume-populator support.", True),
        ("Service Account Token for CSI Driver", "a service account token for a CSI drivers", True),
        ("Service Account Token for CSI Driver", "pass the service account token to the CSI "
         "node driver", True),  # one of five words added
        ("Service Account Token for CSI Driver", "tokens reach the driver", False),
        ("Windows Graceful Node Shutdown", "windows node shutdown", False),  # a word short of 4
        ("Sidecar", "sidecar containers", False),  # one-word titles: exact pattern only
    ],
)
def test_near_verbatim_titles_are_named(title: str, text: str, named: bool) -> None:
    assert names_title_nearly(title, text) is named


def test_cut_excerpt_keeps_whole_paragraphs_within_bounds() -> None:
    first, second = "a" * 300, "b" * 300
    assert cut_excerpt(f"{first}\n\n{second}") == f"{first}\n\n{second}"
    assert cut_excerpt(first) is None  # under 400 characters
    long = "c" * 1500
    assert cut_excerpt(f"{first}\n\n{second}\n\n{long}") == f"{first}\n\n{second}"
    sentences = " ".join(["Word " * 30 + "end."] * 20)  # one paragraph over 1,600 characters
    excerpt = cut_excerpt(sentences)
    assert excerpt is not None and 400 <= len(excerpt) <= 1600 and excerpt.endswith("end.")


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Summary", "summary"),
        ("Non Goals", "non-goals"),
        ("Non-Goals:", "non-goals"),
        ("User Stories (Optional)", "user stories"),
        ("Drawbacks [optional]", "drawbacks"),
        ("3.1 Design Details", "design details"),
    ],
)
def test_normalize_heading(heading: str, expected: str) -> None:
    assert normalize_heading(heading) == expected


def test_preferred_sections_follow_the_paper_order_and_stop_at_preferred_subsections() -> None:
    readme = "\n".join(
        [
            "## Design Details", "dd", "### Test Plan", "tp", "#### Unit tests", "ut",
            "### Graduation Criteria", "gc", "### Wire format", "wf",
            "## Proposal", "pp", "### User Stories (Optional)", "us", "#### Story 1", "s1",
            "### Notes", "nn", "## Summary", "ss", "##### Deep", "not preferred at level 5",
        ]
    )
    found = preferred_sections(readme)
    assert [name for name, _, _ in found] == ["summary", "proposal", "design details", "user stories"]
    bodies = {name: clean_text(body) for name, _, body in found}
    assert bodies["proposal"] == "pp"  # stops at the preferred User Stories subsection
    assert bodies["user stories"] == "us\n\ns1"
    assert bodies["design details"] == "dd\n\nwf"  # template subsections (test plan…) left out
    assert PREFERENCE[:3] == ("summary", "motivation", "goals")


def test_eligibility_and_string_only_yaml(tmp_path: Path) -> None:
    write_kep(tmp_path, "sig-apps", "4242-widget-rotation", standard_readme())  # impossible date
    write_kep(tmp_path, "sig-apps", "17-other-sig", standard_readme(),
              "title: X\nkep-number: 17\nowning-sig: sig-node\n")
    write_kep(tmp_path, "sig-apps", "18-no-number", standard_readme(),
              "title: X\nkep-number: TBD\nowning-sig: sig-apps\n")
    write_kep(tmp_path, "sig-apps", "19-no-title", standard_readme(),
              "kep-number: 19\nowning-sig: sig-apps\n")
    (tmp_path / "keps" / "provider-x" / "20-outside").mkdir(parents=True)
    keps = load_keps(tmp_path)
    assert [kep.kep_id for kep in keps] == ["sig-apps/4242-widget-rotation"]
    assert keps[0].number == "4242"


def test_kep_number_is_not_an_identity(tmp_path: Path) -> None:
    write_kep(tmp_path, "sig-apps", "0000-first", standard_readme("alpha"))
    write_kep(tmp_path, "sig-node", "0000-second", standard_readme("beta"))
    units = kep_units(tmp_path)
    assert [unit.unit_id for unit in units] == ["sig-apps/0000-first", "sig-node/0000-second"]


def test_excerpts_in_preference_order_with_paths_and_locators(tmp_path: Path) -> None:
    write_kep(tmp_path, "sig-apps", "4242-widget-rotation", standard_readme())
    (kep,) = load_keps(tmp_path)
    records = kep_excerpts(kep)
    assert [r.source.rsplit("#", 1)[1] for r in records] == ["summary", "motivation", "goals"]
    assert all(r.path == ("sig-apps", "4242-widget-rotation") for r in records)
    assert all(400 <= len(r.text) <= 1600 for r in records)
    assert "commented heading" not in records[0].text


@pytest.mark.parametrize(
    "mention",
    ["SIG Apps", "sig-apps", "widget rotation", "Widget  Rotation", "KEP-4242", "kep 4242",
     "4242-widget-rotation", "the widget-rotation work"],
)
def test_excerpts_naming_the_sig_or_proposal_are_rejected(tmp_path: Path, mention: str) -> None:
    write_kep(tmp_path, "sig-apps", "4242-widget-rotation", standard_readme())
    (kep,) = load_keps(tmp_path)
    assert names_owner_or_proposal(kep, f"As discussed with {mention}, we proceed.")
    assert not names_owner_or_proposal(kep, "Widgets rotate; the apps team agrees.")


def test_a_named_section_is_skipped_for_the_next_preferred_one(tmp_path: Path) -> None:
    readme = standard_readme().replace(
        "## Motivation\n", "## Motivation\nSIG Apps asked for this.\n\n"
    )
    write_kep(tmp_path, "sig-apps", "4242-widget-rotation", readme)
    (kep,) = load_keps(tmp_path)
    anchors = [r.source.rsplit("#", 1)[1] for r in kep_excerpts(kep)]
    assert anchors == ["summary", "goals", "proposal"]


def test_keps_without_three_excerpts_are_not_units(tmp_path: Path) -> None:
    short = "## Summary\n" + paragraph("solo") + "\n## Motivation\nshort\n"
    write_kep(tmp_path, "sig-apps", "4242-widget-rotation", short)
    write_kep(tmp_path, "sig-apps", "4243-other", standard_readme().replace("4242", "4243"),
              "title: Other Thing\nkep-number: 4243\nowning-sig: sig-apps\n")
    assert [u.unit_id for u in kep_units(tmp_path)] == ["sig-apps/4243-other"]


def test_missing_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidSource, match="no `keps/sig-\\*` folders found"):
        load_keps(tmp_path)


def test_shared_kep_data(shared_data: Path) -> None:
    keps = load_keps(shared_data / "kep")
    assert len(keps) == 609  # every copied KEP is eligible (SOURCE.md)
    assert len({kep.kep_id for kep in keps}) == 609
    units = kep_units(shared_data / "kep")
    assert len(units) > 400
    for unit in units:
        (kep,) = [k for k in keps if k.kep_id == unit.unit_id]
        for record in unit.records:
            assert 400 <= len(record.text) <= 1600
            assert not names_owner_or_proposal(kep, record.text)
            assert "<!--" not in record.text and "```" not in record.text
            assert "http://" not in record.text and "https://" not in record.text
            assert not any(line.lstrip().startswith("|") for line in record.text.splitlines())
