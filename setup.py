"""Ship the repository's worlds, overlays, manifests and schemas inside the wheel as `worldkit/_shipped/`.

Everything else is in pyproject.toml. `worldkit.locate` finds `_shipped/` in an installed wheel and
the checkout's own `worlds/` in an editable install, so the editable build copies nothing.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("worlds", "overlays", "manifests", "schemas")  # schemas: what the YAML files' first lines point to


class BuildPyWithWorlds(build_py):
    def _shipped_files(self) -> list[tuple[Path, Path]]:
        here = Path(__file__).resolve().parent
        pairs = []
        for top in SHIPPED:
            for src in sorted((here / top).rglob("*")):
                if src.is_file() and "__pycache__" not in src.parts and src.suffix not in (".pyc", ".pyo"):
                    pairs.append((src, Path(self.build_lib) / "worldkit" / "_shipped" / src.relative_to(here)))
        return pairs

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for src, dst in self._shipped_files():
            self.mkpath(str(dst.parent))
            self.copy_file(str(src), str(dst))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return outputs + [str(dst) for _, dst in self._shipped_files()]


setup(cmdclass={"build_py": BuildPyWithWorlds})
