"""World packages: models, loading, validation, resolved revisions."""

from worldkit.world.load import WorldPackage, load_world, resolve_world
from worldkit.world.state import WorldState

__all__ = ["WorldPackage", "WorldState", "load_world", "resolve_world"]
