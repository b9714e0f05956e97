"""The check protocol, the registry of check types, and the helpers every check type shares.

`worldkit.overlay.checks` holds the built-in file, record, mail and change checks and imports the
modules holding the others (`claim_checks`, `table_checks`), so importing it registers them all.
A check-type module imports this one, never `checks` (that would be a circle).

Text rules, stated once: files are read by `documents.read_document` (any text encoding
charset-normalizer detects, an Excel workbook as CSV, a Word document as markdown);
`case: insensitive` compares `str.casefold()` of both sides; `case: sensitive` compares exactly.
"""

from __future__ import annotations

import math
from typing import (
    Annotated,
    Any,
    ClassVar,
    Literal,
    Protocol,
    TypeVar,
    runtime_checkable,
)

from pydantic import BeforeValidator, SerializeAsAny, field_validator

from worldkit._model import Model
from worldkit.errors import PathRefused
from worldkit.overlay._paths import check_relative, confined
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.documents import DocumentError, read_document

__all__ = [
    "CHECKS",
    "BaseCheck",
    "CaseRule",
    "Check",
    "CheckField",
    "CheckResult",
    "GradingContext",
    "register_check",
]

CaseRule = Literal["sensitive", "insensitive"]
"""How text compares: exactly, or after `str.casefold()` on both sides."""


@runtime_checkable
class Check(Protocol):
    """A deterministic check: reads the final state, answers pass/fail with a reason."""

    type: str

    def evaluate(self, ctx: GradingContext) -> CheckResult: ...


class BaseCheck(Model):
    """Base of the built-in checks (frozen, unknown fields rejected)."""


    type: str
    """The check type (the registry key)."""

    credits_absence: ClassVar[bool] = False
    """True for check types that pass because something did not happen (nothing prohibited,
    nothing sent, a text absent). The grader credits them only when the deliverable exists and
    the same final state passes a criterion that asks for content (`grading.credit_absences`),
    so doing nothing passes nothing."""

    asks_content: ClassVar[bool] = True
    """False for check types that pass on a mere file (`deliverable_exists`): they neither assert
    an absence nor show that content was given, so they cannot credit an absence."""

    def asserts_only_absence(self) -> bool:
        """Whether every assertion this check makes is that something is absent — decided from the
        check type and which of its fields are filled, never from ids or wording: a type that
        `credits_absence`, or one that lists both what must be present and what must not
        (`claims`/`forbid`, `rows`/`absent`) and lists only the latter."""
        if self.credits_absence:
            return True
        for present, absent in _PRESENT_AND_ABSENT:
            if present in type(self).model_fields and absent in type(self).model_fields:
                return not getattr(self, present) and bool(getattr(self, absent))
        return False

    def evaluate(self, ctx: GradingContext) -> CheckResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def workspace_paths(self) -> list[str]:
        """Workspace paths the check reads (so `overlay check` can prove they are writable)."""
        return []


_PRESENT_AND_ABSENT = (("claims", "forbid"), ("rows", "absent"))
"""Field pairs by which a check type lists what must be present and what must not (`claims`,
`csv_rows`)."""

CHECKS: dict[str, type[BaseCheck]] = {}
"""Check `type` → class."""

_C = TypeVar("_C", bound=type[BaseCheck])


def register_check(cls: _C) -> _C:
    """Class decorator: register a check class under the default of its `type` field."""
    name = cls.model_fields["type"].default
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} needs a `type: Literal['name'] = 'name'` field")
    if CHECKS.get(name, cls) is not cls:
        raise ValueError(f"check type {name!r} is already registered by {CHECKS[name].__name__}")
    CHECKS[name] = cls
    return cls


def _parse_check(value: Any) -> Any:
    if isinstance(value, BaseCheck) or value is None:
        return value
    if not isinstance(value, dict) or "type" not in value:
        raise ValueError(f"a check is a mapping with a `type`: one of {', '.join(sorted(CHECKS))}")
    cls = CHECKS.get(value["type"])
    if cls is None:
        raise ValueError(f"unknown check type {value['type']!r}; use one of {', '.join(sorted(CHECKS))}")
    return cls.model_validate(value)


CheckField = Annotated[SerializeAsAny[BaseCheck], BeforeValidator(_parse_check)]
"""A field holding any registered check, parsed by its `type`."""


# --- helpers ----------------------------------------------------------------------------------


def _fold(text: str, case: CaseRule) -> str:
    return text.casefold() if case == "insensitive" else text


def _read_text(ctx: GradingContext, path: str) -> tuple[str | None, str]:
    """(text, why-not): the workspace file as `documents.read_document` reads it, or None and the reason."""
    try:
        file = confined(ctx.workspace, path)
    except PathRefused as error:
        return None, error.message
    if not file.is_file():
        return None, f"workspace/{path} does not exist"
    try:
        return read_document(file).text, ""
    except DocumentError as error:
        return None, f"workspace/{path} {error}"


def _needs_state(ctx: GradingContext, what: str) -> CheckResult | None:
    """An `unknown` result when the run's mail and record changes are not known (no event log)."""
    if ctx.state_known:
        return None
    return CheckResult(None, f"unknown: {what} needs the run's event log (grade with --log RUN_ID)")


def _values_equal(actual: Any, expected: Any, tolerance: float, case: CaseRule) -> bool:
    """JSON-value equality: booleans only equal booleans, numbers within `tolerance`, strings by `case`."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(actual, expected, rel_tol=0, abs_tol=tolerance)
    if isinstance(expected, str) and isinstance(actual, str):
        return _fold(actual, case) == _fold(expected, case)
    return actual == expected


class _PathCheck(BaseCheck):
    path: str
    """Path of the file, relative to the workspace."""

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        check_relative(value, "path")
        return value

    def workspace_paths(self) -> list[str]:
        return [self.path]


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


