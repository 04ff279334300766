import numpy as np

from kernbench.solvers.column_buffer import ColumnBuffer, is_sign_valued


def test_appends_past_capacity_keep_every_column_in_order():
    rng = np.random.default_rng(0)
    cols = [rng.normal(size=7) for _ in range(37)]
    buf = ColumnBuffer(7, capacity=2)
    assert buf.view().shape == (7, 0)
    for j, c in enumerate(cols, start=1):
        buf.append(c)
        assert len(buf) == j
        np.testing.assert_array_equal(buf.view(), np.column_stack(cols[:j]))
    assert buf.storage.flags.c_contiguous
    assert buf.storage.shape[1] >= 37
    np.testing.assert_array_equal(buf.storage[:, :37], np.column_stack(cols))


def test_sign_valued_columns_are_those_int8_stores_exactly():
    assert is_sign_valued(np.array([[1.0, -1.0], [0.0, 1.0]]))
    assert is_sign_valued(np.zeros((3, 0)))
    for bad in (0.5, 2.0, -1.0000001, np.nan):
        assert not is_sign_valued(np.array([1.0, bad, -1.0]))
