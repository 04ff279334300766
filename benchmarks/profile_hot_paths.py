"""cProfile summaries of the boosting hot paths (issue 14, part 1): where the time goes.

Profiles, each on synthetic data of the size named:

- ``adaboost_stump_5000x20``: AdaBoost-Stump, 200 rounds, m = 5000, D = 20 (bench_stumps.py's case);
- ``adaboost_stump_1e5x50``: AdaBoost-Stump, 20 rounds, m = 10⁵, D = 50 (twonorm);
- ``candidates_fourier_m560`` / ``candidates_perceptron_m560``: 50 oracle calls of the sampled
  spaces (2000 candidates, m = 560, D = 30): Table II's inner loop;
- ``cgens_stump_m2000``: CGENS with stumps (liblinear bias), m = 2000, 200 iterations.

For each, the top functions by own time (``tottime``) go to
``benchmarks/results/profile_<case>_<label>.txt``; ``--label before`` / ``--label after`` keep the
two states side by side.

    python benchmarks/profile_hot_paths.py --label after [--only adaboost_stump_5000x20]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kernbench.datasets.generators import twonorm
from kernbench.methods import AdaBoost
from kernbench.methods.cgens import CGENS
from kernbench.weak.fourier import FourierSpace
from kernbench.weak.perceptron import PerceptronSpace

RESULTS = Path(__file__).parent / "results"
TOP = 15


def _data(m: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return twonorm(m, np.random.default_rng(seed), d=d)


def case_stump_small() -> Callable[[], object]:
    X, y = _data(5000, 20)
    return lambda: AdaBoost(n_estimators=200).fit(X, y)


def case_stump_large() -> Callable[[], object]:
    X, y = _data(100_000, 50)
    return lambda: AdaBoost(n_estimators=20).fit(X, y)


def _case_sampled(space_cls: type, **kw: object) -> Callable[[], object]:
    X, _ = _data(560, 30)
    g = np.random.default_rng(1).standard_normal(560)
    space = space_cls(X, n_candidates=2000, **kw)

    def run() -> None:
        rng = np.random.default_rng(0)
        for _ in range(50):
            space.best(g, absolute=True, rng=rng)

    return run


def case_cgens() -> Callable[[], object]:
    X, y = _data(2000, 20)
    est = CGENS(C=1.0, tol=0.0, max_iter=200, bias_mode="liblinear", solver_tol=0.1)
    return lambda: est.fit(X, y)


CASES: dict[str, Callable[[], Callable[[], object]]] = {
    "adaboost_stump_5000x20": case_stump_small,
    "adaboost_stump_1e5x50": case_stump_large,
    "candidates_fourier_m560": lambda: _case_sampled(FourierSpace, sigma=3.0),
    "candidates_perceptron_m560": lambda: _case_sampled(PerceptronSpace),
    "cgens_stump_m2000": case_cgens,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="after")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    args = ap.parse_args()
    only = [c for c in args.only.split(",") if c]
    for name, make in CASES.items():
        if only and name not in only:
            continue
        run = make()
        run()  # warm-up: numba compile / caches, BLAS threads
        prof = cProfile.Profile()
        start = time.perf_counter()
        prof.enable()
        run()
        prof.disable()
        wall = time.perf_counter() - start
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime")
        stats.print_stats(TOP)
        text = f"# {name} ({args.label}): wall {wall:.3f} s under cProfile\n" + buf.getvalue()
        out = RESULTS / f"profile_{name}_{args.label}.txt"
        out.write_text(text)
        print(f"{name}: {wall:.3f} s -> {out}", flush=True)


if __name__ == "__main__":
    main()
