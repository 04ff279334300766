"""The bounded reader of user files: devices, FIFOs and files over the cap are refused without
reading them (or reading at most the cap)."""

from __future__ import annotations

import os
import time

import pytest

from kernbench.files.reading import FileTooLarge, NotARegularFile, read_user_file, read_user_text


def test_a_regular_file_under_the_cap_is_read_whole(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("name: x\n")
    assert read_user_text(path, 100) == "name: x\n"
    assert read_user_file(path, 8) == b"name: x\n"  # exactly the cap is accepted


def test_a_file_over_the_cap_is_refused(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileTooLarge, match="more than the 100 bytes"):
        read_user_file(path, 100, "reference CSV")


def test_a_sparse_file_is_refused_from_its_size_alone(tmp_path):
    path = tmp_path / "sparse.yaml"
    with path.open("wb") as fh:
        fh.truncate(3 * 10**9)  # 3 GB of holes: reading it would take seconds and gigabytes
    with pytest.raises(FileTooLarge, match=r"3\.0 GB"):
        read_user_file(path, 1 << 20)


def test_devices_and_fifos_are_refused_without_blocking(tmp_path):
    with pytest.raises(NotARegularFile, match="character device"):
        read_user_file("/dev/zero", 1 << 20)
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(NotARegularFile, match="FIFO"):
        read_user_file(fifo, 1 << 20)  # nobody writes to it: a blocking open would hang
    assert time.monotonic() - t0 < 60
    with pytest.raises(NotARegularFile, match="directory"):
        read_user_file(tmp_path, 1 << 20)
