"""Planning: cell counts, filters, stable identities, per-dataset protocols."""

import pytest

from kernbench.errors import UsageError
from kernbench.runner import plan, revisions
from kernbench.runner.plan import parse_only, plan_cells
from kernbench.spec import parse_spec

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


def test_lpboost_cut_master_revision_reruns_only_its_c_form_cells(monkeypatch):
    """LPBoost revision 4 (the C-form held as its dual, grown by cuts) applies to C-form cells
    (C given, or a grid over C); ν-form cells keep revision 3 and their identity."""
    spec = parse_spec(
        {
            **SPEC,
            "methods": {
                "N": {"estimator": "lpboost", "grid": {"nu": [0.1, 0.3]}},
                "C": {"estimator": "lpboost", "params": {"C": 1.0}},
                "Cg": {"estimator": "lpboost", "grid": {"C": [0.5, 2.0]}},
            },
        },
        file="p.yaml",
    )
    now = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    _set_revision(monkeypatch, "lpboost", lambda params, grid: 3)
    before = {c.key: c.cell_id for c in plan_cells(spec, fingerprint=fp)}
    assert {key[2] for key in now if now[key] != before[key]} == {"C", "Cg"}


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
