"""Documented and real parameters cannot drift: every registered estimator's class docstring lists
exactly its constructor's parameters, in order (numpy style, "Parameters" section)."""

from __future__ import annotations

import inspect
import re

import pytest

from kernbench.methods import registry


def documented_parameters(cls: type) -> list[str]:
    """Names in the "Parameters" section of the class docstring (``name : type`` lines)."""
    doc = inspect.getdoc(cls) or ""
    match = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    if match is None:
        return []
    names = []
    text = re.sub(r",\n\s*", ", ", match.group(1))  # a name list continued on the next line
    for line in text.splitlines():
        head = re.match(r"^(\w+(?:\s*,\s*\w+)*)\s*:", line)
        if head:
            names += [n.strip() for n in head.group(1).split(",")]
    return names


def constructor_parameters(cls: type) -> list[str]:
    sig = inspect.signature(cls.__init__)
    return [p for p in sig.parameters if p != "self"]


@pytest.mark.parametrize("name", sorted(registry()))
def test_docstring_lists_the_constructor_parameters(name):
    cls = registry()[name]
    assert documented_parameters(cls) == constructor_parameters(cls)


def test_the_reader_finds_parameters():
    class Example:
        """Summary.

        Parameters
        ----------
        a, b : int
            Two.
        c : float, default=1.0
            One.

        Attributes
        ----------
        d_ : int
        """

        def __init__(self, a=1, b=2, c=1.0):
            pass

    assert documented_parameters(Example) == ["a", "b", "c"] == constructor_parameters(Example)
