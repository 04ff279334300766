"""What the cells of a table were computed with: library versions and machine, from their records.

Every cell records the versions of kernbench and the numerical stack and the machine it ran on
(:func:`kernbench.runner.cell.versions`). A table names that environment in one line, and warns
when its cells came from different library versions: their numbers are then not one
reproduction, and a rerun under one environment may differ in the last digits (see
docs/reliability.md, "Numbers on another machine").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["LIBRARIES", "MACHINE", "Environments", "environments"]

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
#: the recorded keys that name the machine: its processor and the BLAS kernel OpenBLAS chose
MACHINE = ("machine", "cpu", "blas")


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
        self.libraries: Counter[tuple[tuple[str, str], ...]] = Counter()
        self.machines: Counter[tuple[tuple[str, str], ...]] = Counter()
        self.unrecorded = 0
        for versions in records:
            if not versions:
                self.unrecorded += 1
                continue
            self.libraries[_summary(versions, LIBRARIES)] += 1
            self.machines[_summary(versions, MACHINE)] += 1

    @property
    def mixed(self) -> bool:
        """Whether the cells came from more than one set of library versions."""
        return len(self.libraries) > 1

    def describe(self) -> str | None:
        """One line naming the environment (the most common one when mixed), or None."""
        if not self.libraries:
            return None
        libs = self.libraries.most_common(1)[0][0]
        text = "Computed with " + ", ".join(f"{k} {v}" for k, v in libs)
        machines = [", ".join(v for _, v in m) for m, _ in self.machines.most_common() if m]
        if len(machines) == 1:
            text += f" on {machines[0]}"
        elif machines:
            counts = [n for m, n in self.machines.most_common() if m]
            text += " on " + "; ".join(
                f"{m} ({n} cells)" for m, n in zip(machines, counts, strict=True)
            )
        return text + "."

    def warning(self) -> str | None:
        """One line when the library versions differ between cells: which ones, in how many."""
        if not self.mixed:
            return None
        common = set.intersection(*(set(env) for env in self.libraries))
        differing = {k for env in self.libraries for k, v in env if (k, v) not in common}
        parts = []
        for key in [k for k in LIBRARIES if k in differing]:
            per_version: Counter[str] = Counter()
            for env, n in self.libraries.items():
                per_version[dict(env).get(key, "unrecorded")] += n
            parts.append(f"{key} " + ", ".join(f"{v} in {n}" for v, n in per_version.items()))
        return (
            f"the cells of this table come from {len(self.libraries)} environments "
            f"({'; '.join(parts)} cells): rerun them under one (`--fresh`) for one reproduction"
        )


def environments(rows: Iterable[Mapping[str, Any]]) -> Environments:
    """:class:`Environments` of stored rows (their ``result["versions"]``)."""
    return Environments((r.get("result") or {}).get("versions") for r in rows)
