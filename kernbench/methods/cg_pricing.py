"""The working set and the pricer of column generation (docs/methods/column_generation.md).

:class:`WorkingSet` holds what the loop has selected: the training columns (m × J), the learners,
the column of the pricing weights each learner answers (its class, for class-wise learner sets),
and the one exclusion structure the pricer consults (stump column ids, or a :class:`ColumnSet`
per class). :class:`OraclePricer` prices the weak-learner space against the pricing weights and
returns a :class:`PricingResult`; it keeps no state between calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from kernbench.solvers.column_buffer import ColumnBuffer, is_sign_valued
from kernbench.weak.base import ColumnSet, HypothesisSpace, Pick, WeakLearnerSpace
from kernbench.weak.stumps import TIE_RTOL, SpaceExhaustedError, StumpSpace


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
        self._uniq = uniq
        self._lookup: dict[tuple, int] | None = None  # built on the first id_of

    def _keys(self, S: np.ndarray) -> np.ndarray:
        if not self.signed:
            S = S * np.where(S[:, :1] < 0, -1.0, 1.0)
        return np.round(S / self._scale, 10) + 0.0  # + 0.0 merges −0.0 with 0.0

    def id_of(self, column: np.ndarray) -> int | None:
        """The id of a training column (None if it is not a candidate's column)."""
        if self._lookup is None:
            self._lookup = {tuple(k): i for i, k in enumerate(self._uniq)}
        return self._lookup.get(tuple(self._keys((column @ self._R)[None, :])[0]))

    def id_of_pick(self, pick: Pick) -> int | None:
        """The id of a picked column: by its candidate index when the pick carries one (and
        the ids are unsigned), else by hashing its column (:meth:`id_of`)."""
        if pick.candidate is not None and not self.signed:
            return int(self.ids[pick.candidate])
        return self.id_of(pick.column)


@dataclass(frozen=True)
class PricingRule:
    """How a method prices its weak-learner space.

    Attributes
    ----------
    absolute : bool
        Score |Σ g h| (criterion (8), a negation-complete space with free coefficients) rather
        than the signed Σ g h (criterion (6)).
    exclude : bool
        Exclude the working set from pricing (False: LPBoost, whose restricted-dual feasibility
        keeps the selected columns below the threshold).
    per_column : bool
        2-D weights G (m × K): one pick per column, each column with its own working set (the
        class-wise learner sets of MultiBoost_cw). False: one pick, the best over the columns.
    signed : bool
        h and −h are different columns (W ≥ 0 models): selecting h leaves −h available.
        Exhaustive (stump) spaces honour it exactly; sampled spaces draw fresh continuous
        candidates and keep excluding up to sign.
    exhausted : str
        The stop reason when every candidate is excluded ("exhausted"; "converged" for methods
        whose restricted problem is then the full problem).
    """

    absolute: bool = True
    exclude: bool = True
    per_column: bool = False
    signed: bool = False
    exhausted: str = "exhausted"


@dataclass
class PricingResult:
    """What one pricing call returns to the loop.

    Attributes
    ----------
    picks : list of Pick
        The columns to add (empty when the pricing stops the loop).
    columns : list of int
        For each pick, the column of the pricing weights it answers (0 for 1-D weights).
    score : float
        The pricing score compared with ``threshold`` (−inf when no candidate is left).
    threshold : float
        No column is violated when ``score`` ≤ ``threshold``.
    stop_reason : str or None
        Why the loop stops here ("converged", "exhausted", ...), or None to add ``picks``.
    rule : str
        Which stopping rule of the method's own fired ("TR1" for CG-Boost's error-point rule;
        empty otherwise).
    extra : dict
        Per-iteration numbers of the pricing, traced under their keys.
    """

    picks: list[Pick]
    columns: list[int]
    score: float
    threshold: float
    stop_reason: str | None = None
    rule: str = ""
    extra: dict[str, float] = field(default_factory=dict)


class PricingInput(Protocol):
    """What a pricer reads of the master's step
    (:class:`~kernbench.methods.column_generation.MasterStep`)."""

    g: np.ndarray
    threshold: float
    scores: np.ndarray | None
    result: Any


class Pricer(Protocol):
    """The pricing collaborator of the column-generation loop."""

    def price(self, step: PricingInput, ws: WorkingSet) -> PricingResult:
        """The columns to add for the master's ``step``, or why the loop stops."""
        ...


class WorkingSet:
    """The selected columns 𝒲: training columns, learners, classes, and their exclusion.

    Parameters
    ----------
    m : int
        Training points.
    space : HypothesisSpace or None
        The weak-learner space; a :class:`StumpSpace` with ``rule.exclude`` is excluded by
        column id (O(1) per pricing), any other space through a :class:`ColumnSet` per class.
    rule : PricingRule
    group_sizes : sequence of int or None
        A space of indexed groups (CG-Boost's kernel columns, learners with ``group`` and
        ``index``): the working set is kept as one boolean mask per group, ``in_group``.
    """

    def __init__(
        self,
        m: int,
        space: HypothesisSpace | None,
        rule: PricingRule,
        group_sizes: Sequence[int] | None = None,
    ) -> None:
        self.space = space
        self._matrix = ColumnBuffer(m, capacity=32)  # the columns written so far
        self._pending: list[np.ndarray] = []  # the rest, until H is read
        self.n_columns = 0
        self.learners: list[Any] = []
        self.classes: list[int] = []
        self.candidates: list[int | None] = []  # each learner's candidate index, if known
        self.rule = rule
        self.stump_ids: StumpColumnIds | None = None
        self._mask = np.zeros((0, 1), dtype=bool)
        self._sets: dict[int, ColumnSet] = {}
        self.in_group: list[np.ndarray] | None = None
        if group_sizes is not None:
            self.in_group = [np.zeros(n, dtype=bool) for n in group_sizes]
        elif isinstance(space, StumpSpace) and rule.exclude:
            self.stump_ids = StumpColumnIds(space, signed=rule.signed)
            self._mask = np.zeros((self.stump_ids.first.size, 1), dtype=bool)

    @property
    def H(self) -> np.ndarray:
        """Training columns of the selected learners, shape (m, J) (a view).

        Columns are written into the matrix when it is read, not when they are added: a master
        that never reads it (MultiBoost_cw's coordinate descent keeps its own layout) never pays
        for the strided writes of an (m, J) matrix that reaches m × 13 000 on letter.
        """
        for column in self._pending:
            self._matrix.append(column)  # int8 columns are written exactly
        self._pending = []
        return self._matrix.view()

    @staticmethod
    def _kept(column: np.ndarray) -> np.ndarray:
        """A pending column: int8 when its entries are in {−1, 0, +1} (an eighth of the memory),
        else a float copy."""
        column = np.asarray(column, dtype=np.float64)
        return column.astype(np.int8) if is_sign_valued(column) else column.copy()

    def add(self, picks: Sequence[Pick], columns: Sequence[int]) -> None:
        """Append the picked learners; ``columns[i]``: the class whose working set gets pick i."""
        k = len(picks)
        if len(columns) != k:
            raise ValueError(f"{k} picks but {len(columns)} column indices")
        for p, col in zip(picks, columns):
            self._pending.append(self._kept(p.column))
            self.n_columns += 1
            self.learners.append(p.learner)
            self.classes.append(int(col))
            self.candidates.append(p.candidate)
            slot = col if self.rule.per_column else 0
            if self.in_group is not None:
                self.in_group[p.learner.group][p.learner.index] = True
            elif self.stump_ids is not None:
                cid = self.stump_ids.id_of_pick(p)
                if cid is not None:
                    self._mask[cid, slot] = True
            elif self.rule.exclude:
                self._sets.setdefault(slot, ColumnSet()).add(p.column)

    def excluded(self, column: int = 0) -> ColumnSet | None:
        """The columns a sampled-space oracle must skip for pricing column ``column`` (None:
        nothing is excluded)."""
        if not self.rule.exclude:
            return None
        return self._sets.setdefault(column if self.rule.per_column else 0, ColumnSet())

    def stump_mask(self, K: int) -> np.ndarray:
        """Selected stump column ids, shape (n_ids, K) per class or (n_ids, 1) shared."""
        if self.rule.per_column and self._mask.shape[1] != K:
            grown = np.zeros((self._mask.shape[0], K), dtype=bool)
            grown[:] = self._mask.any(axis=1, keepdims=True)
            self._mask = grown
        return self._mask


class OraclePricer:
    """Pricing of a weak-learner space: the best learner(s) outside the working set.

    1-D weights g: one pick. 2-D weights G (m × K): the best pick over the columns, or one pick
    per column (``rule.per_column``). Stump spaces are priced exhaustively with the working set
    masked by column id; sampled spaces call their oracle with the working set as ``exclude``.
    The loop stops ("converged") when the best score is at most the threshold.

    Parameters
    ----------
    space : WeakLearnerSpace
        The weak-learner space (``best`` / ``best_many``; stumps: ``scores``).
    rule : PricingRule
    rng : numpy Generator
        Passed to sampled spaces' oracles.
    """

    def __init__(
        self, space: WeakLearnerSpace, rule: PricingRule, rng: np.random.Generator
    ) -> None:
        self.space = space
        self.rule = rule
        self.rng = rng

    def price(self, step: PricingInput, ws: WorkingSet) -> PricingResult:
        """Price the master step's weights ``step.g`` against ``ws``; stop ("converged") when the
        best score is at most ``step.threshold``."""
        g, threshold = step.g, step.threshold
        try:
            picks, columns = self.best(g, ws, step.scores)
        except SpaceExhaustedError:  # every column selected: the master is the full problem
            return PricingResult([], [], -np.inf, threshold, stop_reason=self.rule.exhausted)
        score = float(max(p.score for p in picks))
        if score <= threshold:
            return PricingResult([], [], score, threshold, stop_reason="converged")
        return PricingResult(list(picks), columns, score, threshold)

    def best(
        self, g: np.ndarray, ws: WorkingSet, scores: np.ndarray | None = None
    ) -> tuple[list[Pick], list[int]]:
        """The best pick(s) for ``g`` outside ``ws`` and the column of ``g`` each answers.

        ``scores``: the stump space's ``scores(g)`` when the caller has them already (1-D ``g``,
        unsigned rule; otherwise ignored).
        """
        rule, space = self.rule, self.space
        if ws.stump_ids is not None:
            if g.ndim == 1 and not rule.signed:
                return [self._price_stumps(g, ws, scores)], [0]
            return self._price_stump_columns(g.reshape(g.shape[0], -1), ws)
        if g.ndim == 1:
            return [space.best(g, rng=self.rng, absolute=rule.absolute, exclude=ws.excluded())], [0]
        K = g.shape[1]
        if rule.per_column:
            excl = [ws.excluded(k) for k in range(K)]
            picks = space.best_many(g, exclude=excl, absolute=rule.absolute, rng=self.rng)
            return list(picks), list(range(K))
        picks = space.best_many(g, absolute=rule.absolute, exclude=ws.excluded(), rng=self.rng)
        best = max(range(K), key=lambda k: picks[k].score)
        return [picks[best]], [best]

    def _price_stump_columns(self, G: np.ndarray, ws: WorkingSet) -> tuple[list[Pick], list[int]]:
        """Exhaustive stump pricing of every column of G (m × K) in one presorted pass.

        Entries are (candidate, polarity): with ``rule.signed`` both polarities are separate
        entries masked separately (the signed score, criterion (6) with W ≥ 0); otherwise |score|
        with the working set up to sign. ``rule.per_column``: one pick per column (its own
        working set; columns whose candidates are all excluded give no pick); else the best
        entry over all columns. Near-ties (relative ``TIE_RTOL``) go to the first entry in
        candidate order (signed: all +1 polarities before the −1 ones), then to the first column.
        """
        space: StumpSpace = self.space
        signed = self.rule.signed
        K = G.shape[1]
        S = space.scores(G)  # (n_candidates, K), polarity +1
        n = S.shape[0]
        A = np.vstack([S, -S]) if signed else np.abs(S)
        mask = ws.stump_mask(K)[ws.stump_ids.ids]  # (entries, K) or (entries, 1)
        A = np.where(mask, -np.inf, A)
        tol = TIE_RTOL * np.abs(G).sum(axis=0)  # (K,)

        def pick(entry: int, k: int) -> Pick:
            index = entry % n if signed else entry
            if signed:
                sign = 1 if entry < n else -1
            else:
                sign = 1 if S[index, k] >= 0 else -1
            column = sign * space.column(index)
            return Pick(space.stump(index, sign), column, float(column @ G[:, k]), candidate=index)

        if self.rule.per_column:
            picks, cols = [], []
            for k in range(K):
                best = A[:, k].max()
                if np.isfinite(best):
                    picks.append(pick(int(np.flatnonzero(A[:, k] >= best - tol[k])[0]), k))
                    cols.append(k)
            if not picks:
                raise SpaceExhaustedError("every stump candidate is excluded in every column")
            return picks, cols
        row = A.max(axis=1)
        best = row.max()
        if not np.isfinite(best):
            raise SpaceExhaustedError("every stump candidate is excluded")
        entry = int(np.flatnonzero(row >= best - tol.max())[0])
        k = int(np.argmax(A[entry]))
        return [pick(entry, k)], [k]

    def _price_stumps(
        self, g: np.ndarray, ws: WorkingSet, scores: np.ndarray | None = None
    ) -> Pick:
        """Exhaustive stump pricing with the working set masked by column id, O(m·D) per call.

        Same rule as ``StumpSpace.best`` with ``exclude`` (max |score| over the candidates whose
        column is not selected, near-ties to the first candidate), without hashing columns.
        ``scores``: ``space.scores(g)`` if already computed.
        """
        space: StumpSpace = self.space
        s = space.scores(g) if scores is None else scores
        a = np.abs(s)
        a[ws.stump_mask(1)[:, 0][ws.stump_ids.ids]] = -np.inf
        best = a.max()
        if not np.isfinite(best):
            raise SpaceExhaustedError("every stump candidate is excluded")
        tol = TIE_RTOL * float(np.abs(g).sum())
        index = int(np.flatnonzero(a >= best - tol)[0])
        sign = 1 if s[index] >= 0 else -1
        column = sign * space.column(index)
        return Pick(space.stump(index, sign), column, float(column @ g), candidate=index)
