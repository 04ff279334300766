"""The results directories a path names on the command line, with errors for people.

``stores_at`` (a directory or a parent of several), ``store_dir`` (exactly one) and
``is_fresh`` (whether a run would start a new store there).
"""

from __future__ import annotations

import re
from pathlib import Path

from kernbench.errors import KernbenchError
from kernbench.store.sqlite import STORE_FILE, find_stores

_NAME_LINE = re.compile(r"^name:[ \t]*[\"']?([A-Za-z0-9_.-]+)[\"']?[ \t]*(#.*)?$", re.M)


def no_store(path: Path) -> KernbenchError:
    """The error for a results path without a store, saying whether the path exists at all."""
    if not path.exists():
        from kernbench.specs.shipped import results_hint

        return KernbenchError(
            f"{path}: no such file or directory (a results directory expected){results_hint(path)}"
        )
    return KernbenchError(f"no results store at or below {path} (run `kernbench run SPEC`)")


def stores_at(path: Path) -> list[Path]:
    """Results directories at or below ``path``.

    Raises
    ------
    KernbenchError
        When there is none (naming a shipped spec's results directory when ``path`` is named
        after the spec rather than its ``name:``).
    """
    stores = find_stores(path) if path.exists() else []
    if not stores:
        raise no_store(path)
    return stores


def store_dir(path: Path) -> Path:
    """The one results directory ``path`` names (its ``results.sqlite`` is accepted too).

    Raises
    ------
    KernbenchError
        When ``path`` is a file, holds no store (naming the stores below it), or does not exist.
    """
    if path.is_file() and path.name == STORE_FILE:
        return path.parent
    if path.exists() and not path.is_dir():
        raise KernbenchError(f"{path} is not a directory (a results directory expected)")
    if path.is_dir() and not (path / STORE_FILE).exists():
        below = find_stores(path)
        if below:
            names = ", ".join(str(d) for d in below[:5]) + (", ..." if len(below) > 5 else "")
            raise KernbenchError(f"no results store in {path}; give one of {names}")
    if not (path / STORE_FILE).exists():
        raise no_store(path)
    return path


def is_fresh(spec_file: Path, out_dir: Path | None) -> bool:
    """Whether the run's results directory holds no store yet: a fresh run computes cells, so
    its workers are started while the spec is read; a resumed one may have none to compute.

    Without ``out_dir`` the directory is ``results/<name>``, the name taken from the spec file's
    top-level ``name:`` line (a plain scan: the file is parsed, with its checks, only by the
    spec reader); a file that cannot be read or has no such line counts as not fresh.
    """
    from kernbench.files.reading import read_user_text

    if out_dir is None:
        try:
            text = read_user_text(spec_file, 1 << 20, "spec")
        except Exception:  # noqa: BLE001 - the spec reader reports what is wrong
            return False
        found = _NAME_LINE.search(text)
        if found is None:
            return False
        out_dir = Path("results") / found.group(1)
    return not (out_dir / STORE_FILE).exists()
