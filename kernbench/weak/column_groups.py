"""Group stump candidates by their training column, so column generation can exclude in O(1).

Several (feature, threshold) candidates can produce the same ±1 column on the training set, and a
column generation loop must not re-select a column already in its working set
(docs/methods/column_generation.md). Comparing columns one by one costs O(m) per check and the
best-scored candidates are exactly the selected ones (their scores are W_j ≠ 0 by the KKT
conditions), so checks pile up.
Instead each candidate gets a group id once: two random Gaussian weight vectors score every
candidate in one presorted pass (O(m·D)), and equal columns (with probability one, only equal
columns) get equal score pairs. Excluding a selected column is then a boolean mask over groups.
"""

from __future__ import annotations

import numpy as np

from kernbench.weak.stumps import StumpSpace

#: score pairs are compared after normalising by Σ|r| and rounding to this many decimals
_DECIMALS = 10


def stump_column_groups(space: StumpSpace, *, signed: bool, seed: int = 0) -> np.ndarray:
    """Group ids of the stump candidates' training columns.

    Parameters
    ----------
    space : StumpSpace
        The candidates (polarity +1, in candidate order).
    signed : bool
        False: columns are grouped up to sign (h and −h together; CGENS, CGENS-SLS with a free
        w). Returns one id per candidate. True: h and −h are different columns (MultiBoost,
        w ≥ 0). Returns 2·n_candidates ids: entry i for candidate i with polarity +1, entry
        n_candidates + i for polarity −1.
    seed : int
        Seed of the two random weight vectors.

    Returns
    -------
    ndarray of int
        Equal ids ⇔ equal columns (up to sign when ``signed`` is False).
    """
    m = space.X.shape[0]
    R = np.random.default_rng(seed).standard_normal((m, 2))
    keys = space.scores(R) / np.abs(R).sum(axis=0)  # in [−1, 1]
    if signed:
        keys = np.vstack([keys, -keys])
    else:
        keys = keys * np.where(keys[:, :1] < 0, -1.0, 1.0)  # canonical sign
    keys = np.round(keys, _DECIMALS) + 0.0  # + 0.0 merges −0.0 with 0.0
    _, groups = np.unique(keys, axis=0, return_inverse=True)
    return groups.ravel()
