"""Spec validation: every malformed spec is a SpecError naming the file and the key path."""

from __future__ import annotations

import copy
import math

import pytest
import yaml

from kernbench.errors import SpecError
from kernbench.specs.load import load_spec, parse_spec

GOOD = {
    "name": "tiny",
    "title": "Tiny",
    "datasets": [
        "breast_cancer",
        {
            "name": "twonorm",
            "label": "twonorm-n",
            "options": {"label_noise": 0.1, "n_train": 60, "n_test": 100},
        },
    ],
    "protocol": {
        "realisations": "random",
        "n_realisations": 2,
        "train_size": 0.6,
        "seed": 3,
        "cv_folds": 3,
        "preprocess": "minmax",
        "minmax_range": [-1, 1],
    },
    "methods": {
        "SVM-Stump": {"estimator": "svm_stump", "grid": {"C": [0.01, 0.1, 1.0]}},
        "AdaBoost": {"estimator": "adaboost", "grid": {"n_estimators": [5, 10]}},
    },
    "table": {"spread": "stderr"},
}


def parse(data, **kw):
    return parse_spec(data, file="x.yaml", **kw)


def test_good_spec_parses_to_typed_objects():
    spec = parse(GOOD)
    assert spec.name == "tiny"
    assert [d.label for d in spec.datasets] == ["breast_cancer", "twonorm-n"]
    assert spec.datasets[1].options["label_noise"] == 0.1
    assert spec.protocol.minmax_range == (-1.0, 1.0) and spec.protocol.cv_folds == 3
    assert [m.label for m in spec.methods] == ["SVM-Stump", "AdaBoost"]
    assert spec.methods[0].grid == {"C": [0.01, 0.1, 1.0]}
    assert spec.table.spread == "stderr"


def mutate(fn):
    data = copy.deepcopy(GOOD)
    fn(data)
    return data


CASES = [
    ("unknown top key", lambda d: d.update(metods={}), "metods", "did you mean 'methods'"),
    # an empty or blank key is quoted in the path, so the path still names it (found by the fuzzer)
    ("empty top key", lambda d: d.update({"": None}), "''", "unknown key ''"),
    (
        "blank method key",
        lambda d: d["methods"]["SVM-Stump"].update({" ": 1}),
        "methods.SVM-Stump.' '",
        "",
    ),
    (
        "misspelled method",
        lambda d: d["methods"]["AdaBoost"].update(estimator="adabost"),
        "methods.AdaBoost.estimator",
        "did you mean 'adaboost'",
    ),
    (
        "misspelled dataset",
        lambda d: d["datasets"].__setitem__(0, "breast_cancr"),
        "datasets[0]",
        "did you mean",
    ),
    (
        "negative C",
        lambda d: d["methods"]["SVM-Stump"]["grid"].__setitem__("C", [0.1, 1, -1]),
        "methods.SVM-Stump.grid.C[2]",
        "-1",
    ),
    (
        "empty grid list",
        lambda d: d["methods"]["SVM-Stump"]["grid"].__setitem__("C", []),
        "methods.SVM-Stump.grid.C",
        "non-empty list",
    ),
    (
        "non-list grid",
        lambda d: d["methods"]["SVM-Stump"]["grid"].__setitem__("C", 0.5),
        "methods.SVM-Stump.grid.C",
        "expected a list",
    ),
    ("missing methods", lambda d: d.pop("methods"), "methods", "missing required key"),
    (
        "unknown param",
        lambda d: d["methods"]["SVM-Stump"].update(params={"c": 1}),
        "methods.SVM-Stump.params.c",
        "did you mean 'C'",
    ),
    (
        "unknown protocol key",
        lambda d: d["protocol"].update(folds=3),
        "protocol.folds",
        "did you mean 'cv_folds'",
    ),
    (
        "bad realisations",
        lambda d: d["protocol"].update(realisations="predefind"),
        "protocol.realisations",
        "did you mean 'predefined'",
    ),
    (
        "fraction out of range",
        lambda d: d["protocol"].update(train_size=1.5),
        "protocol.train_size",
        "fraction",
    ),
    ("NaN", lambda d: d["protocol"].update(train_size=math.nan), "protocol.train_size", "fraction"),
    (
        "bool as int",
        lambda d: d["protocol"].update(n_realisations=True),
        "protocol.n_realisations",
        "integer",
    ),
    ("path in name", lambda d: d.update(name="../../etc"), "name", "not a valid name"),
    (
        "duplicate label",
        lambda d: d["datasets"].append("breast_cancer"),
        "datasets[2]",
        "duplicate",
    ),
    (
        "grid without CV",
        lambda d: d["protocol"].update(cv_folds=1),
        "methods.SVM-Stump.grid",
        "cv_folds >= 2",
    ),
    (
        "param and grid",
        lambda d: d["methods"]["SVM-Stump"].update(params={"C": 1}),
        "methods.SVM-Stump.grid.C",
        "both fixed",
    ),
    (
        "reference to unknown method",
        lambda d: d["table"].update(reference={"file": "x.yaml", "methods": {"SVM": "SVM"}}),
        "table.reference",
        "",
    ),
]


