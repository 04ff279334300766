"""Planning: cell counts, filters, stable identities, per-dataset protocols."""

import pytest

from kernbench.errors import UsageError
from kernbench.runner.plan import cells as plan
from kernbench.runner.plan import revisions
from kernbench.runner.plan.cells import parse_only, plan_cells
from kernbench.specs.load import parse_spec

SPEC = {
    "name": "p",
    "datasets": [
        "breast_cancer",
        {"name": "twonorm", "label": "tn", "protocol": {"n_realisations": 1, "preprocess": None}},
    ],
    "protocol": {"n_realisations": 3, "preprocess": "minmax", "cv_folds": 2},
    "methods": {
        "A": {"estimator": "adaboost", "grid": {"n_estimators": [5, 10]}},
        "S": {"estimator": "svm_stump"},
    },
}


def fp(name, options):
    return f"fp-{name}"


def test_counts_filters_and_per_dataset_protocols():
    spec = parse_spec(SPEC, file="p.yaml")
    cells = plan_cells(spec, fingerprint=fp)
    assert len(cells) == 3 * 2 + 1 * 2
    tn = [c for c in cells if c.dataset.label == "tn"]
    assert {c.protocol.preprocess for c in tn} == {None}
    assert {c.protocol.preprocess for c in cells if c.dataset.label != "tn"} == {"minmax"}
    capped = plan_cells(spec, fingerprint=fp, realisations=1, only=parse_only(["method=A"]))
    assert [(c.dataset.label, c.realisation, c.method.label) for c in capped] == [
        ("breast_cancer", 0, "A"),
        ("tn", 0, "A"),
    ]


def test_identity_is_stable_and_sensitive():
    spec = parse_spec(SPEC, file="p.yaml")
    ids = [c.cell_id for c in plan_cells(spec, fingerprint=fp)]
    assert ids == [c.cell_id for c in plan_cells(spec, fingerprint=fp)]
    assert len(set(ids)) == len(ids)
    changed = parse_spec({**SPEC, "protocol": {**SPEC["protocol"], "cv_folds": 3}}, file="p.yaml")
    assert not set(ids) & {c.cell_id for c in plan_cells(changed, fingerprint=fp)}
    other_fp = plan_cells(spec, fingerprint=lambda n, o: "other")
    assert not set(ids) & {c.cell_id for c in other_fp}


def _set_revision(monkeypatch, estimator, rule):
    """Replace ``estimator``'s revisions by one whose number is ``rule(params, grid)``."""
    real = revisions.result_revision

    def patched(name, params, grid):
        return rule(params, grid) if name == estimator else real(name, params, grid)

    monkeypatch.setattr(plan, "result_revision", patched)


def test_a_result_revision_reruns_only_that_estimators_cells(monkeypatch):
    spec = parse_spec(SPEC, file="p.yaml")
    before = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    newer = max(r.number for r in revisions.REVISIONS["adaboost"].revisions) + 1
    _set_revision(monkeypatch, "adaboost", lambda params, grid: newer)
    after = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    changed = {key[2] for key in before if before[key] != after[key]}
    assert changed == {"A"}  # the svm_stump cells keep their identity


def test_a_parameter_dependent_revision_reruns_only_those_cells(monkeypatch):
    """CG-Boost's revision 1 (the 2-norm's gap-relative TR2) applies to its 2-norm cells with
    the default ``tol`` only: 1-norm cells and an explicit ``tol`` keep their identity."""
    spec = parse_spec(
        {
            **SPEC,
            "methods": {
                "L2": {"estimator": "cgboost"},
                "L2g": {"estimator": "cgboost", "grid": {"norm": ["l1", "l2"]}},
                "L1": {"estimator": "cgboost", "params": {"norm": "l1"}},
                "T": {"estimator": "cgboost", "params": {"tol": 1e-4}},
            },
        },
        file="p.yaml",
    )
    now = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    _set_revision(monkeypatch, "cgboost", lambda params, grid: 0)
    before = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    assert {key[2] for key in now if now[key] != before[key]} == {"L2", "L2g"}


