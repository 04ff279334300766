"""Raw-format parsers: UCI comma/space separated, KEEL ``.dat``, IDA ``.asc`` split files, LIBSVM.

Compressed files (``.gz``, ``.bz2``, unix ``compress`` ``.Z``, single-member ``.zip``) are read
transparently. A malformed line raises :class:`~kernbench.errors.DataError` naming the file and
the 1-based line number.
"""

from __future__ import annotations

import bz2
import gzip
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernbench.datasets import lzw
from kernbench.errors import DataError

__all__ = [
    "Table",
    "read_bytes",
    "read_delimited",
    "read_keel",
    "read_ida_asc",
    "read_libsvm",
    "to_float",
]


@dataclass(frozen=True)
class Table:
    """Cells of a delimited text file, as strings, with the line number of every row.

    Attributes
    ----------
    cells : ndarray of str, shape (n_rows, n_columns)
    lines : ndarray of int, shape (n_rows,)
        1-based line number of each row in the (decompressed) file, for error messages.
    path : str
    """

    cells: np.ndarray
    lines: np.ndarray
    path: str

    def take(self, rows: np.ndarray) -> Table:
        """The table restricted to ``rows`` (boolean mask or indices)."""
        return Table(self.cells[rows], self.lines[rows], self.path)


def read_bytes(path: str | Path) -> bytes:
    """The decompressed content of ``path`` (by suffix: ``.gz``, ``.bz2``, ``.Z``, ``.zip``, else
    raw)."""
    path = Path(path)
    data = path.read_bytes()
    try:
        if path.suffix == ".gz":
            return gzip.decompress(data)
        if path.suffix == ".bz2":
            return bz2.decompress(data)
        if path.suffix == ".Z":
            return lzw.decompress(data)
        if path.suffix == ".zip":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                names = [n for n in z.namelist() if not n.endswith("/")]
                if len(names) != 1:
                    raise DataError(
                        f"{path}: expected one member in the zip file, found {len(names)}"
                    )
                return z.read(names[0])
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise DataError(f"{path}: cannot decompress ({exc})") from exc
    return data


def _text_lines(path: str | Path) -> list[str]:
    try:
        return read_bytes(path).decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc})") from exc


def _split_rows(path: str | Path, rows: list[tuple[int, str]], delimiter: str | None) -> Table:
    cells: list[list[str]] = []
    lines: list[int] = []
    width = None
    for lineno, line in rows:
        fields = line.split(delimiter) if delimiter else line.split()
        fields = [f.strip() for f in fields]
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise DataError(
                f"{path}:{lineno}: malformed line: expected {width} fields, found {len(fields)}"
            )
        cells.append(fields)
        lines.append(lineno)
    if not cells:
        raise DataError(f"{path}: no data rows")
    return Table(np.array(cells, dtype=str), np.array(lines), str(path))


def read_delimited(path: str | Path, delimiter: str | None = ",", skip_lines: int = 0) -> Table:
    """A UCI-style delimited file as a string table.

    Parameters
    ----------
    delimiter : str or None
        Field separator; ``None`` splits on any run of whitespace. Fields are stripped, so comma
        files padded with spaces (pendigits) parse as well.
    skip_lines : int
        Leading lines that are not data (flare.data2 has one).

    Raises
    ------
    DataError
        A row with a different number of fields than the first, naming file and line.
    """
    rows = [
        (i + 1, line)
        for i, line in enumerate(_text_lines(path))
        if i >= skip_lines and line.strip()
    ]
    return _split_rows(path, rows, delimiter)


def read_keel(path: str | Path) -> Table:
    """A KEEL ``.dat`` file, with or without its ``@relation``/``@attribute``/``@data`` header."""
    lines = _text_lines(path)
    start = 0
    for i, line in enumerate(lines):
        if line.strip().lower().startswith("@data"):
            start = i + 1
            break
    rows = [
        (i + 1, line)
        for i, line in enumerate(lines)
        if i >= start and line.strip() and not line.lstrip().startswith(("@", "%"))
    ]
    return _split_rows(path, rows, ",")


