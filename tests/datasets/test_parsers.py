"""Raw-format parsers: formats, compression and errors naming file and line."""

from __future__ import annotations

import bz2
import gzip
import zipfile

import numpy as np
import pytest

from kernbench.datasets.parsers import (
    read_bytes,
    read_delimited,
    read_ida_asc,
    read_keel,
    read_libsvm,
    to_float,
)
from kernbench.errors import DataError

CSV = b"1,2.5,a\n3,?,b\n\n5,6,a\n"


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".zip"])
def test_compressed_files_read_transparently(tmp_path, suffix):
    path = tmp_path / f"t.data{suffix}"
    if suffix == ".gz":
        path.write_bytes(gzip.compress(CSV))
    elif suffix == ".bz2":
        path.write_bytes(bz2.compress(CSV))
    elif suffix == ".zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("t.data", CSV)
    else:
        path.write_bytes(CSV)
    assert read_bytes(path) == CSV
    t = read_delimited(path, ",")
    assert t.cells.tolist() == [["1", "2.5", "a"], ["3", "?", "b"], ["5", "6", "a"]]
    assert t.lines.tolist() == [1, 2, 4]  # blank line 3 skipped, numbering kept


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.data"
    path.write_text("1,2,3\n4,5,6\n7,8\n")
    with pytest.raises(DataError, match=r"bad\.data:3: malformed line: expected 3 fields, found 2"):
        read_delimited(path, ",")


def test_non_numeric_cell_names_file_line_and_field(tmp_path):
    path = tmp_path / "x.asc"
    path.write_text("1.0 2.0\n3.0 oops\n")
    with pytest.raises(DataError, match=r"x\.asc:2: malformed line: field 2 'oops'"):
        read_ida_asc(path)
    t = read_delimited(tmp_path / "x.asc", None)
    assert to_float(t, [0]).ravel().tolist() == [1.0, 3.0]


def test_whitespace_and_padded_comma_files(tmp_path):
    (tmp_path / "w.dat").write_text("  1.5   2\n3 4.25\n")
    assert read_ida_asc(tmp_path / "w.dat").tolist() == [[1.5, 2.0], [3.0, 4.25]]
    (tmp_path / "p.tra").write_text(" 47,100,  0, 8\n  0, 89, 27, 2\n")
    t = read_delimited(tmp_path / "p.tra", ",")
    assert to_float(t).tolist() == [[47, 100, 0, 8], [0, 89, 27, 2]]


def test_skip_lines(tmp_path):
    (tmp_path / "f").write_text("*** header ***\nH A X 1\nD R O 2\n")
    assert read_delimited(tmp_path / "f", None, skip_lines=1).cells.shape == (2, 4)


@pytest.mark.parametrize("header", [True, False])
def test_keel_with_and_without_header(tmp_path, header):
    body = "1.0, 2.0, positive\n3.0,4.0, negative\n"
    head = "@relation x\n@attribute a real\n@attribute b real\n@attribute c {positive,negative}\n"
    (tmp_path / "k.dat").write_text((head + "@data\n" if header else "") + body)
    t = read_keel(tmp_path / "k.dat")
    assert t.cells.tolist() == [["1.0", "2.0", "positive"], ["3.0", "4.0", "negative"]]
    assert t.lines[0] == (6 if header else 1)


def test_libsvm_dense_and_malformed(tmp_path):
    (tmp_path / "s").write_text("+1 1:0.5 3:-1\n-1 2:2\n")
    X, y = read_libsvm(tmp_path / "s", n_features=3)
    np.testing.assert_array_equal(X, [[0.5, 0, -1], [0, 2, 0]])
    np.testing.assert_array_equal(y, [1, -1])
    (tmp_path / "b").write_text("+1 1:0.5\n-1 3:1 2:2\n")
    with pytest.raises(DataError, match=r"b:2: malformed LIBSVM line"):
        read_libsvm(tmp_path / "b")


def test_libsvm_zero_based_file_from_sklearn_is_read_once_as_sklearn_reads_it(
    tmp_path, monkeypatch
):
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    from kernbench.datasets import parsers

    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 5)) * (rng.random((20, 5)) < 0.6)
    y = rng.integers(0, 3, 20).astype(float)
    dump_svmlight_file(X, y, str(tmp_path / "z.libsvm"))  # zero_based=True is its default

    def no_line_scan(data):  # the line-by-line scan is only for files the loader refuses
        raise AssertionError("a well-formed file was scanned line by line")

    monkeypatch.setattr(parsers, "_libsvm_bodies", no_line_scan)
    got_X, got_y = read_libsvm(tmp_path / "z.libsvm")
    ref_X, ref_y = load_svmlight_file(str(tmp_path / "z.libsvm"))
    np.testing.assert_array_equal(got_X, ref_X.toarray())
    np.testing.assert_array_equal(got_y, ref_y)
    np.testing.assert_allclose(got_X[:, : X.shape[1]], X, rtol=1e-15)


def test_libsvm_refusals_name_the_line(tmp_path):
    cases = {
        "+1 1:1\n\n# comment\n-1 2:1 1:3\n": ":4: malformed LIBSVM line (feature indices must",
        "+1 1:1\n-1 1:inf\n": ":2: malformed LIBSVM line (feature value inf is not a finite",
        "+1 1:1 # a comment\nnan 1:1\n": ":2: malformed LIBSVM line (label nan is not a finite",
        "+1 1:1\n-1 -2:1\n": ":2: malformed LIBSVM line (negative feature index -2)",
        "": ": no data lines",
    }
    for k, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"f{k}.libsvm"
        path.write_text(text)
        with pytest.raises(DataError) as info:
            read_libsvm(path)
        assert f"{path}{message}" in str(info.value)


def test_non_finite_cell_names_file_line_and_original_column(tmp_path):
    (tmp_path / "n.csv").write_text("1,2,3,a\n4,5,nan,b\n")
    table = read_delimited(tmp_path / "n.csv")
    with pytest.raises(DataError, match=r"n\.csv:2: malformed line: field 3 'nan' is not a finite"):
        to_float(table, [0, 2])
    np.testing.assert_array_equal(to_float(table.take(np.array([0])), [0, 2]), [[1.0, 3.0]])
