"""Decision stumps and the exhaustive weighted-score oracle over them
(docs/methods/column_generation.md).

A stump is h_{d,t,s}(x) = s · sign(x_d − t) with sign(0) = +1 (Lin & Li Sec. IV). On a training
set ``X`` (m × D), :class:`StumpSpace` sorts every feature ONCE and keeps the sort order; each
oracle call is then one compiled O(m·D) pass (kernbench.solvers.stump_search): accumulate the
signed weights g in each feature's sorted order and read the score of every candidate threshold
from the running sum,

    score(d, t) = Σ_i g_i sign(x_id − t) = G − 2·G_<(t),
    G = Σ_i g_i,   G_<(t) = Σ_{x_id < t} g_i.

Candidates, in the fixed order that also breaks ties (first wins):

0. with ``include_constant=True`` only: the constant column +1 (threshold −∞; the stump is
   constant on every input: the bias of bias-free models such as AdaBoost and LPBoost);
1. for each feature d = 0..D−1, for each pair of consecutive distinct sorted values
   v_r < v_{r+1}, the canonical midpoint threshold (v_r + v_{r+1})/2, in increasing order.

Each candidate is offered with both polarities s = ±1, so the set is negation-complete: the signed
maximum (``absolute=False``) and the maximum modulus (``absolute=True``, CGENS criterion (8)) select
the same candidate, and the returned stump always has a non-negative score.

With ``max_bins=B`` the space is the binned (histogram) search of the gradient-boosting libraries:
each feature keeps at most B − 1 cuts (near the B-quantiles of its values in at most
:data:`BIN_SAMPLE_ROWS` rows; all of them when those hold at most B distinct values) and an oracle
call sums g per bin instead of per sorted point, in the same candidate order and tie rule. It
trades exactness of the threshold for speed and memory on large m (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kernbench.solvers.stump_search import (
    bin_codes,
    binned_column,
    binned_histograms,
    binned_scores,
    first_near_max,
    gather_columns,
    presorted_block,
    presorted_pick,
    presorted_scores,
    presorted_scores_many,
)
from kernbench.solvers.threads import block_bounds, resolve_threads, run_blocks, useful_threads
from kernbench.weak.base import ColumnSet, Pick, exclusions


class SpaceExhaustedError(ValueError):
    """Every candidate stump is excluded, or there is none: column generation has nothing to add."""


#: scores within this fraction of Σ|g| of the maximum count as tied (prefix sums taken in different
#: orders differ by rounding); ties go to the first candidate in the order above
TIE_RTOL = 1e-11
#: largest ``max_bins`` of the histogram search (bin codes are stored as uint16)
MAX_BINS_LIMIT = 65536
#: ``max_bins="auto"``: the binned search with this many bins from :data:`AUTO_BINNED_ROWS` rows up
AUTO_MAX_BINS = 256
#: ``max_bins="auto"``: the smallest training set searched binned (below it: the exact search)
AUTO_BINNED_ROWS = 20_000
#: the binned search places its cuts at the quantiles of at most this many rows (a sample of
#: larger training sets, drawn with :data:`BIN_SAMPLE_SEED`), as the gradient-boosting libraries do
BIN_SAMPLE_ROWS = 200_000
BIN_SAMPLE_SEED = 0
#: the binned search sums its histograms over fixed chunks of at least this many rows (at most
#: :data:`MAX_BIN_CHUNKS` of them, and at most :data:`HIST_BYTES` of histograms), added in chunk
#: order: the chunks depend on the training set only, so the scores are the same at any thread count
BIN_CHUNK_ROWS = 8192
MAX_BIN_CHUNKS = 64
HIST_BYTES = 64 << 20
_NO_WEIGHTS = np.empty(0)


@dataclass(frozen=True)
class Stump:
    """The decision stump h(x) = sign · sign(x[feature] − threshold), with sign(0) = +1.

    Attributes
    ----------
    feature : int
        Index d of the input coordinate.
    threshold : float
        Threshold t; ``-inf`` gives the constant stump h ≡ sign.
    sign : int
        Polarity s ∈ {−1, +1}.
    """

    feature: int
    threshold: float
    sign: int

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Evaluate the stump: array of shape (n,) with values ±1.0."""
        X = np.asarray(X, dtype=np.float64)
        return np.where(X[:, self.feature] >= self.threshold, 1.0, -1.0) * self.sign

    def negated(self) -> Stump:
        """The stump −h (same feature and threshold, opposite polarity)."""
        return Stump(self.feature, self.threshold, -self.sign)


