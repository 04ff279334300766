"""Fixtures for the dataset tests: the local mirror (skip when absent), an empty cache and a
`.Z` encoder."""

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


def _compress_z(
    data: bytes,
    max_bits: int = 16,
    *,
    block_mode: bool = True,
    clear_when_full: bool = True,
    clear_every: int | None = None,
    pad_after_last: bool = True,
) -> bytes:
    """LZW as ``compress`` writes it, from the format's description (not from the decoder).

    Codes are buffered in groups of eight; after a width change or a clear code the group is
    written whole (padding). ``clear_when_full`` emits a clear code once the table is full
    (block mode); ``clear_every`` emits one after every N codes as well. ``pad_after_last``:
    whether a width change after the very last code still pads its group (compress 4.0 does,
    ncompress 4.2 does not).
    """
    out = bytearray([0x1F, 0x9D, max_bits | (0x80 if block_mode else 0)])
    first = 257 if block_mode else 256
    state = {"n_bits": 9, "max_code": 511, "free": first}
    group: list[int] = []

    def write_group(whole: bool) -> None:
        n_bits = state["n_bits"]
        acc = 0
        for k, code in enumerate(group):
            acc |= code << (k * n_bits)
        n_bytes = n_bits if whole else (len(group) * n_bits + 7) // 8
        out.extend(acc.to_bytes(n_bytes, "little"))
        group.clear()

    def emit(code: int, *, clear: bool = False, last: bool = False) -> None:
        group.append(code)
        if len(group) == 8:
            write_group(True)
        if clear or state["free"] > state["max_code"]:
            if last and not pad_after_last:
                return
            if group:
                write_group(True)
            if clear:
                state["n_bits"], state["max_code"] = 9, 511
            else:
                state["n_bits"] += 1
                n = state["n_bits"]
                state["max_code"] = (1 << max_bits) if n == max_bits else (1 << n) - 1

    def fresh() -> dict[bytes, int]:
        return {bytes((i,)): i for i in range(256)}

    codes = fresh()
    emitted = 0
    w = b""
    for byte in data:
        wc = w + bytes((byte,))
        if wc in codes:
            w = wc
            continue
        emit(codes[w])
        emitted += 1
        if state["free"] < (1 << max_bits):
            codes[wc] = state["free"]
            state["free"] += 1
            full = False
        else:
            full = True
        if block_mode and (
            (full and clear_when_full) or (clear_every and emitted % clear_every == 0)
        ):
            codes, state["free"] = fresh(), first
            emit(256, clear=True)
        w = bytes((byte,))
    if w:
        emit(codes[w], last=True)
    if group:
        write_group(False)
    return bytes(out)


@pytest.fixture(scope="session")
def compress_z():
    """An LZW encoder writing unix ``compress`` (``.Z``) streams, independent of the decoder."""
    return _compress_z