def test_cgens_shrinking_revision_reruns_only_its_exact_bias_cells(monkeypatch):
    """CGENS revision 3 (the shrinking SMO) applies where the exact bias is solved: the default,
    or a grid over the mode; ``bias_mode: liblinear`` cells keep revision 1 and their identity."""
    spec = parse_spec(
        {
            **SPEC,
            "methods": {
                "E": {"estimator": "cgens"},
                "Eg": {"estimator": "cgens", "grid": {"bias_mode": ["liblinear", "exact"]}},
                "L": {"estimator": "cgens", "params": {"bias_mode": "liblinear"}},
            },
        },
        file="p.yaml",
    )
    now = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    _set_revision(monkeypatch, "cgens", lambda params, grid: 1)
    before = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    assert {key[2] for key in now if now[key] != before[key]} == {"E", "Eg"}


_LPBOOST_FORMS = {
    "N": {"estimator": "lpboost", "grid": {"nu": [0.1, 0.3]}},
    "C": {"estimator": "lpboost", "params": {"C": 1.0}},
    "Cg": {"estimator": "lpboost", "grid": {"C": [0.5, 2.0]}},
}


def _lpboost_c_form(params, grid) -> bool:
    return params.get("C") is not None or any(c is not None for c in grid.get("C", []))


def test_lpboost_cut_master_revision_reruns_only_its_c_form_cells(monkeypatch):
    """LPBoost revision 4 (the C-form held as its dual, grown by cuts) applies to C-form cells
    (C given, or a grid over C); ν-form cells keep their revision and their identity."""
    spec = parse_spec({**SPEC, "methods": _LPBOOST_FORMS}, file="p.yaml")
    now = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    today = revisions.result_revision
    _set_revision(  # before revision 4: the C-form at 3, the ν-form as it is today
        monkeypatch,
        "lpboost",
        lambda params, grid: 3 if _lpboost_c_form(params, grid) else today("lpboost", params, grid),
    )
    before = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    assert {key[2] for key in now if now[key] != before[key]} == {"C", "Cg"}


def test_lpboost_nu_floor_revision_reruns_only_its_nu_form_cells(monkeypatch):
    """LPBoost revision 6 (a ν at or below ν_min raised above it) applies to ν-form cells only."""
    spec = parse_spec({**SPEC, "methods": _LPBOOST_FORMS}, file="p.yaml")
    now = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    today = revisions.result_revision
    _set_revision(  # before revision 6: the ν-form at 3 (4 and 5 do not apply), the C-form today
        monkeypatch,
        "lpboost",
        lambda params, grid: today("lpboost", params, grid) if _lpboost_c_form(params, grid) else 3,
    )
    before = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    assert {key[2] for key in now if now[key] != before[key]} == {"N"}


def _keys(cells):
    return sorted({(c.dataset.label, c.method.label) for c in cells})


def test_only_accepts_catalogue_names_aliases_and_estimator_names():
    spec = parse_spec(SPEC, file="p.yaml")  # twonorm is labelled 'tn'
    by_name = plan_cells(spec, fingerprint=fp, only=parse_only(["dataset=twonorm"]))
    by_label = plan_cells(spec, fingerprint=fp, only=parse_only(["dataset=tn"]))
    assert [c.cell_id for c in by_name] == [c.cell_id for c in by_label]
    assert _keys(by_name) == [("tn", "A"), ("tn", "S")]
    by_alias = plan_cells(spec, fingerprint=fp, only=parse_only(["dataset=WDBC-sklearn"]))
    assert {c.dataset.label for c in by_alias} == {"breast_cancer"}
    by_estimator = plan_cells(spec, fingerprint=fp, only=parse_only(["method=svm_stump"]))
    assert {c.method.label for c in by_estimator} == {"S"} and len(by_estimator) == 4


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ("dataset=iris", "dataset=iris matches no dataset of 'p'"),
        ("dataset=twonorn", "did you mean 'twonorm'?"),
        ("method=svm_stmp", "did you mean 'svm_stump'?"),
        ("realisation=3", "0..2"),
        ("realisation=-1", "matches no realisation"),
    ],
)
def test_only_value_matching_nothing_is_a_usage_error(item, needle):
    spec = parse_spec(SPEC, file="p.yaml")
    with pytest.raises(UsageError, match="--only") as info:
        plan_cells(spec, fingerprint=fp, only=parse_only([item]))
    assert needle in str(info.value)


