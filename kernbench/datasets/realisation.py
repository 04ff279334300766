"""Realisations: the train/test partitions the runner evaluates, built per protocol.

A realisation depends only on (experiment seed, dataset, index) and the dataset options, never on
the method, so every method of a table sees identical splits (paired comparisons). Seeds derive from
:func:`kernbench.cells.seeds.derive_seed` with the canonical dataset name (aliases give the same
splits).

Split kinds recorded in ``info["split"]``:

``predefined``
    the source's own partition (IDA split file k = index + 1; a standard train/test file pair).
``synthetic_split``
    ``realisations: predefined`` but the source lacks this realisation and ``fallback: random``:
    a seeded random partition with the source's train/test sizes.
``random``
    ``realisations: random``: a seeded (stratified) random partition with the protocol's sizes.
``generated``
    a fresh sample from a generator (twonorm, ...), whatever the protocol says.

With ``fallback: fewer``, a realisation that does not exist raises :class:`RealisationUnavailable`
(a :class:`~kernbench.errors.DataError`); the runner records the cell as skipped
(``data_unavailable``). :func:`available_realisations` tells the planner the count in advance.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import train_test_split

from kernbench.cells.protocol import Protocol
from kernbench.cells.seeds import derive_seed
from kernbench.datasets import generators
from kernbench.datasets.catalog import DatasetEntry, RawFile, get_dataset, resolve_options
from kernbench.datasets.fetch import locate, sha256_file
from kernbench.datasets.recipes import load_pool, read_ida_realisation, standardize_pool
from kernbench.errors import DataError

__all__ = [
    "Realisation",
    "RealisationUnavailable",
    "make_realisation",
    "available_realisations",
    "dataset_fingerprint",
    "random_split",
    "flip_labels",
    "per_class_subsample",
]


@dataclass(frozen=True)
class Realisation:
    """One train/test realisation of a dataset.

    Attributes
    ----------
    X_train, X_test : ndarray of float64, shape (n, d)
    y_train, y_test : ndarray of int64; {-1, +1} for binary tasks, 0..K-1 for multi-class (float64
        targets for regression tasks)
    info : dict
        ``dataset``, ``index``, ``realisation`` (1-based), ``split`` (kind, see module doc),
        ``source`` (which data were used), ``files``, ``n_train``, ``n_test``, ``d``, ``seed``,
        ``flags`` (e.g. ``synthetic_split``, ``substitute``, ``standardized_pool``,
        ``rebuilt_scaling``), ``substitution`` (note or None), ``label_noise`` (fraction and flipped
        count), ``per_class``.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    info: dict[str, Any]


