"""Rendering of document and message bodies in a sandboxed, pinned jinja2 environment."""

from worldkit.render.env import Renderer, RenderContext

__all__ = ["RenderContext", "Renderer"]
