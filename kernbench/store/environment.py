"""What the cells of a table were computed with: library versions and machine, from their records.

Every cell records the versions of kernbench and the numerical stack, the machine it ran on and
its numeric environment (the BLAS kernels, numpy's SIMD dispatch, numba's target CPU:
:func:`kernbench.runner.cell.compute.versions`). A table names that environment in one line, and
warns when its cells came from different versions or numerics: their numbers are then not one
reproduction, since the same seeds can fit other models under each (see docs/reliability.md,
"Numbers on another machine").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["LIBRARIES", "MACHINE", "NUMERIC", "Environments", "environments"]

#: the recorded keys that name a library version, in the order a note lists them
LIBRARIES = (
    "kernbench",
    "python",
    "numpy",
    "scipy",
    "scikit-learn",
    "numba",
    "highspy",
    "cvxpy",
    "joblib",
)
#: the recorded keys that decide how sums are rounded
#: (kernbench.runner.cell.compute.numeric_environment):
#: cells computed under two of these can differ although every version is the same
NUMERIC = ("blas", "simd", "numba_cpu")
#: what a description line says of the machine
MACHINE = ("machine", "cpu", "blas", "numba_cpu")


def _summary(versions: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, str(versions[k])) for k in keys if versions.get(k))


class Environments:
    """The environments the cells of one table ran in, with how many cells each.

    Parameters
    ----------
    records : iterable of dict
        The cells' ``versions`` records (cells without one are counted as unrecorded).
    """

    def __init__(self, records: Iterable[Mapping[str, Any] | None]) -> None:
        self.numerics: Counter[tuple[tuple[str, str], ...]] = Counter()
        self.machines: Counter[tuple[tuple[str, str], ...]] = Counter()
        self.unrecorded = 0
        for versions in records:
            if not versions:
                self.unrecorded += 1
                continue
            self.numerics[_summary(versions, LIBRARIES + NUMERIC)] += 1
            self.machines[_summary(versions, MACHINE)] += 1

    @property
    def mixed(self) -> bool:
        """Whether the cells came from more than one set of library versions or numerics."""
        return len(self.numerics) > 1

    def describe(self) -> str | None:
        """One line naming the environment (the most common one when mixed), or None."""
        if not self.numerics:
            return None
        common = dict(self.numerics.most_common(1)[0][0])
        text = "Computed with " + ", ".join(f"{k} {common[k]}" for k in LIBRARIES if k in common)
        machines = [(m, n) for m, n in self.machines.most_common() if m]
        named = [", ".join(_machine_words(dict(m))) for m, _ in machines]
        if len(named) == 1:
            text += f" on {named[0]}"
        elif named:
            text += " on " + "; ".join(
                f"{m} ({n} cells)" for m, (_, n) in zip(named, machines, strict=True)
            )
        return text + "."

    def warning(self) -> str | None:
        """One line when versions or numerics differ between cells: which, in how many cells."""
        if not self.mixed:
            return None
        common = set.intersection(*(set(env) for env in self.numerics))
        differing = {k for env in self.numerics for k, v in env if (k, v) not in common}
        parts = []
        for key in [k for k in LIBRARIES + NUMERIC if k in differing]:
            per_value: Counter[str] = Counter()
            for env, n in self.numerics.items():
                per_value[dict(env).get(key, "unrecorded")] += n
            parts.append(f"{key} " + ", ".join(f"{v} in {n}" for v, n in per_value.items()))
        return (
            f"the cells of this table come from {len(self.numerics)} environments "
            f"({'; '.join(parts)} cells), and the same seeds can give other models under each: "
            "rerun them under one (`--fresh`) for one reproduction"
        )


def _machine_words(machine: Mapping[str, str]) -> list[str]:
    words = [machine[k] for k in ("machine", "cpu") if k in machine]
    if "blas" in machine:
        words.append(machine["blas"])
    if "numba_cpu" in machine:
        words.append(f"numba for {machine['numba_cpu']}")
    return words


def environments(rows: Iterable[Mapping[str, Any]]) -> Environments:
    """:class:`Environments` of stored rows (their ``result["versions"]``)."""
    return Environments((r.get("result") or {}).get("versions") for r in rows)
