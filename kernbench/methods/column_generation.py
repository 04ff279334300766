"""The column-generation base: validation, the loop, tracing, stopping and staged prediction.

Every fully-corrective ensemble of kernbench (CGENS, LPBoost, CGENS-SLS, MultiBoost, MultiBoost_cw,
CG-Boost) is the same loop over a *restricted master problem*:

.. code-block:: text

    _init_master(X, y)                       # α₀ / λ₀ / U₀ ..., empty working set
    repeat (at most max_iter times):
        g      = _pricing_weights()          # (m,) signed weights, or (m, K) one column per class
        picks  = _price(g)                   # oracle call(s) on the weak-learner space -> [Pick]
        score  = _pricing_score(picks)       # default: max pick score
        if score <= _stop_threshold(): stop  # "converged"   (CGENS: ε; LPBoost: 1 + ε)
        _add_columns(picks)                  # push the new column(s) into the master
        step   = _solve_master()             # re-solve, warm-started -> MasterStep
        W, b   = _coefficients()             # W (J,) or (J, K); b scalar or (K,); kept per iter.

:class:`ColumnGenerationClassifier` does everything except the four method-specific hooks
``_init_master``, ``_pricing_weights``, ``_add_columns``, ``_solve_master`` (+ ``_coefficients`` and
``_stop_threshold``). It keeps:

* ``learners_``: the selected weak learners in order (a learner per column; several per iteration is
  fine, e.g. one per class for MultiBoost_cw); ``self.H_W``: their training columns (m × J);
* ``coef_path_`` / ``intercept_path_``: the coefficients after EVERY restricted solve (they change
  each iteration in fully-corrective methods), so ``staged_decision_function`` evaluates the
  learners once on X and takes one matrix product per iteration;
* ``trace_``: per iteration ``objective``, ``gap``, ``score`` (pricing score of the added column),
  ``train_error``, ``time_s`` (cumulative fit time, pricing included), ``n_columns``,
  ``solver_iter`` and ``solver_stop`` (which stopping rule of the restricted solver fired), plus any
  ``MasterStep.extra`` entries; ``n_iter_``, ``stop_reason_`` ("converged" | "max_iter" |
  "exhausted" (every column of a finite space selected) | "empty_space" | "max_time" (a subclass
  with a ``max_time`` parameter: the wall-clock cap, checked after each iteration)),
  ``final_score_``;
* ``feature_usage_``: the fraction of the learners splitting on each feature (stump spaces; None
  for other weak learners), Shen & Liu Fig. 5.

Optional hooks with defaults: ``_make_space`` (stump / perceptron / Fourier space from the
``weak_learner``, ``n_candidates``, ``sigma`` parameters; CG-Boost returns its kernel-column space),
``_price`` (one oracle call with ``exclude`` = the working set; for a 2-D ``g``, the best pick over
its columns, or one pick per column with ``_pick_per_column``), ``_decision_from_columns``
(``Hx @ W + b``; CGENS-SLS decodes simplex codes here),
``_learner_matrix`` (vectorised per learner type), ``_encode_targets``, ``_training_decision``
(the training-set decision values behind the trace's ``train_error``; default from ``H_W``).

Class attributes a subclass sets: ``_binary_only`` (labels mapped to ±1 with +1 = ``classes_[1]``;
otherwise class indices 0..K−1), ``_include_constant`` (stump space offers the constant column:
bias-free models), ``_absolute_pricing`` (criterion (8) |Σ g h| instead of (6)),
``_exclude_selected`` (False: no exclusion at all, LPBoost), and for multi-class and W ≥ 0 models:

* ``_pick_per_column``: a 2-D ``g`` (m × K) returns K picks in one pass, one per column, and every
  column has its own working set (a learner chosen for column k is excluded from column k only:
  the class-wise learner sets of MultiBoost_cw). Default False: one pick, the best over columns.
* ``_signed_columns``: h and −h are different columns (models with W ≥ 0, where −h cannot be
  reached through a negative coefficient), so selecting h leaves −h available. Default False:
  columns are excluded up to sign. Exhaustive (stump) spaces honour it exactly; sampled spaces draw
  fresh continuous candidates and keep excluding up to sign.
* ``_exhausted_reason``: the stop reason when every candidate is excluded (default "exhausted";
  methods whose restricted problem is then the full problem may call it "converged").

Every ``_price`` records ``_pick_columns``: the column of ``g`` each returned pick answers (the
class of a class-wise learner), for ``_add_columns`` to read.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.validation import check_is_fitted, validate_data

from kernbench.methods.base import IterativeMixin, KernbenchClassifier
from kernbench.methods.constraints import check_cross_constraints
from kernbench.weak.base import ColumnSet, Pick
from kernbench.weak.fourier import FourierSpace
from kernbench.weak.perceptron import PerceptronSpace
from kernbench.weak.stumps import (
    TIE_RTOL,
    SpaceExhaustedError,
    Stump,
    StumpSpace,
    feature_usage,
    predict_stumps,
    stump_arrays,
)


class StumpColumnIds:
    """An id per stump candidate, equal for candidates whose columns are equal (up to sign).

    Columns equal up to sign have scores equal up to sign for every g; two random Gaussian weight
    vectors separate distinct columns with probability one, in O(m·D) without building columns.

    Parameters
    ----------
    space : StumpSpace
    seed : int
        Seed of the two random weight vectors.
    signed : bool
        False: h and −h share an id (one id per candidate). True: h and −h are different columns
        (W ≥ 0 models); ``ids`` then has 2·n_candidates entries, entry i for candidate i with
        polarity +1 and n_candidates + i with polarity −1.

    Attributes
    ----------
    ids : ndarray of shape (n_candidates,) or (2·n_candidates,)
        Column id of every candidate (and polarity, when signed); ids are 0..n_distinct−1.
    first : ndarray of shape (n_distinct,)
        The first entry of ``ids`` with every id (unsigned: the canonical set,
        docs/methods/column_generation.md).
    """

    def __init__(self, space: StumpSpace, seed: int = 0, *, signed: bool = False) -> None:
        m = space.X.shape[0]
        self.signed = bool(signed)
        self._R = np.random.default_rng(seed).standard_normal((m, 2))
        self._scale = np.abs(self._R).sum(axis=0)
        S = space.scores(self._R)
        keys = self._keys(np.vstack([S, -S]) if self.signed else S)
        uniq, first, ids = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        self.ids = ids.ravel()
        self.first = first
        self._lookup = {tuple(k): i for i, k in enumerate(uniq)}

    def _keys(self, S: np.ndarray) -> np.ndarray:
        if not self.signed:
            S = S * np.where(S[:, :1] < 0, -1.0, 1.0)
        return np.round(S / self._scale, 10) + 0.0  # + 0.0 merges −0.0 with 0.0

    def id_of(self, column: np.ndarray) -> int | None:
        """The id of a training column (None if it is not a candidate's column)."""
        return self._lookup.get(tuple(self._keys((column @ self._R)[None, :])[0]))


@dataclass
class MasterStep:
    """What one restricted-master solve reports to the loop (one trace row).

    Attributes
    ----------
    objective : float
        Restricted primal objective after the solve.
    gap : float
        Method-defined optimality gap (CGENS: Claim 4.1's ½Σ_{j∉𝒲} s_j²); NaN if not computable.
    solver_stop : str
        Which stopping rule of the restricted solver fired ("tol", "max_epochs", "optimal", ...).
    solver_iter : int
        Iterations of the restricted solver in this call.
    extra : dict
        Further per-iteration numbers, traced under their keys.
    """

    objective: float
    gap: float = float("nan")
    solver_stop: str = ""
    solver_iter: int = 0
    extra: dict[str, float] = field(default_factory=dict)


class ColumnGenerationClassifier(IterativeMixin, KernbenchClassifier):
    """Base class of column-generation ensembles (see the module docstring for the hook protocol).

    Subclasses define ``__init__`` with their parameters (scikit-learn style). The base reads
    ``max_iter`` and, when present, ``weak_learner``, ``n_candidates``, ``sigma`` and
    ``random_state``.
    """

    path_param: ClassVar[str] = "max_iter"
    _binary_only: ClassVar[bool] = True
    _include_constant: ClassVar[bool] = False
    _absolute_pricing: ClassVar[bool] = True
    #: the default pricing excludes the working set (docs/methods/column_generation.md); LPBoost
    #: does not need to
    _exclude_selected: ClassVar[bool] = True
    #: 2-D pricing weights: one pick per column, each column with its own working set
    _pick_per_column: ClassVar[bool] = False
    #: W ≥ 0 models: h and −h are different columns (exclusion respects the sign)
    _signed_columns: ClassVar[bool] = False
    #: stop reason when every candidate is excluded
    _exhausted_reason: ClassVar[str] = "exhausted"

    # ------------------------------------------------------------------ hooks (subclass)
    def _init_master(self, X: np.ndarray, y: np.ndarray) -> None:
        """Set up the restricted master for targets ``y`` (±1 floats, or class indices)."""
        raise NotImplementedError

    def _pricing_weights(self) -> np.ndarray:
        """Signed sample weights g (m,) of the pricing problem, or G (m, K)."""
        raise NotImplementedError

    def _add_columns(self, picks: Sequence[Pick]) -> None:
        """Push the picked columns into the master (the base has already appended them to H_W)."""
        raise NotImplementedError

    def _solve_master(self) -> MasterStep:
        """Re-solve the restricted master (warm-started) and report."""
        raise NotImplementedError

    def _coefficients(self) -> tuple[np.ndarray, Any]:
        """Current (W, b): W of shape (J,) or (J, K); b a float or shape (K,)."""
        raise NotImplementedError

    def _stop_threshold(self) -> float:
        """The loop stops (converged) when the pricing score is ≤ this value."""
        raise NotImplementedError

    # ------------------------------------------------------------------ hooks with defaults
    def _make_space(self, X: np.ndarray) -> Any:
        """The weak-learner space on the training X, or None if it has no candidate."""
        kind = getattr(self, "weak_learner", "stump")
        max_bins = getattr(self, "max_bins", None)
        if kind == "stump":
            space = StumpSpace(X, include_constant=self._include_constant, max_bins=max_bins)
            return space if space.n_candidates > 0 else None
        n_cand = getattr(self, "n_candidates", 2000)
        if kind == "perceptron":
            return PerceptronSpace(X, n_candidates=n_cand, random_state=self._rng)
        if kind == "fourier":
            return FourierSpace(
                X, sigma=getattr(self, "sigma", 1.0), n_candidates=n_cand, random_state=self._rng
            )
        raise ValueError(
            f"unknown weak_learner {kind!r}; expected 'stump', 'perceptron' or 'fourier'"
        )

    def _price(self, g: np.ndarray) -> list[Pick]:
        """Oracle call(s): the best learner(s) outside the working set(s).

        1-D g: one pick. 2-D g: the best pick over its columns, or one pick per column with
        ``_pick_per_column``. Sets ``_pick_columns`` (the column each pick answers).
        """
        if self._stump_ids is not None:
            if g.ndim == 1 and not self._signed_columns:
                self._pick_columns = [0]
                return [self._price_stumps(g)]
            return self._price_stump_columns(g.reshape(g.shape[0], -1))
        if g.ndim == 1:
            self._pick_columns = [0]
            return [self._space.best(g, rng=self._rng, **self._oracle_kw(None))]
        K = g.shape[1]
        if self._pick_per_column:
            excl = [self._oracle_kw(k)["exclude"] for k in range(K)]
            kw = dict(absolute=self._absolute_pricing)
            if hasattr(self._space, "best_many"):
                picks = self._space.best_many(g, exclude=excl, **kw)
            else:
                picks = [
                    self._space.best(g[:, k], rng=self._rng, exclude=excl[k], **kw)
                    for k in range(K)
                ]
            self._pick_columns = list(range(K))
            return picks
        kw = self._oracle_kw(None)
        if hasattr(self._space, "best_many"):
            picks = self._space.best_many(g, **kw)
        else:
            picks = [self._space.best(g[:, k], rng=self._rng, **kw) for k in range(K)]
        best = max(range(K), key=lambda k: picks[k].score)
        self._pick_columns = [best]
        return [picks[best]]

    def _oracle_kw(self, column: int | None) -> dict[str, Any]:
        """``absolute`` and ``exclude`` for a sampled space's oracle (column: its working set)."""
        if not self._exclude_selected:
            exclude = None
        elif column is None or not self._pick_per_column:
            exclude = self._selected
        else:
            exclude = self._selected_by_column.setdefault(column, ColumnSet())
        return dict(absolute=self._absolute_pricing, exclude=exclude)

    def _price_stump_columns(self, G: np.ndarray) -> list[Pick]:
        """Exhaustive stump pricing of every column of G (m × K) in one presorted pass.

        Entries are (candidate, polarity): with ``_signed_columns`` both polarities are separate
        entries masked separately (the signed score, criterion (6) with W ≥ 0); otherwise |score|
        with the working set up to sign. ``_pick_per_column``: one pick per column (its own working
        set; columns whose candidates are all excluded give no pick); else the best entry over all
        columns. Near-ties (relative ``TIE_RTOL``) go to the first entry in candidate order (signed:
        all +1 polarities before the −1 ones), then to the first column.
        """
        space: StumpSpace = self._space
        K = G.shape[1]
        S = space.scores(G)  # (n_candidates, K), polarity +1
        n = S.shape[0]
        A = np.vstack([S, -S]) if self._signed_columns else np.abs(S)
        mask = self._stump_mask(K)[self._stump_ids.ids]  # (entries, K) or (entries, 1)
        A = np.where(mask, -np.inf, A)
        tol = TIE_RTOL * np.abs(G).sum(axis=0)  # (K,)

        def pick(entry: int, k: int) -> Pick:
            index = entry % n if self._signed_columns else entry
            if self._signed_columns:
                sign = 1 if entry < n else -1
            else:
                sign = 1 if S[index, k] >= 0 else -1
            column = sign * space.column(index)
            return Pick(space.stump(index, sign), column, float(column @ G[:, k]))

        if self._pick_per_column:
            picks, cols = [], []
            for k in range(K):
                best = A[:, k].max()
                if np.isfinite(best):
                    picks.append(pick(int(np.flatnonzero(A[:, k] >= best - tol[k])[0]), k))
                    cols.append(k)
            if not picks:
                raise SpaceExhaustedError("every stump candidate is excluded in every column")
            self._pick_columns = cols
            return picks
        row = A.max(axis=1)
        best = row.max()
        if not np.isfinite(best):
            raise SpaceExhaustedError("every stump candidate is excluded")
        entry = int(np.flatnonzero(row >= best - tol.max())[0])
        k = int(np.argmax(A[entry]))
        self._pick_columns = [k]
        return [pick(entry, k)]

    def _stump_mask(self, K: int) -> np.ndarray:
        """The working-set mask over column ids, shape (n_ids, K) per column or (n_ids, 1)."""
        if self._selected_ids.ndim == 1:
            self._selected_ids = self._selected_ids[:, None]
        if self._pick_per_column and self._selected_ids.shape[1] != K:
            grown = np.zeros((self._selected_ids.shape[0], K), dtype=bool)
            grown[:] = self._selected_ids.any(axis=1, keepdims=True)
            self._selected_ids = grown
        return self._selected_ids

    def _price_stumps(self, g: np.ndarray) -> Pick:
        """Exhaustive stump pricing with the working set masked by column id, O(m·D) per call.

        Same rule as ``StumpSpace.best`` with ``exclude`` (max |score| over the candidates whose
        column is not selected, near-ties to the first candidate), without hashing columns.
        """
        space: StumpSpace = self._space
        s = space.scores(g)
        a = np.abs(s)
        used = self._selected_ids if self._selected_ids.ndim == 1 else self._selected_ids[:, 0]
        a[used[self._stump_ids.ids]] = -np.inf
        best = a.max()
        if not np.isfinite(best):
            raise SpaceExhaustedError("every stump candidate is excluded")
        tol = TIE_RTOL * float(np.abs(g).sum())
        index = int(np.flatnonzero(a >= best - tol)[0])
        sign = 1 if s[index] >= 0 else -1
        column = sign * space.column(index)
        return Pick(space.stump(index, sign), column, float(column @ g))

    def _pricing_score(self, picks: Sequence[Pick]) -> float:
        return max(p.score for p in picks)

    def _encode_targets(self, y: np.ndarray) -> np.ndarray:
        """±1 floats (+1 = classes_[1]) for binary methods, else class indices."""
        idx = np.searchsorted(self.classes_, y)
        return np.where(idx == 1, 1.0, -1.0) if self._binary_only else idx

    def _decision_from_columns(self, Hx: np.ndarray, W: np.ndarray, b: Any) -> np.ndarray:
        """Decision values from learner outputs Hx (n × J) and coefficients (default Hx W + b)."""
        return Hx @ W + b

    def _training_decision(self, W: np.ndarray, b: Any) -> np.ndarray:
        """Decision values on the training set for the trace's train error (default from H_W;
        a method that keeps an equivalent state may answer without a pass over H_W)."""
        return self._decision_from_columns(self.H_W, W, b)

    def _learner_matrix(self, X: np.ndarray) -> np.ndarray:
        """Outputs of all selected learners on X, shape (n, J), vectorised per learner type."""
        learners = self.learners_
        out = np.empty((X.shape[0], len(learners)))
        by_type: dict[type, list[int]] = defaultdict(list)
        for j, lrn in enumerate(learners):
            by_type[type(lrn)].append(j)
        for cls, idx in by_type.items():
            group = [learners[j] for j in idx]
            if cls is Stump:
                out[:, idx] = predict_stumps(X, *stump_arrays(group))
            elif hasattr(cls, "predict_many"):
                out[:, idx] = cls.predict_many(group, X)
            else:
                out[:, idx] = np.column_stack([lrn.predict(X) for lrn in group])
        return out

    # ------------------------------------------------------------------ column store
    @property
    def H_W(self) -> np.ndarray:
        """Training columns of the selected learners, shape (m, J) (a view; valid during fit)."""
        return self._H[:, : self._n_cols]

    def _append_columns(self, picks: Sequence[Pick]) -> None:
        k = len(picks)
        m = self._H.shape[0]
        if self._n_cols + k > self._H.shape[1]:
            grown = np.empty((m, max(2 * self._H.shape[1], self._n_cols + k)))
            grown[:, : self._n_cols] = self.H_W
            self._H = grown
        cols = getattr(self, "_pick_columns", None)
        if cols is None or len(cols) != k:
            cols = [0] * k
        for p, col in zip(picks, cols):
            self._H[:, self._n_cols] = p.column
            self._n_cols += 1
            self._selected.add(p.column)
            if self._pick_per_column:
                self._selected_by_column.setdefault(col, ColumnSet()).add(p.column)
            if self._stump_ids is not None:
                cid = self._stump_ids.id_of(p.column)
                if cid is not None:
                    if self._selected_ids.ndim == 1:
                        self._selected_ids[cid] = True
                    else:
                        self._selected_ids[cid, col if self._pick_per_column else 0] = True
            self.learners_.append(p.learner)

    # ------------------------------------------------------------------ the loop
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> ColumnGenerationClassifier:
        """Run column generation on (X, y).

        Parameters
        ----------
        X : array-like of shape (m, D)
        y : array-like of shape (m,)

        Returns
        -------
        self
        """
        check_cross_constraints(self)
        X, y, _ = self._check_training_data(X, y, binary_only=self._binary_only)
        self._rng = self._make_rng()
        m = X.shape[0]
        self._H = np.empty((m, 32))
        self._n_cols = 0
        self._selected = ColumnSet()
        self._selected_by_column: dict[int, ColumnSet] = {}
        self._pick_columns: list[int] = []
        self.learners_: list[Any] = []
        self.coef_path_: list[np.ndarray] = []
        self.intercept_path_: list[Any] = []
        trace: dict[str, list] = defaultdict(list)
        y_enc = self._encode_targets(y)

        t0 = time.perf_counter()
        self._space = self._make_space(X)
        self._stump_ids = None
        if isinstance(self._space, StumpSpace) and self._exclude_selected:
            self._stump_ids = StumpColumnIds(self._space, signed=self._signed_columns)
            self._selected_ids = np.zeros(self._stump_ids.first.size, dtype=bool)
        self._init_master(X, y_enc)
        self.stop_reason_ = "max_iter"
        self.final_score_ = float("nan")
        for _ in range(self.max_iter):
            if self._space is None:
                self.stop_reason_ = "empty_space"
                break
            g = self._pricing_weights()
            try:
                picks = self._price(g)
            except SpaceExhaustedError:  # every column selected: the master is the full problem
                self.final_score_ = -np.inf  # the best score over no candidate
                self.stop_reason_ = self._exhausted_reason
                break
            score = self._pricing_score(picks)
            self.final_score_ = float(score)
            if score <= self._stop_threshold():
                self.stop_reason_ = "converged"
                break
            self._append_columns(picks)
            self._add_columns(picks)
            step = self._solve_master()
            W, b = self._coefficients()
            self.coef_path_.append(np.array(W, dtype=np.float64, copy=True))
            self.intercept_path_.append(np.array(b, dtype=np.float64, copy=True))
            dec = self._training_decision(W, b)
            trace["objective"].append(float(step.objective))
            trace["gap"].append(float(step.gap))
            trace["score"].append(float(score))
            trace["train_error"].append(self._train_error(dec, y))
            trace["time_s"].append(time.perf_counter() - t0)
            trace["n_columns"].append(self._n_cols)
            trace["solver_iter"].append(int(step.solver_iter))
            trace["solver_stop"].append(step.solver_stop)
            for key, value in step.extra.items():
                trace[key].append(value)
            reason = self._should_stop(step)
            if reason is None and self._time_capped(trace["time_s"][-1]):
                reason = "max_time"
            if reason is not None:
                self.stop_reason_ = reason
                break
        self.n_iter_ = len(self.coef_path_)
        self.trace_ = dict(trace)
        if self.n_iter_:
            self.coef_, self.intercept_ = self.coef_path_[-1], self.intercept_path_[-1]
        else:
            W, b = self._coefficients()
            self.coef_ = np.array(W, dtype=np.float64)
            self.intercept_ = np.array(b, dtype=np.float64)
        self.model_size_ = len(self.learners_)
        self.feature_usage_ = feature_usage(self.learners_, X.shape[1])  # Fig. 5 (stumps)
        self.fit_time_ = time.perf_counter() - t0
        self._finish_fit()
        del self._H, self._space, self._selected, self._stump_ids, self._selected_by_column
        return self

    def _train_error(self, dec: np.ndarray, y: np.ndarray) -> float:
        """Training error traced per iteration (misclassified fraction; a regressor: its RMSE)."""
        return float(np.mean(self._labels_from_decision(dec) != y))

    def _should_stop(self, step: MasterStep) -> str | None:
        """Hook after each restricted solve: a stop reason (e.g. the objective stalled) or None."""
        return None

    def _finish_fit(self) -> None:
        """Hook after the loop (e.g. drop large solver state)."""

    def _time_capped(self, elapsed: float) -> bool:
        """The wall-clock cap: a subclass with a ``max_time`` parameter (seconds, None: no cap)
        stops with "max_time" after the iteration during which it was reached."""
        cap = getattr(self, "max_time", None)
        return cap is not None and elapsed >= cap

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values F(x) of the final model (binary: shape (n,), positive ↔ classes_[1])."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Hx = self._learner_matrix(X)
        return self._decision_from_columns(
            Hx[:, : self.coef_.shape[0]], self.coef_, self.intercept_
        )

    def predict(self, X: Any) -> np.ndarray:
        """Class labels: sign of F (binary, sign(0) = +1) or the argmax over classes."""
        return self._labels_from_decision(self.decision_function(X))

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Decision values after iterations 1..n_iter_ (learners evaluated once on X).

        A fit that converged before adding any column yields the column-free model once.
        """
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        Hx = self._learner_matrix(X)
        if not self.coef_path_:
            yield self._decision_from_columns(Hx[:, :0], self.coef_, self.intercept_)
            return
        for W, b in zip(self.coef_path_, self.intercept_path_):
            yield self._decision_from_columns(Hx[:, : W.shape[0]], W, b)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = not self._binary_only
        return tags
