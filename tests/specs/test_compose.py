"""``extends``: a spec built on a shipped spec (or a file) with methods and data sets added or
removed keeps the base's splits and seeds, so its cells pair with the base's."""

from __future__ import annotations

import pytest
import yaml

from kernbench.errors import SpecError
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec
from kernbench.specs.shipped import resolve_spec


def write(folder, doc, name="mine.yaml"):
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_extending_grand_adds_and_removes_methods_and_datasets(tmp_path):
    path = write(
        tmp_path,
        {
            "extends": "grand",
            "name": "mine",
            "remove": {"methods": ["DRM"], "datasets": ["sonar"]},
            "methods": {"HGB": {"estimator": "sklearn.ensemble:HistGradientBoostingClassifier"}},
            "datasets": ["threenorm"],
            "protocol": {"n_realisations": 2},
        },
    )
    spec = load_spec(path, check_datasets=False)
    base = load_spec(resolve_spec("grand"), check_datasets=False)
    labels = [m.label for m in spec.methods]
    assert labels == [m.label for m in base.methods if m.label != "DRM"] + ["HGB"]
    ds = [d.label for d in spec.datasets]
    assert ds == [d.label for d in base.datasets if d.label != "sonar"] + ["threenorm"]
    assert spec.name == "mine" and spec.protocol.n_realisations == 2
    assert spec.protocol.seed == base.protocol.seed and spec.table.reference is None
    # the same splits and method seeds: a base method's cells keep their seeds
    fp = lambda n, o: "fp"  # noqa: E731
    mine = {c.key: c for c in plan_cells(spec, realisations=1, fingerprint=fp)}
    theirs = {c.key: c for c in plan_cells(base, realisations=1, fingerprint=fp)}
    key = ("heart", 0, "AdaBoost")
    assert (mine[key].cv_seed, mine[key].learner_seed) == (
        theirs[key].cv_seed,
        theirs[key].learner_seed,
    )


def test_a_base_file_beside_the_spec_and_a_replaced_method(tmp_path):
    write(
        tmp_path,
        {
            "name": "base",
            "datasets": ["twonorm", "heart"],
            "protocol": {"seed": 4, "cv_folds": 2},
            "methods": {"A": {"estimator": "adaboost", "grid": {"n_estimators": [5, 10]}}},
        },
        "base.yaml",
    )
    path = write(
        tmp_path,
        {"extends": "base.yaml", "name": "child", "methods": {"A": {"estimator": "psvm"}}},
    )
    spec = load_spec(path, check_datasets=False)
    assert [(m.label, m.estimator) for m in spec.methods] == [("A", "psvm")]
    assert spec.protocol.seed == 4 and [d.label for d in spec.datasets] == ["twonorm", "heart"]


@pytest.mark.parametrize(
    ("doc", "key", "message"),
    [
        ({"extends": "no-such-spec"}, "extends", "neither a file nor a shipped spec"),
        ({"extends": "grand", "remove": {"methods": ["DMR"]}}, "remove.methods[0]", "'DRM'"),
        ({"extends": "grand", "remove": {"datasets": ["sonr"]}}, "remove.datasets[0]", "sonar"),
        ({"extends": "grand", "remove": {"rows": []}}, "remove.rows", "unknown key"),
        ({"extends": "grand", "protocol": {"seed": 7}}, "protocol.seed", "paired"),
        ({"extends": "grand", "protocol": {"train_size": 0.3}}, "protocol.train_size", "splits"),
    ],
)
def test_bad_extends_name_the_key_path(tmp_path, doc, key, message):
    path = write(tmp_path, {"name": "mine", **doc})
    with pytest.raises(SpecError) as exc:
        load_spec(path, check_datasets=False)
    assert key in str(exc.value) and message in str(exc.value)


def test_a_cycle_of_extends_is_refused(tmp_path):
    write(tmp_path, {"extends": "b.yaml", "name": "a"}, "a.yaml")
    write(tmp_path, {"extends": "a.yaml", "name": "b"}, "b.yaml")
    with pytest.raises(SpecError, match="levels of extends"):
        load_spec(tmp_path / "a.yaml", check_datasets=False)


BASE = {
    "name": "base",
    "datasets": ["heart", {"name": "twonorm", "options": {"n_train": 100, "n_test": 200}}],
    "protocol": {"seed": 4, "cv_folds": 2},
    "methods": {"A": {"estimator": "adaboost"}},
}


@pytest.mark.parametrize(
    ("datasets", "key"),
    [
        ([{"name": "twonorm", "options": {"n_train": 50, "n_test": 50}}], "datasets[0].options"),
        ([{"name": "twonorm"}], "datasets[0].options"),
        ([{"name": "threenorm", "label": "twonorm"}], "datasets[0].name"),
        ([{"name": "heart", "protocol": {"train_size": 0.3}}], "datasets[0].protocol.train_size"),
        ([{"name": "heart", "protocol": {"seed": 9}}], "datasets[0].protocol.seed"),
    ],
)
def test_an_extending_spec_cannot_change_what_decides_a_base_data_sets_splits(
    tmp_path, datasets, key
):
    write(tmp_path, BASE, "base.yaml")
    path = write(tmp_path, {"extends": "base.yaml", "name": "child", "datasets": datasets})
    with pytest.raises(SpecError) as exc:
        load_spec(path, check_datasets=False)
    assert key in str(exc.value) and "paired" in str(exc.value)
    # the same data set removed and added again is the same data set of the base
    doc = {"extends": "base.yaml", "name": "child", "remove": {"datasets": ["twonorm"]}}
    path = write(tmp_path, {**doc, "datasets": datasets})
    with pytest.raises(SpecError, match="paired"):
        load_spec(path, check_datasets=False)


def test_an_extending_spec_may_list_a_base_data_set_again_unchanged_or_under_a_new_label(
    tmp_path,
):
    write(tmp_path, BASE, "base.yaml")
    same = {"name": "twonorm", "options": {"n_train": 100, "n_test": 200}}
    other = {"name": "twonorm", "label": "twonorm-small", "options": {"n_train": 50}}
    doc = {"extends": "base.yaml", "name": "child", "datasets": [same, other]}
    spec = load_spec(write(tmp_path, doc), check_datasets=False)
    assert sorted(d.label for d in spec.datasets) == ["heart", "twonorm", "twonorm-small"]
    # a bare base name is the trap of keeping a subset (keep: is meant), refused
    with pytest.raises(SpecError, match="keep:"):
        load_spec(write(tmp_path, {**doc, "datasets": [same, "heart"]}), check_datasets=False)


def test_an_extending_spec_without_a_name_gets_its_own_never_the_bases(tmp_path):
    write(tmp_path, BASE, "base.yaml")
    spec = load_spec(write(tmp_path, {"extends": "base.yaml"}), check_datasets=False)
    assert spec.name == "mine"  # the file's stem, not "base": its own results directory
    (tmp_path / "sub").mkdir()
    for stem in ("base", "my spec"):  # the base's name, or a stem that is no name
        path = write(tmp_path / "sub", {"extends": "../base.yaml"}, f"{stem}.yaml")
        with pytest.raises(SpecError, match="needs a name of its own"):
            load_spec(path, check_datasets=False)
