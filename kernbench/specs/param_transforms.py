"""Named maps between the parameters of two methods (a spec's ``take``).

Shen & Liu take the RBF-SVM's cross-validated bandwidth for their Fourier weak learners; the SVM
searches ``gamma`` of exp(−gamma‖x − x′‖²), the learners take ``sigma`` with gamma = 1/(2 sigma²).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def _positive(name: str, value: Any) -> float:
    x = float(value)
    if not x > 0:
        raise ValueError(f"{name} needs a positive value, got {value!r}")
    return x


#: transform name -> function of the source parameter's chosen value
TRANSFORMS: dict[str, Callable[[Any], Any]] = {
    "identity": lambda v: v,
    # exp(-gamma d²) = exp(-d² / (2 sigma²))
    "gamma_to_sigma": lambda g: 1.0 / math.sqrt(2.0 * _positive("gamma_to_sigma", g)),
    "sigma_to_gamma": lambda s: 1.0 / (2.0 * _positive("sigma_to_gamma", s) ** 2),
}
