"""Build hook: ship the repository's experiments/ (paper specs, published tables) in the package.

Everything else is in pyproject.toml. The wheel gets ``kernbench/experiments/*.yaml`` and
``kernbench/experiments/reference/*.csv`` copied from ``experiments/`` (the same files), so an
installed kernbench runs the paper specs by name (``kernbench run uci_stumps``; kernbench/specs.py).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SPEC_FILES = ("*.yaml", "reference/*.csv", "values/*.csv")


class BuildWithSpecs(build_py):
    """``build_py`` that also copies the paper specs into ``kernbench/experiments``."""

    def run(self) -> None:
        super().run()
        source = ROOT / "experiments"
        target = Path(self.build_lib) / "kernbench" / "experiments"
        for pattern in SPEC_FILES:
            for file in sorted(source.glob(pattern)):
                dest = target / file.relative_to(source)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(file, dest)


setup(cmdclass={"build_py": BuildWithSpecs})
