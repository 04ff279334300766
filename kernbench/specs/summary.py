"""The composed spec in one screen (``kernbench validate``, ``kernbench run --dry-run``): its
data sets, methods, protocol and cells, and for a spec that ``extends`` another, what it keeps
of the base and what it adds."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kernbench.errors import cut_list
from kernbench.specs.types import DatasetSpec, Spec

__all__ = ["base_spec_path", "summary_lines"]

#: items of a list shown before "and N more": a list of grand's 26 data sets fits in three lines
_SHOWN = 30


def base_spec_path(path: str | os.PathLike[str]) -> tuple[str, Path] | None:
    """``(the name after extends:, the base spec's file)`` of a spec file that extends another,
    else None (also for a file that cannot be read: the spec reader says what is wrong)."""
    from kernbench.files.checking import load_yaml
    from kernbench.specs.shipped import resolve_spec

    try:
        data = load_yaml(path)
        if not isinstance(data, Mapping) or not isinstance(data.get("extends"), str):
            return None
        name = data["extends"]
        local = Path(path).parent / name
        return name, local if local.is_file() else Path(resolve_spec(name))
    except Exception:  # noqa: BLE001 - the spec was read before this; a summary only
        return None


def summary_lines(
    spec: Spec, cells: int, base: Spec | None = None, base_name: str = ""
) -> list[str]:
    """Indented lines that say what ``spec`` runs (and, given its ``base``, what it takes from it).

    Parameters
    ----------
    spec : Spec
        The composed spec.
    cells : int
        The cells it plans.
    base : Spec, optional
        The spec it extends, composed.
    base_name : str
        How the spec names its base (``extends: grand``).
    """
    p = spec.protocol
    datasets = [d.label if d.label == d.name else f"{d.label} ({d.name})" for d in spec.datasets]
    methods = [
        m.label if m.label == m.estimator else f"{m.label} ({m.estimator})" for m in spec.methods
    ]
    lines = [
        f"  data sets ({len(datasets)}): {cut_list(datasets, _SHOWN)}",
        f"  methods ({len(methods)}): {cut_list(methods, _SHOWN)}",
    ]
    if base is not None:
        lines.append(f"  from {base_name}: {_composition(spec, base)}")
    split = "the source's own splits" if p.realisations == "predefined" else "random splits"
    cv = f"{p.cv_folds}-fold inner CV" if p.cv_folds > 1 else "no inner CV"
    extra = [x for x in (p.preprocess, f"timeout {p.timeout_s:g} s" if p.timeout_s else "") if x]
    lines.append(
        f"  protocol: {p.n_realisations} realisations ({split}, seed {p.seed}), {cv}"
        + "".join(f", {x}" for x in extra)
        + f"; {cells} cells"
    )
    return lines


def _composition(spec: Spec, base: Spec) -> str:
    """``keeps 3 of its 26 data sets and 2 of its 14 methods; adds HGB; replaces ...``."""
    parts = []
    for what, mine, theirs in (
        ("data sets", spec.datasets, base.datasets),
        ("methods", spec.methods, base.methods),
    ):
        base_items = {x.label: _same(x) for x in theirs}
        kept = [x.label for x in mine if base_items.get(x.label) == _same(x)]
        parts.append(f"{len(kept)} of its {len(theirs)} {what}")
    text = "keeps " + " and ".join(parts)
    for verb, pick in (("adds", _added), ("replaces", _replaced)):
        found = pick(spec.datasets, base.datasets) + pick(spec.methods, base.methods)
        if found:
            text += f"; {verb} {cut_list(found, 10)}"
    return text


def _added(mine, theirs) -> list[str]:
    labels = {x.label for x in theirs}
    return [x.label for x in mine if x.label not in labels]


def _replaced(mine, theirs) -> list[str]:
    base_items = {x.label: _same(x) for x in theirs}
    return [x.label for x in mine if x.label in base_items and base_items[x.label] != _same(x)]


def _same(item: object) -> object:
    """What makes a data set or method the base's: a data set's name and options (its protocol
    follows the spec's, which an extending spec may change), a method whole."""
    if isinstance(item, DatasetSpec):
        return (item.name, item.options, item.entry)
    return item


def summary_with_base(spec: Spec, path: Path, cells: int) -> list[str]:
    """:func:`summary_lines` of the spec read from ``path``, its base read too when it extends
    one (what it keeps of the base is part of the summary)."""
    from kernbench.specs.load import load_spec

    found = base_spec_path(path)
    base = load_spec(found[1], check_datasets=False) if found else None
    return summary_lines(spec, cells, base, found[0] if found else "")
