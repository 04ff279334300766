"""Realisations: reproducible, method-independent splits; stratification; label noise; fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

from kernbench.datasets import (
    RealisationUnavailable,
    available_realisations,
    dataset_fingerprint,
    make_realisation,
)
from kernbench.datasets.realisation import flip_labels, per_class_subsample, random_split
from kernbench.specs.types import Protocol

RANDOM = Protocol(realisations="random", train_size=0.6)


def test_identical_seed_dataset_index_gives_identical_splits():
    a = make_realisation("breast_cancer", {}, RANDOM, 2, seed=7)
    b = make_realisation("wdbc-sklearn", {}, RANDOM, 2, seed=7)  # alias: same canonical name
    for x, y in zip(
        (a.X_train, a.y_train, a.X_test, a.y_test), (b.X_train, b.y_train, b.X_test, b.y_test)
    ):
        np.testing.assert_array_equal(x, y)
    c = make_realisation("breast_cancer", {}, RANDOM, 3, seed=7)
    d = make_realisation("breast_cancer", {}, RANDOM, 2, seed=8)
    assert not np.array_equal(a.X_train, c.X_train) and not np.array_equal(a.X_train, d.X_train)


def test_random_split_partitions_the_pool_with_the_asked_sizes_stratified():
    from sklearn.datasets import load_breast_cancer

    r = make_realisation("breast_cancer", {}, RANDOM, 0, seed=0)
    X = load_breast_cancer().data
    assert len(r.y_train) == round(0.6 * 569) or len(r.y_train) == int(0.6 * 569)
    assert len(r.y_train) + len(r.y_test) == 569
    both = np.vstack([r.X_train, r.X_test])
    np.testing.assert_array_equal(np.sort(both, axis=0), np.sort(X, axis=0))  # a partition
    # stratified: the positive fraction of each part is within one example of the pool's
    frac = 212 / 569
    assert abs((r.y_train == 1).sum() - frac * len(r.y_train)) <= 1
    assert abs((r.y_test == 1).sum() - frac * len(r.y_test)) <= 1
    assert r.info["split"] == "random" and r.info["stratified"]
    assert r.info["n_pool"] == 569  # recorded for the corrected t-test's correlation


def test_int_sizes_and_rest():
    tr, te, _ = random_split(np.repeat([-1, 1], 100), 150, None, seed=1)
    assert len(tr) == 150 and len(te) == 50 and not set(tr) & set(te)
    tr, te, _ = random_split(np.repeat([-1, 1], 100), 20, 30, seed=1)
    assert (len(tr), len(te)) == (20, 30)


def test_label_noise_flips_exactly_the_documented_number_of_training_labels_only():
    clean = make_realisation("twonorm", {}, RANDOM, 4, seed=3)
    noisy = make_realisation("twonorm", {"label_noise": 0.1}, RANDOM, 4, seed=3)
    np.testing.assert_array_equal(clean.X_train, noisy.X_train)
    np.testing.assert_array_equal(clean.y_test, noisy.y_test)  # test labels never touched
    flipped = np.flatnonzero(clean.y_train != noisy.y_train)
    assert len(flipped) == 30 == round(0.1 * 300) == noisy.info["label_noise"]["n_flipped"]
    np.testing.assert_array_equal(noisy.y_train[flipped], -clean.y_train[flipped])


def test_label_noise_rounding_and_multiclass():
    y = np.arange(25) % 3
    out, idx = flip_labels(y, 0.1, seed=0, n_classes=3)  # 2.5 -> 3 (round half up)
    assert (
        len(idx) == 3
        and (out[idx] != y[idx]).all()
        and (np.delete(out, idx) == np.delete(y, idx)).all()
    )
    assert set(out.tolist()) <= {0, 1, 2}


def test_per_class_subsampling_is_balanced():
    proto = Protocol(realisations="random", train_size=0.75, per_class=20)
    r = make_realisation("digits", {}, proto, 0, seed=0)
    assert np.bincount(r.y_train).tolist() == [20] * 10
    assert r.info["per_class"] == 20
    idx = per_class_subsample(np.array([0, 0, 0, 1]), 2, seed=0)
    assert np.bincount(np.array([0, 0, 0, 1])[idx]).tolist() == [2, 1]


def test_generated_sets_draw_fresh_samples_of_the_asked_sizes():
    r = make_realisation("threenorm", {"d": 2, "n_train": 30, "n_test": 40}, RANDOM, 0, seed=0)
    assert r.X_train.shape == (30, 2) and r.X_test.shape == (40, 2)
    assert r.info["split"] == "generated"
    r2 = make_realisation("threenorm", {"d": 2, "n_train": 30, "n_test": 99}, RANDOM, 0, seed=0)
    np.testing.assert_array_equal(r.X_train, r2.X_train)  # test size does not move the train set
    r3 = make_realisation("circle", {}, RANDOM, 0, seed=0)
    assert (len(r3.y_train), len(r3.y_test)) == (500, 5000)


def test_fallback_fewer_and_available_counts():
    fewer = Protocol(realisations="predefined", fallback="fewer")
    assert available_realisations("twonorm", fewer) == 1
    assert available_realisations("diabetis", fewer) == 0
    assert available_realisations("banana", fewer) == 10
    assert available_realisations("sonar", RANDOM) is None
    with pytest.raises(RealisationUnavailable, match="realisation 1 does not exist"):
        make_realisation("breast_cancer", {}, fewer, 0, seed=0)


def test_predefined_without_source_falls_back_to_flagged_random_split():
    proto = Protocol(realisations="predefined", train_size=100, fallback="random")
    r = make_realisation("breast_cancer", {}, proto, 0, seed=0)
    assert r.info["split"] == "synthetic_split" and "synthetic_split" in r.info["flags"]
    assert len(r.y_train) == 100


def test_fingerprint_depends_on_content_and_canonical_options():
    base = dataset_fingerprint("twonorm", {})
    assert base == dataset_fingerprint("twonorm", {"n_train": 300, "d": 20})  # defaults filled
    assert base != dataset_fingerprint("twonorm", {"label_noise": 0.1})
    assert base != dataset_fingerprint("ringnorm", {})
    assert len(base) == 64 and dataset_fingerprint("iris", {}) == dataset_fingerprint(
        "iris-sklearn", None
    )


def test_predefined_substitutes_and_fixed_partitions(mirror):
    pre = Protocol(realisations="predefined")
    r = make_realisation("vowel", {}, pre, 3, seed=0)
    assert (len(r.y_train), len(r.y_test)) == (528, 462) and r.info["split"] == "predefined"
    a = make_realisation("thyroid", {}, pre, 1, seed=5)
    b = make_realisation("ida-thyroid", {}, pre, 1, seed=5)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert a.info["substitution"] and "standardized_pool" in a.info["flags"]
    # twonorm realisation 2..: re-splits of the IDA pool, flagged, identical to ida-twonorm's
    t = make_realisation("twonorm", {}, pre, 1, seed=0)
    u = make_realisation("ida-twonorm", {}, pre, 1, seed=0)
    assert t.info["split"] == "synthetic_split" and (len(t.y_train), len(t.y_test)) == (400, 7000)
    np.testing.assert_array_equal(t.X_test, u.X_test)
