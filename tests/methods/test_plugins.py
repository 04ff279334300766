"""Plug-in estimators: ``package.module:Class``, plug-in files beside the spec, the
``kernbench.methods`` entry-point group; every bad input is exit 2 naming the key path; the
provenance enters the cell identity."""

from __future__ import annotations

import hashlib
import os
import sys
import textwrap

import pytest
import sklearn
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.methods.plugins import (
    PluginError,
    entry_point_methods,
    method_class,
    resolve_estimator,
)
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

runner = CliRunner()

PLUGIN = textwrap.dedent(
    """
    from numbers import Real

    import numpy as np
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils._param_validation import Interval

    from kernbench.methods import register


    @register("nearest_mean_test")
    class NearestMean(ClassifierMixin, BaseEstimator):
        _parameter_constraints = {"shrink": [Interval(Real, 0, 1, closed="both")]}

        def __init__(self, shrink=0.0):
            self.shrink = shrink

        def fit(self, X, y):
            self.classes_ = np.unique(y)
            self.means_ = np.array([X[y == c].mean(0) for c in self.classes_]) * (1 - self.shrink)
            return self

        def predict(self, X):
            d = ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)
            return self.classes_[d.argmin(1)]
    """
)


def write_spec(folder, methods, **top):
    doc = {
        "name": "plug",
        "protocol": {"n_realisations": 1, "train_size": 0.5, "cv_folds": 2},
        "datasets": ["twonorm"],
        "methods": methods,
        **top,
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def validate(path):
    res = runner.invoke(app, ["validate", str(path), "--no-data"])
    return res.exit_code, " ".join(res.output.split())


def test_sklearn_class_resolves_with_its_distribution_and_version():
    from sklearn.svm import SVC

    cls, source = resolve_estimator("sklearn.svm:SVC")
    assert cls is SVC
    assert source.record() == {
        "module": "sklearn.svm._classes",
        "distribution": "scikit-learn",
        "version": sklearn.__version__,
    }
    assert resolve_estimator("cgens")[1] is None  # the package's own: no provenance


def test_plugin_file_method_runs_from_its_carried_code(tmp_path):
    (tmp_path / "my_method.py").write_text(PLUGIN)
    spec = load_spec(
        write_spec(
            tmp_path,
            {
                "NM": {"estimator": "nearest_mean_test", "grid": {"shrink": [0.0, 0.5]}},
                "NM2": {"estimator": "my_method:NearestMean"},
            },
            plugins=["my_method.py"],
        )
    )
    sha = hashlib.sha256(PLUGIN.encode()).hexdigest()
    for m in spec.methods:
        assert m.source.record() == {"module": "my_method.py", "sha256": sha}
        assert method_class(m.estimator, m.source).__name__ == "NearestMean"


def test_a_changed_plugin_file_changes_the_cell_identities(tmp_path):
    (tmp_path / "my_method.py").write_text(PLUGIN)
    path = write_spec(
        tmp_path, {"NM": {"estimator": "nearest_mean_test"}}, plugins=["my_method.py"]
    )
    first = plan_cells(load_spec(path), fingerprint=lambda n, o: "fp")[0].cell_id
    again = plan_cells(load_spec(path), fingerprint=lambda n, o: "fp")[0].cell_id
    (tmp_path / "my_method.py").write_text(PLUGIN.replace("1 - self.shrink", "1.0 - self.shrink"))
    changed = plan_cells(load_spec(path), fingerprint=lambda n, o: "fp")[0].cell_id
    assert first == again and changed != first


def test_carried_code_that_does_not_match_its_sha256_is_refused(tmp_path):
    (tmp_path / "my_method.py").write_text(PLUGIN)
    spec = load_spec(
        write_spec(
            tmp_path, {"NM": {"estimator": "my_method:NearestMean"}}, plugins=["my_method.py"]
        )
    )
    from dataclasses import replace

    source = replace(spec.methods[0].source, code=PLUGIN + "\n# edited\n")
    with pytest.raises(PluginError, match="does not match its sha256"):
        method_class("my_method:NearestMean", source)


@pytest.mark.parametrize(
    ("method", "key", "message"),
    [
        ({"estimator": "no_such_pkg.mod:Thing"}, "methods.M.estimator", "cannot import"),
        ({"estimator": "sklearn.svm:NoSuchClass"}, "methods.M.estimator", "no attribute"),
        ({"estimator": "collections:OrderedDict"}, "methods.M.estimator", "not a scikit-learn"),
        (
            {"estimator": "sklearn.linear_model:Ridge"},
            "methods.M.estimator",
            "is not a classifier",
        ),
        ({"estimator": "sklearn.svm:SVC", "grid": {"Cc": [1]}}, "methods.M.grid.Cc", "unknown"),
        (
            {"estimator": "sklearn.svm:SVC", "params": {"kernel": "cubic"}},
            "methods.M.params.kernel",
            "bad value 'cubic'",
        ),
        ({"estimator": "sklearn.svm:SVC", "grid": {"C": [1, -1]}}, "methods.M.grid.C[1]", "bad"),
    ],
)
def test_bad_plugin_estimators_are_exit_2_naming_the_key_path(tmp_path, method, key, message):
    code, text = validate(write_spec(tmp_path, {"M": method}))
    assert code == 2, text
    assert key in text and message in text and "Traceback" not in text


def test_a_regressor_is_refused_on_classification_but_taken_for_regression(tmp_path):
    code, text = validate(write_spec(tmp_path, {"M": {"estimator": "sklearn.svm:SVR"}}))
    assert code == 2 and "is not a classifier" in text and "twonorm" in text
    path = write_spec(
        tmp_path, {"M": {"estimator": "sklearn.svm:SVR"}}, datasets=["diabetes-efron"]
    )
    code, text = validate(path)
    assert code == 0, text
    code, text = validate(
        write_spec(tmp_path, {"M": {"estimator": "sklearn.svm:SVC"}}, datasets=["diabetes-efron"])
    )
    assert code == 2 and "is not a regressor" in text


@pytest.mark.parametrize("where", ["../outside.py", "/tmp/outside.py", "link.py"])
def test_plugin_paths_outside_the_spec_tree_are_refused(tmp_path, where):
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir()
    (tmp_path / "outside.py").write_text(PLUGIN)
    os.symlink(tmp_path / "outside.py", spec_dir / "link.py")  # a symlink escaping the tree
    target = where if where != "/tmp/outside.py" else str(tmp_path / "outside.py")
    path = write_spec(spec_dir, {"M": {"estimator": "nearest_mean_test"}}, plugins=[target])
    code, text = validate(path)
    assert code == 2 and "plugins[0]" in text and "outside the spec's directory" in text, text


def test_a_plugin_inside_a_subfolder_is_taken_and_a_failing_one_is_exit_2(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mine.py").write_text(PLUGIN)
    path = write_spec(tmp_path, {"M": {"estimator": "mine:NearestMean"}}, plugins=["lib/mine.py"])
    assert validate(path)[0] == 0
    (tmp_path / "lib" / "mine.py").write_text("raise RuntimeError('broken plug-in')\n")
    code, text = validate(path)
    assert code == 2 and "plugins[0]" in text and "broken plug-in" in text


@pytest.fixture
def entry_point_dist(tmp_path, monkeypatch):
    """A distribution on sys.path that registers ``tiny_centroid`` in ``kernbench.methods``."""
    site = tmp_path / "site"
    (site / "tinyplug").mkdir(parents=True)
    (site / "tinyplug" / "__init__.py").write_text(
        "from sklearn.neighbors import NearestCentroid\n\n\n"
        "class TinyCentroid(NearestCentroid):\n"
        '    """The nearest centroid classifier, published by an entry point."""\n'
    )
    info = site / "tinyplug-0.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinyplug\nVersion: 0.3\n")
    (info / "top_level.txt").write_text("tinyplug\n")
    (info / "RECORD").write_text("tinyplug/__init__.py,,\n")
    (info / "entry_points.txt").write_text(
        "[kernbench.methods]\ntiny_centroid = tinyplug:TinyCentroid\n"
    )
    monkeypatch.syspath_prepend(str(site))
    import importlib

    from kernbench.methods import plugins

    importlib.invalidate_caches()
    plugins._distributions.cache_clear()  # the distributions are read once per process
    yield site
    plugins._distributions.cache_clear()
    sys.modules.pop("tinyplug", None)


def test_entry_point_methods_are_listed_described_and_resolved(entry_point_dist, tmp_path):
    assert "tiny_centroid" in entry_point_methods()
    res = runner.invoke(app, ["methods"])
    assert res.exit_code == 0 and "tiny_centroid" in res.output and "tinyplug 0.3" in res.output
    res = runner.invoke(app, ["methods", "tiny_centroid"])
    assert res.exit_code == 0 and "TinyCentroid" in res.output and "shrink_threshold" in res.output
    cls, source = resolve_estimator("tiny_centroid")
    assert cls.__name__ == "TinyCentroid"
    assert source.record() == {"module": "tinyplug", "distribution": "tinyplug", "version": "0.3"}
    assert validate(write_spec(tmp_path, {"T": {"estimator": "tiny_centroid"}}))[0] == 0


@pytest.mark.parametrize("kind", ["sparse", "FIFO", "directory"])
def test_a_plugin_file_is_read_through_the_bounded_reader(tmp_path, kind):
    plugin = tmp_path / "big.py"
    if kind == "sparse":  # refused by its size before a byte is read (any size: 3 GB too)
        with plugin.open("wb") as fh:
            fh.truncate(2 * 10**6)
        words = "plug-in file is 2.0 MB, more than the 1.0 MB kernbench reads"
    elif kind == "FIFO":
        os.mkfifo(plugin)
        words = "is a FIFO (named pipe), not a regular plug-in file"
    else:
        plugin.mkdir()
        words = "is a directory, not a regular plug-in file"
    path = write_spec(tmp_path, {"M": {"estimator": "big:Anything"}}, plugins=["big.py"])
    code, text = validate(path)  # no MemoryError, no hang, no 'no such file'
    assert code == 2 and "plugins[0]" in text and words in text, text
    assert "no such file" not in text
