"""``keep:`` and ``remove:`` in a spec that extends another: a subset of the base's data sets
and methods, by table label or catalogue name, and the list that reads as "keep these" but
would add to the base refused with the ``keep:`` that was meant."""

from __future__ import annotations

import pytest
import yaml

from kernbench.errors import SpecError
from kernbench.specs.load import load_spec
from kernbench.specs.shipped import resolve_spec


def write(folder, doc, name="mine.yaml"):
    path = folder / name
    path.write_text(yaml.safe_dump({"extends": "grand", "name": "mine", **doc}, sort_keys=False))
    return path


def test_keep_takes_labels_and_catalogue_names_in_the_base_order(tmp_path):
    path = write(
        tmp_path,
        {
            "keep": {"datasets": ["sonar", "pima", "heart"], "methods": ["svm_gauss", "AdaBoost"]},
            "methods": {"HGB": {"estimator": "sklearn.ensemble:HistGradientBoostingClassifier"}},
        },
    )
    spec = load_spec(path, check_datasets=False)
    assert [d.label for d in spec.datasets] == ["heart", "diabetes", "sonar"]  # grand's order
    assert [m.label for m in spec.methods] == ["AdaBoost", "SVM-Gauss", "HGB"]
    base = {d.label: d for d in load_spec(resolve_spec("grand"), check_datasets=False).datasets}
    assert spec.datasets[1] == base["diabetes"]  # kept as the base has it, protocol and all


def test_remove_takes_a_catalogue_name_too_and_applies_after_keep(tmp_path):
    path = write(
        tmp_path,
        {
            "keep": {"datasets": ["heart", "sonar", "diabetes"]},
            "remove": {"datasets": ["pima"], "methods": ["adaboost"]},
        },
    )
    spec = load_spec(path, check_datasets=False)
    assert [d.label for d in spec.datasets] == ["heart", "sonar"]
    assert "AdaBoost" not in [m.label for m in spec.methods] and len(spec.methods) == 13


@pytest.mark.parametrize(
    ("doc", "key", "message"),
    [
        ({"keep": {"datasets": ["pma"]}}, "keep.datasets[0]", "did you mean 'pima'"),
        ({"keep": {"methods": ["SVMGauss"]}}, "keep.methods[0]", "'SVM-Gauss'"),
        ({"keep": {"datasets": "heart"}}, "keep.datasets", "expected a list"),
        ({"keep": {"rows": ["heart"]}}, "keep.rows", "unknown key"),
        ({"keep": ["heart"]}, "keep", "expected a mapping"),
    ],
)
def test_bad_keep_names_the_key_path(tmp_path, doc, key, message):
    with pytest.raises(SpecError) as exc:
        load_spec(write(tmp_path, doc), check_datasets=False)
    assert f": {key}: " in str(exc.value) and message in str(exc.value)


def test_a_list_of_the_bases_data_sets_is_refused_with_the_keep_that_was_meant(tmp_path):
    """The trap of #48: `datasets: [heart, sonar, liver]` kept all 26 of grand's data sets."""
    with pytest.raises(SpecError) as exc:
        load_spec(write(tmp_path, {"datasets": ["heart", "sonar", "liver"]}), check_datasets=False)
    text = str(exc.value)
    assert ": datasets[0]: to keep only some data sets of 'grand', write " in text
    assert "`keep: {datasets: [heart, sonar, liver]}`" in text
    with pytest.raises(SpecError, match=r"'pima' is already one of them \(as 'diabetes'\)"):
        load_spec(write(tmp_path, {"datasets": ["pima"]}), check_datasets=False)


def test_a_list_under_methods_is_refused_with_the_keep_that_was_meant(tmp_path):
    with pytest.raises(SpecError, match=r"write `keep: \{methods: \[AdaBoost, SVM-Gauss\]\}`"):
        load_spec(write(tmp_path, {"methods": ["AdaBoost", "SVM-Gauss"]}), check_datasets=False)


def test_a_new_data_set_or_a_relabelled_copy_is_still_added(tmp_path):
    doc = {"datasets": ["threenorm", {"name": "heart", "label": "heart-2", "options": {}}]}
    spec = load_spec(write(tmp_path, doc), check_datasets=False)
    assert [d.label for d in spec.datasets][-2:] == ["threenorm", "heart-2"]
