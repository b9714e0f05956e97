"""The public namespace of worldkit.overlay is complete and flat."""

from __future__ import annotations

import inspect

import worldkit.overlay as overlay


def test_all_is_complete_and_importable() -> None:
    exported = set(overlay.__all__)
    public = {name for name, obj in vars(overlay).items() if not name.startswith("_") and not inspect.ismodule(obj)}
    assert public == exported
    assert all(getattr(overlay, name) is not None for name in exported)
    assert overlay.__all__ == sorted(overlay.__all__, key=lambda n: (not n.isupper(), n[0].islower(), n))


def test_library_never_imports_the_cli() -> None:
    import sys

    assert not [m for m in sys.modules if m.startswith("worldkit._cli")] or True  # other tests may import it
    for module in ("apply", "author", "changes", "checks", "context", "grading", "leaks", "load", "models", "problems",
                   "schemas", "view"):
        source = inspect.getsource(__import__(f"worldkit.overlay.{module}", fromlist=["x"]))
        assert "typer" not in source and "worldkit._cli" not in source, module
