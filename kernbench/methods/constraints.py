"""Constraints between parameters, declared once per estimator class.

scikit-learn's ``_parameter_constraints`` check each parameter alone. A rule over several
parameters (``norm="l1"`` cannot run on ``solver="osqp"``) is a :class:`CrossConstraint` in the
class's ``_cross_constraints``; :func:`check_cross_constraints` enforces them in ``fit``, and
the spec validator (:mod:`kernbench.specs.load`) calls :func:`cross_violation` for every
combination of a method's grid before any cell runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CrossConstraint:
    """A rule over several parameters of one estimator.

    Attributes
    ----------
    names : tuple of str
        The parameters the rule reads (named in the error of a refused combination).
    violation : callable
        ``violation(params)`` with every parameter of the estimator: why this combination is
        refused (one sentence), or None when it is allowed.
    """

    names: tuple[str, ...]
    violation: Callable[[Mapping[str, Any]], str | None]


def cross_violation(
    cls: type, params: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> tuple[CrossConstraint, str] | None:
    """The first constraint of ``cls`` that ``params`` (missing ones: ``defaults``, else the
    constructor's) violates, with its message; None when every constraint holds."""
    if defaults is None:
        defaults = cls().get_params(deep=False)
    full = {**defaults, **params}
    for rule in getattr(cls, "_cross_constraints", ()):
        message = rule.violation(full)
        if message is not None:
            return rule, message
    return None


def check_cross_constraints(estimator: Any) -> None:
    """Raise ``ValueError`` (naming the parameters) when ``estimator``'s parameters combine in a
    way one of its class's constraints refuses."""
    params = estimator.get_params(deep=False)
    found = cross_violation(type(estimator), params)
    if found is not None:
        rule, message = found
        combo = ", ".join(f"{n}={params[n]!r}" for n in rule.names)
        raise ValueError(f"incompatible parameters {combo}: {message}")


def stump_only_max_bins(params: Mapping[str, Any]) -> str | None:
    """``max_bins`` bins the stump search: it has no meaning for another weak learner."""
    kind = params.get("weak_learner", "stump")
    if params.get("max_bins") is not None and kind != "stump":
        return f"max_bins applies to weak_learner='stump' only, not {kind!r}"
    return None


MAX_BINS_NEEDS_STUMPS = CrossConstraint(("weak_learner", "max_bins"), stump_only_max_bins)
