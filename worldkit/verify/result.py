"""The signal a verify check raises when a component it depends on is not installed here."""

from __future__ import annotations


class ComponentMissing(Exception):
    """A component a check depends on (overlays, MCP servers) is not installed in this tree.

    The check that meets it reports `skip` with this message as the reason.
    """