class RealisationUnavailable(DataError):
    """The protocol asks for a realisation the source does not have (``fallback: fewer``)."""

    def __init__(self, dataset: str, index: int, available: int) -> None:
        self.dataset = dataset
        self.index = index
        self.available = available
        super().__init__(
            f"dataset {dataset!r}: realisation {index + 1} does not exist ({available} available; "
            "fallback: fewer)"
        )


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def random_split(
    y: np.ndarray,
    train_size: float | int | None,
    test_size: float | int | None,
    *,
    seed: int,
    stratify: bool = True,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Seeded train/test index split (sorted indices).

    ``train_size``/``test_size``: int = count, float in (0, 1) = fraction, None = the rest (both
    None: 25% test). Stratified by ``y`` when asked and every class has at least 2 members.
    Unstratified binary draws are redrawn (next seed) while the training part holds one class only.

    Returns
    -------
    train_idx, test_idx, stratified
    """
    n = len(y)
    idx = np.arange(n)
    _, counts = np.unique(y, return_counts=True)
    strat = stratify and counts.min() >= 2 and len(counts) > 1
    for attempt in range(100):
        try:
            tr, te = train_test_split(
                idx,
                train_size=train_size,
                test_size=test_size,
                random_state=(seed + attempt) % 2**32,
                stratify=y if strat else None,
            )
        except ValueError as exc:
            if strat:  # e.g. too few test points for the number of classes
                strat = False
                continue
            raise DataError(
                f"cannot split {n} examples as train={train_size}, test={test_size}: {exc}"
            ) from None
        if strat or len(np.unique(y[tr])) > 1 or len(counts) == 1:
            return np.sort(tr), np.sort(te), strat
    raise DataError("could not draw a training part containing two classes in 100 attempts")


def per_class_subsample(y: np.ndarray, per_class: int, *, seed: int) -> np.ndarray:
    """Sorted indices of at most ``per_class`` uniformly chosen examples of every class."""
    rng = np.random.default_rng(seed)
    keep = [
        rng.choice(np.flatnonzero(y == c), size=min(per_class, int((y == c).sum())), replace=False)
        for c in np.unique(y)
    ]
    return np.sort(np.concatenate(keep))


def flip_labels(
    y: np.ndarray, fraction: float, *, seed: int, n_classes: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Flip exactly round(fraction * n) uniformly chosen labels (Lin & Li's 10 % noise,
    docs/papers/lin_li.md).

    Binary {-1, +1}: y -> -y. Multi-class 0..K-1: each chosen label becomes a uniformly chosen
    *different* class. Returns the new labels and the sorted flipped indices.
    """
    rng = np.random.default_rng(seed)
    n = len(y)
    m = _round_half_up(fraction * n)
    flipped = np.sort(rng.choice(n, size=m, replace=False))
    out = np.array(y, copy=True)
    if set(np.unique(y).tolist()) <= {-1, 1} and (n_classes in (None, 2)):
        out[flipped] = -out[flipped]
    else:
        k = int(n_classes if n_classes is not None else out.max() + 1)
        out[flipped] = (out[flipped] + rng.integers(1, k, size=m)) % k
    return out, flipped


def _sizes(pdef: dict[str, Any]) -> tuple[int, int]:
    ntr, nte = pdef["sizes"]
    return int(ntr), int(nte)


def _available(entry: DatasetEntry, protocol: Protocol) -> int | None:
    if entry.is_generated and not (
        protocol.realisations == "predefined" and entry.predefined is not None
    ):
        return None
    if protocol.realisations != "predefined":
        return None
    if protocol.fallback == "random":
        return None
    if entry.predefined is None:
        return 0
    src = entry.predefined_entry()
    kind = src.predefined["kind"]
    if kind == "ida":
        present = sorted(src.predefined["present"])
        # realisations 1..m contiguous from 1 can run; a gap stops "fewer"
        m = 0
        while m + 1 in present:
            m += 1
        return m
    if kind == "fixed":
        return None
    return 0  # substitute: no predefined realisation exists at all


def available_realisations(name: str, protocol: Protocol) -> int | None:
    """How many realisations exist for ``protocol`` (None = as many as asked).

    Only ``realisations: predefined`` with ``fallback: fewer`` limits the count: IDA sets to their
    mirrored split files (twonorm: 1), substitutes without split files to 0.
    """
    return _available(get_dataset(name), protocol)


def make_realisation(
    name: str, options: dict[str, Any] | None, protocol: Protocol, index: int, *, seed: int
) -> Realisation:
    """Realisation ``index`` (0-based) of dataset ``name`` under ``protocol``.

    Parameters
    ----------
    name : str
        Catalogue name or alias.
    options : dict
        Dataset options (``label_noise``, generator ``n_train``/``n_test``/``d``/``a``, ...).
    protocol : Protocol
        ``realisations``, sizes, ``stratify``, ``fallback``, ``per_class``.
    index : int
        0-based realisation index (IDA file number ``index + 1``).
    seed : int
        Experiment seed.

    Raises
    ------
    RealisationUnavailable
        ``fallback: fewer`` and the realisation does not exist.
    DataError
        Missing files (with the fetch command), bad options, parse errors.
    """
    if index < 0:
        raise DataError(f"realisation index must be >= 0, got {index}")
    entry = get_dataset(name)
    opts = resolve_options(entry.name, options)
    info: dict[str, Any] = {
        "dataset": entry.name,
        "index": index,
        "realisation": index + 1,
        "flags": [],
        "substitution": None,
        "options": opts,
    }
    predefined = protocol.realisations == "predefined"
    if predefined and entry.predefined is not None:
        Xtr, ytr, Xte, yte = _predefined(entry, opts, protocol, index, seed, info)
    elif entry.is_generated:
        Xtr, ytr, Xte, yte = _generated(entry, opts, index, seed, info)
    else:
        pool = load_pool(entry.name, opts)
        if predefined:  # the dataset has no predefined realisations
            if protocol.fallback == "fewer":
                raise RealisationUnavailable(entry.name, index, 0)
            info["split"] = "synthetic_split"
            info["flags"].append("synthetic_split")
        else:
            info["split"] = "random"
        info["source"] = f"{entry.name} (pooled data)"
        info["files"] = list(pool.files)
        info["flags"] += list(pool.flags)
        if set(pool.flags) & {"ida_encoding", "rebuilt_scaling", "substitute"}:
            info["substitution"] = entry.substitution
        split_seed = derive_seed(seed, entry.name, index, "split")
        tr, te, strat = random_split(
            pool.y,
            protocol.train_size,
            protocol.test_size,
            seed=split_seed,
            stratify=protocol.stratify and entry.task != "regression",
        )
        info["seed"], info["stratified"] = split_seed, strat
        # the rows both parts are drawn from: the correlation of two realisations' results
        # (kernbench significance's corrected t-test) depends on it
        info["n_pool"] = len(pool.y)
        Xtr, ytr, Xte, yte = pool.X[tr], pool.y[tr], pool.X[te], pool.y[te]
    return _finish(entry, opts, protocol, index, seed, info, Xtr, ytr, Xte, yte)


def _predefined(
    entry: DatasetEntry,
    opts: dict[str, Any],
    protocol: Protocol,
    index: int,
    seed: int,
    info: dict[str, Any],
) -> tuple[np.ndarray, ...]:
    src = entry.predefined_entry()
    pdef = src.predefined
    kind = pdef["kind"]
    k = index + 1
    if kind == "ida" and k in pdef["present"]:
        Xtr, ytr, Xte, yte, files = read_ida_realisation(src, k)
        info.update(
            split="predefined", source=f"{src.name} split files, realisation {k}", files=list(files)
        )
        return Xtr, ytr, Xte, yte
    if kind == "fixed":
        pool = load_pool(src.name, opts)
        m = pool.train_mask
        info.update(
            split="predefined",
            source=f"{src.name} standard train/test partition",
            files=list(pool.files),
        )
        info["flags"].append("fixed_split")
        return pool.X[m], pool.y[m], pool.X[~m], pool.y[~m]
    # the source lacks this realisation (IDA beyond the mirrored files, or a substitute)
    available = 0 if kind == "substitute" else len(pdef["present"])
    if protocol.fallback == "fewer":
        raise RealisationUnavailable(entry.name, index, available)
    ntr, nte = _sizes(pdef)
    if kind == "ida":
        pool = load_pool(src.name)
        X, y = pool.X, pool.y
        info["source"] = f"{src.name} pool (realisation 1 train+test) re-split {ntr}/{nte}"
    else:  # substitute: standardise the pool as IDA stored its sets
        pool = load_pool(src.name, {k_: v for k_, v in opts.items() if k_ != "label_noise"})
        X, y = standardize_pool(pool.X), pool.y
        info["source"] = f"{src.name} pooled data standardised, random {ntr}/{nte} (substitute)"
        info["flags"] += ["substitute", "standardized_pool"]
        info["substitution"] = pdef.get("note") or src.substitution
    if ntr + nte > len(y):
        raise DataError(f"dataset {src.name!r}: sizes {ntr}/{nte} exceed the {len(y)} pooled rows")
    split_seed = derive_seed(seed, src.name, index, "split")
    tr, te, strat = random_split(y, ntr, nte, seed=split_seed, stratify=protocol.stratify)
    info.update(split="synthetic_split", files=list(pool.files), seed=split_seed, stratified=strat)
    info["flags"] += [f for f in pool.flags if f not in info["flags"]]
    info["flags"].insert(0, "synthetic_split")
    return X[tr], y[tr], X[te], y[te]


def _generated(
    entry: DatasetEntry, opts: dict[str, Any], index: int, seed: int, info: dict[str, Any]
) -> tuple[np.ndarray, ...]:
    fn = getattr(generators, entry.recipe["function"])
    params = {k: opts[k] for k in ("d", "a", "radius", "sigma2", "noise") if k in opts}
    rng_tr = np.random.default_rng(derive_seed(seed, entry.name, index, "train"))
    rng_te = np.random.default_rng(derive_seed(seed, entry.name, index, "test"))
    Xtr, ytr = fn(opts["n_train"], rng_tr, **params)
    test_params = dict(params)
    if "test_noise" in opts:  # regression toys: the test targets' own noise (0 = the target)
        test_params["noise"] = opts["test_noise"]
    Xte, yte = fn(opts["n_test"], rng_te, **test_params)
    info.update(
        split="generated",
        source=f"generator {entry.recipe['function']}{params}",
        files=[],
        seed=derive_seed(seed, entry.name, index, "train"),
        generator={"function": entry.recipe["function"], "params": params},
    )
    bayes = generators.bayes_decision(entry.recipe["function"], params)
    if bayes is not None:  # the Bayes-optimal rule's error on this test sample
        info["bayes_test_error"] = float(np.mean(bayes(Xte) != yte))
    return Xtr, ytr, Xte, yte


def _finish(
    entry: DatasetEntry,
    opts: dict[str, Any],
    protocol: Protocol,
    index: int,
    seed: int,
    info: dict[str, Any],
    Xtr: np.ndarray,
    ytr: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
) -> Realisation:
    Xtr, Xte = np.array(Xtr, dtype=np.float64), np.array(Xte, dtype=np.float64)
    regression = entry.task == "regression"
    y_type = np.float64 if regression else np.int64
    ytr, yte = np.array(ytr, dtype=y_type), np.array(yte, dtype=y_type)
    info["per_class"] = None
    if regression and (protocol.per_class is not None or opts.get("label_noise")):
        raise DataError(
            f"dataset {entry.name!r} is a regression task: protocol.per_class and the option "
            "label_noise need class labels"
        )
    if protocol.per_class is not None:
        keep = per_class_subsample(
            ytr, protocol.per_class, seed=derive_seed(seed, entry.name, index, "per_class")
        )
        Xtr, ytr = Xtr[keep], ytr[keep]
        info["per_class"] = int(protocol.per_class)
    fraction = float(opts.get("label_noise") or 0.0)
    info["label_noise"] = {"fraction": fraction, "n_flipped": 0}
    if fraction > 0:
        k = entry.classes if entry.task != "binary" and not opts.get("positive") else 2
        ytr, flipped = flip_labels(
            ytr, fraction, seed=derive_seed(seed, entry.name, index, "label_noise"), n_classes=k
        )
        info["label_noise"]["n_flipped"] = len(flipped)
        info["flags"].append("label_noise")
    info.update(n_train=len(ytr), n_test=len(yte), d=Xtr.shape[1])
    return Realisation(Xtr, ytr, Xte, yte, info)


def _portable(value: Any) -> Any:
    """A user file's absolute path -> its name (moving a project keeps its cells' identity;
    the checksum identifies the content); anything else unchanged."""
    if isinstance(value, list):
        return [_portable(v) for v in value]
    if isinstance(value, str) and os.path.isabs(value):
        return os.path.basename(value)
    return value


def _file_digest(raw: RawFile) -> str:
    """The catalogue checksum of a raw file; for a file without one (no published checksum), the
    sha256 of the local copy, so that its cells' identity still follows its content."""
    if raw.sha256 is not None:
        return raw.sha256
    path = locate(raw)
    return "absent" if path is None else sha256_file(path)


def dataset_fingerprint(name: str, options: dict[str, Any] | None) -> str:
    """sha256 hex identifying a dataset's content: the raw files' checksums, the recipe,
    the predefined source, the canonical options JSON (defaults filled in) and, for generated sets,
    the generator version."""
    entry = get_dataset(name)
    doc = {
        "dataset": entry.name,
        "files": sorted((_portable(f.path), _file_digest(f)) for f in entry.all_files()),
        "recipe": {k: _portable(v) for k, v in entry.recipe.items()},
        "predefined": entry.predefined,
        "options": {
            k: v
            for k, v in resolve_options(entry.name, options).items()
            # unset class options leave the identity of multi-class cells as it was
            if not (k in ("positive", "negative") and v is None)
        },
    }
    if entry.is_generated:
        doc["generator_version"] = generators.GENERATOR_VERSION
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
