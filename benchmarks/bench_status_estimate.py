"""How well `kernbench status` estimates a cell it has no same-method, same-dataset time for.

For every (method, dataset) pair with done cells in a results store, the pair's cells are held out
and its mean cell time is predicted from the other done cells, by the estimator `kernbench status`
uses (`kernbench.progress.status.cell_time_model`: log t = a_method + b_dataset) and by its
peer, the method's mean over the other datasets (what `status` used before). Prints, per store,
the median factor between prediction and actual time (exp of the median |log ratio|) and the
share of pairs predicted within 2x. Reads the stores only.

    python benchmarks/bench_status_estimate.py results/uci_fourier_perceptron results/uci_stumps
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from kernbench.progress.status import cell_time_model, done_times
from kernbench.store import Store


def done_cells(directory: Path) -> list[tuple[str, str, float]]:
    """``(method, dataset, seconds)`` of the done cells of the store's plan."""
    with Store(directory, readonly=True) as store:
        plan, rows = store.plan_ids(), store.summaries()
    return done_times([r for r in rows if plan is None or r["cell_id"] in plan])


def held_out_errors(cells: list[tuple[str, str, float]]) -> tuple[np.ndarray, np.ndarray]:
    """|log(predicted / actual)| per held-out pair: the scaled model, the method's mean."""
    scaled, mean = [], []
    for m, d in sorted({(m, d) for m, d, _ in cells}):
        rest = [c for c in cells if (c[0], c[1]) != (m, d)]
        actual = np.mean([t for mm, dd, t in cells if (mm, dd) == (m, d)])
        others = [t for mm, _, t in rest if mm == m]
        predicted = cell_time_model(rest)(m, d)
        if predicted is None or not others or actual <= 0:
            continue  # neither estimator applies: no other dataset of m, or d not linked
        scaled.append(abs(np.log(predicted / actual)))
        mean.append(abs(np.log(np.mean(others) / actual)))
    return np.array(scaled), np.array(mean)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path, help="results directories")
    args = parser.parse_args(argv)
    for directory in args.stores:
        scaled, mean = held_out_errors(done_cells(directory))
        if not scaled.size:
            print(f"{directory}: no pair to hold out (one method or one dataset)")
            continue
        f_s, f_m = np.exp(np.median(scaled)), np.exp(np.median(mean))
        print(
            f"{directory}: {scaled.size} held-out (method, dataset) pairs; median factor off: "
            f"scaled {f_s:.2f}x, method mean {f_m:.2f}x (peer / ours {f_m / f_s:.2f}); within 2x: "
            f"scaled {np.mean(scaled < np.log(2)):.0%}, method mean {np.mean(mean < np.log(2)):.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
