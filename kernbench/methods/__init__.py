"""kernbench's estimators, one per module, all scikit-learn compatible.

``from kernbench.methods import SVMStump``; ``registry()`` maps snake_case names to classes.
"""

# --- method modules (each registers itself); keep one import per line, sorted ---
# (helpers: add `from kernbench.methods.<module> import <Class>` here and the name to __all__)
from kernbench.methods.adaboost import AdaBoost
from kernbench.methods.adaboost_ecc import AdaBoostECC
from kernbench.methods.adaboost_mh import AdaBoostMH
from kernbench.methods.adaboost_mo import AdaBoostMO
from kernbench.methods.cgboost import CGBoost
from kernbench.methods.cgboost_regressor import CGBoostRegressor
from kernbench.methods.cgens import CGENS
from kernbench.methods.cgens_sls import CGENSSLS
from kernbench.methods.drm import DRM
from kernbench.methods.exrm import ExRM
from kernbench.methods.kernel_svm import SVMGauss, SVMPerc, SVMStump
from kernbench.methods.lpboost import LPBoost
from kernbench.methods.multiboost import MultiBoost
from kernbench.methods.multiboost_cw import MultiBoostCW
from kernbench.methods.psvm import PSVM
from kernbench.methods.registry import default_params, get_method, register, registry
from kernbench.methods.rff_svm import RFFSVM
from kernbench.methods.sklearn_ensembles import AdaSVM, AdaTree, BagSVM, BagTree

__all__ = [
    "AdaBoost",
    "AdaBoostECC",
    "AdaBoostMH",
    "AdaSVM",
    "AdaTree",
    "BagSVM",
    "BagTree",
    "CGBoost",
    "CGBoostRegressor",
    "AdaBoostMO",
    "CGENS",
    "CGENSSLS",
    "DRM",
    "ExRM",
    "LPBoost",
    "MultiBoost",
    "PSVM",
    "MultiBoostCW",
    "RFFSVM",
    "SVMGauss",
    "SVMPerc",
    "SVMStump",
    "default_params",
    "get_method",
    "register",
    "registry",
]
