"""The Lin & Li experiment specs (experiments/lin_li_table{1,2}.yaml, the scaled AB-Perc check) and
their data protocol."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from kernbench.datasets import make_realisation
from kernbench.report.reference import load_reference, match_reference
from kernbench.specs.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = {
    1: ROOT / "experiments" / "lin_li_table1.yaml",
    2: ROOT / "experiments" / "lin_li_table2.yaml",
}
DATASETS = [
    "twonorm", "twonorm-n", "threenorm", "threenorm-n", "ringnorm", "ringnorm-n",
    "australian", "breast", "german", "heart", "ionosphere", "pima", "sonar", "votes84",
]  # fmt: skip
C_SMALL = [2.0**k for k in range(-17, 4, 2)]


@pytest.fixture(scope="module", params=[1, 2])
def spec(request):
    return load_spec(SPECS[request.param])


def test_specs_cover_the_fourteen_datasets_at_paper_scale(spec):
    assert [d.label for d in spec.datasets] == DATASETS
    p = spec.protocol
    assert p.n_realisations == 100  # the paper's 100 runs
    assert (p.realisations, p.train_size, p.cv_folds) == ("random", 0.6, 5)
    assert p.preprocess == "minmax" and tuple(p.minmax_range) == (-1.0, 1.0)
    assert spec.table.spread == "stderr"
    for d in spec.datasets[:6]:
        assert (d.options["n_train"], d.options["n_test"]) == (300, 3000)
        assert d.options.get("label_noise", 0.0) == (0.1 if d.label.endswith("-n") else 0.0)
        if d.name == "ringnorm":
            assert d.options["a"] == pytest.approx(1 / math.sqrt(20), abs=1e-15)


def test_grids_are_lin_and_li_s(spec):
    methods = {m.label: m for m in spec.methods}
    for label in ("SVM-Stump", "SVM-Perc"):
        assert methods[label].grid == {"C": C_SMALL}  # 11 C x 5 folds = 55 problems
    if "SVM-Gauss" in methods:
        g = methods["SVM-Gauss"].grid
        assert g["C"] == [2.0**k for k in range(-5, 16, 2)]  # LIBSVM grid.py defaults
        assert g["gamma"] == [2.0**k for k in range(3, -16, -2)]
        assert len(g["C"]) * len(g["gamma"]) * spec.protocol.cv_folds == 550


def test_table1_methods_fix_T_and_use_rcd_perceptrons():
    spec = load_spec(SPECS[1])
    methods = {m.label: m for m in spec.methods}
    for label, wl, T in [
        ("AB-Stump-T100", "stump", 100),
        ("AB-Stump-T1000", "stump", 1000),
        ("AB-Perc-T100", "perceptron", 100),
        ("AB-Perc-T1000", "perceptron", 1000),
    ]:
        m = methods[label]
        assert m.estimator == "adaboost" and not m.grid
        assert m.params["n_estimators"] == T and m.params["weak_learner"] == wl
        if wl == "perceptron":  # the first author's "perc200" (docs/papers/lin_li.md)
            assert m.params["max_run"] == 200
            assert m.params["zero_error"] == "continue"


def test_fig2_spec_configures_the_learners_as_table1():
    """lin_li_fig2.yaml restates Table I's settings; the two specs must not drift apart."""
    table1 = {m.label: m for m in load_spec(SPECS[1]).methods}
    fig2 = {m.label: m for m in load_spec(ROOT / "experiments" / "lin_li_fig2.yaml").methods}
    assert fig2["SVM-Stump"].grid == table1["SVM-Stump"].grid
    assert fig2["SVM-Perc"].grid == table1["SVM-Perc"].grid
    assert fig2["AdaBoost-Stump"].params == table1["AB-Stump-T100"].params
    assert fig2["AdaBoost-Perc"].params == table1["AB-Perc-T100"].params


