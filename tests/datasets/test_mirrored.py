"""Every mirrored dataset loads with the manifest's shape and class counts (needs the mirror).

Expected numbers come from the mirror's MANIFEST.yaml (checked when the mirror was built); the IDA
split files are re-read with ``numpy.loadtxt``, independently of kernbench's recipes.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from kernbench.datasets import get_dataset, list_datasets, load_pool, make_realisation
from kernbench.datasets.parsers import read_delimited, read_keel, read_libsvm
from kernbench.datasets.recipes import read_ida_realisation
from kernbench.specs.types import Protocol

# the mirrored entries (the papers' own unmirrored data sets are tested on generated files in
# test_paper_data.py)
MIRRORED = [e for e in list_datasets() if e.mirrored]
FILE_ENTRIES = [(e.name, f.path) for e in MIRRORED for f in e.files if f.format != "ida-asc"]
POOLED = [e.name for e in MIRRORED if not e.is_generated]
IDA = [e.name for e in list_datasets() if e.predefined and e.predefined.get("kind") == "ida"]


def _manifest_file(manifest, path):
    return next(f for d in manifest["datasets"] for f in d["files"] if f["path"] == path)


@pytest.mark.parametrize(("name", "path"), FILE_ENTRIES)
def test_every_raw_file_parses_with_the_manifest_shape(manifest, mirror, name, path):
    spec = _manifest_file(manifest, path)["verified"]
    full = mirror / path
    if path.endswith("heart_scale"):
        X, y = read_libsvm(full)
        assert X.shape == (spec["rows"], spec["max_feature_index"])
        assert Counter(np.where(y > 0, "+1", "-1").tolist()) == spec["classes"]
        return
    if path.startswith("solar-flare/"):
        t = read_delimited(full, None, skip_lines=spec["header_lines"])
        assert t.cells.shape == (spec["rows"], spec["columns"])
        return
    fmt = _manifest_file(manifest, path)["format"]
    if fmt == "keel-dat":
        t = read_keel(full)
    else:
        delim = (
            None
            if " " in full.read_text().splitlines()[0].strip(" ,")
            and "," not in (full.read_text().splitlines()[0])
            else ","
        )
        t = read_delimited(full, delim)
    assert t.cells.shape == (spec["rows"], spec["columns"])
    first = path.startswith(("house-votes-84/", "letter/letter", "new-thyroid/"))
    labels = t.cells[:, 0 if first else (1 if path.startswith("wdbc/wdbc") else -1)]
    counts = Counter(labels.tolist())
    expected = {str(k): v for k, v in spec["classes"].items()}
    norm = {k.lstrip("0") if k.isdigit() and k != "0" else k: v for k, v in counts.items()}
    assert counts == expected or norm == expected


@pytest.mark.parametrize("name", POOLED)
def test_every_catalogued_dataset_loads_with_its_size_and_class_counts(mirror, name):
    entry = get_dataset(name)
    pool = load_pool(name)
    assert pool.X.shape == (entry.n, entry.d)
    assert pool.X.dtype == np.float64 and np.isfinite(pool.X).all()
    values, counts = np.unique(pool.y, return_counts=True)
    if entry.task == "binary":
        assert values.tolist() == [-1, 1]
    elif entry.task == "regression":  # real-valued targets, not class indices
        assert pool.y.dtype == np.float64 and np.isfinite(pool.y).all() and values.size > 100
    else:
        assert values.tolist() == list(range(entry.classes))
    if entry.class_counts is not None:
        # catalogue counts are keyed by the raw labels, in sorted order for multi-class tasks
        assert sorted(counts.tolist()) == sorted(entry.class_counts.values())
        if entry.task == "binary":
            assert {"-1": counts[0], "1": counts[1]} == entry.class_counts


def _check_ida_realisations(mirror, name, ks):
    entry = get_dataset(name)
    stem = entry.predefined["stem"]
    proto = Protocol(realisations="predefined", fallback="fewer")
    for k in ks:
        r = make_realisation(name, {}, proto, k - 1, seed=123)
        ref = {
            part: np.loadtxt(mirror / f"{stem}_{part}_{k}.asc.gz", ndmin=2)
            for part in ("train_data", "train_labels", "test_data", "test_labels")
        }
        np.testing.assert_array_equal(r.X_train, ref["train_data"])
        np.testing.assert_array_equal(r.y_train, ref["train_labels"].ravel())
        np.testing.assert_array_equal(r.X_test, ref["test_data"])
        np.testing.assert_array_equal(r.y_test, ref["test_labels"].ravel())
        assert r.info["split"] == "predefined" and r.info["realisation"] == k


@pytest.mark.parametrize("name", IDA)
def test_ida_realisation_k_equals_the_split_files_row_for_row(mirror, name):
    present = get_dataset(name).predefined["present"]
    _check_ida_realisations(mirror, name, sorted({present[0], present[-1]}))


@pytest.mark.slow
@pytest.mark.parametrize("name", IDA)
def test_every_ida_realisation_equals_the_split_files(mirror, name):
    _check_ida_realisations(mirror, name, get_dataset(name).predefined["present"])


@pytest.mark.parametrize("name", IDA)
def test_every_ida_realisation_partitions_the_same_pool(mirror, name):
    """Justifies the pool used for synthetic re-splits: realisation 1's train+test."""
    entry = get_dataset(name)

    def rows(X, y):
        a = np.column_stack([X, y])
        return a[np.lexsort(a.T[::-1])]

    Xtr, ytr, Xte, yte, _ = read_ida_realisation(entry, 1)
    ref = rows(np.vstack([Xtr, Xte]), np.concatenate([ytr, yte]))
    for k in entry.predefined["present"][1:3]:
        Xtr, ytr, Xte, yte, _ = read_ida_realisation(entry, k)
        np.testing.assert_array_equal(rows(np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])), ref)


