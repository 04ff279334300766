"""`kernbench verify`: a values file recorded from a store, a seeded sample rerun and compared."""

import json
import sqlite3
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.errors import UsageError
from kernbench.runner.options import RunOptions
from kernbench.runner.run import run_experiment
from kernbench.runner.verify import (
    RecordedCell,
    choose_sample,
    load_values,
    record_values,
    verify,
)
from kernbench.specs.load import load_spec

SPEC = {
    "name": "tiny",
    "datasets": [{"name": "twonorm", "options": {"n_train": 60, "n_test": 200}}],
    "protocol": {"realisations": "random", "n_realisations": 3, "seed": 0, "cv_folds": 2},
    "methods": {
        "SVM-Stump": {"estimator": "svm_stump", "grid": {"C": [0.5, 8.0]}},
        "AdaBoost-Stump": {"estimator": "adaboost", "params": {"n_estimators": 10}},
    },
}


def _run_and_record(root: Path, spec: dict, n_cells: int) -> tuple[Path, Path, Path]:
    """(spec file, results directory, values file) of a finished run of ``spec`` in ``root``."""
    spec_file = root / f"{spec['name']}.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    results = root / "results"
    summary = run_experiment(load_spec(spec_file), RunOptions(out_dir=results, jobs=1))
    assert summary.counts == {"done": n_cells}
    values = root / f"{spec['name']}.csv"
    assert record_values(load_spec(spec_file), results, values) == n_cells
    return spec_file, results, values


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(spec file, results directory, values file) of a finished 6-cell run."""
    return _run_and_record(tmp_path_factory.mktemp("verify"), SPEC, 6)


def test_values_file_is_compact_and_names_its_environment(recorded):
    _, _, values = recorded
    cells, env, numerics = load_values(values)
    assert len(cells) == 6 and {c.method for c in cells} == {"SVM-Stump", "AdaBoost-Stump"}
    assert env.startswith("Computed with kernbench")
    assert {"numpy", "blas", "simd", "numba_cpu"} <= set(numerics)
    assert len(values.read_bytes()) < 2000  # a line per cell, no store


def test_a_rerun_is_identical_under_the_recorded_numerics(recorded):
    spec_file, _, values = recorded
    cells, env, numerics = load_values(values)
    outcome = verify(
        load_spec(spec_file), cells, cells, recorded_environment=env, recorded_numerics=numerics
    )
    assert outcome.same_numerics
    assert [c.verdict for c in outcome.checks] == ["identical"] * 6
    assert outcome.ok and "6 identical, 0 within tolerance, 0 differ" in outcome.verdict_line()


def _moved(cells, points):
    return [
        RecordedCell(**{**c.__dict__, "test_error": c.test_error + p / 100})
        for c, p in zip(cells, points, strict=False)
    ]


def test_under_the_recorded_numerics_any_move_differs(recorded):
    spec_file, _, values = recorded
    cells, _, numerics = load_values(values)
    moved = _moved(cells, [0.5])
    outcome = verify(load_spec(spec_file), moved, moved, recorded_numerics=numerics)
    assert [c.verdict for c in outcome.checks] == ["differs"]
    assert not outcome.ok and "NOT reproduced" in outcome.verdict_line()


def test_under_other_numerics_the_methods_tolerance_applies(recorded):
    spec_file, _, values = recorded
    cells, _, numerics = load_values(values)
    other = {**numerics, "blas": "openblas 0.3.31 (Haswell)"}
    moved = _moved(cells[:2], [0.5, 5.0])  # svm_stump and adaboost: 1 point
    outcome = verify(load_spec(spec_file), moved, moved, recorded_numerics=other)
    assert not outcome.same_numerics
    assert [c.verdict for c in outcome.checks] == ["within tolerance", "differs"]
    assert "other numerics than recorded" in outcome.verdict_line()


def test_a_cell_no_longer_planned_is_stale(recorded):
    spec_file, _, values = recorded
    cells, _, _ = load_values(values)
    stale = RecordedCell(**{**cells[0].__dict__, "cell": "0" * 16})
    outcome = verify(load_spec(spec_file), [stale, *cells[1:]], [stale])
    assert outcome.stale == [stale] and not outcome.checks and not outcome.ok


def test_recording_refuses_a_store_without_the_specs_cells(recorded, tmp_path):
    spec_file, results, _ = recorded
    other = dict(SPEC, protocol={**SPEC["protocol"], "seed": 1})  # other splits: other cells
    other_file = tmp_path / "other.yaml"
    other_file.write_text(yaml.safe_dump(other))
    with pytest.raises(UsageError, match="no finished cell"):
        record_values(load_spec(other_file), results, tmp_path / "x.csv")


def _cells(n_methods: int, per_method: int, cpu: float) -> list[RecordedCell]:
    return [
        RecordedCell(f"{m:02d}{r:014d}", "d", f"M{m}", "svm_stump", r, 0.1, cpu)
        for m in range(n_methods)
        for r in range(per_method)
    ]


def test_the_sample_keeps_the_budget_covers_every_method_and_is_seeded():
    cells = _cells(5, 20, cpu=2.0)
    sample = choose_sample(cells, budget_s=30.0, seed=3)
    assert sum(c.cpu_s for c in sample) <= 30.0 and len(sample) == 15
    assert {c.method for c in sample} == {f"M{m}" for m in range(5)}
    counts = [sum(c.method == f"M{m}" for c in sample) for m in range(5)]
    assert max(counts) - min(counts) <= 1  # methods take turns
    assert sample == choose_sample(cells, budget_s=30.0, seed=3)
    assert sample != choose_sample(cells, budget_s=30.0, seed=4)
    assert choose_sample(cells, budget_s=1.0) == []  # nothing fits


def test_cli_verifies_and_exits_1_when_a_cell_differs(recorded, tmp_path):
    spec_file, results, values = recorded
    res = CliRunner().invoke(app, ["verify", str(spec_file), "--values", str(values)])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines()[-1].endswith("— reproduced")
    lines = values.read_text().splitlines()
    header, body = lines[:4], lines[4:]
    tampered = tmp_path / "tampered.csv"
    fields = body[0].split(",")
    fields[5] = repr(float(fields[5]) + 0.05)
    tampered.write_text("\n".join([*header, ",".join(fields), *body[1:]]) + "\n")
    res = CliRunner().invoke(
        app, ["verify", str(spec_file), "--values", str(tampered), "--budget", "1000"]
    )
    assert res.exit_code == 1, res.output
    assert "differs:" in res.output and "1 differ" in res.output


def test_cli_without_a_values_file_says_how_to_record_one(recorded, tmp_path):
    spec_file, _, _ = recorded
    res = CliRunner().invoke(
        app, ["verify", str(spec_file), "--values", str(tmp_path / "none.csv")]
    )
    assert res.exit_code == 2 and "--record RESULTS_DIR" in res.stderr


def test_a_store_of_two_environments_is_not_recorded(recorded, tmp_path):
    import shutil

    from kernbench.store import Store

    spec_file, results, _ = recorded
    mixed = tmp_path / "mixed"
    shutil.copytree(results, mixed)
    with Store(mixed) as store:
        row = store.rows()[0]
    with sqlite3.connect(mixed / "results.sqlite") as con:
        result = {**row["result"], "versions": {**row["result"]["versions"], "numpy": "0.0"}}
        con.execute(
            "UPDATE cells SET result = ? WHERE cell_id = ?", (json.dumps(result), row["cell_id"])
        )
    with pytest.raises(UsageError, match="2 environments"):
        record_values(load_spec(spec_file), mixed, tmp_path / "x.csv")


def test_a_cell_stopped_at_its_time_cap_is_left_out_and_counted(recorded, tmp_path):
    import shutil

    from kernbench.store import Store

    spec_file, results, _ = recorded
    capped = tmp_path / "capped"
    shutil.copytree(results, capped)
    with Store(capped) as store:
        row = store.rows()[0]
    with sqlite3.connect(capped / "results.sqlite") as con:
        result = {**row["result"], "stop_reason": "max_time"}
        con.execute(
            "UPDATE cells SET result = ? WHERE cell_id = ?", (json.dumps(result), row["cell_id"])
        )
    out = tmp_path / "capped.csv"
    assert record_values(load_spec(spec_file), capped, out) == 5
    cells, _, _ = load_values(out)
    assert row["cell_id"][:16] not in {c.cell for c in cells}
    assert "# left out: 1 cell(s) stopped at their wall-clock cap" in out.read_text()


def test_planned_cells_the_store_lacks_are_counted_not_recorded(recorded, tmp_path):
    import shutil

    spec_file, results, values = recorded
    assert "# not recorded" not in values.read_text()  # a complete store: no such line
    partial = tmp_path / "partial"
    shutil.copytree(results, partial)
    with sqlite3.connect(partial / "results.sqlite") as con:
        (gone,) = con.execute("SELECT cell_id FROM cells ORDER BY cell_id LIMIT 1").fetchone()
        con.execute("DELETE FROM cells WHERE cell_id = ?", (gone,))
    out = tmp_path / "partial.csv"
    assert record_values(load_spec(spec_file), partial, out) == 5
    cells, env, _ = load_values(out)
    assert gone[:16] not in {c.cell for c in cells} and env.startswith("Computed with")
    said = "# not recorded: 1 planned cell(s) not finished in the store (not run, failed or stopped"
    assert said in out.read_text()


def test_cli_refuses_a_file_that_is_no_values_file(recorded, tmp_path):
    spec_file, _, _ = recorded
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    res = CliRunner().invoke(app, ["verify", str(spec_file), "--values", str(bad)])
    assert res.exit_code == 2 and "is not a values file" in res.stderr
    bad.write_text("")  # nothing to compare is not a reproduction
    res = CliRunner().invoke(app, ["verify", str(spec_file), "--values", str(bad)])
    assert res.exit_code == 2 and "holds no recorded cell" in res.stderr


REGRESSION_SPEC = {
    "name": "tiny_regression",
    "datasets": [{"name": "cgboost-toy", "options": {"n_train": 30, "n_test": 200}}],
    "protocol": {"realisations": "random", "n_realisations": 2, "seed": 0, "cv_folds": 1},
    "methods": {
        "linear": {
            "estimator": "cgboost_regressor",
            "params": {"kernels": ["linear"], "C": 10.0, "epsilon": 0.05, "norm": "l1"},
        },
    },
}


@pytest.fixture(scope="module")
def recorded_regression(tmp_path_factory) -> tuple[Path, Path]:
    """(spec file, values file) of a finished 2-cell regression run."""
    spec_file, _, values = _run_and_record(
        tmp_path_factory.mktemp("verify_regression"), REGRESSION_SPEC, 2
    )
    return spec_file, values


def test_a_regression_cell_is_recorded_and_checked_by_its_test_rmse(recorded_regression):
    spec_file, values = recorded_regression
    header = [ln for ln in values.read_text().splitlines() if not ln.startswith("#")][0]
    assert header.endswith(",test_error,cpu_s,test_rmse")
    cells, env, numerics = load_values(values)
    assert [c.metric for c in cells] == ["rmse", "rmse"]
    assert all(c.test_rmse > 0 for c in cells)
    outcome = verify(
        load_spec(spec_file), cells, cells, recorded_environment=env, recorded_numerics=numerics
    )
    assert [c.verdict for c in outcome.checks] == ["identical", "identical"]
    assert outcome.checks[0].now == cells[0].test_rmse  # the RMSE itself, not a percentage


def test_a_moved_rmse_is_judged_relative_to_itself(recorded_regression):
    spec_file, values = recorded_regression
    cells, _, numerics = load_values(values)
    # cgboost_regressor's tolerance, 1 (point of error), reads as 1 % of the recorded RMSE
    moved = [
        RecordedCell(**{**cells[0].__dict__, "test_rmse": cells[0].test_rmse * 1.005}),
        RecordedCell(**{**cells[1].__dict__, "test_rmse": cells[1].test_rmse * 1.05}),
    ]
    same = verify(load_spec(spec_file), moved, moved, recorded_numerics=numerics)
    assert [c.verdict for c in same.checks] == ["differs", "differs"]
    other = {**numerics, "blas": "openblas 0.3.31 (Haswell)"}
    outcome = verify(load_spec(spec_file), moved, moved, recorded_numerics=other)
    assert [c.verdict for c in outcome.checks] == ["within tolerance", "differs"]
    assert "RMSE" in outcome.checks[1].describe()


def test_extra_blas_libraries_loaded_later_are_the_same_numerics(recorded):
    """A worker that imported cvxpy also lists SCS's bundled OpenBLAS; the checking process,
    which may not have, runs the same numerics. Another kernel of numpy's BLAS does not."""
    spec_file, _, values = recorded
    cells, _, numerics = load_values(values)
    extra = {**numerics, "blas": numerics["blas"] + " + openblas 0.3.15 (SkylakeX)"}
    assert verify(load_spec(spec_file), cells, [], recorded_numerics=extra).same_numerics
    fewer = {**numerics, "blas": numerics["blas"].split(" + ")[0]}
    assert verify(load_spec(spec_file), cells, [], recorded_numerics=fewer).same_numerics
    kernels = {**numerics, "blas": numerics["blas"].replace("(", "(Haswell, was ")}
    assert not verify(load_spec(spec_file), cells, [], recorded_numerics=kernels).same_numerics
