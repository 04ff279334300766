"""kernbench's estimators, one per module, all scikit-learn compatible.

``from kernbench.methods import SVMStump``; ``registry()`` maps snake_case names to classes.
"""

from kernbench.methods.registry import default_params, get_method, register, registry

# --- method modules (each registers itself); keep one import per line, sorted ---
# (helpers: add `from kernbench.methods.<module> import <Class>` here and the name to __all__)

__all__ = [
    "default_params",
    "get_method",
    "register",
    "registry",
]
