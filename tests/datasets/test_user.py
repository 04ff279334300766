"""Datasets of the user's own: data files named in a spec, and user catalogue files."""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from kernbench.datasets import catalog, get_dataset, list_datasets, make_realisation
from kernbench.datasets.user_catalogue import (
    ENTRY_KEYS,
    REQUIRED_KEYS,
    _CatalogueChecker,
    validate_entry,
)
from kernbench.errors import CatalogueError, SpecError
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec
from kernbench.specs.types import Protocol

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# 12 examples, 3 features; labels +1 when x1 > 0 (LIBSVM: sparse, a zero feature left out)
X = np.array(
    [
        [0.5, 1.0, 0.0],
        [-0.5, 2.0, 1.0],
        [1.5, -1.0, 0.5],
        [-1.5, 0.0, -0.5],
        [2.0, 0.5, 0.0],
        [-2.0, 1.5, 1.5],
        [0.2, -0.2, 0.3],
        [-0.2, 0.7, -0.3],
        [0.9, 0.0, 0.0],
        [-0.9, -1.0, 2.0],
        [1.1, 1.1, 1.1],
        [-1.1, 0.4, -1.2],
    ]
)
Y = np.where(X[:, 0] > 0, 1, -1)


def write_libsvm(path: Path, X=X, y=Y) -> Path:
    lines = []
    for xi, yi in zip(X, y, strict=True):
        feats = " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(xi) if v != 0)
        lines.append(f"{yi:+d} {feats}".rstrip())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_csv(path: Path, labels, header: bool = True, X=X) -> Path:
    rows = ["f1,f2,f3,label"] if header else []
    rows += [",".join(f"{v:g}" for v in xi) + f",{lab}" for xi, lab in zip(X, labels, strict=True)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")
    return path


def write_spec(directory: Path, datasets: list, **extra) -> Path:
    spec = {
        "name": "mine",
        "datasets": datasets,
        "protocol": {"n_realisations": 2, "train_size": 0.5, "cv_folds": 2, "seed": 3},
        "methods": {"Ada": {"estimator": "adaboost", "params": {"n_estimators": 5}}},
        **extra,
    }
    path = directory / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture(autouse=True)
def _forget_registered():
    yield
    catalog._REGISTERED.clear()


PROTOCOL = Protocol(n_realisations=2, train_size=0.5, seed=3)


# -- data files in a spec ------------------------------------------------------------------------
def test_libsvm_file_beside_the_spec_gives_the_files_data(tmp_path):
    write_libsvm(tmp_path / "data" / "my.libsvm")
    spec = load_spec(write_spec(tmp_path, [{"name": "mine", "file": "data/my.libsvm"}]))
    entry = get_dataset("mine")
    assert (entry.task, entry.n, entry.d, entry.classes) == ("binary", 12, 3, 2)
    assert entry.class_counts == {"-1": 6, "1": 6}  # +1 = the greater label
    assert spec.datasets[0].entry is not None
    r = make_realisation("mine", {}, PROTOCOL, 0, seed=3)
    X_all = np.vstack([r.X_train, r.X_test])
    y_all = np.concatenate([r.y_train, r.y_test])
    order = np.lexsort(X_all.T[::-1])
    expected = np.lexsort(X.T[::-1])
    np.testing.assert_array_equal(X_all[order], X[expected])
    np.testing.assert_array_equal(y_all[order], Y[expected])
    assert len(plan_cells(spec)) == 2


def test_csv_with_header_string_labels_and_positive(tmp_path):
    labels = np.where(Y > 0, "sick", "well")
    write_csv(tmp_path / "d.csv", labels)
    spec = load_spec(
        write_spec(tmp_path, [{"name": "mine-csv", "file": "d.csv", "positive": "sick"}])
    )
    entry = get_dataset(spec.datasets[0].name)
    assert (entry.task, entry.n, entry.d) == ("binary", 12, 3)
    r = make_realisation("mine-csv", {}, PROTOCOL, 1, seed=3)
    for Xp, yp in ((r.X_train, r.y_train), (r.X_test, r.y_test)):
        np.testing.assert_array_equal(yp, np.where(Xp[:, 0] > 0, 1, -1))


def test_unix_compressed_csv_reads_like_the_plain_file(tmp_path, compress_z):
    labels = np.where(Y > 0, "sick", "well")
    plain = write_csv(tmp_path / "d.csv", labels)
    (tmp_path / "z.csv.Z").write_bytes(compress_z(plain.read_bytes()))
    datasets = [
        {"name": "mine-plain", "file": "d.csv", "positive": "sick"},
        {"name": "mine-z", "file": "z.csv.Z", "positive": "sick"},
    ]
    load_spec(write_spec(tmp_path, datasets))
    pools = []
    for name in ("mine-plain", "mine-z"):  # the split seed follows the name: compare sorted pools
        r = make_realisation(name, {}, PROTOCOL, 0, seed=3)
        pool = np.c_[np.vstack([r.X_train, r.X_test]), np.r_[r.y_train, r.y_test]]
        pools.append(pool[np.lexsort(pool.T[::-1])])
    np.testing.assert_array_equal(pools[0], pools[1])
    assert len(pools[1]) == len(Y)


MULTICLASS = {"MH": {"estimator": "adaboost_mh", "params": {"n_estimators": 5}}}


def test_csv_with_three_labels_is_multiclass_and_keel_format_is_read(tmp_path):
    labels = np.array(["b", "a", "c"] * 4)
    write_csv(tmp_path / "m.csv", labels, header=False)
    keel = tmp_path / "k.dat"
    body = "\n".join(",".join(f"{v:g}" for v in xi) + f",{lab}" for xi, lab in zip(X, labels))
    keel.write_text("@relation k\n@attribute a real\n@data\n" + body + "\n")
    datasets = [
        {"name": "mine-m", "file": "m.csv"},
        {"name": "mine-k", "file": "k.dat", "format": "keel"},
    ]
    load_spec(write_spec(tmp_path, datasets, methods=MULTICLASS))
    for name in ("mine-m", "mine-k"):
        entry = get_dataset(name)
        assert (entry.task, entry.classes, entry.n) == ("multiclass", 3, 12)
        assert entry.class_counts == {"a": 4, "b": 4, "c": 4}


def test_the_files_checksum_is_in_the_cell_identity(tmp_path):
    data = write_libsvm(tmp_path / "a" / "my.libsvm")
    spec_a = write_spec(tmp_path / "a", [{"name": "mine", "file": "my.libsvm"}])
    ids = [c.cell_id for c in plan_cells(load_spec(spec_a))]
    moved = tmp_path / "b"
    shutil.copytree(tmp_path / "a", moved)  # same content elsewhere: same cells
    assert [c.cell_id for c in plan_cells(load_spec(moved / "spec.yaml"))] == ids
    write_libsvm(data, y=-Y)  # edited: every cell of the dataset reruns
    assert not set(ids) & {c.cell_id for c in plan_cells(load_spec(spec_a))}


def test_declared_sha256_is_checked(tmp_path):
    data = write_libsvm(tmp_path / "my.libsvm")
    good = hashlib.sha256(data.read_bytes()).hexdigest()
    load_spec(write_spec(tmp_path, [{"name": "mine", "file": "my.libsvm", "sha256": good}]))
    bad = "0" * 63 + "1"
    with pytest.raises(SpecError, match=r"datasets\[0\]\.sha256: checksum mismatch") as info:
        load_spec(write_spec(tmp_path, [{"name": "mine", "file": "my.libsvm", "sha256": bad}]))
    assert str(data) in str(info.value) and good in str(info.value)


BAD_FILES = [
    ("my.libsvm", "+1 1:0.5 2:1\n-1 2:0.5 1:1\n", {}, r"my\.libsvm:2: malformed LIBSVM line"),
    ("my.csv", "1,2,a\n3,4,b\n5,b\n", {}, r"my\.csv:3: malformed line: expected 3 fields"),
    ("my.csv", "1,2,a\n3,x,b\n", {"header": False}, r"my\.csv:2: malformed line: field 2 'x'"),
    ("my.csv", "1,2,a\n3,4,a\n", {}, "has a single class"),
    ("my.csv", "1,2,a\n3,4,b\n", {"positive": "c"}, "label 'c' does not occur"),
    ("my.csv", "1,2,a\n3,4,b\n", {"positive": True}, "quote the label"),
    ("my.csv", "1,2,a\n3,4,b\n", {"name": "sonar"}, "'sonar' is already in the catalogue"),
    ("my.txt", "1 2 a\n3 4 b\n", {}, "cannot tell the format of 'my.txt'"),
    ("my.libsvm", "+1 1:1\n-1 1:2\n", {"label_column": 0}, "does not apply to format 'libsvm'"),
    ("my.libsvm", "", {}, r"my\.libsvm: no data lines"),
    ("my.libsvm", "# only a comment\n\n", {}, r"my\.libsvm: no data lines"),
    ("my.libsvm", "+1 1:1\n\n# c\n-1 1:nan\n", {}, r"my\.libsvm:4: .*'nan'|my\.libsvm:4: .*nan"),
    ("my.libsvm", "+1 1:1\nnan 1:2\n-1 1:3\n", {}, r"my\.libsvm:2: .*label nan"),
    ("my.libsvm", "+1 0:1 1:2\n-1 1:2 0:1\n", {}, r"my\.libsvm:2: .*indices must increase"),
    (
        "my.csv",
        "1,2,a\n3,nan,b\n",
        {"header": False},
        r"my\.csv:2: .*field 2 'nan' is not a finite",
    ),
    ("my.csv", "1,2,a\n3,4,b\n5,6,nan\n", {}, r"my\.csv:3: label 'nan' is missing"),
    ("my.csv", "1,2,a\n3,4,b\n5,6,\n", {}, r"my\.csv:3: label '' is missing"),
]


@pytest.mark.parametrize(("file", "text", "extra", "message"), BAD_FILES)
def test_bad_files_are_spec_errors_naming_file_and_line(tmp_path, file, text, extra, message):
    (tmp_path / file).write_text(text)
    item = {"name": "mine", "file": file, **extra}
    with pytest.raises(SpecError, match=message) as info:
        load_spec(write_spec(tmp_path, [item]))
    assert "spec.yaml: datasets[0]" in str(info.value)


def test_missing_file_and_file_keys_without_file(tmp_path):
    with pytest.raises(SpecError, match=r"datasets\[0\]\.file: no such file: .*nope\.csv"):
        load_spec(write_spec(tmp_path, [{"name": "mine", "file": "nope.csv"}]))
    with pytest.raises(SpecError, match=r"datasets\[0\]\.positive: 'positive' applies only"):
        load_spec(write_spec(tmp_path, [{"name": "sonar", "positive": "M"}]))


def test_cli_runs_a_file_dataset_end_to_end_and_a_malformed_one_exits_2(tmp_path):
    from kernbench.cli import app
    from kernbench.store import Store

    write_libsvm(tmp_path / "my.libsvm")
    spec = write_spec(tmp_path, [{"name": "mine", "file": "my.libsvm"}])
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as st:
        rows = st.rows()
    assert len(rows) == 2 and {r["status"] for r in rows} == {"done"}
    (tmp_path / "my.libsvm").write_text("+1 1:1\n-1 1:x\n")
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "my.libsvm:2: malformed LIBSVM line" in res.output


def test_a_worker_rebuilds_the_dataset_from_the_cell(tmp_path):
    from kernbench.runner.cell.compute import run_cell

    write_libsvm(tmp_path / "my.libsvm")
    cells = plan_cells(load_spec(write_spec(tmp_path, [{"name": "mine", "file": "my.libsvm"}])))
    catalog._REGISTERED.clear()  # as in a fresh worker process
    record = run_cell(cells[0])
    assert record.status == "done", record.error
    assert get_dataset("mine").n == 12


# -- user catalogues -----------------------------------------------------------------------------
def catalogue_entry(sha: str) -> dict:
    return {
        "name": "my-set",
        "task": "binary",
        "d": 3,
        "classes": 2,
        "files": [{"path": "my-set/d.csv", "sha256": sha}],
        "recipe": {
            "kind": "table",
            "file": "my-set/d.csv",
            "label_column": -1,
            "positive": ["sick"],
            "skip_lines": 1,
        },
    }


def write_catalogue(directory: Path, entries: list) -> Path:
    path = directory / "my_datasets.yaml"
    path.write_text(yaml.safe_dump({"datasets": entries}, sort_keys=False))
    return path


@pytest.fixture()
def user_catalogue(tmp_path):
    data = write_csv(tmp_path / "my-set" / "d.csv", np.where(Y > 0, "sick", "well"))
    sha = hashlib.sha256(data.read_bytes()).hexdigest()
    return write_catalogue(tmp_path, [catalogue_entry(sha)]), sha


def test_env_catalogue_entry_with_only_the_required_keys_lists_loads_and_runs(
    user_catalogue, monkeypatch
):
    from kernbench.cli import app

    path, _ = user_catalogue
    monkeypatch.setenv("KERNBENCH_CATALOG", str(path))
    assert list_datasets()[-1].name == "my-set"
    for args in (["data", "list"], ["data", "info", "my-set"]):
        res = runner.invoke(app, args, terminal_width=200)
        assert res.exit_code == 0, res.output
        assert "my-set" in res.output
    r = make_realisation("my-set", {}, PROTOCOL, 0, seed=0)
    np.testing.assert_array_equal(r.y_train, np.where(r.X_train[:, 0] > 0, 1, -1))


def test_spec_catalog_key_registers_the_entries(user_catalogue, monkeypatch):
    path, _ = user_catalogue
    monkeypatch.delenv("KERNBENCH_CATALOG", raising=False)
    spec = load_spec(write_spec(path.parent, ["my-set"], catalog=path.name))
    assert spec.datasets[0].entry["name"] == "my-set"
    assert get_dataset("my-set").origin == str(path.parent / path.name)


BAD_ENTRIES = [
    (lambda e: e.pop("classes"), "datasets[0].classes", "missing required key 'classes'"),
    (lambda e: e.update(taks="binary"), "datasets[0].taks", "did you mean 'task'?"),
    (lambda e: e.update(task="binry"), "datasets[0].task", "did you mean 'binary'?"),
    (lambda e: e["recipe"].update(kind="tabel"), "datasets[0].recipe.kind", "'table'"),
    (lambda e: e["recipe"].update(label_column="x"), "recipe.label_column", "an integer"),
    (lambda e: e["recipe"].pop("positive"), "datasets[0].recipe.positive", "+1 class"),
    (lambda e: e["recipe"].update(file="other.csv"), "recipe.file", "not one of the entry's"),
    (lambda e: e["files"][0].update(sha256="abc"), "files[0].sha256", "64 hex digits"),
    (lambda e: e["files"][0].update(path="../x.csv"), "files[0].path", "without '..'"),
    (lambda e: e.update(d=0), "datasets[0].d", "expected an integer in [1"),
]


@pytest.mark.parametrize(("change", "key_path", "message"), BAD_ENTRIES)
def test_bad_catalogue_entries_name_file_and_key_path(tmp_path, change, key_path, message):
    entry = catalogue_entry("a" * 64)
    change(entry)
    path = write_catalogue(tmp_path, [entry])
    spec = write_spec(tmp_path, ["my-set"], catalog=path.name)
    with pytest.raises(CatalogueError) as info:
        load_spec(spec)
    assert str(info.value).startswith(f"{path}: ") and key_path in str(info.value)
    assert message in str(info.value)


def test_bad_env_catalogue_is_exit_2_on_any_data_verb(tmp_path, monkeypatch):
    from kernbench.cli import app

    entry = catalogue_entry("a" * 64)
    entry["recipe"]["label_column"] = "last"
    monkeypatch.setenv("KERNBENCH_CATALOG", str(write_catalogue(tmp_path, [entry])))
    for args in (["data", "list"], ["data", "info", "sonar"]):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert "datasets[0].recipe.label_column: expected an integer" in res.output


def test_every_package_catalogue_entry_passes_the_validator():
    raws = catalog._package_entries()
    ck = _CatalogueChecker("catalog.yaml")
    for i, (raw, _) in enumerate(raws):
        assert validate_entry(ck, copy.deepcopy(raw), f"datasets[{i}]") == raw


def test_docs_adding_a_dataset_lists_the_validators_keys():
    page = (ROOT / "docs" / "datasets.md").read_text(encoding="utf-8")
    section = page.split("## Adding a dataset", 1)[1].split("\n## ", 1)[0]
    required = re.search(r"Required keys:(.*?)\.", section, re.S).group(1)
    required = re.sub(r"\([^)]*\)", "", required)  # "`task` (`binary` or ...)": values
    assert set(re.findall(r"`(\w+)`", required)) == set(REQUIRED_KEYS)
    for key in ENTRY_KEYS:
        assert f"`{key}`" in section, key


def test_a_run_on_an_env_catalogue_dataset_computes_its_cells(user_catalogue, monkeypatch):
    from kernbench.cli import app
    from kernbench.store import Store

    path, _ = user_catalogue
    monkeypatch.setenv("KERNBENCH_CATALOG", str(path))
    spec = write_spec(path.parent, ["my-set"])
    out = path.parent / "res"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as st:
        assert {r["status"] for r in st.rows()} == {"done"}


# -- regression data of the user's own -----------------------------------------------------------
TARGETS = 2.0 * X[:, 0] - X[:, 1] + 0.25  # a real-valued target, linear in the features
REGRESSOR = {
    "CGB": {"estimator": "cgboost_regressor", "params": {"kernels": ["linear"], "C": 10.0}}
}


def test_csv_regression_file_runs_end_to_end_scored_by_rmse(tmp_path):
    from kernbench.cli import app
    from kernbench.store import Store

    write_csv(tmp_path / "r.csv", [f"{t:.6g}" for t in TARGETS])
    spec_path = write_spec(
        tmp_path, [{"name": "mine-r", "file": "r.csv", "task": "regression"}], methods=REGRESSOR
    )
    spec = load_spec(spec_path)
    entry = get_dataset("mine-r")
    assert (entry.task, entry.n, entry.d, entry.classes) == ("regression", 12, 3, 0)
    assert spec.table.value == "test_rmse"  # every dataset is a regression task
    r = make_realisation("mine-r", {}, PROTOCOL, 0, seed=3)
    assert r.y_train.dtype == np.float64
    for Xp, yp in ((r.X_train, r.y_train), (r.X_test, r.y_test)):  # the file's targets, as read
        np.testing.assert_allclose(yp, 2.0 * Xp[:, 0] - Xp[:, 1] + 0.25, atol=1e-5)
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(spec_path), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    with Store(out) as st:
        rows = st.rows()
    assert {r["status"] for r in rows} == {"done"} and len(rows) == 2
    for row in rows:  # scored as a regression: RMSEs, no error rates
        assert row["test_error"] is None and np.isfinite(row["result"]["test_rmse"])
    res = runner.invoke(app, ["table", str(out)], terminal_width=200)
    assert res.exit_code == 0 and "mine-r" in res.output, res.output


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("f1,f2,f3,y\n1,2,3,0.5\n1,2,4,high\n", {}, "r.csv:3: regression target 'high'"),
        ("f1,f2,f3,y\n1,2,3,0.5\n1,2,4,nan\n", {}, "r.csv:3: regression target 'nan'"),
        ("f1,f2,f3,y\n1,2,3,0.5\n1,2,4,0.5\n", {}, "the regression targets are all equal"),
        ("f1,f2,f3,y\n1,2,3,0.5\n1,2,4,1.5\n", {"positive": "1.5"}, "has no +1 class"),
        ("f1,f2,f3,y\n1,2,3,0.5\n1,2,4,1.5\n", {"task": "regresion"}, "did you mean"),
    ],
)
def test_bad_regression_files_are_spec_errors(tmp_path, text, extra, message):
    (tmp_path / "r.csv").write_text(text)
    d = {"name": "mine-r", "file": "r.csv", "task": "regression", **extra}
    with pytest.raises(SpecError) as info:
        load_spec(write_spec(tmp_path, [d], methods=REGRESSOR))
    assert message in str(info.value)