@pytest.mark.parametrize("what,change,path,text", CASES, ids=[c[0] for c in CASES])
def test_malformed_specs_name_file_and_key_path(what, change, path, text):
    with pytest.raises(SpecError) as info:
        parse(mutate(change))
    msg = str(info.value)
    assert msg.startswith("x.yaml: ")
    assert info.value.path.startswith(path), msg
    assert text in msg


def test_yaml_python_tags_are_refused(tmp_path):
    f = tmp_path / "evil.yaml"
    f.write_text("name: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(SpecError, match="invalid YAML"):
        load_spec(f)


def test_missing_file_and_empty_file(tmp_path):
    with pytest.raises(SpecError, match="no such file"):
        load_spec(tmp_path / "nope.yaml")
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(SpecError, match="empty"):
        load_spec(tmp_path / "empty.yaml")


def test_round_trip_through_yaml_file(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump(GOOD, sort_keys=False))
    assert load_spec(f).methods == parse(GOOD).methods


def test_per_dataset_protocol_overrides():
    data = mutate(
        lambda d: d["datasets"].__setitem__(
            1,
            {
                "name": "twonorm",
                "options": {"n_train": 60, "n_test": 100},
                "protocol": {"preprocess": None, "n_realisations": 4},
            },
        )
    )
    spec = parse(data)
    assert spec.datasets[0].protocol is None
    own = spec.datasets[1].protocol
    assert own.preprocess is None and own.n_realisations == 4
    assert own.cv_folds == spec.protocol.cv_folds == 3 and own.seed == spec.protocol.seed
    bad = mutate(
        lambda d: d["datasets"].__setitem__(
            0, {"name": "breast_cancer", "protocol": {"cv_folds": 0}}
        )
    )
    with pytest.raises(SpecError) as info:
        parse(bad)
    assert info.value.path == "datasets[0].protocol.cv_folds"
    seeded = mutate(
        lambda d: d["datasets"].__setitem__(0, {"name": "breast_cancer", "protocol": {"seed": 1}})
    )
    with pytest.raises(SpecError, match="datasets\\[0\\].protocol.seed"):
        parse(seeded)


def test_reference_stand_ins_name_datasets_of_the_spec(tmp_path):
    (tmp_path / "ref.csv").write_text("dataset,method,mean\nbreast_cancer,AdaBoost,3.0\n")
    data = copy.deepcopy(GOOD)
    data["table"]["reference"] = {
        "file": "ref.csv",
        "stand_ins": {"twonorm-n": "the paper's noisy twonorm"},
    }
    spec = parse_spec(data, file=str(tmp_path / "s.yaml"))
    assert spec.table.reference_stand_ins == {"twonorm-n": "the paper's noisy twonorm"}
    data["table"]["reference"]["stand_ins"] = {"twonorm": "x"}
    with pytest.raises(SpecError) as info:
        parse_spec(data, file=str(tmp_path / "s.yaml"))
    assert info.value.path == "table.reference.stand_ins.twonorm"
    assert "did you mean 'twonorm-n'" in str(info.value)
    data["table"]["reference"]["stand_ins"] = {"twonorm-n": 3}
    with pytest.raises(SpecError) as info:
        parse_spec(data, file=str(tmp_path / "s.yaml"))
    assert info.value.path == "table.reference.stand_ins.twonorm-n"


@pytest.mark.parametrize(
    ("grid", "key"),
    [
        ({"C": [1, 10, 1]}, "grid.C[2]"),
        ({"C": [1, 1.0]}, "grid.C[1]"),  # the same number
        ({"n_estimators": [5, 20, 5]}, "grid.n_estimators[2]"),
    ],
)
def test_a_repeated_grid_value_is_refused(tmp_path, grid, key):
    estimator = "svm_stump" if "C" in grid else "adaboost"
    doc = {
        "name": "dup",
        "datasets": ["heart"],
        "protocol": {"cv_folds": 2},
        "methods": {"m": {"estimator": estimator, "grid": grid}},
    }
    path = tmp_path / "dup.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(SpecError) as exc:
        load_spec(path, check_datasets=False)
    assert f"methods.m.{key}" in str(exc.value) and "already in the grid" in str(exc.value)


def test_every_protocol_field_has_its_check():
    """A Protocol field without an entry in the parser's table would be accepted and ignored."""
    from kernbench.cells.protocol import Protocol
    from kernbench.specs.load import _PROTOCOL_FIELDS

    assert set(_PROTOCOL_FIELDS) == set(Protocol.__dataclass_fields__)
