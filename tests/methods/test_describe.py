"""``kernbench methods NAME``: allowed values from the constraints, meanings from the docstring."""

from __future__ import annotations

from numbers import Integral, Real

import pytest
from sklearn.utils._param_validation import Interval, StrOptions
from typer.testing import CliRunner

from kernbench.methods import default_params, registry
from kernbench.methods.describe import describe_method, docstring_parameters, format_constraint


@pytest.mark.parametrize(
    ("constraint", "text"),
    [
        (Interval(Real, 0, None, closed="neither"), "float > 0"),
        (Interval(Integral, 1, None, closed="left"), "int ≥ 1"),
        (Interval(Real, 0, 1, closed="right"), "float in (0, 1]"),
        (Interval(Real, None, 5, closed="neither"), "float < 5"),
        (StrOptions({"stump", "fourier"}), "'fourier' | 'stump'"),
        (None, "None"),
        ("boolean", "bool"),
        (str, "str"),
    ],
)
def test_format_constraint(constraint, text):
    assert format_constraint(constraint) == text


class _Documented:
    """Toy.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of (3). Larger means a harder margin.
    tol, cache_size
        As in :class:`Other`, see ``tol``.
    bare : int

    Attributes
    ----------
    coef_ : ndarray
        Not a parameter.
    """


def test_docstring_parameters_first_sentence_several_names_and_markup():
    assert docstring_parameters(_Documented) == {
        "C": "Penalty of (3).",
        "tol": "As in Other, see tol.",
        "cache_size": "As in Other, see tol.",
        "bare": "",
    }


@pytest.mark.parametrize("name", list(registry()))
def test_every_parameter_of_every_method_has_allowed_values_and_a_meaning(name):
    cls, params = describe_method(name)
    assert [p.name for p in params] == list(default_params(cls))
    constrained = set(getattr(cls, "_parameter_constraints", {}))
    for p in params:
        assert p.meaning, (name, p.name)
        assert (p.allowed != "-") == (p.name in constrained), (name, p.name)
        assert "\n" not in p.meaning and len(p.meaning) <= 150


def test_cli_methods_name_shows_defaults_allowed_values_and_meanings():
    from kernbench.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["methods", "cgens"], terminal_width=200)
    assert res.exit_code == 0, res.output
    row = next(line for line in res.output.splitlines() if line.startswith("weak_learner"))
    assert "'stump'" in row and "'fourier' | 'perceptron' | 'stump'" in row
    assert "Exhaustive decision stumps" in row
    assert "path parameter: max_iter" in res.output
    res = runner.invoke(app, ["methods", "CGENS"], terminal_width=200)  # the class name works too
    assert res.exit_code == 0 and "kernbench.methods.cgens.CGENS" in res.output
    res = runner.invoke(app, ["methods", "cgen"])
    assert res.exit_code == 2 and "did you mean 'cgens'" in res.output
    res = runner.invoke(app, ["methods"], terminal_width=200)
    assert res.exit_code == 0 and "kernbench methods NAME" in res.output