def test_explicit_task_multiclass_keeps_two_labels_as_classes_and_binary_needs_positive(tmp_path):
    write_csv(tmp_path / "d.csv", np.where(Y > 0, "sick", "well"))
    load_spec(write_spec(tmp_path, [{"name": "two", "file": "d.csv", "task": "multiclass"}]))
    assert (get_dataset("two").task, get_dataset("two").classes) == ("multiclass", 2)
    write_csv(tmp_path / "e.csv", np.array(["a", "b", "c"] * 4))
    with pytest.raises(SpecError, match="a binary task needs `positive`"):
        load_spec(write_spec(tmp_path, [{"name": "three", "file": "e.csv", "task": "binary"}]))


def test_user_catalogue_regression_entry_reads_real_targets(tmp_path):
    write_csv(tmp_path / "my-reg" / "r.csv", [f"{t:.6g}" for t in TARGETS])
    sha = hashlib.sha256((tmp_path / "my-reg" / "r.csv").read_bytes()).hexdigest()
    entry = catalogue_entry(sha)
    entry.update(name="my-reg", task="regression", classes=0)
    entry["files"][0]["path"] = entry["recipe"]["file"] = "my-reg/r.csv"
    del entry["recipe"]["positive"]
    path = write_catalogue(tmp_path, [entry])
    spec = load_spec(write_spec(tmp_path, ["my-reg"], catalog=path.name, methods=REGRESSOR))
    assert spec.table.value == "test_rmse"
    r = make_realisation("my-reg", {}, PROTOCOL, 1, seed=3)
    np.testing.assert_allclose(r.y_test, 2.0 * r.X_test[:, 0] - r.X_test[:, 1] + 0.25, atol=1e-5)
    entry["recipe"]["positive"] = ["1"]
    with pytest.raises(CatalogueError, match="regression task has no \\+1 class"):
        load_spec(write_spec(tmp_path, ["my-reg"], catalog=write_catalogue(tmp_path, [entry]).name))
    del entry["recipe"]["positive"]
    entry["recipe"] = {"kind": "splice", "file": "my-reg/r.csv"}
    with pytest.raises(CatalogueError, match="real-valued targets with a 'table'"):
        load_spec(write_spec(tmp_path, ["my-reg"], catalog=write_catalogue(tmp_path, [entry]).name))