def to_float(table: Table, columns: slice | list[int] | None = None) -> np.ndarray:
    """Columns of ``table`` as float64; a cell that is not a finite number (``x``, ``nan``,
    ``inf``) raises naming file, line and column."""
    cells = table.cells if columns is None else table.cells[:, columns]
    numbers = range(table.cells.shape[1])
    numbers = (
        numbers if columns is None else numbers[columns] if isinstance(columns, slice) else columns
    )

    def error(r: int, c: int, what: str) -> DataError:
        return DataError(
            f"{table.path}:{table.lines[r]}: malformed line: field {numbers[c] + 1} "
            f"{str(cells[r, c])!r} is not {what}"
        )

    try:
        X = cells.astype(np.float64)
    except ValueError:
        for r in range(cells.shape[0]):
            for c in range(cells.shape[1]):
                try:
                    float(cells[r, c])
                except ValueError:
                    raise error(r, c, "a number") from None
        raise
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise error(int(r), int(c), "a finite number")
    return X


def read_ida_asc(path: str | Path) -> np.ndarray:
    """An IDA ``.asc`` split file (whitespace-separated reals, no header) as a 2-D float array."""
    try:  # fast path: numpy's C parser; on failure re-parse to name the bad line
        X = np.loadtxt(io.BytesIO(read_bytes(path)), dtype=np.float64, ndmin=2)
        if X.size:
            return X
    except ValueError:
        pass
    table = read_delimited(path, delimiter=None)
    return to_float(table)


def read_libsvm(path: str | Path, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A LIBSVM/svmlight file via scikit-learn's loader, as dense ``(X, y)``.

    Indices are read as scikit-learn reads them (``zero_based="auto"``: one-based unless some
    line has index 0, as ``sklearn.datasets.dump_svmlight_file`` writes by default). The file is
    parsed once; only when the loader refuses it is it scanned line by line, to name the
    malformed line. A label or feature that is not a finite number is refused with its line.

    Raises
    ------
    DataError
        A malformed line (file and line number), a non-finite value, or a file without data.
    """
    from sklearn.datasets import load_svmlight_file  # imported here: scikit-learn is slow to load

    data = read_bytes(path)
    try:
        X, y = load_svmlight_file(io.BytesIO(data), n_features=n_features)
    except ValueError as exc:
        raise _libsvm_error(path, data, exc) from None
    if X.shape[0] == 0:
        raise DataError(f"{path}: no data lines (the file is empty or holds only comments)")
    X = np.asarray(X.toarray(), dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    bad = ~np.isfinite(y) | ~np.isfinite(X).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        what = (
            f"label {float(y[row])!r}"
            if not np.isfinite(y[row])
            else f"feature value {float(X[row][~np.isfinite(X[row])][0])!r}"
        )
        line = _libsvm_data_lines(data)[row]
        raise DataError(f"{path}:{line}: malformed LIBSVM line ({what} is not a finite number)")
    return X, y


def _libsvm_bodies(data: bytes) -> list[tuple[int, list[str]]]:
    """``(line number, tokens)`` of each data line: comments after ``#`` and blank lines dropped."""
    out = []
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        body = line.split("#", 1)[0].split()
        if body:
            out.append((lineno, body))
    return out


def _libsvm_data_lines(data: bytes) -> list[int]:
    """The 1-based line number of each data row, in the order the loader returns the rows."""
    return [lineno for lineno, _ in _libsvm_bodies(data)]


def _libsvm_error(path: str | Path, data: bytes, exc: ValueError) -> DataError:
    """The loader's refusal as a DataError naming the first malformed line, when one is found."""
    for lineno, body in _libsvm_bodies(data):
        try:
            float(body[0])
            last = -1
            for tok in body[1:]:
                idx, val = tok.split(":")
                if idx == "qid":
                    int(val)
                    continue
                if int(idx) < 0:
                    raise ValueError(f"negative feature index {idx}")
                if int(idx) <= last:
                    raise ValueError("feature indices must increase")
                last = int(idx)
                float(val)
        except ValueError as line_exc:
            return DataError(f"{path}:{lineno}: malformed LIBSVM line ({line_exc})")
    return DataError(f"{path}: not readable as LIBSVM ({exc})")
