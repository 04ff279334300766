"""The ``.Z`` (unix ``compress``) decoder against an independent encoder (the ``compress_z``
fixture of conftest.py), and against ``gzip -dc`` where that binary exists."""

from __future__ import annotations

import functools
import shutil
import subprocess

import numpy as np
import pytest

from kernbench.datasets import lzw
from kernbench.datasets.parsers import read_bytes
from kernbench.errors import DataError


def isolet_like_text(rows: int, seed: int = 0) -> bytes:
    """Lines in ISOLET's layout: 617 values ``-0.4394, 0.1718, ...`` and a label ``7.``."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(rows):
        values = ", ".join(f"{v:.4g}" for v in np.round(rng.uniform(-1, 1, 617), 4))
        lines.append(f"{values}, {int(rng.integers(1, 27))}.")
    return ("\n".join(lines) + "\n").encode()


@functools.cache
def _corpora() -> dict[str, bytes]:
    rng = np.random.default_rng(1)
    return {
        "empty": b"",
        "one byte": b"x",
        "kwkwk": b"a" * 5000,  # every new string is the previous one plus its own first byte
        "text": isolet_like_text(12),
        # incompressible: codes reach 16 bits, and a 12-bit table fills and is cleared often
        "random bytes": rng.integers(0, 256, 70_000, dtype=np.uint8).tobytes(),
        "few symbols": rng.choice(list(b"ab\n"), 60_000).astype(np.uint8).tobytes(),
    }


SETTINGS = {
    "16 bits": {"max_bits": 16},
    "12 bits, clear when full": {"max_bits": 12},
    "12 bits, no clear": {"max_bits": 12, "clear_when_full": False},
    "9 bits": {"max_bits": 9},
    "clear every 300 codes": {"max_bits": 14, "clear_every": 300},
    "no block mode": {"max_bits": 13, "block_mode": False},
    "no padding after the last code": {"max_bits": 16, "pad_after_last": False},
}


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("corpus", list(_corpora()))
def test_decoder_inverts_the_encoder(corpus, setting, compress_z):
    data = _corpora()[corpus]
    assert lzw.decompress(compress_z(data, **SETTINGS[setting])) == data


def test_the_encoder_exercises_width_changes_and_clears(compress_z):
    """The corpora reach the largest width, fill the table and clear it (else the round trips
    above would not test those paths)."""
    data = _corpora()["random bytes"]
    small = compress_z(data, max_bits=12)
    # 70 000 incompressible bytes: about one code per byte, so the 12-bit table (3839 free
    # codes) fills and is cleared over a dozen times; the stream is longer than the input
    assert len(small) > len(data)
    assert len(compress_z(data, max_bits=16)) < len(small) * 1.5


@pytest.mark.skipif(shutil.which("gzip") is None, reason="no gzip binary on this machine")
@pytest.mark.parametrize("setting", list(SETTINGS))
def test_gzip_reads_the_encoder_and_agrees_with_the_decoder(setting, compress_z):
    """gzip -d reads .Z files with its own LZW decoder: an independent check of both the test's
    encoder and ours."""
    for corpus, data in _corpora().items():
        if not data:
            continue
        packed = compress_z(data, **SETTINGS[setting])
        res = subprocess.run(["gzip", "-dc"], input=packed, capture_output=True, check=False)
        assert res.returncode == 0, (corpus, res.stderr)
        assert res.stdout == data, corpus
        assert lzw.decompress(packed) == res.stdout


def test_not_a_z_stream():
    with pytest.raises(ValueError, match=r"not a unix compress \(\.Z\) stream: starts with 1f 8b"):
        lzw.decompress(b"\x1f\x8b\x08\x00")
    with pytest.raises(ValueError, match="starts with nothing"):
        lzw.decompress(b"")


@pytest.mark.parametrize(
    ("flags", "message"),
    [(0x88, r"code width of 8 bits"), (0x91, r"code width of 17 bits"), (0xB0, "unknown flags")],
)
def test_bad_header(flags, message):
    with pytest.raises(ValueError, match=message):
        lzw.decompress(bytes([0x1F, 0x9D, flags, 0, 0]))


def _pack9(codes: list[int]) -> bytes:
    acc = sum(c << (9 * k) for k, c in enumerate(codes))
    return bytes([0x1F, 0x9D, 0x90]) + acc.to_bytes((9 * len(codes) + 7) // 8, "little")


def test_undefined_codes_are_corrupt_data():
    # 'a' then 258: only codes below 257 exist (257 would be the KwKwK case)
    with pytest.raises(ValueError, match="code 258 at byte 4 is not defined"):
        lzw.decompress(_pack9([97, 258]))
    with pytest.raises(ValueError, match="code 300 at byte 3 where a literal byte"):
        lzw.decompress(_pack9([300]))
    assert lzw.decompress(_pack9([97, 257])) == b"aaa"  # KwKwK is defined


def test_truncation_inside_a_code_is_reported(compress_z):
    packed = compress_z(_corpora()["random bytes"], max_bits=16)
    # 16-bit codes end on byte boundaries: one byte less leaves half a code
    with pytest.raises(ValueError, match="truncated .Z data: the stream ends inside a 16-bit code"):
        lzw.decompress(packed[:-1])


def test_read_bytes_names_the_file_on_one_line(tmp_path, compress_z):
    text = isolet_like_text(5)
    good = tmp_path / "isolet5.data.Z"
    good.write_bytes(compress_z(text))
    assert read_bytes(good) == text
    cut = tmp_path / "cut.data.Z"
    cut.write_bytes(compress_z(_corpora()["random bytes"])[:-1])
    with pytest.raises(DataError) as err:
        read_bytes(cut)
    message = str(err.value)
    assert message.startswith(f"{cut}: cannot decompress (truncated .Z data")
    assert "\n" not in message
    bad = tmp_path / "bad.data.Z"
    bad.write_bytes(b"plain text, not compressed\n")
    with pytest.raises(DataError, match=r"bad.data.Z: cannot decompress \(not a unix compress"):
        read_bytes(bad)
