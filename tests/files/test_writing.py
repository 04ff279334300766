"""Writing without following planted symlinks: whole-file replacement leaves a symlink's target
untouched, an in-place open refuses a symlink, sqlite's files are checked before opening."""

from __future__ import annotations

import errno
import os
import stat

import pytest

from kernbench.files.writing import open_no_follow, refuse_symlinks, replace_file, write_text_file


def test_replacing_a_planted_symlink_leaves_its_target_alone(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    link = tmp_path / "report.html"
    link.symlink_to(victim)
    write_text_file(link, "<html></html>\n")
    assert victim.read_text() == "precious\n"
    assert not link.is_symlink() and link.read_text() == "<html></html>\n"
    assert stat.S_IMODE(link.stat().st_mode) & 0o044  # readable as open() would make it


def test_a_failed_write_leaves_the_target_and_no_temporary_file(tmp_path):
    target = tmp_path / "cells.csv"
    target.write_text("old\n")

    def fail(tmp):
        tmp.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp))

    with pytest.raises(OSError, match="No space left") as info:
        replace_file(target, fail)
    assert info.value.filename == str(target)  # the file the user knows, not the temporary one
    assert target.read_text() == "old\n" and sorted(os.listdir(tmp_path)) == ["cells.csv"]


def test_in_place_opens_and_sqlite_files_refuse_symlinks(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("x")
    link = tmp_path / ".kernbench.lock"
    link.symlink_to(victim)
    with pytest.raises(OSError) as info:
        open_no_follow(link, os.O_RDWR | os.O_CREAT)
    assert info.value.errno == errno.ELOOP and victim.read_text() == "x"
    with pytest.raises(OSError, match="symbolic link"):
        refuse_symlinks(tmp_path / "absent", link)
    refuse_symlinks(tmp_path / "absent", victim)  # regular and absent files pass