# -- files other tools write, and label sets the methods cannot take -----------------------------
def test_a_file_from_sklearns_dump_svmlight_file_zero_based_reads_as_sklearn_reads_it(tmp_path):
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    dump_svmlight_file(X, Y, str(tmp_path / "dumped.libsvm"))  # zero-based indices, the default
    assert " 0:" in (tmp_path / "dumped.libsvm").read_text()
    load_spec(write_spec(tmp_path, [{"name": "dumped", "file": "dumped.libsvm"}]))
    expected_X, expected_y = load_svmlight_file(str(tmp_path / "dumped.libsvm"))
    entry = get_dataset("dumped")
    assert (entry.n, entry.d) == (12, 3)
    r = make_realisation("dumped", {}, PROTOCOL, 0, seed=3)
    X_all = np.vstack([r.X_train, r.X_test])
    order, expected = np.lexsort(X_all.T[::-1]), np.lexsort(expected_X.toarray().T[::-1])
    np.testing.assert_array_equal(X_all[order], X[expected])  # column 0 is the first feature
    np.testing.assert_array_equal(
        np.concatenate([r.y_train, r.y_test])[order], np.where(expected_y > 0, 1, -1)[expected]
    )


def test_three_classes_with_a_binary_method_are_refused_before_any_work(tmp_path):
    from kernbench.cli import app

    write_csv(tmp_path / "three.csv", np.array(["a", "b", "c"] * 4))
    spec = write_spec(tmp_path, [{"name": "three", "file": "three.csv"}])
    res = runner.invoke(app, ["validate", str(spec)])
    assert res.exit_code == 2, res.output
    assert "datasets[0]: dataset 'three' has 3 classes; method 'Ada' (adaboost) is binary only" in (
        res.output
    )
    out = tmp_path / "res"
    res = runner.invoke(app, ["run", str(spec), "--out", str(out), "--jobs", "1"])
    assert res.exit_code == 2 and "binary only" in res.output and "Traceback" not in res.output
    assert not out.exists()  # nothing computed, no store
    one_vs_rest = write_spec(tmp_path, [{"name": "three", "file": "three.csv", "positive": "a"}])
    assert runner.invoke(app, ["validate", str(one_vs_rest)]).exit_code == 0
    multi = write_spec(tmp_path, [{"name": "three", "file": "three.csv"}], methods=MULTICLASS)
    assert runner.invoke(app, ["validate", str(multi)]).exit_code == 0


def test_catalogue_multiclass_dataset_with_a_binary_method_needs_positive(tmp_path):
    spec = {"name": "t", "datasets": ["iris"], "methods": {"Ada": {"estimator": "adaboost"}}}
    with pytest.raises(SpecError, match=r"datasets\[0\]: dataset 'iris' has 3 classes"):
        load_spec(write_yaml(tmp_path / "a.yaml", spec))
    spec["datasets"] = [{"name": "iris", "options": {"positive": [0]}}]
    load_spec(write_yaml(tmp_path / "b.yaml", spec))


def test_a_regression_file_with_a_classifier_is_refused(tmp_path):
    (tmp_path / "r.csv").write_text("f1,f2,y\n1,2,0.5\n1,3,1.5\n2,3,2.5\n")
    d = {"name": "mine-r", "file": "r.csv", "task": "regression"}
    with pytest.raises(
        SpecError, match=r"'adaboost' is not a regressor.*regression datasets \(mine-r\)"
    ):
        load_spec(write_spec(tmp_path, [d]))


def write_yaml(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
