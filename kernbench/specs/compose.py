"""``extends:``: a spec composed from a base spec and its own additions, before it is checked.

The base's datasets and methods that ``keep:`` keeps, less ``remove:``
(:mod:`kernbench.specs.keep`), plus the spec's own; the base's protocol under the spec's keys,
except those that decide the splits (:data:`SPLIT_KEYS`), which stay the base's so that every
comparison with the base is paired.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kernbench.datasets.user import FILE_DATASET_KEYS  # a data file in place of a catalogue name
from kernbench.files.checking import _NAME_RE, _Checker, _show, load_yaml
from kernbench.specs.keep import refuse_relisted, select_from_base

#: keys only a spec that ``extends`` another has (resolved by :func:`compose_spec`)
EXTENDS_KEYS = {"extends", "keep", "remove"}

#: protocol keys that decide the splits: an extending spec keeps its base's, so that every
#: comparison with the base's methods is paired
SPLIT_KEYS = (
    "seed",
    "realisations",
    "train_size",
    "test_size",
    "stratify",
    "per_class",
    "fallback",
)

_MAX_EXTENDS = 8

#: what a data set's entry decides beyond its splits' protocol keys: its data
_DATA_KEYS = ("name", "options", *sorted(FILE_DATASET_KEYS))


def compose_spec(
    data: Mapping[str, Any], path: str | os.PathLike[str], depth: int = 0
) -> dict[str, Any]:
    """``extends: BASE`` (a shipped spec's name, or a file relative to this spec): the base's
    datasets and methods that ``keep: {methods: [...], datasets: [...]}`` keeps (all without it),
    less ``remove:`` (both by table label or catalogue name, :mod:`kernbench.specs.keep`), plus
    this spec's (a label of the base is replaced); the base's protocol under this spec's
    ``protocol`` keys, except those that decide the splits (:data:`SPLIT_KEYS`), which stay the
    base's. The base's table reference (published numbers of a paper's table) is dropped.

    Raises
    ------
    SpecError
        An unknown base, a label to remove that the base lacks, a split key changed.
    """
    ck = _Checker(str(path))
    base_name = ck.string(data["extends"], "extends")
    if depth >= _MAX_EXTENDS:
        raise ck.fail("extends", f"more than {_MAX_EXTENDS} levels of extends (a cycle?)")
    base = _load_base(ck, base_name, path, depth)
    out = _top_level(base, data)
    methods, datasets = select_from_base(ck, base_name, base, data)  # keep:, then remove:
    refuse_relisted(ck, base_name, datasets, data)  # `datasets: [heart]` meant `keep:`
    methods.update(ck.mapping(data.get("methods") or {}, "methods"))
    out["methods"] = methods
    out["datasets"] = _datasets(ck, base_name, base, datasets, data)
    out["protocol"] = _protocol(ck, base_name, base, data)
    if "name" not in data:  # the base's name would write into the base's results directory
        out["name"] = _own_name(ck, base_name, base, path)
    return out


def _load_base(
    ck: _Checker, base_name: str, path: str | os.PathLike[str], depth: int
) -> Mapping[str, Any]:
    """The base spec's mapping, itself composed when it extends another."""
    from kernbench.errors import UsageError
    from kernbench.specs.shipped import resolve_spec

    local = Path(path).parent / base_name
    try:
        base_path = local if local.is_file() else resolve_spec(base_name)
    except UsageError as exc:
        raise ck.fail("extends", str(exc).removeprefix("SPEC: ")) from None
    if not Path(base_path).is_file():
        raise ck.fail("extends", f"no such spec: {Path(base_path).resolve()}")
    base = load_yaml(base_path)
    if isinstance(base, Mapping) and "extends" in base:
        base = compose_spec(base, base_path, depth + 1)
    if not isinstance(base, Mapping):
        raise ck.fail("extends", f"{base_path} is not a spec mapping")
    return base


def _top_level(base: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """The base's top-level keys under this spec's, the table's reference dropped unless this
    spec has a table of its own."""
    # the base's title names the base's comparison: an extending spec without one is titled
    # by its own name
    out = {k: v for k, v in base.items() if k not in ("plugins", "catalog", "title")}
    for key, value in data.items():
        if key not in (*EXTENDS_KEYS, "datasets", "methods", "protocol"):
            out[key] = value
    table = dict(out.get("table") or {})
    if "table" not in data:
        table.pop("reference", None)
    out["table"] = table
    return out


def _datasets(
    ck: _Checker,
    base_name: str,
    base: Mapping[str, Any],
    kept: list[Any],
    data: Mapping[str, Any],
) -> list[Any]:
    """The kept data sets of the base, then this spec's (one of the base's listed again must
    keep its data and splits, and replaces the base's entry)."""
    added = data.get("datasets") or []
    if not isinstance(added, list):
        raise ck.fail("datasets", f"expected a list of datasets to add, got {_show(added)}")
    theirs = {_dataset_label(d): d for d in base.get("datasets") or []}
    for j, item in enumerate(added):
        if _dataset_label(item) in theirs:
            _check_same_data(ck, f"datasets[{j}]", theirs[_dataset_label(item)], item, base_name)
        kept = [d for d in kept if _dataset_label(d) != _dataset_label(item)]
    return kept + list(added)


def _protocol(
    ck: _Checker, base_name: str, base: Mapping[str, Any], data: Mapping[str, Any]
) -> dict[str, Any]:
    """The base's protocol under this spec's keys; a split key may not change."""
    protocol = dict(base.get("protocol") or {})
    mine = ck.mapping(data.get("protocol") or {}, "protocol")
    for key, value in mine.items():
        if key in SPLIT_KEYS and protocol.get(key, value) != value:
            raise ck.fail(
                f"protocol.{key}",
                f"{key} decides the splits and stays the base's ({_show(protocol[key])}), so that "
                f"every comparison with {base_name!r} is paired",
            )
        protocol[key] = value
    return protocol


def _own_name(
    ck: _Checker, base_name: str, base: Mapping[str, Any], path: str | os.PathLike[str]
) -> str:
    """An extending spec without ``name:`` is named after its file, which must differ from the
    base's name (else its results would go into the base's results directory)."""
    own = Path(path).stem
    if not _NAME_RE.match(own) or own == base.get("name"):
        raise ck.fail(
            "name",
            f"a spec that extends {base_name!r} needs a name of its own (name: ...), else its "
            f"results would go into those of {base.get('name', base_name)!r}",
        )
    return own


def _check_same_data(ck: _Checker, path: str, base_item: Any, item: Any, base_name: str) -> None:
    """A data set of the base listed again by an extending spec must keep what decides its data
    and splits (its catalogue name, options, file, and per-data-set split keys): every comparison
    with the base's cells stays paired. Another setting needs a label of its own."""

    def as_mapping(d: Any) -> dict[str, Any]:
        return dict(d) if isinstance(d, Mapping) else {"name": d}

    mine, theirs = as_mapping(item), as_mapping(base_item)
    mine_protocol = mine.get("protocol") if isinstance(mine.get("protocol"), Mapping) else {}
    theirs_protocol = theirs.get("protocol") if isinstance(theirs.get("protocol"), Mapping) else {}
    pairs = [(k, mine.get(k) or None, theirs.get(k) or None) for k in _DATA_KEYS]
    pairs += [
        (f"protocol.{k}", mine_protocol.get(k), theirs_protocol.get(k))
        for k in SPLIT_KEYS
        if k in mine_protocol or k in theirs_protocol
    ]
    for key, value, base_value in pairs:
        if value != base_value:
            label = _dataset_label(item)
            raise ck.fail(
                f"{path}.{key}",
                f"{_show(label)} is a data set of {base_name!r}, whose {key} "
                f"({_show(base_value)}) decides its data and splits and stays the base's, so that "
                f"every comparison with {base_name!r} is paired; give it a label of its own "
                "(label: ...) to add another",
            )


def _dataset_label(item: Any) -> Any:
    if isinstance(item, Mapping):
        return item.get("label", item.get("name"))
    return item
