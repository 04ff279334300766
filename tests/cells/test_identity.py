"""Canonical JSON: the fast paths for plain built-in values give exactly what the general path
gives, so stored JSON and cell identities do not change."""

from __future__ import annotations

import enum
import math
from collections import OrderedDict

import numpy as np

from kernbench.cells.identity import digest, dumps, to_jsonable


class _Letter(enum.StrEnum):
    A = "a"


class _Small(enum.IntEnum):
    ONE = 1


OBJ = {
    "trace": [0.5, math.nan, math.inf, 1, True, None, np.float32(0.25), np.int64(7), (2.0, "x")],
    "p": {"C": np.float64(1e-3), 3: _Letter.A, "arr": np.arange(3.0)},
    "o": range(2),
}


def test_digest_of_a_mixed_object_is_unchanged():
    # written by the implementation before the fast paths: a change here changes cell ids
    assert dumps(OBJ) == (
        '{"o":"range(0, 2)","p":{"3":"a","C":0.001,"arr":[0.0,1.0,2.0]},'
        '"trace":[0.5,null,null,1,true,null,0.25,7,[2.0,"x"]]}'
    )
    assert digest(OBJ) == "5d6a936449e5e1478d79323d0c5d942f98a0c41d6cadba831cb700881751acdd"


def test_subclasses_and_numpy_values_take_the_general_path():
    converted = to_jsonable(
        OrderedDict(
            a=[_Small.ONE, np.bool_(True), np.float64(-math.inf)],
            b=(np.float64(2.5), [np.nan]),
        )
    )
    assert converted == {"a": [_Small.ONE, True, None], "b": [2.5, [None]]}
    assert type(converted["b"][0]) is float and type(converted["a"][1]) is bool
