"""`worldkit report --ledgers` on the public WorkWorlds release prints every figure the paper's
claims rest on — GEE-standardized pass and access with 2,000-replicate task-cluster bootstrap
intervals, the sensitivity analyses, the curators, and Table 1 — and writes the HTML report.

One CLI run (two worker processes) serves the whole module, once per test session whichever
xdist workers run its tests (tests/session_results.py); it takes about a minute.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.session_results import session_folder
from worldkit._cli.main import run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def printed(shared_data: Path) -> tuple[str, Path]:
    """What the report printed, and its HTML file (read-only: shared by the session's workers)."""
    import contextlib
    import io

    def make(folder: Path) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = run(["report", "--ledgers", str(shared_data / "workworld"), "--workers", "2",
                        "--html", str(folder / "report.html")])
        assert code == 0
        (folder / "printed.txt").write_text(out.getvalue(), encoding="utf-8")

    folder = session_folder("report-paper", make)
    return (folder / "printed.txt").read_text(encoding="utf-8"), folder / "report.html"


def line(text: str, label: str, nth: int = 0) -> list[str]:
    """The cells of the nth printed line starting with `label` (-1: the last)."""
    found = [cells for row in text.splitlines()
             if (cells := re.split(r"\s{2,}", row.strip()))[0] == label]
    assert found, f"no line {label!r}"
    return found[nth]


def test_headline_estimates(printed) -> None:
    text, _ = printed
    passed = line(text, "Criterion pass (GEE-standardized)")
    assert passed[:5] == ["Criterion pass (GEE-standardized)", "68.0%", "76.7%", "+8.7 pp",
                          "[1.0, 15.6]"]
    assert passed[5].startswith("gee, 1995/2000 valid, ")  # five refits fail, as published
    assert "refits diverged until a standardized probability reached 0 or 1" in text
    access = line(text, "Evidence access (GEE-standardized, observable)")
    assert access[:4] == ["Evidence access (GEE-standardized, observable)", "72.8%", "90.4%",
                          "+17.6 pp"]
    # Published [10.3, 24.3] (0.10302, 1,989 valid). About twenty refits diverge (saturated
    # probabilities, or NaN) and where they land depends on the platform's floating point: the
    # artifact's own code with its own pins gives 0.10230 (1,988 valid) on this machine.
    # With numpy's SIMD paths switched off (NPY_DISABLE_CPU_FEATURES=X86_V3) it is 0.10401.
    # Not a percentile-method or ordering difference: no numpy quantile method takes this
    # machine's 1,988 values to 10.25 or above, while the published 0.10302 is exactly the
    # linear interpolation (index 49.7 of 1,989) between this machine's 51st and 52nd sorted
    # values (0.102331, 0.103312): the published run had one replicate fewer at or below the
    # bound (nine of the ten saturated refits here land at exactly 0) and two more finite ones
    # above it. Only the diverged refits differ.
    assert access[4] in ("[10.2, 24.3]", "[10.3, 24.3]", "[10.4, 24.3]")
    assert line(text, "Pass given access (raw, descriptive)")[1:5] == [
        "84.2%", "82.7%", "-1.5 pp", "[-6.3, 2.7]"]


def test_sensitivity_figures(printed) -> None:
    text, _ = printed
    assert line(text, "Criterion pass, equal task weighting")[3] == "+8.4 pp"
    assert line(text, "Leave-one-task-out pass Δ (raw pooled), range")[1] == "6.4 to 11.8 pp"
    assert line(text, "Access, unknown labels as accessed")[3] == "+17.0 pp"
    assert line(text, "Access, unknown labels as not accessed")[3] == "+17.7 pp"
    assert line(text, "Access, adversarial low (unknown: full yes, curated no)")[3] == "+15.2 pp"
    assert line(text, "Access, adversarial high (unknown: full no, curated yes)")[3] == "+19.6 pp"
    assert line(text, "Tasks with higher pass under curation")[1] == "7 of 8"
    assert line(text, "Tasks with lower pass under curation (reversals)")[1] == (
        "T03 validation defense -13.0")


def test_curators(printed) -> None:
    text, _ = printed
    assert line(text, "curator 1") == [
        "curator 1", "334/432", "68.2%", "77.3%", "+9.1 pp", "[2.3, 14.7]", "6 of 8",
        "T03 validation defense -8.3, T08 shelf-life assessment -3.3"]
    assert line(text, "curator 2") == [
        "curator 2", "330/432", "68.2%", "76.4%", "+8.2 pp", "[-0.8, 17.2]", "7 of 8",
        "T03 validation defense -17.6"]


def test_tables_e2_e3_and_table_1(printed) -> None:
    text, _ = printed
    # The raw By task / By agent tables come first; the analysis's per-task and per-agent last.
    assert line(text, "T06 supplier-change audit", -1) == [
        "T06 supplier-change audit", "96", "59.4%", "86.5%", "+27.1", "57.4%", "92.6%", "+6.4"]
    assert line(text, "opus5", -1) == ["opus5", "229/288 (79.5%)", "247/288 (85.8%)", "+6.2",
                                       "+12.8"]
    assert line(text, "Packet size, median (range)")[1] == "9 (7–11)"
    assert line(text, "Packet size, mean by curator")[1] == "curator 1 9.0 / curator 2 9.1"
    assert line(text, "Task pairs with different source sets")[1] == "5/8"
    assert line(text, "Curator source-set Jaccard, mean (range)")[1] == "0.87 (0.70–1.00)"
    assert line(text, "Initially sufficient criterion–packet pairs")[1] == "128/144"
    assert line(text, "Packets revised for completeness")[1] == "2/16"
    assert line(text, "Final criterion–packet coverage")[1] == "144/144"


def test_html_report_is_one_offline_file(printed) -> None:
    _, html = printed
    page = html.read_text(encoding="utf-8")
    assert page.count("<svg") == 6 and "<script" not in page and "<img" not in page
    assert "Pooled (GEE-standardized)" in page and "+8.7 [1.0, 15.6]" in page
    assert "without supplier-change audit" in page
    assert "claude-opus-5" in page and "run-001" in page


def test_html_renders_in_a_browser(printed, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium (apt-get install chromium) to render the HTML report")
    _, html = printed
    shot = tmp_path / "report.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}",
                    "--window-size=1400,2400", f"--screenshot={shot}", html.as_uri()],
                   check=True, capture_output=True, timeout=180)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 50_000
