"""Unix ``compress`` (``.Z``) decoding: the LZW stream that UCI ships ISOLET in.

Python's standard library reads gzip, bz2, xz and zip, not ``.Z``. The format, as ``compress``
(and ``gzip -d``, which reads it too) writes it:

* a 3-byte header: the magic ``1f 9d``, then a flags byte whose low 5 bits are the largest code
  width (9 to 16 bits) and whose bit 7 is *block mode* (code 256 clears the table);
* LZW codes packed least-significant bit first, starting 9 bits wide; the first free code is
  257 in block mode (256 otherwise), and a code one past the last defined one is the
  "KwKwK" case (the previous string plus its own first byte);
* the width grows by one bit when the next free code no longer fits (up to the largest width,
  after which the table stops growing), and resets to 9 bits after a clear code;
* codes are written in groups of eight (``n_bits`` bytes): after a width change or a clear code
  the rest of the current group is padding, which a decoder must skip.

A ``.Z`` stream carries no length or checksum, so a truncated file is only recognised when it
ends inside a code (more than a byte's padding left over); a text file cut short elsewhere still
shows up in the parser, as a malformed last line.
"""

from __future__ import annotations

__all__ = ["MAGIC", "decompress"]

#: the first two bytes of every ``.Z`` file
MAGIC = b"\x1f\x9d"
_BLOCK_MODE = 0x80
_RESERVED = 0x60
_WIDTH = 0x1F
_CLEAR = 256
_INIT_BITS = 9


def _group_end(pos: int, origin: int, n_bits: int) -> int:
    """The first bit at or after ``pos`` that ends a group of eight ``n_bits``-wide codes
    counted from ``origin`` (where the current width started)."""
    group = 8 * n_bits
    return origin + -(-(pos - origin) // group) * group


def decompress(data: bytes) -> bytes:
    """The content of a unix ``compress`` (``.Z``) stream.

    Parameters
    ----------
    data : bytes
        The whole ``.Z`` file, header included.

    Returns
    -------
    bytes
        The decompressed content.

    Raises
    ------
    ValueError
        One line saying what is wrong: not a ``.Z`` stream (magic bytes), an unknown header
        flag or code width, a code that is not defined yet (corrupt data), or a stream that ends
        inside a code or inside the padding of a code group (truncated).
    """
    if len(data) < 3 or data[:2] != MAGIC:
        head = data[:2].hex(" ") or "nothing"
        raise ValueError(f"not a unix compress (.Z) stream: starts with {head}, not 1f 9d")
    flags = data[2]
    if flags & _RESERVED:
        raise ValueError(f"unknown flags 0x{flags:02x} in the .Z header")
    max_bits = flags & _WIDTH
    if not _INIT_BITS <= max_bits <= 16:
        raise ValueError(f"code width of {max_bits} bits in the .Z header (expected 9 to 16)")
    block_mode = bool(flags & _BLOCK_MODE)
    max_max_code = 1 << max_bits
    end = 8 * (len(data) - 3)  # bits of code data
    buf = data[3:] + b"\0\0"  # a code read at the end never runs past the buffer

    table: list[bytes] = [bytes((i,)) for i in range(256)]
    if block_mode:
        table.append(b"")  # 256 is the clear code, never a string
    first_free = len(table)
    n_bits, origin, pos, tail = _INIT_BITS, 0, 0, 0  # tail: the bit after the last code read
    max_code = (1 << n_bits) - 1
    mask = max_code
    out: list[bytes] = []
    prev = b""  # the previous code's string; empty: the next code starts a new table
    while True:
        if len(table) > max_code:  # the next free code needs another bit
            pos = origin = _group_end(pos, origin, n_bits)
            n_bits += 1
            max_code = max_max_code if n_bits == max_bits else (1 << n_bits) - 1
            mask = (1 << n_bits) - 1
        if pos + n_bits > end:
            break
        i = pos >> 3
        code = ((buf[i] | buf[i + 1] << 8 | buf[i + 2] << 16) >> (pos & 7)) & mask
        pos = tail = pos + n_bits
        if block_mode and code == _CLEAR:
            del table[first_free:]
            pos = origin = _group_end(pos, origin, n_bits)
            n_bits = _INIT_BITS
            max_code = mask = (1 << n_bits) - 1
            prev = b""
            continue
        if not prev:
            if code >= 256:
                raise ValueError(
                    f"corrupt .Z data: code {code} at byte {3 + (pos - n_bits) // 8} where a "
                    "literal byte (code < 256) must start the table"
                )
            prev = table[code]
            out.append(prev)
            continue
        if code < len(table):
            entry = table[code]
        elif code == len(table):  # KwKwK: the string being defined by this very code
            entry = prev + prev[:1]
        else:
            raise ValueError(
                f"corrupt .Z data: code {code} at byte {3 + (pos - n_bits) // 8} is not defined "
                f"(only codes below {len(table)} are)"
            )
        out.append(entry)
        if len(table) < max_max_code:
            table.append(prev + entry[:1])
        prev = entry
    # the encoder ends with the last code's byte, or (some encoders, after a width change) with
    # its group's padding; more bits left over mean the file was cut inside a code or padding
    if end - tail >= 8 and pos != end:
        raise ValueError(
            f"truncated .Z data: the stream ends inside a {n_bits}-bit code or its group's "
            f"padding ({len(data)} bytes)"
        )
    return b"".join(out)