#: datasets with options and a protocol override; a grid, a result revision (CG-Boost's 2-norm),
#: a ``take`` listed before its source, and a class from outside the package (a plug-in record);
#: 12 realisations, so two-digit indices are spliced too
WIDE = {
    "name": "wide",
    "datasets": [
        "breast_cancer",
        {
            "name": "twonorm",
            "label": "tn",
            "options": {"n_train": 50, "d": 5},
            "protocol": {"n_realisations": 3, "preprocess": None, "cv_folds": 2},
        },
    ],
    "protocol": {"n_realisations": 12, "seed": 7, "preprocess": "minmax"},
    "methods": {
        "RFF": {
            "estimator": "rff_svm",
            "params": {"n_components": 50},
            "take": {
                "from": "SVM-RBF",
                "params": {"sigma": {"param": "gamma", "transform": "gamma_to_sigma"}},
            },
        },
        "SVM-RBF": {"estimator": "svm_gauss", "grid": {"gamma": [0.5, 0.02], "C": [1.0, 10.0]}},
        "A": {"estimator": "adaboost", "grid": {"n_estimators": [5, 10]}},
        "CG": {"estimator": "cgboost"},
        "LR": {"estimator": "sklearn.linear_model:LogisticRegression", "params": {"C": 0.5}},
    },
}


def _one_by_one(spec):
    """Every cell's identity from :func:`plan.cell_identity` and its seeds from
    :func:`derive_seed`, computed one cell at a time (sources before the methods taking)."""
    from kernbench.cells.seeds import derive_seed

    by_label = {m.label: m for m in spec.methods}
    ids, seeds = {}, {}
    for ds in spec.datasets:
        protocol = ds.protocol or spec.protocol
        for r in range(protocol.n_realisations):
            for label in ("SVM-RBF", "RFF", "A", "CG", "LR"):
                m = by_label[label]
                source = ids[(ds.label, r, m.take.source)] if m.take is not None else None
                ids[(ds.label, r, label)] = plan.cell_identity(
                    ds, r, m, protocol, fp(ds.name, ds.options), source_id=source
                )
                seeds[(ds.label, r, label)] = (
                    derive_seed(spec.protocol.seed, ds.label, r, "cv"),
                    derive_seed(spec.protocol.seed, ds.label, r, label),
                )
    return ids, seeds


def _templates(spec):
    return [
        plan._IdentityTemplate.build(ds, m, ds.protocol or spec.protocol, fp(ds.name, ds.options))
        for ds in spec.datasets
        for m in plan._sources_first(spec.methods)
    ]


def test_planned_identities_and_seeds_equal_the_one_by_one_computation():
    spec = parse_spec(WIDE, file="wide.yaml")
    assert all(t is not None for t in _templates(spec))  # every identity below is spliced
    assert spec.methods[-1].source is not None and spec.methods[0].take is not None
    cells = plan_cells(spec, fingerprint=fp)
    ids, seeds = _one_by_one(spec)
    assert len(cells) == len(ids) == (12 + 3) * 5
    assert {c.key: c.cell_id for c in cells} == ids
    assert {c.key: (c.cv_seed, c.learner_seed) for c in cells} == seeds
    for c in cells:
        source = ids[(c.dataset.label, c.realisation, "SVM-RBF")]
        assert c.source_id == (source if c.method.label == "RFF" else None)
    assert {c.protocol.cv_folds for c in cells if c.dataset.label == "tn"} == {2}


def test_a_spec_holding_the_stand_in_texts_falls_back_to_the_same_identities():
    """A stand-in's JSON occurring in the spec's own values: those identities are computed one by
    one, and equal the reference all the same."""
    from dataclasses import replace

    spec = parse_spec(WIDE, file="wide.yaml")
    tn = replace(
        spec.datasets[1], options={**spec.datasets[1].options, "x": plan._REALISATION_MARK}
    )
    rff = replace(spec.methods[0], params={"n_components": 50, "y": plan._SOURCE_MARK})
    spec = replace(spec, datasets=(spec.datasets[0], tn), methods=(rff, *spec.methods[1:]))
    labels = [m.label for m in plan._sources_first(spec.methods)]
    built = dict(zip([(ds.label, m) for ds in spec.datasets for m in labels], _templates(spec)))
    assert {key for key, t in built.items() if t is None} == {("breast_cancer", "RFF")} | {
        ("tn", m) for m in labels
    }
    ids, _ = _one_by_one(spec)
    assert {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)} == ids
