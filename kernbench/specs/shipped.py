"""The paper specs shipped with kernbench, runnable by name from any directory.

The repository's ``experiments/`` (one YAML spec per paper table or figure, and the published
numbers in ``experiments/reference/``) is copied into the installed package as
``kernbench/experiments/`` when a wheel is built (``setup.py``). In a checkout the repository's own
``experiments/`` is used, so both are the same files.

``kernbench run uci_stumps`` or ``kernbench run cgens-table1``: :func:`resolve_spec` turns a name
into the spec file; ``kernbench specs`` lists them.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from kernbench.errors import UsageError

__all__ = ["PackagedSpec", "packaged_specs", "resolve_spec", "results_hint", "specs_dir"]

#: paper-table names for the shipped specs (besides each file's stem and its ``name:``)
ALIASES = {
    "cgens-table1": "uci_stumps",
    "cgens-table2": "uci_fourier_perceptron",
    "cgens-table3": "multiclass_uci",
    "cgens-table4": "spam_stumps",
    "lin-li-table1": "lin_li_table1",
    "lin-li-table2": "lin_li_table2",
}


@dataclass(frozen=True)
class PackagedSpec:
    """One shipped spec: its file, ``name``, ``title`` and the other names it answers to."""

    path: Path
    name: str
    title: str
    aliases: tuple[str, ...]


def specs_dir() -> Path | None:
    """Where the shipped specs are: the package's ``experiments/`` (an installed wheel), else the
    checkout's ``experiments/`` beside the package (an editable install), else None."""
    packaged = resources.files("kernbench") / "experiments"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "experiments"
    if checkout.is_dir() and (checkout.parent / "pyproject.toml").is_file():
        return checkout
    return None


def _key(name: str) -> str:
    return re.sub(r"[-_ ]+", "-", name.strip().lower())


def packaged_specs() -> list[PackagedSpec]:
    """Every shipped spec, sorted by file name."""
    root = specs_dir()
    if root is None:
        return []
    out = []
    for path in sorted(root.glob("*.yaml")):
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        name = str(doc.get("name", path.stem))
        aliases = tuple(a for a, target in ALIASES.items() if target == path.stem)
        out.append(PackagedSpec(path, name, str(doc.get("title", name)), aliases))
    return out


def resolve_spec(spec: str | Path) -> Path:
    """A spec argument -> its file: an existing path as is, else a shipped spec by file stem,
    spec name or alias (case and ``-``/``_`` ignored).

    Raises
    ------
    UsageError
        Neither a file nor a shipped spec ("did you mean", and where to list them).
    """
    path = Path(spec)
    text = str(spec)
    if path.exists() or path.suffix in (".yaml", ".yml") or "/" in text or "\\" in text:
        return path  # a path: load_spec reads it or says it is missing
    by_key: dict[str, Path] = {}
    for s in packaged_specs():
        for name in (s.path.stem, s.name, *s.aliases):
            by_key.setdefault(_key(name), s.path)
    if _key(text) in by_key:
        return by_key[_key(text)]
    close = difflib.get_close_matches(_key(text), list(by_key), n=3)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise UsageError(
        "SPEC",
        f"{text!r} is neither a file nor a shipped spec{hint} (`kernbench specs` lists them)",
    )


def results_hint(path: Path) -> str:
    """For a missing results directory named like a shipped spec whose ``name:`` differs (``results/
    cgens-table1``), where that spec's results go (``; ... results/uci_stumps``); else ``""``."""
    for s in packaged_specs():
        names = {_key(n) for n in (s.path.stem, s.name, *s.aliases)}
        if _key(path.name) in names and path.name != s.name:
            where = path.parent / s.name
            return (
                f"; `kernbench run {path.name}` writes its results to {where}/ (the directory is "
                f"named after the spec's name, {s.name!r}): try `kernbench table {where}`"
            )
    return ""
