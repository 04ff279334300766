"""Shipped paper specs: resolved by name, copied into the package by the build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kernbench.errors import UsageError
from kernbench.specs.shipped import packaged_specs, resolve_spec, specs_dir

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"


def test_in_a_checkout_the_shipped_specs_are_the_repositorys_experiments():
    assert specs_dir() == EXPERIMENTS
    found = packaged_specs()
    assert [s.path for s in found] == sorted(EXPERIMENTS.glob("*.yaml"))
    for s in found:
        assert s.name == yaml.safe_load(s.path.read_text())["name"]


@pytest.mark.parametrize(
    ("arg", "stem"),
    [
        ("uci_stumps", "uci_stumps"),
        ("UCI-Stumps", "uci_stumps"),
        ("cgens-table1", "uci_stumps"),
        ("cgens_table4", "spam_stumps"),
        ("lin-li-table2", "lin_li_table2"),
        ("quickstart", "quickstart"),
    ],
)
def test_resolve_spec_by_name_and_alias(arg, stem):
    assert resolve_spec(arg) == EXPERIMENTS / f"{stem}.yaml"


def test_resolve_spec_keeps_paths_and_suggests_for_unknown_names(tmp_path):
    own = tmp_path / "uci_stumps.yaml"
    own.write_text("name: x\n")
    assert resolve_spec(own) == own  # an existing file wins over a shipped name
    missing = tmp_path / "nope.yaml"
    assert resolve_spec(missing) == missing  # load_spec says it is missing
    with pytest.raises(UsageError, match="did you mean 'uci-stumps'"):
        resolve_spec("uci-stump")


def test_build_copies_the_specs_into_the_package_and_they_run_from_an_empty_directory(tmp_path):
    pytest.importorskip("setuptools", reason="setup.py needs setuptools in this environment")
    build = tmp_path / "build"
    subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(build)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    shipped = build / "kernbench" / "experiments"
    for pattern in ("*.yaml", "reference/*.csv"):
        originals = sorted(EXPERIMENTS.glob(pattern))
        assert originals
        for file in originals:
            assert (shipped / file.relative_to(EXPERIMENTS)).read_bytes() == file.read_bytes()
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "PYTHONPATH": str(build), "KERNBENCH_DATA": str(tmp_path / "cache")}
    command = ["run", "quickstart", "--dry-run", "--realisations", "1"]
    proc = subprocess.run(
        [sys.executable, "-m", "kernbench", *command],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "quickstart: 20 cells" in proc.stdout
    where = subprocess.run(
        [sys.executable, "-c", "from kernbench.specs.shipped import specs_dir; print(specs_dir())"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.strip() == str(shipped)
