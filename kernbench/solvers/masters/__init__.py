"""CG-Boost's restricted masters: one back end a module, all satisfying :class:`KernelMaster`.

:mod:`~kernbench.solvers.masters.base` holds what they share: the row form of a master
(:class:`RowForm`), its solution (:class:`KernelMasterResult`), the dual objective, the closed form
without a column and the protocol. The back ends:

* :mod:`~kernbench.solvers.masters.smo_qp`: the 2-norm QPs (11) / (13) with free α and free b by
  SMO warm-started across columns (the default for them), with the interior point of
  :mod:`~kernbench.solvers.masters.interior_point` for degenerate low-rank duals;
* :mod:`~kernbench.solvers.masters.osqp_qp`: any 2-norm master on OSQP, through its lifted dual;
* :mod:`~kernbench.solvers.masters.libsvm_qp`: the classification QP (11) by LIBSVM on the
  selected columns' Gram matrix, from scratch each time;
* :mod:`~kernbench.solvers.masters.highs_lp`: the 1-norm LP (4) in one HiGHS model grown by
  ``addCol``;
* :mod:`~kernbench.solvers.masters.cvxpy_qp`: either norm built afresh by cvxpy (the reference).
"""

from kernbench.solvers.masters.base import (
    KernelMaster,
    KernelMasterResult,
    RowForm,
    bias_only_master,
    dual_objective,
)
from kernbench.solvers.masters.cvxpy_qp import CvxpyKernelMaster, solve_kernel_master_cvxpy
from kernbench.solvers.masters.highs_lp import IncrementalKernelLPMaster
from kernbench.solvers.masters.libsvm_qp import SVMKernelMaster
from kernbench.solvers.masters.osqp_qp import OSQPKernelMaster
from kernbench.solvers.masters.smo_qp import SMOKernelMaster

__all__ = [
    "CvxpyKernelMaster",
    "IncrementalKernelLPMaster",
    "KernelMaster",
    "KernelMasterResult",
    "OSQPKernelMaster",
    "RowForm",
    "SMOKernelMaster",
    "SVMKernelMaster",
    "bias_only_master",
    "dual_objective",
    "solve_kernel_master_cvxpy",
]