def test_ida_twonorm_pool_is_the_standardised_keel_twonorm(mirror):
    keel = np.loadtxt(mirror / "ida-twonorm/keel/twonorm.dat", delimiter=",")
    Z = (keel[:, :-1] - keel[:, :-1].mean(0)) / keel[:, :-1].std(0, ddof=1)
    pool = load_pool("ida-twonorm")
    a = np.round(np.column_stack([Z, np.where(keel[:, -1] == 0, 1, -1)]), 5)  # KEEL 0 = IDA +1
    b = np.round(np.column_stack([pool.X, pool.y]), 5)
    np.testing.assert_allclose(a[np.lexsort(a.T[::-1])], b[np.lexsort(b.T[::-1])], atol=2e-5)


TABLE_I = [
    "banana", "breast-cancer", "diabetis", "flare-solar", "german", "heart", "image",
    "ringnorm", "splice", "thyroid", "titanic", "twonorm", "waveform",
]  # fmt: skip
SIZES = {
    "banana": (400, 4900, 2), "breast-cancer": (200, 77, 9), "diabetis": (468, 300, 8),
    "flare-solar": (666, 400, 9), "german": (700, 300, 20), "heart": (170, 100, 13),
    "image": (1300, 1010, 18), "ringnorm": (400, 7000, 20), "splice": (1000, 2175, 60),
    "thyroid": (140, 75, 5), "titanic": (150, 2051, 3), "twonorm": (400, 7000, 20),
    "waveform": (400, 4600, 21),
}  # fmt: skip


def test_cgens_table_i_runs_offline_from_the_mirror(mirror):
    proto = Protocol(realisations="predefined", n_realisations=5, fallback="random")
    for name in TABLE_I:
        for index in range(5):
            r = make_realisation(name, {}, proto, index, seed=0)
            ntr, nte, d = SIZES[name]
            assert r.X_train.shape == (ntr, d) and r.X_test.shape == (nte, d), name
            has_file = name not in ("diabetis", "flare-solar", "splice", "thyroid") and not (
                name == "twonorm" and index > 0
            )
            assert r.info["split"] == ("predefined" if has_file else "synthetic_split"), name
            if name in ("diabetis", "flare-solar", "splice", "thyroid"):
                assert "substitute" in r.info["flags"] and r.info["substitution"]
                np.testing.assert_allclose(  # standardised pool, as IDA stored its sets
                    np.vstack([r.X_train, r.X_test]).mean(0), 0.0, atol=1e-9
                )
