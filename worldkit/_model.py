"""The configuration worldkit's models share.

Every worldkit model is frozen, forbids unknown fields and takes each field's description from
the docstring written under it (pydantic's `use_attribute_docstrings`). Descriptions are not
decoration: they are in the MCP tools' input schemas, whose digest is part of every projection's
fingerprint.
"""

from __future__ import annotations

from pydantic import ConfigDict

FROZEN = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
"""A worldkit model: immutable, no unknown fields, each field described by its docstring."""
