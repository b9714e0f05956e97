"""Coding sheets: one per coder, as CSV and as .xlsx, and reading them back once filled.

A sheet row is one audit item. The coder fills `answer` (and may write a `note`); every other
column is what the coder is shown and must stay as written. Both files hold the same rows; a
coder fills either. Reading refuses a sheet whose shown columns were changed, an item missing or
added, or an answer outside the item's choices, naming the file, the item and the fix.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path

from worldkit.errors import UsageError

__all__ = ["ANSWER_CHOICES", "COLUMNS", "SHOWN", "read_sheet", "sheet_paths", "write_sheets"]

COLUMNS = ["item", "kind", "task", "criterion", "criterion_text", "guidance", "deliverable_excerpt", "evidence",
           "trajectory", "answer", "note"]  # fmt: skip
SHOWN = [c for c in COLUMNS if c not in ("answer", "note")]
ANSWER_CHOICES = {"criterion": ("pass", "fail"), "access": ("accessed", "not_accessed", "unknown")}
"""What a coder may answer, per item kind."""
_SYNONYMS = {"passed": "pass", "failed": "fail", "not accessed": "not_accessed", "not-accessed": "not_accessed"}
_CELL_LIMIT = 32_000  # an Excel cell holds at most 32,767 characters


def sheet_paths(folder: Path, coder: str) -> tuple[Path, Path]:
    return folder / f"coder-{coder}.csv", folder / f"coder-{coder}.xlsx"


def _csv_text(rows: Sequence[Mapping[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c, "") for c in COLUMNS})
    return out.getvalue()


def write_sheets(folder: Path, coder: str, rows: Sequence[Mapping[str, str]]) -> str:
    """Write the coder's blank sheet (CSV and .xlsx); returns the CSV text (digested in the key)."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font
    from openpyxl.worksheet.datavalidation import DataValidation

    text = _csv_text(rows)
    csv_path, xlsx_path = sheet_paths(folder, coder)
    csv_path.write_text(text, encoding="utf-8")
    book = Workbook()
    sheet = book.active
    sheet.title = "items"
    sheet.append(COLUMNS)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    lists = {kind: DataValidation(type="list", formula1='"' + ",".join(choices) + '"', allow_blank=True)
             for kind, choices in ANSWER_CHOICES.items()}  # fmt: skip
    for validation in lists.values():
        sheet.add_data_validation(validation)
    answer_col = COLUMNS.index("answer") + 1
    for number, row in enumerate(rows, start=2):
        sheet.append([str(row.get(c, ""))[:_CELL_LIMIT] for c in COLUMNS])
        lists[row["kind"]].add(sheet.cell(row=number, column=answer_col))
        for cell in sheet[number]:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    for letter, width in zip("ABCDEFGHIJK", (8, 10, 22, 10, 40, 40, 80, 50, 60, 14, 30), strict=True):
        sheet.column_dimensions[letter].width = width
    sheet.freeze_panes = "B2"
    book.save(xlsx_path)
    return text


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path} ({error}); save the sheet as UTF-8 CSV") from None
    return [dict(row) for row in csv.DictReader(io.StringIO(text))]


def _read_xlsx(path: Path) -> list[dict[str, str]]:
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as error:  # noqa: BLE001 - openpyxl raises many kinds for a damaged file
        raise UsageError(f"cannot read {path} ({type(error).__name__}: {error}); save it again as .xlsx") from None
    rows = list(book.worksheets[0].iter_rows(values_only=True))
    book.close()
    if not rows:
        return []
    header = [str(h or "") for h in rows[0]]
    return [{h: "" if v is None else str(v) for h, v in zip(header, row, strict=False)} for row in rows[1:]
            if any(v not in (None, "") for v in row)]  # fmt: skip


def _same(value: object) -> str:
    """A shown cell as compared: spreadsheet programs may rewrite line ends and spacing."""
    return " ".join(str(value or "").split())


def _answers(path: Path, rows: list[dict[str, str]], expected: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    missing_cols = [c for c in ("item", "answer") if rows and c not in rows[0]]
    if missing_cols:
        raise UsageError(f"{path}: no column {', '.join(missing_cols)}; keep the sheet's header row as written")
    answers: dict[str, str] = {}
    for row in rows:
        item = (row.get("item") or "").strip()
        if item not in expected:
            raise UsageError(f"{path}: item {item!r} is not in this audit's key; do not add rows to a coding sheet")
        for column in SHOWN:
            if column in row and _same(row[column]) != _same(expected[item].get(column, "")):
                raise UsageError(f"{path}: item {item}: column {column!r} was changed; only `answer` and `note` "
                                 "are the coder's to fill — restore it from the blank sheet")  # fmt: skip
        raw = " ".join((row.get("answer") or "").split()).lower()
        answer = _SYNONYMS.get(raw, raw.replace(" ", "_"))
        if not answer:
            continue
        choices = ANSWER_CHOICES[expected[item]["kind"]]
        if answer not in choices:
            raise UsageError(f"{path}: item {item}: answer {row.get('answer')!r} is not one of {', '.join(choices)}; "
                             "correct it")  # fmt: skip
        answers[item] = answer
    return answers


def read_sheet(folder: Path, coder: str, expected: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """The coder's answers (item → answer), from the filled CSV or .xlsx; every item must be answered."""
    csv_path, xlsx_path = sheet_paths(folder, coder)
    found = {}
    if csv_path.is_file():
        found[csv_path] = _answers(csv_path, _read_csv(csv_path), expected)
    if xlsx_path.is_file():
        found[xlsx_path] = _answers(xlsx_path, _read_xlsx(xlsx_path), expected)
    filled = {path: answers for path, answers in found.items() if answers}
    if not filled:
        raise UsageError(f"coder {coder}'s sheet in {folder} has no answers yet; fill the `answer` column of "
                         f"{csv_path.name} or {xlsx_path.name}")  # fmt: skip
    if len(filled) == 2 and len(set(map(lambda a: tuple(sorted(a.items())), filled.values()))) == 2:
        raise UsageError(f"{csv_path.name} and {xlsx_path.name} are both filled and differ; keep the one coder "
                         f"{coder} filled and delete the other")  # fmt: skip
    path, answers = next(iter(filled.items()))
    unanswered = sorted(set(expected) - set(answers))
    if unanswered:
        shown = ", ".join(unanswered[:8]) + (f" and {len(unanswered) - 8} more" if len(unanswered) > 8 else "")
        raise UsageError(f"{path}: item(s) {shown} have no answer; fill every row's `answer`")
    return answers
