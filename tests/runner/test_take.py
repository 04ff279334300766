"""``take``: a method takes chosen parameters from another method's cell on the same realisation
(Shen & Liu reuse the RBF-SVM's cross-validated bandwidth for their Fourier weak learners)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import yaml

from kernbench.errors import SpecError
from kernbench.runner.options import RunOptions
from kernbench.runner.plan.cells import plan_cells
from kernbench.runner.run import run_experiment
from kernbench.specs.load import load_spec
from kernbench.specs.param_transforms import TRANSFORMS
from kernbench.store import Store

GAMMAS = [0.5, 0.02]
SPEC = {
    "name": "take",
    "datasets": [{"name": "twonorm", "options": {"n_train": 80, "n_test": 200, "d": 5}}],
    "protocol": {"n_realisations": 2, "cv_folds": 3, "seed": 2},
    "methods": {
        "SVM-RBF": {"estimator": "svm_gauss", "grid": {"gamma": GAMMAS, "C": [1.0, 10.0]}},
        "RFF": {
            "estimator": "rff_svm",
            "params": {"n_components": 50},
            "grid": {"C": [1.0]},
            "take": {
                "from": "SVM-RBF",
                "params": {"sigma": {"param": "gamma", "transform": "gamma_to_sigma"}},
            },
        },
    },
}


def _spec(tmp_path, spec=SPEC, name="take.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return load_spec(path)


def test_transforms_map_the_rbf_bandwidth_both_ways():
    d2 = 3.7
    for gamma in (0.01, 0.5, 8.0):
        sigma = TRANSFORMS["gamma_to_sigma"](gamma)
        assert math.exp(-gamma * d2) == pytest.approx(math.exp(-d2 / (2 * sigma**2)))
        assert TRANSFORMS["sigma_to_gamma"](sigma) == pytest.approx(gamma)
    with pytest.raises(ValueError, match="positive"):
        TRANSFORMS["gamma_to_sigma"](0.0)


def test_dependent_cells_take_the_sources_choice_per_realisation(tmp_path):
    spec = _spec(tmp_path)
    summary = run_experiment(spec, RunOptions(out_dir=tmp_path / "res", jobs=2))
    assert summary.ok, summary.failed
    with Store(tmp_path / "res") as store:
        rows = {(r["method"], r["realisation"]): r for r in store.rows()}
    for r in range(2):
        svm, rff = rows[("SVM-RBF", r)], rows[("RFF", r)]
        gamma = svm["params"]["gamma"]
        assert rff["params"]["sigma"] == pytest.approx(1.0 / np.sqrt(2.0 * gamma))
        assert rff["result"]["taken"] == {"from": "SVM-RBF", "cell_id": svm["cell_id"]}


def test_only_the_dependent_method_runs_its_sources_too(tmp_path):
    spec = _spec(tmp_path)
    summary = run_experiment(
        spec, RunOptions(out_dir=tmp_path / "res", jobs=1, only={"method": ["RFF"]})
    )
    assert summary.ok and summary.counts == {"done": 4}  # 2 RFF cells and their 2 sources


def test_the_source_enters_the_identity(tmp_path):
    ids = {c.key: c.cell_id for c in plan_cells(_spec(tmp_path))}
    other = copy.deepcopy(SPEC)
    other["methods"]["SVM-RBF"]["grid"]["gamma"] = [0.5]
    ids2 = {c.key: c.cell_id for c in plan_cells(_spec(tmp_path, other, "b.yaml"))}
    for key, cid in ids.items():
        assert (cid != ids2[key]) is True  # the source changed, so did every cell taking from it


def test_a_failed_source_fails_its_dependents_with_the_reason(tmp_path, monkeypatch):
    import kernbench.runner.cell.select as select

    real = select.select_fit_score

    def broken(est, *args, **kwargs):
        if type(est).__name__ == "SVMGauss":
            raise np.linalg.LinAlgError("boom")
        return real(est, *args, **kwargs)

    monkeypatch.setattr(select, "select_fit_score", broken)
    summary = run_experiment(_spec(tmp_path), RunOptions(out_dir=tmp_path / "res", jobs=1))
    messages = {method: msg for _, _, method, msg in summary.failed}
    assert "LinAlgError: boom" in messages["SVM-RBF"]
    assert "takes sigma from 'SVM-RBF'" in messages["RFF"] and "failed" in messages["RFF"]


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda s: s["methods"]["RFF"]["take"].update({"from": "SVM-RFB"}), "SVM-RBF"),
        (lambda s: s["methods"]["RFF"]["take"].update({"from": "RFF"}), "another method"),
        (
            lambda s: s["methods"]["RFF"]["take"]["params"]["sigma"].update({"transform": "log"}),
            "unknown transform",
        ),
        (
            lambda s: s["methods"]["RFF"]["take"]["params"]["sigma"].update({"param": "degree"}),
            "neither searches nor fixes",
        ),
        (lambda s: s["methods"]["RFF"]["grid"].update({"sigma": [1.0]}), "remove it"),
        (
            lambda s: s["methods"]["SVM-RBF"].update(
                {"grid": {"gamma": GAMMAS}, "take": {"from": "RFF", "params": {"C": "C"}}}
            ),
            "take from each other",
        ),
    ],
)
def test_bad_take_is_a_spec_error_naming_the_key(tmp_path, edit, match):
    spec = copy.deepcopy(SPEC)
    edit(spec)
    with pytest.raises(SpecError, match=match) as info:
        _spec(tmp_path, spec)
    assert "take" in str(info.value) or "grid" in str(info.value)


def test_only_sources_wait_for_a_wave_the_rest_run_together(tmp_path):
    """A wave ends with its slowest cell: cells nothing takes from all run in the last wave,
    so a long cell of the first methods does not hold back the cells that take parameters."""
    from kernbench.runner.todo import waves as _waves

    spec = copy.deepcopy(SPEC)
    spec["methods"]["Ada"] = {"estimator": "adaboost", "grid": {"n_estimators": [5]}}
    cells = plan_cells(_spec(tmp_path, spec))
    waves = _waves(cells)
    methods = [sorted({c.method.label for c in w}) for w in waves]
    assert methods == [["SVM-RBF"], ["Ada", "RFF"]]
    assert sum(len(w) for w in waves) == len(cells) == 6
    by_id = {c.cell_id: i for i, w in enumerate(waves) for c in w}
    assert all(by_id[c.source_id] < by_id[c.cell_id] for c in cells if c.source_id)
    # with the sources finished (not in todo), everything runs in one wave
    rest = [c for c in cells if c.method.label != "SVM-RBF"]
    assert [len(w) for w in _waves(rest)] == [4]
