"""The split protocol: how a dataset is split into realisations and how hyper-parameters are
selected (part of a spec, read by the realisations, the planner and the cost model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["MAX_TIMEOUT_S", "Fallback", "Protocol", "Realisations"]

#: the longest per-cell time limit accepted (30 days), from a spec or ``--timeout``
MAX_TIMEOUT_S = 30 * 86400.0

Realisations = Literal["predefined", "random"]
Fallback = Literal["random", "fewer"]


@dataclass(frozen=True)
class Protocol:
    """How a dataset is split into realisations and how hyper-parameters are selected.

    Attributes
    ----------
    realisations : "predefined" | "random"
        ``predefined`` uses the source's own train/test realisations (IDA splits, fixed train/test
        files); ``random`` draws seeded random partitions. Generated datasets (twonorm, ...) draw a
        fresh sample per realisation, except under ``predefined`` when the catalogue names a
        predefined source for them (IDA twonorm, ringnorm).
    n_realisations : int
        Number of realisations (runs) per dataset.
    train_size, test_size : int or float or None
        Sizes of the random split: an int is a count, a float in (0, 1) a fraction. ``test_size``
        None means "the rest". Substitute splits under ``predefined`` use the source's own sizes.
    stratify : bool
        Stratify random splits and CV folds by class.
    seed : int
        Experiment seed; every split, fold and learner seed derives from it.
    cv_folds : int
        Folds of the inner cross-validation on the training part (grid search); 1 disables CV.
    preprocess : None | "standardize" | "minmax"
        Feature scaling fitted on the training part only; ``minmax_range`` is its target interval.
    fallback : "random" | "fewer"
        With ``predefined``: what to do for realisations the source does not have. ``random`` draws
        seeded random splits with the source's train/test sizes (flagged ``synthetic_split``);
        ``fewer`` runs only the realisations that exist.
    per_class : int or None
        Class-balanced subsampling of the training part (``1000 per class``).
    timeout_s : float or None
        Per-cell wall-clock limit; a cell over it is recorded with status ``timeout``.
    decision_grid : int or None
        For two-feature data: also record the final model's decision values on a
        ``decision_grid`` × ``decision_grid`` grid, with the training points, so that
        ``kernbench plot --kind boundary`` can draw decision boundaries from the store.
    grid_extent : float or None
        The grid spans [−grid_extent, grid_extent]² (None: the training points' bounding box
        with a 10 % margin).
    """

    realisations: Realisations = "random"
    n_realisations: int = 10
    train_size: float | int | None = None
    test_size: float | int | None = None
    stratify: bool = True
    seed: int = 0
    cv_folds: int = 5
    preprocess: str | None = None
    minmax_range: tuple[float, float] = (-1.0, 1.0)
    fallback: Fallback = "random"
    per_class: int | None = None
    timeout_s: float | None = None
    decision_grid: int | None = None
    grid_extent: float | None = None

    def identity(self) -> dict[str, Any]:
        """Everything in the protocol that changes a cell's result (timeouts do not).

        Keys added after the first release enter only when set, so cells stored before they
        existed keep their identity.
        """
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "timeout_s"}
        d["minmax_range"] = list(self.minmax_range)
        for key in _OPTIONAL_IDENTITY:
            if d[key] is None:
                del d[key]
        return d


#: protocol keys that enter a cell's identity only when set (see ``Protocol.identity``)
_OPTIONAL_IDENTITY = ("decision_grid", "grid_extent")
