"""kernbench/methods/base.py: what every estimator inherits."""

from __future__ import annotations

import inspect

import pytest
from sklearn.base import BaseEstimator, clone

from kernbench.methods import registry
from kernbench.methods.base import KernbenchClassifier

CLASSES = sorted(
    {c for c in registry().values() if issubclass(c, KernbenchClassifier)}, key=lambda c: c.__name__
)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_parameter_names_read_once_are_sklearns(cls: type) -> None:
    """The per-class parameter names equal scikit-learn's reading of ``__init__`` (its sorted
    keyword parameters), for the class and for a subclass with another signature; a clone keeps
    every parameter."""
    reference = BaseEstimator._get_param_names.__func__(cls)
    assert cls._get_param_names() == reference == cls._get_param_names()
    assert reference == sorted(
        p.name for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self" and p.kind != p.VAR_KEYWORD
    )  # fmt: skip

    class Sub(cls):
        def __init__(self, extra_knob: int = 3, **kwargs) -> None:
            super().__init__(**kwargs)
            self.extra_knob = extra_knob

    assert Sub._get_param_names() == ["extra_knob"]
    assert cls._get_param_names() == reference
    est = cls()
    assert clone(est).get_params() == est.get_params()
