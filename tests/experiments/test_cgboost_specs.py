"""The CG-Boost specs (experiments/cgboost_table2.yaml, cgboost_table3_4.yaml) and references."""

from __future__ import annotations

from pathlib import Path

from kernbench.methods import CGBoost, CGBoostRegressor
from kernbench.report.reference import load_reference, match_reference
from kernbench.specs.load import load_spec

ROOT = Path(__file__).resolve().parents[2]


def test_table2_spec_protocol_and_models():
    spec = load_spec(ROOT / "experiments" / "cgboost_table2.yaml")
    assert [d.name for d in spec.datasets] == ["wdbc", "ionosphere", "pima"]
    p = spec.protocol
    assert (p.n_realisations, p.train_size, p.preprocess) == (5, 0.8, "standardize")
    methods = {m.label: m for m in spec.methods}
    assert methods["mixture"].params["kernels"] == ["linear", "rbf"]
    assert methods["composite"].params["composite"] is True
    # TR2: the mixtures' cap lies above m·P on the largest set (Pima, 614 training points × 2)
    for label in ("mixture", "mixture-1n"):
        assert CGBoost(**methods[label].params).max_iter > 614 * 2
    for m in methods.values():
        assert m.grid == {"C": [1, 10, 100]}
        CGBoost(**m.params)  # every parameter is the estimator's
    ref = load_reference(spec.table.reference)
    kw = dict(reference_methods=spec.table.reference_methods, value="fit_time_s")
    pub = match_reference(ref, "Breast", "mixture", **kw)
    assert pub is not None and pub.mean == 17.45  # T_trn of the mixture on Breast
    assert match_reference(ref, "Breast", "mixture-1n", **kw) is None  # no published 1-norm row


def test_table2_runs_both_readings_tr1_and_tr2():
    """The paper names TR1 and TR2 for Table 2: every 2-norm model runs under both, compared
    with the same published row."""
    spec = load_spec(ROOT / "experiments" / "cgboost_table2.yaml")
    methods = {m.label: m for m in spec.methods}
    ref = load_reference(spec.table.reference)
    kw = dict(reference_methods=spec.table.reference_methods, value="fit_time_s")
    for label in ("linear", "RBF", "composite", "mixture"):
        tr2, tr1 = methods[label], methods[f"{label}-tr1"]
        assert CGBoost(**tr2.params).termination == "TR2"
        assert tr1.params == {**tr2.params, "termination": "TR1"}
        assert tr1.grid == tr2.grid
        assert match_reference(ref, "Pima", f"{label}-tr1", **kw) == match_reference(
            ref, "Pima", label, **kw
        )


def test_table3_4_spec_binarised_sets_and_reference():
    spec = load_spec(ROOT / "experiments" / "cgboost_table3_4.yaml")
    opts = {d.label: d.options for d in spec.datasets}
    assert opts["pendigits-odd"] == {"positive": [1, 3, 5, 7, 9]}
    assert spec.protocol.train_size == 3000
    for m in spec.methods:
        assert m.params["validation_fraction"] * 3000 == 2000  # 1000 train / 2000 validation
        est = CGBoost(**m.params)
        # TR2 for every model: the cap is at least the candidate columns, m = 1000 per kernel
        # (a single-kernel or composite model has m columns, a mixture m per kernel)
        n_candidates = 1000 * (1 if est.composite else len(est.kernels))
        assert est.max_iter >= n_candidates, m.label
    ref = load_reference(spec.table.reference)
    kw = dict(
        reference_methods=spec.table.reference_methods,
        reference_datasets=spec.table.reference_datasets,
    )
    assert match_reference(ref, "pendigits-odd", "LQR-mix", **kw).mean == 13.5
    assert match_reference(ref, "pendigits-odd", "LQR-mix-1n", **kw).mean == 13.1
    assert match_reference(ref, "optdigits-odd", "LR-comp", **kw).mean == 20.0


def test_table5_spec_sizes_validation_count_and_reference():
    spec = load_spec(ROOT / "experiments" / "cgboost_table5.yaml")
    sizes = [d.protocol.train_size - 2000 for d in spec.datasets]
    assert sizes == [1000, 2000, 5000, 10000]  # training points after the 2000 held out
    for m in spec.methods:
        assert m.params["validation_fraction"] == 2000 and m.params["termination"] in ("TR3", "TR2")
        CGBoost(**m.params)
    assert spec.table.value == "n_iter" and len(spec.methods) == 3
    ref = load_reference(spec.table.reference)
    kw = dict(
        reference_methods=spec.table.reference_methods,
        reference_datasets=spec.table.reference_datasets,
    )
    assert match_reference(ref, "letter-1k", "mixture", value="n_iter", **kw).mean == 253
    assert match_reference(ref, "letter-10k", "mixture", value="n_iter", **kw).mean == 613
    assert match_reference(ref, "letter-5k", "mixture", value="fit_time_s", **kw).mean == 740
    assert match_reference(ref, "letter-5k", "mixture-1n", value="n_iter", **kw) is None


def test_fig1_and_fig4_specs():
    fig1 = load_spec(ROOT / "experiments" / "cgboost_fig1.yaml")
    assert fig1.datasets[0].name == "cgboost-toy" and fig1.protocol.decision_grid == 50
    assert fig1.table.value == "test_rmse"
    for m in fig1.methods:
        CGBoostRegressor(**m.params)
    # the 2-norm models pin the master their cells were computed with (auto is now SMO)
    assert {m.params.get("solver") for m in fig1.methods if m.params.get("norm") != "l1"} == {
        "osqp"
    }
    fig4 = load_spec(ROOT / "experiments" / "cgboost_fig4.yaml")
    cs = sorted({m.params["C"] for m in fig4.methods})
    assert cs == [1.0, 10.0, 100.0, 1000.0]
    for m in fig4.methods:
        assert m.params["validation_fraction"] == 2000
        CGBoost(**m.params)
