import numpy as np

from kernbench.solvers.column_buffer import ColumnBuffer


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
