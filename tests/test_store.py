"""The results store: round trip, one row per cell, attempts, CSV export, concurrent reader."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kernbench.errors import StoreError
from kernbench.store import CellRecord, Store, find_stores, read_cells, to_jsonable


def _rec(cell_id: str, status: str = "done", err: float | None = 0.25) -> CellRecord:
    return CellRecord(
        cell_id=cell_id,
        dataset="sonar",
        realisation=int(cell_id[-1]),
        method="SVM",
        estimator="svm_stump",
        status=status,
        test_error=err,
        train_error=0.1,
        params={"C": np.float64(0.5)},
        result={"trace": {"iteration": np.arange(3)}, "fit_time_s": 0.01},
    )


def test_round_trip_and_attempts(tmp_path):
    with Store(tmp_path / "exp", create=True) as st:
        st.set_meta("spec", {"name": "exp"})
        st.record(_rec("c0", status="failed", err=None))
        st.record(_rec("c0"))
        st.record(_rec("c1"))
        assert st.statuses() == {"c0": "done", "c1": "done"}
        rows = {r["cell_id"]: r for r in st.rows()}
        assert rows["c0"]["attempts"] == 2 and rows["c1"]["attempts"] == 1
        assert rows["c0"]["params"] == {"C": 0.5}
        assert rows["c0"]["result"]["trace"]["iteration"] == [0, 1, 2]
        assert st.get_meta("spec") == {"name": "exp"}
        assert st.integrity_ok()
        csv = st.export_csv()
    frame = pd.read_csv(csv)
    assert len(frame) == 2 and set(frame["param.C"]) == {0.5}
    assert read_cells(tmp_path / "exp")["test_error"].tolist() == [0.25, 0.25]
    assert find_stores(tmp_path) == [tmp_path / "exp"]
    assert find_stores(tmp_path / "exp") == [tmp_path / "exp"]


def test_names_stored_under_their_earlier_name_read_under_their_current_name(tmp_path):
    """A store written before ``solver_stop`` became ``solver_stop_reason`` (and AdaBoost's
    ``max_rounds`` became ``max_iter``) reads like a new one; a store writes current names."""
    old = _rec("c0")
    old.result = {
        "trace": {"iteration": [1, 2], "solver_stop": ["tol", "max_epochs"]},
        "stop_reason": "max_rounds",
    }
    new = _rec("c1")
    new.result = {"trace": {"iteration": [1], "solver_stop_reason": ["tol"]}}
    with Store(tmp_path, create=True) as st:
        st.record(old)
        st.record(new)
        traces = {r["cell_id"]: r["result"]["trace"] for r in st.rows()}
        assert traces["c0"] == {"iteration": [1, 2], "solver_stop_reason": ["tol", "max_epochs"]}
        assert traces["c1"] == {"iteration": [1], "solver_stop_reason": ["tol"]}
        assert st.row("c0")["result"]["trace"] == traces["c0"]
        assert st.row("c0")["result"]["stop_reason"] == "max_iter"
        st.put_rows(st.rows())  # a merge writes what it read: the current name
        stored = st.connection().execute("SELECT result FROM cells WHERE cell_id = 'c0'")
        text = stored.fetchone()[0]
        assert '"solver_stop"' not in text and "max_rounds" not in text


def test_reader_sees_committed_cells_while_writer_is_open(tmp_path):
    writer = Store(tmp_path, create=True)
    writer.record(_rec("c0"))
    with Store(tmp_path) as reader:
        assert list(reader.statuses()) == ["c0"]
    writer.close()


def test_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="kernbench run"):
        Store(tmp_path / "nothing")


def test_jsonable_converts_numpy_and_non_finite():
    assert to_jsonable({"a": np.int64(2), "b": (1.0, math.nan), "c": np.ones(2)}) == {
        "a": 2,
        "b": [1.0, None],
        "c": [1.0, 1.0],
    }
