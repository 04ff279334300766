"""Store and file-system faults end in exit 2 with one line naming the path and what to do.

Each case reproduces a fault of the adversarial trial that used to end in exit 3 (an internal
error with a Python exception): a 0-byte or corrupted store, a read-only results directory, a full
disk (sqlite's own "database or disk is full" via a page limit, ENOSPC on the CSV), a directory
named cells.csv, ``--out`` naming a file, a non-CSV reference file. Nothing stored is lost, a
damaged store is never recreated, and a read-only store can still be tabulated.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
import reliability_harness as rh
import yaml
from typer.testing import CliRunner

from kernbench.cli import app

SPEC = rh.STORE_FAULT_SPEC
runner = CliRunner()


def _spec(tmp_path: Path, **extra) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump({**SPEC, **extra}), encoding="utf-8")
    return path


def _cli(*args: str):
    # no progress lines: the error must be the only line a failed run prints
    return runner.invoke(app, [*map(str, args)], env={"KERNBENCH_PROGRESS": "0"})


def _one_line_exit_2(res, *needles: str) -> str:
    assert res.exit_code == 2, res.output
    text = res.output.strip()
    assert "Traceback" not in text and "internal error" not in text, text
    assert text.startswith("error:") and len(text.splitlines()) == 1, text
    for needle in needles:
        assert needle in text, text
    return text


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A spec run once: (spec path, results directory) to copy from."""
    root = tmp_path_factory.mktemp("finished")
    spec = _spec(root)
    res = _cli("run", spec, "--out", root / "res", "--jobs", "1")
    assert res.exit_code == 0, res.output
    return spec, root / "res"


def _copy(finished, tmp_path: Path) -> Path:
    out = tmp_path / "res"
    shutil.copytree(finished[1], out)
    return out


def _done(out: Path) -> int:
    con = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return con.execute("SELECT COUNT(*) FROM cells WHERE status = 'done'").fetchone()[0]
    finally:
        con.close()


def test_zero_byte_store_is_refused_by_every_verb_and_never_recreated(tmp_path):
    spec = _spec(tmp_path)
    out = tmp_path / "res"
    out.mkdir()
    (out / "results.sqlite").touch()
    for args in (
        ("table", out),
        ("run", spec, "--out", out, "--dry-run"),
        ("run", spec, "--out", out, "--jobs", "1"),
    ):
        _one_line_exit_2(_cli(*args), str(out / "results.sqlite"), "0 bytes", "kernbench restore")
        assert (out / "results.sqlite").stat().st_size == 0  # left as found, not recreated


def test_corrupted_page_is_a_clear_error(finished, tmp_path):
    out = _copy(finished, tmp_path)
    path = out / "results.sqlite"
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    data[4096 : 3 * 4096] = b"\xa5" * (2 * 4096)  # scribble over the pages after the header
    path.write_bytes(bytes(data))
    _one_line_exit_2(_cli("table", out), str(path), "kernbench restore")
    _one_line_exit_2(_cli("run", finished[0], "--out", out, "--jobs", "1"), str(path))


def test_not_a_store_is_refused_not_overwritten(tmp_path):
    out = tmp_path / "res"
    out.mkdir()
    (out / "results.sqlite").write_text("these are my notes\n" * 300, encoding="utf-8")
    _one_line_exit_2(_cli("run", _spec(tmp_path), "--out", out, "--jobs", "1"), "results.sqlite")
    assert (out / "results.sqlite").read_text(encoding="utf-8").startswith("these are my notes")


@contextlib.contextmanager
def _read_only(directory: Path):
    """Make ``directory`` unwritable, also for root (the immutable attribute)."""
    directory.chmod(0o555)
    immutable = False
    try:
        if os.access(directory, os.W_OK):  # root ignores permission bits
            done = subprocess.run(["chattr", "+i", str(directory)], capture_output=True)
            immutable = done.returncode == 0
            if not immutable or os.access(directory, os.W_OK):
                pytest.skip("cannot make a directory read-only here")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        directory.chmod(0o755)


def test_read_only_results_directory(finished, tmp_path):
    out = _copy(finished, tmp_path)
    (out / ".kernbench.lock").unlink()
    with _read_only(out):
        for fmt in ("csv", "md"):  # md: table.md cannot be written beside it; a note says so
            res = _cli("table", out, "--no-reference", "--format", fmt)
            assert res.exit_code == 0, res.output  # a read-only store can be read
            assert "ada" in res.output
        _one_line_exit_2(_cli("run", finished[0], "--out", out, "--jobs", "1"), str(out))


def test_database_or_disk_full_is_exit_2_and_keeps_committed_cells(tmp_path, monkeypatch):
    spec = _spec(tmp_path, protocol={**SPEC["protocol"], "n_realisations": 40})
    out = tmp_path / "res"
    monkeypatch.setenv("KERNBENCH_FAULT_MAX_PAGES", "12")
    text = _one_line_exit_2(_cli("run", spec, "--out", out, "--jobs", "1"), str(out))
    assert "database or disk is full" in text and "free space" in text
    kept = _done(out)
    assert 0 < kept < 40
    monkeypatch.delenv("KERNBENCH_FAULT_MAX_PAGES")
    res = _cli("run", spec, "--out", out, "--jobs", "1")  # space freed: the rerun resumes
    assert res.exit_code == 0, res.output
    assert f"{kept} already finished" in res.output and _done(out) == 40


def test_enospc_on_the_csv_is_exit_2_and_the_store_is_complete(tmp_path, monkeypatch):
    spec = _spec(tmp_path)
    out = tmp_path / "res"
    monkeypatch.setenv("KERNBENCH_FAULT_ENOSPC", "1")
    _one_line_exit_2(_cli("run", spec, "--out", out, "--jobs", "1"), "cells.csv: No space left")
    assert _done(out) == 2 and sorted(p.name for p in out.glob("*.tmp")) == []


def test_a_directory_named_cells_csv_is_refused_before_any_work(tmp_path):
    out = tmp_path / "res"
    (out / "cells.csv").mkdir(parents=True)
    _one_line_exit_2(
        _cli("run", _spec(tmp_path), "--out", out, "--jobs", "1"), str(out / "cells.csv")
    )
    assert not (out / "results.sqlite").exists()


def test_out_naming_an_existing_file(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("keep me", encoding="utf-8")
    spec = _spec(tmp_path)
    for extra in ((), ("--dry-run",)):
        _one_line_exit_2(_cli("run", spec, "--out", target, *extra), "--out", str(target))
    assert target.read_text(encoding="utf-8") == "keep me"


def test_a_non_csv_reference_file_in_table(tmp_path):
    (tmp_path / "ref.csv").write_bytes(bytes(range(256)) * 8)
    spec = _spec(tmp_path, table={"reference": {"file": "ref.csv"}})
    res = _cli("run", spec, "--out", tmp_path / "res", "--jobs", "1")
    assert res.exit_code == 0, res.output
    _one_line_exit_2(_cli("table", tmp_path / "res"), str(tmp_path / "ref.csv"), "no-reference")
