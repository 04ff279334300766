"""What a spec that ``extends`` another takes from its base: ``keep:`` and ``remove:``.

Both name the base's methods and data sets by table label (``diabetes``) or by catalogue name
(``pima``; for a method, its registered estimator, ``svm_gauss``). ``keep`` leaves only those,
in the base's order; ``remove`` then leaves some out. A list under ``datasets:`` or a mapping
under ``methods:`` in an extending spec *adds* to what is kept (a label the base has is
replaced), so a bare name the base already has is refused with the ``keep:`` that was meant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernbench.files.checking import _Checker, _show, _suggest

__all__ = ["SELECT_KEYS", "refuse_relisted", "select_from_base"]

#: what ``keep:`` and ``remove:`` may name
SELECT_KEYS = {"methods", "datasets"}


def select_from_base(
    ck: _Checker, base_name: str, base: Mapping[str, Any], data: Mapping[str, Any]
) -> tuple[dict[str, Any], list[Any]]:
    """The base's methods (label -> entry) and data sets (list of entries) that ``data``'s
    ``keep:`` and ``remove:`` leave, in the base's order.

    Raises
    ------
    SpecError
        A ``keep``/``remove`` that is not a mapping of lists, or names what the base lacks.
    """
    methods = dict(ck.mapping(base.get("methods") or {}, "extends"))
    datasets = list(base.get("datasets") or [])
    method_names = {label: _method_names(label, entry) for label, entry in methods.items()}
    dataset_names = [_dataset_names(d) for d in datasets]
    for key, keeping in (("keep", True), ("remove", False)):
        raw = ck.mapping(data.get(key) or {}, key, "a mapping {methods, datasets}")
        ck.known_keys(raw, SELECT_KEYS, key)
        if "methods" in raw:
            chosen = _matches(
                ck, base_name, f"{key}.methods", raw["methods"], method_names, "method"
            )
            methods = {k: v for k, v in methods.items() if (k in chosen) is keeping}
            method_names = {k: v for k, v in method_names.items() if k in methods}
        if "datasets" in raw:
            pairs = dict(enumerate(dataset_names))
            chosen = _matches(ck, base_name, f"{key}.datasets", raw["datasets"], pairs, "data set")
            kept = [j for j in range(len(datasets)) if (j in chosen) is keeping]
            datasets = [datasets[j] for j in kept]
            dataset_names = [dataset_names[j] for j in kept]
    return methods, datasets


def refuse_relisted(ck: _Checker, base_name: str, kept: list[Any], data: Mapping[str, Any]) -> None:
    """Refuse what reads as "keep these" but would add to the base: a bare data-set name that one
    of the ``kept`` data sets of the base already has, listed under ``datasets:``; a list (not a
    mapping) under ``methods:``."""
    entries = kept
    added = data.get("datasets")
    if isinstance(added, list):
        for j, item in enumerate(added):
            if not isinstance(item, str):
                continue
            owner = next((d for d in entries if item in _dataset_names(d)), None)
            if owner is not None:
                names = [x for x in added if isinstance(x, str)]
                shown = _label(owner)
                raise ck.fail(
                    f"datasets[{j}]",
                    f"to keep only some data sets of {base_name!r}, write `keep: {{datasets: "
                    f"[{', '.join(names)}]}}`; {item!r} is already one of them"
                    + (f" (as {shown!r})" if shown != item else "")
                    + ", and a list under datasets: adds to them",
                )
    listed = data.get("methods")
    if isinstance(listed, list):
        shown = ", ".join(str(x) for x in listed[:5]) + (", ..." if len(listed) > 5 else "")
        raise ck.fail(
            "methods",
            f"to keep only some methods of {base_name!r}, write `keep: {{methods: [{shown}]}}`; "
            "methods: in an extending spec maps new labels to estimators, added to the base's",
        )


def _matches(
    ck: _Checker,
    base_name: str,
    path: str,
    words: Any,
    names: Mapping[Any, set[str]],
    what: str,
) -> set[Any]:
    """The keys of ``names`` whose names hold one of ``words`` (every word must match one)."""
    if not isinstance(words, list):
        raise ck.fail(path, f"expected a list of labels or catalogue names, got {_show(words)}")
    chosen: set[Any] = set()
    for j, word in enumerate(words):
        hits = {k for k, known in names.items() if word in known or _canonical(word) in known}
        if not isinstance(word, str) or not hits:
            everything = sorted({n for known in names.values() for n in known})
            raise ck.fail(
                f"{path}[{j}]",
                f"{base_name!r} has no {what} {_show(word)} (by table label or catalogue name)"
                + _suggest(str(word), everything),
            )
        chosen |= hits
    return chosen


def _canonical(name: Any) -> Any:
    """A catalogue alias as its catalogue name (else the name as given)."""
    if not isinstance(name, str):
        return name
    try:
        from kernbench.datasets import get_dataset

        return get_dataset(name).name
    except Exception:  # noqa: BLE001 - not a catalogue name: a label, compared as written
        return name


def _label(item: Any) -> Any:
    if isinstance(item, Mapping):
        return item.get("label", item.get("name"))
    return item


def _dataset_names(item: Any) -> set[str]:
    """A base data set's table label, its catalogue name, and that name's canonical form."""
    name = item.get("name") if isinstance(item, Mapping) else item
    found = {str(_label(item)), str(name)}
    return found | {str(_canonical(name))}


def _method_names(label: str, entry: Any) -> set[str]:
    """A base method's table label and its estimator's name."""
    estimator = entry.get("estimator") if isinstance(entry, Mapping) else None
    return {label} | ({estimator} if isinstance(estimator, str) else set())