def feature_usage(learners: Sequence[object], n_features: int) -> np.ndarray | None:
    """Fraction of the weak learners that split on each feature (Shen & Liu Fig. 5).

    Parameters
    ----------
    learners : sequence
        Selected weak learners, in any order (repeats count each time).
    n_features : int
        D, the number of input features.

    Returns
    -------
    ndarray of shape (D,) or None
        (# non-constant stumps on feature d) / (# learners); the constant stump (threshold −∞)
        counts in the denominator only. None when some learner is not a :class:`Stump` (the
        notion is undefined for perceptrons and Fourier features).
    """
    if not all(isinstance(h, Stump) for h in learners):
        return None
    feats = [h.feature for h in learners if np.isfinite(h.threshold)]  # type: ignore[attr-defined]
    counts = np.bincount(np.asarray(feats, dtype=np.intp), minlength=n_features)
    return counts[:n_features] / max(len(learners), 1)


def predict_stumps(
    X: np.ndarray, features: np.ndarray, thresholds: np.ndarray, signs: np.ndarray
) -> np.ndarray:
    """Evaluate many stumps at once.

    Parameters
    ----------
    X : ndarray of shape (n, D)
    features, thresholds, signs : array-like of shape (J,)
        The stumps' features, thresholds and polarities.

    Returns
    -------
    ndarray of shape (n, J)
        Entry (i, j) is signs[j] · sign(X[i, features[j]] − thresholds[j]) with sign(0) = +1.
    """
    X = np.asarray(X, dtype=np.float64)
    features = np.asarray(features, dtype=np.intp)
    thresholds = np.asarray(thresholds, dtype=np.float64)
    signs = np.asarray(signs, dtype=np.float64)
    return np.where(X[:, features] >= thresholds, 1.0, -1.0) * signs


