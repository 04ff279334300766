"""Every public estimator documents how to use it, what it relates to and where it comes from: its
class docstring has numpy-style "See Also", "References" and "Examples" sections, and the Examples
run as doctests with ``make test`` (``python -m pytest --doctest-modules kernbench/methods``)."""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest

import kernbench.methods as methods
from kernbench.methods import registry

ROOT = Path(__file__).resolve().parents[2]

#: the estimators a user imports: the classes ``kernbench.methods`` exports and every registered one
PUBLIC = sorted(
    {name for name in methods.__all__ if isinstance(getattr(methods, name), type)}
    | {cls.__name__ for cls in registry().values()}
)


def sections(cls: type) -> dict[str, str]:
    """The class docstring's numpy-style sections, ``title -> body`` (a title over dashes)."""
    doc = inspect.getdoc(cls) or ""
    parts = re.split(r"^(\S[^\n]*)\n-{3,}\n", doc, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def see_also_names(body: str) -> list[str]:
    """The estimators a "See Also" section names (``A : why`` or ``A, B : why`` lines)."""
    names = []
    for line in body.splitlines():
        head = re.match(r"^(\w+(?:\s*,\s*\w+)*)\s*:", line)
        if head:
            names += [n.strip() for n in head.group(1).split(",")]
    return names


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_estimator_has_see_also_references_and_examples(name):
    cls = getattr(methods, name)
    found = sections(cls)
    missing = [s for s in ("See Also", "References", "Examples") if s not in found]
    assert not missing, f"{name}'s docstring lacks {missing}"
    see_also = see_also_names(found["See Also"])
    assert see_also, f"{name}: See Also names no estimator"
    assert set(see_also) <= set(PUBLIC) - {name}, f"{name}: See Also names {see_also}"
    assert re.search(r"^\.\. \[1\] \S", found["References"], re.M), f"{name}: no numbered reference"
    examples = doctest.DocTestParser().get_examples(found["Examples"])
    assert examples, f"{name}: Examples holds no doctest"
    assert any(re.search(rf"\b{name}\(", ex.source) for ex in examples), (
        f"{name}: Examples never builds a {name}"
    )
    assert any(ex.want for ex in examples), f"{name}: Examples checks no output"


@pytest.mark.parametrize("name", PUBLIC)
def test_the_examples_are_collected_by_the_doctest_run(name):
    """``--doctest-modules kernbench/methods`` finds a docstring only in a module file there."""
    path = Path(inspect.getsourcefile(getattr(methods, name)))
    assert path.parent == ROOT / "kernbench" / "methods"


def test_make_test_runs_the_doctests():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^DOCTESTS := --doctest-modules kernbench/methods$", makefile, re.M)
    recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "$(DOCTESTS)" in recipe


def test_the_reader_finds_sections_and_a_missing_one():
    class Example:
        """Summary.

        See Also
        --------
        AdaBoost, LPBoost : related.

        Examples
        --------
        >>> 1 + 1
        2
        """

    found = sections(Example)
    assert set(found) == {"See Also", "Examples"}
    assert see_also_names(found["See Also"]) == ["AdaBoost", "LPBoost"]
