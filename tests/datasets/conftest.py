"""Fixtures for the dataset tests: the local mirror (skip when absent) and an empty cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

_ROOT = Path(__file__).resolve().parents[2]


def mirror_path() -> Path | None:
    """$KERNBENCH_MIRROR, else the mirror folder beside the checkout, else None."""
    env = os.environ.get("KERNBENCH_MIRROR")
    for cand in (env, _ROOT.parent / "shared" / "datasets"):
        if cand and (Path(cand) / "MANIFEST.yaml").is_file():
            return Path(cand)
    return None


MIRROR = mirror_path()
_SKIP = "dataset mirror not found: set KERNBENCH_MIRROR or place the mirror beside the checkout"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets an empty cache and no network; the mirror env is set when available."""
    monkeypatch.setenv("KERNBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNBENCH_OFFLINE", "1")
    if MIRROR is not None:
        monkeypatch.setenv("KERNBENCH_MIRROR", str(MIRROR))
    else:
        monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The mirror directory; the test is skipped (with the reason) when it is absent."""
    if MIRROR is None:
        pytest.skip(_SKIP)
    return MIRROR


@pytest.fixture(scope="session")
def manifest(mirror) -> dict:
    return yaml.safe_load((mirror / "MANIFEST.yaml").read_text())