def test_every_cell_has_exactly_one_published_value(spec):
    ref = load_reference(spec.table.reference)
    for d in DATASETS:
        for m in spec.methods:
            pub = match_reference(
                ref,
                d,
                m.label,
                reference_methods=spec.table.reference_methods,
                reference_datasets=spec.table.reference_datasets,
            )
            assert pub is not None, (d, m.label)
            assert pub.spread_kind == "stderr"


def test_reference_copies_equal_the_shared_csvs():
    shared = ROOT.parent / "shared" / "reference"
    if not shared.is_dir():
        pytest.skip("the reference folder is not beside the checkout")
    for k in (1, 2):
        ours = ROOT / "experiments" / "reference" / f"lin_li_table{k}.csv"
        assert ours.read_bytes() == (shared / f"lin_li_table{k}.csv").read_bytes()


@pytest.mark.parametrize("label", ["twonorm-n", "threenorm-n", "ringnorm-n"])
def test_label_noise_flips_exactly_ten_percent_of_training_labels_only(label):
    spec = load_spec(SPECS[1])
    ds = next(d for d in spec.datasets if d.label == label)
    clean_opts = {k: v for k, v in ds.options.items() if k != "label_noise"}
    for index in range(3):
        noisy = make_realisation(ds.name, ds.options, spec.protocol, index, seed=0)
        clean = make_realisation(ds.name, clean_opts, spec.protocol, index, seed=0)
        # same sample, so the flips are the only difference (Lin & Li's 10 % noise)
        assert np.array_equal(noisy.X_train, clean.X_train)
        assert np.array_equal(noisy.X_test, clean.X_test)
        flipped = np.flatnonzero(noisy.y_train != clean.y_train)
        assert flipped.size == 30 == round(0.1 * 300)
        assert np.array_equal(noisy.y_train[flipped], -clean.y_train[flipped])
        assert np.array_equal(noisy.y_test, clean.y_test)  # test labels never flipped
        assert noisy.info["label_noise"]["n_flipped"] == 30


def test_uci_sets_split_60_40(monkeypatch):
    mirror = ROOT.parent / "shared" / "datasets"
    if not os.environ.get("KERNBENCH_MIRROR"):
        if not mirror.is_dir():
            pytest.skip("no dataset mirror")
        monkeypatch.setenv("KERNBENCH_MIRROR", str(mirror))
    spec = load_spec(SPECS[1])
    for index in range(2):
        r = make_realisation("sonar", {}, spec.protocol, index, seed=0)
        n = r.y_train.size + r.y_test.size
        assert n == 208 and abs(r.y_train.size - 0.6 * n) < 1  # 124 / 84


def test_scaled_check_reruns_table1_ab_perc_on_the_generated_rows_scaled():
    """experiments/lin_li_table1_scaled.yaml (the AB-Perc ringnorm note of docs/papers/lin_li.md):
    Table I's six generated rows and AB-Perc columns, the same samples, scaled to [-1, 1]."""
    base = load_spec(SPECS[1])
    check = load_spec(ROOT / "experiments" / "lin_li_table1_scaled.yaml")
    assert [d.label for d in check.datasets] == DATASETS[:6]
    base_methods = {m.label: m for m in base.methods}
    assert {m.label for m in check.methods} == {"AB-Perc-T100", "AB-Perc-T1000"}
    for m in check.methods:
        assert (m.estimator, m.params) == (
            base_methods[m.label].estimator,
            base_methods[m.label].params,
        )
    for d_base, d in zip(base.datasets[:6], check.datasets, strict=True):
        assert (d_base.name, d_base.options) == (d.name, d.options)
        assert d_base.protocol.preprocess is None  # Table I leaves them unscaled
        p = d.protocol or check.protocol
        assert p.preprocess == "minmax" and tuple(p.minmax_range) == (-1.0, 1.0)
        a = make_realisation(d.name, d.options, d_base.protocol, 3, seed=base.protocol.seed)
        b = make_realisation(d.name, d.options, p, 3, seed=check.protocol.seed)
        np.testing.assert_array_equal(a.X_train, b.X_train)  # the same sample, scaled per cell
        np.testing.assert_array_equal(a.y_train, b.y_train)
