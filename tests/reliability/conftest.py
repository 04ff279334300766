"""Shared fixtures for the reliability tests: the fault harness module and a reference run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import reliability_harness as rh  # noqa: E402


@pytest.fixture(scope="session")
def reference_run(tmp_path_factory):
    """The small fault spec run once, uninterrupted: (spec path, results dir, cell table)."""
    root = tmp_path_factory.mktemp("reference")
    spec = rh.write_spec(root)
    table = rh.run_reference(spec, root / "results")
    assert len(table) == rh.N_CELLS
    return spec, root / "results", table
