"""Where a method from outside the package comes from: a spec's plug-in file, or an installed
module (its provenance, stored with each cell and hashed into its identity)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PLUGIN_CAP", "PLUGIN_PREFIX", "MethodSource", "PluginFile"]

#: the module-name prefix of loaded plug-in files
PLUGIN_PREFIX = "kernbench_plugin_"


#: the most bytes of a plug-in file kernbench reads (a Python module, not a data file)
PLUGIN_CAP = 1 << 20


@dataclass(frozen=True)
class PluginFile:
    """A spec's plug-in file: its name beside the spec, its code and the code's sha256."""

    name: str
    sha256: str
    code: str

    @classmethod
    def read(cls, path: Path) -> PluginFile:
        """Read ``path`` (already checked to lie inside the spec's tree) through the bounded
        reader: at most :data:`PLUGIN_CAP` bytes of a regular file.

        Raises
        ------
        kernbench.files.reading.NotARegularFile, kernbench.files.reading.FileTooLarge,
        UnicodeDecodeError
        """
        from kernbench.files.reading import read_user_file

        data = read_user_file(path, PLUGIN_CAP, "plug-in file")
        return cls(path.name, hashlib.sha256(data).hexdigest(), data.decode("utf-8"))

    @property
    def stem(self) -> str:
        return Path(self.name).stem

    @property
    def module_name(self) -> str:
        return f"{PLUGIN_PREFIX}{self.stem}_{self.sha256[:16]}"


@dataclass(frozen=True)
class MethodSource:
    """Where a method from outside the package comes from (its provenance).

    Attributes
    ----------
    module : str
        The module defining the class (for a plug-in file, the file's name).
    distribution, version : str or None
        The installed distribution that provides the module, and its version.
    sha256 : str or None
        A plug-in file's sha256 (or, for a module outside any distribution, its source file's).
    code : str or None
        A plug-in file's code, carried to the workers (not part of the provenance record).
    """

    module: str
    distribution: str | None = None
    version: str | None = None
    sha256: str | None = None
    code: str | None = None

    def record(self) -> dict[str, Any]:
        """The provenance as stored with each cell and hashed into its identity."""
        out: dict[str, Any] = {"module": self.module}
        if self.distribution is not None:
            out["distribution"] = self.distribution
            out["version"] = self.version
        if self.sha256 is not None:
            out["sha256"] = self.sha256
        return out