def stump_arrays(stumps: Sequence[Stump]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (features, thresholds, signs) arrays of a list of stumps, for :func:`predict_stumps`."""
    features = np.fromiter((s.feature for s in stumps), dtype=np.intp, count=len(stumps))
    thresholds = np.fromiter((s.threshold for s in stumps), dtype=np.float64, count=len(stumps))
    signs = np.fromiter((s.sign for s in stumps), dtype=np.float64, count=len(stumps))
    return features, thresholds, signs


def resolve_max_bins(max_bins: int | str | None, n_rows: int) -> int | None:
    """The ``max_bins`` a search on ``n_rows`` training points uses: ``"auto"`` is
    :data:`AUTO_MAX_BINS` bins from :data:`AUTO_BINNED_ROWS` rows up and the exact search (None)
    below, as the gradient-boosting libraries bin large data; other values are returned as given.
    """
    if isinstance(max_bins, str):
        if max_bins != "auto":
            raise ValueError(f"max_bins must be an integer, None or 'auto', got {max_bins!r}")
        return AUTO_MAX_BINS if n_rows >= AUTO_BINNED_ROWS else None
    return max_bins


def _midpoints(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Canonical thresholds between consecutive distinct values lo < hi: (lo + hi)/2, or hi when
    the two are adjacent floats (so that sign(x − t) still separates them)."""
    mid = 0.5 * lo + 0.5 * hi
    return np.where(mid > lo, mid, hi)


class StumpSpace:
    """All decision stumps on a training set, with an exhaustive O(m·D) weighted-score oracle.

    Parameters
    ----------
    X : array-like of shape (m, D)
        Training inputs (finite values). Each feature is argsorted once here (exact search) or
        binned once here (``max_bins``).
    include_constant : bool
        Offer the constant column (both polarities). True for bias-free models (AdaBoost, LPBoost),
        False for models with a bias (CGENS, CG-Boost).
    max_bins : int, "auto" or None, default=None
        None: the exact search over every cut between consecutive distinct values. ``"auto"``:
        :func:`resolve_max_bins` (binned from :data:`AUTO_BINNED_ROWS` rows up). An integer
        B ≥ 2: the histogram search of the gradient-boosting libraries: each feature keeps at most
        B − 1 cuts, at the boundaries between distinct values closest to its B-quantiles, taken
        over every row up to :data:`BIN_SAMPLE_ROWS` rows and over a fixed-seed sample of that
        many rows above, and each oracle call sums the weights per bin (O(m·D) sequential work,
        no random access). A feature with at most B distinct values (in the sample) keeps all its
        cuts, with the exact search's thresholds, so on such data both searches have the same
        candidates and the same scores up to the order of summation.
    n_threads : int or None, default=None
        Threads of each oracle call and of the binning (scikit-learn's ``n_jobs`` convention: −1
        all cores; None the current default, see :func:`kernbench.solvers.threads.resolve_threads`).
        The exact search splits a call over blocks of features, with at least
        :data:`MIN_BLOCK_WORK` steps per thread; the binned one over fixed chunks of rows (at
        least :data:`BIN_CHUNK_ROWS` each, set by the training set alone), whose histograms are
        added in chunk order. The scores are bitwise the same for any count.

    Attributes
    ----------
    n_candidates : int
        Number of candidates (each offered with both polarities).
    candidate_features, candidate_thresholds : ndarray of shape (n_candidates,)
        Feature and threshold of every candidate, in tie-breaking order (constant: feature 0, −∞).
    """

    def __init__(
        self,
        X: np.ndarray,
        *,
        include_constant: bool,
        max_bins: int | str | None = None,
        n_threads: int | None = None,
    ) -> None:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"StumpSpace needs a non-empty 2-D array, got shape {X.shape}")
        max_bins = resolve_max_bins(max_bins, X.shape[0])
        if not np.all(np.isfinite(X)):
            raise ValueError("StumpSpace needs finite inputs (found NaN or inf)")
        if max_bins is not None and not 2 <= int(max_bins) <= MAX_BINS_LIMIT:
            raise ValueError(f"max_bins must be in [2, {MAX_BINS_LIMIT}] or None, got {max_bins!r}")
        self.X = X
        self.include_constant = bool(include_constant)
        self.max_bins = None if max_bins is None else int(max_bins)
        self._n_const = 1 if self.include_constant else 0
        m, D = X.shape
        self.n_threads = resolve_threads(n_threads)
        self._blocks = useful_threads(self.n_threads, m * D)
        self._feature_max = np.empty(D)
        if self.max_bins is None:
            cut_pos, thresholds = [], []
            # the one presort, one feature at a time so that no (D, m) float temporary is held;
            # stable (ties keep their row order, as np.argsort(X.T, axis=1, kind="stable")): the
            # fast unstable sort is the stable one when a feature has no ties, else sort again
            itype = np.int32 if m < 2**31 else np.intp
            self._order = np.empty((D, m), dtype=itype)
            self._cut_mask = np.zeros((D, m), dtype=np.uint8)
            for d in range(D):
                o = np.argsort(X[:, d])
                v = X[o, d]  # sorted values of feature d
                distinct = v[1:] > v[:-1]  # a cut between distinct consecutive values
                if not distinct.all():
                    o = np.argsort(X[:, d], kind="stable")
                self._order[d] = o
                self._cut_mask[d, :-1] = distinct
                pos = np.flatnonzero(distinct)
                cut_pos.append(pos.astype(itype))
                thresholds.append(_midpoints(v[pos], v[pos + 1]))
            self._cut_pos = np.concatenate(cut_pos)
        else:
            thresholds = self._bin_thresholds(X)
            self._build_codes(X, thresholds)
        counts_per_feature = np.array([t.size for t in thresholds], dtype=np.int64)
        self._offsets = np.concatenate([[0], np.cumsum(counts_per_feature)]).astype(np.int64)
        self.candidate_thresholds = np.concatenate([np.full(self._n_const, -np.inf), *thresholds])
        self.n_candidates = int(self.candidate_thresholds.size)
        self._buffer = np.empty(self.n_candidates)  # scores of the last best() call
        if self.max_bins is not None:
            width = int(counts_per_feature.max(initial=0)) + 1
            n_chunks = max(
                min(m // BIN_CHUNK_ROWS, MAX_BIN_CHUNKS, HIST_BYTES // (8 * D * width)), 1
            )
            chunks = block_bounds(m, n_chunks)
            self._chunk_starts = np.array([lo for lo, _ in chunks] + [m], dtype=np.int64)
            self._hists = np.zeros((len(chunks), D, width))
            self._blocks = min(self.n_threads, len(chunks))

    def _bin_thresholds(self, X: np.ndarray) -> list[np.ndarray]:
        """Each feature's thresholds of the binned search, from the sorted values of at most
        :data:`BIN_SAMPLE_ROWS` rows (a fixed-seed sample of larger sets, every row otherwise):
        every cut when the sample has at most B distinct values, else the cut after the distinct
        value holding each of its B-quantiles. Features are sorted in blocks over threads."""
        m, D = X.shape
        if m > BIN_SAMPLE_ROWS:
            rng = np.random.default_rng(BIN_SAMPLE_SEED)
            rows = np.sort(rng.choice(m, BIN_SAMPLE_ROWS, replace=False))
        else:
            rows = np.arange(m)
        n, B = rows.size, int(self.max_bins)  # type: ignore[arg-type]
        thresholds: list[np.ndarray] = [np.empty(0)] * D

        def block(d0: int, d1: int) -> None:
            values = np.empty((d1 - d0, n))
            gather_columns(X, rows, d0, d1, values)
            values.sort(axis=1)
            for d in range(d0, d1):
                v = values[d - d0]
                last = np.flatnonzero(v[1:] > v[:-1])  # sorted positions ending a distinct run
                if last.size < B:  # at most B distinct values: every cut
                    cuts = last
                else:  # the cut after the distinct value holding each B-quantile
                    q = np.arange(1, B) * (n / B)
                    j = np.unique(np.searchsorted(last + 1, q, side="left"))  # last+1: #{x ≤ u_j}
                    cuts = last[j[j < last.size]]
                thresholds[d] = _midpoints(v[cuts], v[cuts + 1])

        run_blocks(block, D, useful_threads(self.n_threads, n * D))
        return thresholds

    def _build_codes(self, X: np.ndarray, thresholds: list[np.ndarray]) -> None:
        """The (D, m) bin codes, #{k : t_k ≤ x} over each feature's thresholds: compiled over
        blocks of rows on threads (at most 256 bins), else one ``np.searchsorted`` per feature."""
        m, D = X.shape
        if int(self.max_bins) > 256:  # type: ignore[arg-type]
            self._codes = np.empty((D, m), dtype=np.uint16)
            for d, t in enumerate(thresholds):
                self._codes[d] = np.searchsorted(t, X[:, d], side="right")
            return
        self._codes = codes = np.empty((D, m), dtype=np.uint8)
        padded = np.full((D, 256), np.inf)
        for d, t in enumerate(thresholds):
            padded[d, : t.size] = t
        Xc = np.ascontiguousarray(X)
        run_blocks(
            lambda r0, r1: bin_codes(Xc, padded, codes, r0, r1),
            m,
            useful_threads(self.n_threads, m * D),
        )

    def feature_groups(self) -> list[np.ndarray]:
        """Per feature, a group label for every training point (intp, ≥ 0, increasing with the
        feature): two points share a label exactly when no cut of that feature lies between them
        (the exact search: equal values; the binned one: the same bin)."""
        m, D = self.X.shape
        if self.max_bins is not None:
            return [self._codes[d].astype(np.intp) for d in range(D)]
        out = []
        for d in range(D):
            labels = np.empty(m, dtype=np.intp)
            labels[self._order[d]] = np.r_[0, np.cumsum(self._cut_mask[d, :-1], dtype=np.intp)]
            out.append(labels)
        return out

    @property
    def candidate_features(self) -> np.ndarray:
        """Feature of every candidate (the constant candidate: 0), shape (n_candidates,)."""
        split = np.repeat(np.arange(self.X.shape[1], dtype=np.intp), np.diff(self._offsets))
        return np.concatenate([np.zeros(self._n_const, dtype=np.intp), split])

    # ------------------------------------------------------------------ scores
    def scores(self, g: np.ndarray) -> np.ndarray:
        """Scores Σ_i g_i h(x_i) of every candidate with polarity +1.

        Parameters
        ----------
        g : ndarray of shape (m,) or (m, K)
            Signed sample weights; with K columns, K independent score vectors in one pass.

        Returns
        -------
        ndarray of shape (n_candidates,) or (n_candidates, K)
            In candidate order; the polarity −1 score is the negation.
        """
        g = np.asarray(g, dtype=np.float64)
        m = self.X.shape[0]
        if g.ndim not in (1, 2) or g.shape[0] != m:
            raise ValueError(f"g must have shape ({m},) or ({m}, K), got {g.shape}")
        out = np.empty((self.n_candidates,) + g.shape[1:])
        if g.ndim == 1:
            self._scores_into(g, out)
        elif self.max_bins is None:
            g = np.ascontiguousarray(g)
            Gsum = g.sum(axis=0)
            order, offsets, cut_mask, n_const = (
                self._order,
                self._offsets,
                self._cut_mask,
                self._n_const,
            )
            run_blocks(
                lambda d0, d1: presorted_scores_many(
                    g, order, offsets, cut_mask, Gsum, n_const, out, d0, d1
                ),
                self.X.shape[1],
                self._blocks,
            )
        else:
            column = np.empty(out.shape[0])
            for k in range(g.shape[1]):
                self._scores_into(np.ascontiguousarray(g[:, k]), column)
                out[:, k] = column
        return out

    def _scores_into(
        self, g: np.ndarray, out: np.ndarray, tol: float = 0.0, write: bool = True
    ) -> int:
        """1-D scores into ``out`` (score = G − 2·G_<(t)); returns the first candidate whose
        |score| is within ``tol`` of the maximum (the tie rule; 0 when there is no candidate).
        ``write=False`` (exact search): only that candidate's score is written."""
        G = float(g.sum())
        if out.size == 0:
            return 0
        D = self.X.shape[1]
        n_const, offsets = self._n_const, self._offsets
        if self.max_bins is None:
            order, cut_mask = self._order, self._cut_mask
            if self._blocks == 1:
                return presorted_scores(g, order, offsets, cut_mask, G, n_const, tol, out, write)
            fmax = self._feature_max
            run_blocks(
                lambda d0, d1: presorted_block(
                    g, order, offsets, cut_mask, G, n_const, out, write, d0, d1, fmax
                ),
                D,
                self._blocks,
                align=2,  # the kernel pairs features (0, 1), (2, 3), ...
            )
            return presorted_pick(g, order, offsets, cut_mask, G, n_const, tol, out, write, fmax)
        codes, starts, hists = self._codes, self._chunk_starts, self._hists
        run_blocks(
            lambda c0, c1: binned_histograms(g, codes, starts, hists, c0, c1),
            hists.shape[0],
            self._blocks,
        )
        binned_scores(hists, offsets, G, n_const, out)
        return first_near_max(out, tol)

    # ------------------------------------------------------------------ candidates
    def _feature_of(self, index: int) -> tuple[int, int]:
        """(feature, split-candidate index) of the non-constant candidate ``index``."""
        j = index - self._n_const
        return int(np.searchsorted(self._offsets, j, side="right")) - 1, j

    def stump(self, index: int, sign: int = 1) -> Stump:
        """The candidate ``index`` as a :class:`Stump` with polarity ``sign``."""
        if index < self._n_const:
            return Stump(0, -np.inf, int(sign))
        d, _ = self._feature_of(index)
        return Stump(d, float(self.candidate_thresholds[index]), int(sign))

    def column(self, index: int, sign: int = 1) -> np.ndarray:
        """Training column (±1.0, shape (m,)) of candidate ``index`` with polarity ``sign``."""
        m = self.X.shape[0]
        sign = 1.0 if sign >= 0 else -1.0
        if index < self._n_const:
            return np.full(m, sign)
        d, j = self._feature_of(index)
        if self.max_bins is not None:
            col = np.empty(m)
            binned_column(self._codes, d, j - self._offsets[d], sign, _NO_WEIGHTS, col)
            return col
        col = np.full(m, sign)
        col[self._order[d, : self._cut_pos[j] + 1]] = -sign  # points below the threshold
        return col

    # ------------------------------------------------------------------ oracle
    def best(
        self,
        g: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | None = None,
        rng: np.random.Generator | None = None,
    ) -> Pick:
        """The stump maximising Σ_i g_i h(x_i) over all candidates and both polarities.

        Parameters
        ----------
        g : ndarray of shape (m,)
            Signed sample weights (AdaBoost: d∘y; LPBoost and CGENS: α∘y).
        absolute : bool
            Maximise |score| and negate the stump when its score is negative (CGENS (8)). The stump
            set is negation-complete, so this selects the same stump as the signed maximum.
        exclude : ColumnSet, optional
            Columns (up to sign) that may not be returned.
        rng : ignored
            The search is exhaustive and deterministic.

        Returns
        -------
        Pick
            The stump (score ≥ 0), its training column and its score. Ties go to the first
            candidate (constant, then lowest feature, then lowest threshold).

        Raises
        ------
        SpaceExhaustedError
            When every candidate is excluded (a ``ValueError``).
        """
        del absolute, rng  # negation-complete and exhaustive: see the docstring
        g = np.ascontiguousarray(g, dtype=np.float64)
        if g.ndim != 1 or g.shape[0] != self.X.shape[0]:
            raise ValueError(f"g must have shape ({self.X.shape[0]},), got {g.shape}")
        if self.n_candidates == 0:
            raise SpaceExhaustedError(
                "no stump candidates: every feature is constant and include_constant=False"
            )
        tol = TIE_RTOL * float(np.abs(g).sum())
        if exclude:  # every score is needed to walk down the ranking
            self._scores_into(g, self._buffer, tol)
            return self._pick(self._buffer, g, exclude, tol=tol)
        index = self._scores_into(g, self._buffer, tol, write=False)
        return self._pick(self._buffer, g, None, index, tol)

    def best_many(
        self,
        G: np.ndarray,
        *,
        absolute: bool = False,
        exclude: ColumnSet | Sequence[ColumnSet | None] | None = None,
        rng: np.random.Generator | None = None,
    ) -> list[Pick]:
        """One :meth:`best` search per column of ``G`` (shape (m, K)), sharing the gather and sums.

        ``exclude`` is one ColumnSet for every column, or a sequence of K (or None); ``rng`` is
        not used (the search is exhaustive).
        """
        del absolute, rng
        G = np.asarray(G, dtype=np.float64)
        if G.ndim != 2:
            raise ValueError(f"G must have shape (m, K), got {G.shape}")
        S = self.scores(G)
        K = G.shape[1]
        excl = exclusions(exclude, K)
        return [self._pick(S[:, k], G[:, k], excl[k]) for k in range(K)]

    def _pick(
        self,
        s: np.ndarray,
        g: np.ndarray,
        exclude: ColumnSet | None,
        index: int | None = None,
        tol: float | None = None,
    ) -> Pick:
        """The pick from the scores ``s`` (``index``: the tie rule's answer, when known)."""
        if s.size == 0:
            raise SpaceExhaustedError(
                "no stump candidates: every feature is constant and include_constant=False"
            )
        if tol is None:
            tol = TIE_RTOL * float(np.abs(g).sum())
        if exclude:
            index = self._first_not_excluded(np.abs(s), tol, exclude)
        elif index is None:
            index = int(first_near_max(s, tol))  # the first of the (near-)ties
        sign = 1 if s[index] >= 0 else -1
        if self.max_bins is not None and index >= self._n_const:
            d, j = self._feature_of(index)
            column = np.empty(self.X.shape[0])
            score = binned_column(self._codes, d, j - self._offsets[d], float(sign), g, column)
            return Pick(self.stump(index, sign), column, float(score))
        column = self.column(index, sign)
        return Pick(self.stump(index, sign), column, float(column @ g))

    def _first_not_excluded(self, a: np.ndarray, tol: float, exclude: ColumnSet) -> int:
        """The best candidate whose column (up to sign) is not in ``exclude``.

        Candidates are taken in decreasing score order, a few at a time, so the full column matrix
        is never built.
        """
        n = a.size
        k = min(n, len(exclude) + 8)
        checked: set[int] = set()
        while True:
            top = np.argpartition(-a, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.lexsort((top, -a[top]))]  # decreasing score, then candidate order
            for index in top:
                if int(index) in checked:
                    continue
                checked.add(int(index))
                if self.column(int(index)) not in exclude:
                    best = a[index]
                    # among near-ties of the best admissible score, the first admissible candidate
                    for j in np.flatnonzero(a >= best - tol):
                        if self.column(int(j)) not in exclude:
                            return int(j)
            if k == n:
                raise SpaceExhaustedError("every stump candidate is excluded")
            k = min(n, 4 * k)

    # ------------------------------------------------------------------ canonical set
    def full_matrix(
        self, *, canonical: bool = True, with_constant: bool = False
    ) -> tuple[np.ndarray, list[Stump]]:
        """The explicit stump matrix on the training set (for invariant tests on small data).

        Parameters
        ----------
        canonical : bool
            True: the canonical stump set H_full — distinct ±1 columns,
            sign-canonicalised (first entry +1), duplicates across features merged (first kept),
            constant columns removed. False: every candidate with polarity +1, in candidate order.
        with_constant : bool
            Canonical only: append the constant column +1 (the bias of bias-free models).

        Returns
        -------
        H : ndarray of shape (m, J)
        stumps : list of J Stump
            ``stumps[j].predict(X) == H[:, j]``.
        """
        cols = [self.column(i) for i in range(self.n_candidates)]
        stumps = [self.stump(i) for i in range(self.n_candidates)]
        if canonical:
            seen: set[bytes] = set()
            keep_cols, keep_stumps = [], []
            for col, st in zip(cols, stumps):
                if np.all(col == col[0]):
                    continue
                if col[0] < 0:
                    col, st = -col, st.negated()
                key = col.tobytes()
                if key not in seen:
                    seen.add(key)
                    keep_cols.append(col)
                    keep_stumps.append(st)
            if with_constant:
                keep_cols.append(np.ones(self.X.shape[0]))
                keep_stumps.append(Stump(0, -np.inf, 1))
            cols, stumps = keep_cols, keep_stumps
        H = np.column_stack(cols) if cols else np.empty((self.X.shape[0], 0))
        return H, stumps
