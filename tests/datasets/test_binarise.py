"""Binary tasks from multi-class sets: the ``positive`` / ``negative`` dataset options."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from kernbench.datasets import dataset_fingerprint, make_realisation
from kernbench.datasets.catalog import get_dataset, resolve_options
from kernbench.datasets.recipes import load_pool
from kernbench.errors import DataError
from kernbench.specs.types import Protocol

RANDOM = Protocol(realisations="random", train_size=0.5, test_size=None)


def test_one_vs_rest_maps_the_listed_classes_to_plus_one() -> None:
    raw = load_pool("digits")
    pool = load_pool("digits", {"positive": [1, 3, 5, 7, 9]})
    odd = np.isin(raw.y, [1, 3, 5, 7, 9])  # digits' class names are 0..9 in order
    np.testing.assert_array_equal(pool.y, np.where(odd, 1, -1))
    np.testing.assert_array_equal(pool.X, raw.X)
    assert "binarised" in pool.flags


def test_one_vs_one_keeps_only_the_listed_classes() -> None:
    raw = load_pool("digits")
    pool = load_pool("digits", {"positive": [3], "negative": ["8"]})
    keep = np.isin(raw.y, [3, 8])
    np.testing.assert_array_equal(pool.X, raw.X[keep])
    np.testing.assert_array_equal(pool.y, np.where(raw.y[keep] == 3, 1, -1))
    r = make_realisation("digits", {"positive": [3], "negative": [8]}, RANDOM, 0, seed=0)
    assert set(np.unique(r.y_train)) == {-1, 1}
    assert r.info["n_train"] + r.info["n_test"] == int(keep.sum())


def test_options_are_validated_against_the_class_names() -> None:
    assert resolve_options("pendigits", {"positive": [9, "1"]})["positive"] == ["1", "9"]
    bad = [
        ({"positive": [10]}, "unknown class '10'"),
        ({"negative": [1]}, "needs 'positive'"),
        ({"positive": [1], "negative": [1, 2]}, "both positive and negative"),
        ({"positive": list(range(10))}, "every class"),
        ({"positive": []}, "non-empty list"),
        ({"positive": [1, 1]}, "twice"),
    ]
    for options, message in bad:
        with pytest.raises(DataError, match=message):
            resolve_options("pendigits", options)
    with pytest.raises(DataError, match="unknown option 'positive'"):
        resolve_options("wdbc", {"positive": [1]})  # binary sets have no class options
    with pytest.raises(DataError, match="no class '11'"):  # digits lists no classes: load time
        load_pool("digits", {"positive": [11]})


def test_class_options_enter_the_fingerprint_and_unset_ones_do_not() -> None:
    odd = dataset_fingerprint("pendigits", {"positive": [1, 3, 5, 7, 9]})
    assert odd == dataset_fingerprint("pendigits", {"positive": ["9", 7, 5, 3, 1]})
    assert odd != dataset_fingerprint("pendigits", {"positive": [1, 3, 5, 7]})
    assert odd != dataset_fingerprint("pendigits", {"positive": [1, 3, 5, 7, 9], "negative": [0]})
    entry = get_dataset("pendigits")  # the identity of a plain multi-class cell is unchanged
    doc = {
        "dataset": entry.name,
        "files": sorted((f.path, f.sha256) for f in entry.all_files()),
        "recipe": entry.recipe,
        "predefined": entry.predefined,
        "options": {"label_noise": 0.0},
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    assert dataset_fingerprint("pendigits", None) == hashlib.sha256(text.encode()).hexdigest()


def test_label_noise_on_a_binarised_set_flips_signs() -> None:
    r = make_realisation("digits", {"positive": [0], "label_noise": 0.1}, RANDOM, 0, seed=0)
    assert set(np.unique(r.y_train)) == {-1, 1}
    assert r.info["label_noise"]["n_flipped"] == round(0.1 * r.info["n_train"])


def test_mirrored_pendigits_odd_vs_even(mirror) -> None:
    proto = Protocol(realisations="predefined")
    r = make_realisation("pendigits", {"positive": [1, 3, 5, 7, 9]}, proto, 0, seed=0)
    assert r.X_train.shape == (7494, 16) and r.X_test.shape == (3498, 16)
    counts = get_dataset("pendigits").class_counts
    n_odd = sum(counts[str(d)] for d in (1, 3, 5, 7, 9))
    assert int((r.y_train == 1).sum() + (r.y_test == 1).sum()) == n_odd
