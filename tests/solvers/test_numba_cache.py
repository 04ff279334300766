"""Every compiled kernel is cached on disk, so a fresh process's first fit pays no compilation."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import kernbench.solvers
import kernbench.weak

PACKAGES = (kernbench.solvers, kernbench.weak)


def compiled_functions() -> dict[str, CPUDispatcher]:
    found = {}
    for package in PACKAGES:
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__:
                    found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_numba_function_has_cache_true() -> None:
    functions = compiled_functions()
    assert len(functions) >= 10  # the scan found the kernels (linear SVM, RCD, stumps, candidates)
    uncached = [name for name, f in functions.items() if isinstance(f._cache, NullCache)]
    assert not uncached, f"numba functions without cache=True: {uncached}"


FIRST_FIT = """
import json, numpy as np
from kernbench.methods import AdaBoost
from kernbench.weak.fourier import FourierSpace
rng = np.random.default_rng(0)
X, y = rng.normal(size=(60, 3)), np.where(rng.normal(size=60) > 0, 1, -1)
AdaBoost(n_estimators=3).fit(X, y)
AdaBoost(n_estimators=3, max_bins=8).fit(X, y)
AdaBoost(n_estimators=2, weak_learner="perceptron_sampled", random_state=0).fit(X, y)
FourierSpace(X, n_candidates=10).best(rng.normal(size=60))
from numba.core.registry import CPUDispatcher
import kernbench.solvers.stump_search as a, kernbench.solvers.candidate_scores as b
stats = {}
for mod in (a, b):
    for name, f in vars(mod).items():
        if isinstance(f, CPUDispatcher) and f.signatures:
            stats[name] = [sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values())]
print(json.dumps(stats))
"""


@pytest.mark.slow  # two fresh interpreters importing numba and scikit-learn
def test_a_fresh_process_loads_the_stump_and_candidate_kernels_from_the_cache() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(kernbench.solvers.__file__).parents[2])}
    run = [sys.executable, "-c", FIRST_FIT]
    subprocess.run(run, check=True, capture_output=True, env=env)  # fills the cache if needed
    out = subprocess.run(run, check=True, capture_output=True, text=True, env=env).stdout
    stats = json.loads(out.strip().splitlines()[-1])
    assert {"presorted_scores", "binned_scores", "first_near_max", "sign_column_sums"} <= set(stats)
    for name, (hits, misses) in stats.items():
        assert misses == 0 and hits >= 1, (name, hits, misses)
