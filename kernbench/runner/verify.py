"""Check that a published page's numbers reproduce: rerun a seeded sample of its cells.

A docs page that prints our numbers is backed by a *values file* per spec,
``experiments/values/<spec name>.csv``: one line per finished cell of the run behind the page (its
identity, labels, test error and CPU time), a few hundred kilobytes at most, committed beside the
spec. :func:`record_values` writes it from the run's store; :func:`verify` plans the spec, draws a
seeded sample of its cells within a CPU budget (every method at least once where the budget
allows), recomputes them in a scratch store and compares each test error with the recorded one
(a regression cell's test RMSE, in a ``test_rmse`` column that only specs with regression cells
have):

- **identical**: the same number. Under the numerics the values were recorded with (the same
  versions, BLAS kernels, numpy SIMD paths and numba target: the lock on the same kind of
  machine) nothing else passes;
- **within tolerance**: under other numerics, off by at most the method's tolerance in
  percentage points (:data:`kernbench.runner.plan.revisions.REVISIONS`, ``cell_tolerance``, which
  says why), since rounding can tip a near-tie (a CV choice, a pricing tie) the other way; a test
  RMSE by at most that many per cent of the recorded RMSE;
- **differs**: further off, or not finished.

A cell whose fit stopped at its wall-clock cap (``stop_reason`` ``"max_time"``, as MultiBoost's
and AdaBoost.MO's 1000 s caps in the MultiBoost_cw spec) is left out of the values file, with a
comment line that counts it: where it stopped depends on the machine's speed, so no rerun can be
expected to match it. Planned cells that the store does not hold finished (a run recorded before
its slowest cells ran) are counted in another comment line.

A recorded cell the spec no longer plans (its identity changed: the spec, the data, the package
version or a method's result revision) is *stale*: the values file must be recorded again.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kernbench.errors import UsageError
from kernbench.runner.cell.compute import versions
from kernbench.runner.plan.cells import Cell, plan_cells
from kernbench.runner.plan.revisions import REVISIONS
from kernbench.specs.types import Spec
from kernbench.store import Store

__all__ = [
    "CellCheck",
    "RecordedCell",
    "Verification",
    "choose_sample",
    "load_values",
    "record_values",
    "values_path",
    "verify",
]

#: characters of a cell identity kept in a values file (64 bits: no collision in any plan)
ID_CHARS = 16
_COLUMNS = ("cell", "dataset", "method", "estimator", "realisation", "test_error", "cpu_s")
#: the column after ``_COLUMNS`` when a spec has regression cells (their test_error is empty)
_RMSE_COLUMN = "test_rmse"
#: a cell's tolerance when its estimator has no entry in REVISIONS (a plug-in): identical only
PLUGIN_TOLERANCE = 0.0


@dataclass(frozen=True)
class RecordedCell:
    """One line of a values file: a classification cell's test error (a fraction), or a
    regression cell's test RMSE (``test_rmse``; ``test_error`` is then NaN)."""

    cell: str
    dataset: str
    method: str
    estimator: str
    realisation: int
    test_error: float
    cpu_s: float
    test_rmse: float | None = None

    @property
    def metric(self) -> str:
        """The checked value's kind: "rmse" for a regression cell, else "error"."""
        return "error" if self.test_rmse is None else "rmse"

    @property
    def shown(self) -> float:
        """The value as checks report it: the test error in percent, or the RMSE."""
        return 100 * self.test_error if self.test_rmse is None else self.test_rmse

    @property
    def cost(self) -> float:
        """Its recorded CPU seconds as a sample counts them (1 s when none was recorded)."""
        return 1.0 if math.isnan(self.cpu_s) else max(self.cpu_s, 0.01)


@dataclass(frozen=True)
class CellCheck:
    """One recomputed cell beside its recorded value (test errors in percent, RMSE as it is)."""

    recorded: RecordedCell
    now: float | None
    verdict: str  # "identical" | "within tolerance" | "differs"
    tolerance: float
    error: str | None = None

    def describe(self) -> str:
        r = self.recorded
        where = f"{r.dataset} {r.method} r{r.realisation}"
        unit = " %" if r.metric == "error" else " RMSE"
        if self.now is None:
            return f"{where}: recorded {r.shown:.2f}{unit}, now not finished ({self.error})"
        delta = self.now - r.shown
        moved = "points" if r.metric == "error" else "RMSE"
        return (
            f"{where}: recorded {r.shown:.4f}{unit}, now {self.now:.4f}{unit} "
            f"({delta:+.4f} {moved}; tolerance {self.tolerance:g}"
            + (")" if r.metric == "error" else " % of the recorded RMSE)")
        )


@dataclass
class Verification:
    """The outcome of :func:`verify` for one spec."""

    spec: str
    recorded: int
    checks: list[CellCheck] = field(default_factory=list)
    stale: list[RecordedCell] = field(default_factory=list)
    recorded_environment: str = ""
    environment: str = ""
    #: whether the cells ran under the numerics the values were recorded with (then only
    #: identical values pass)
    same_numerics: bool = False

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.checks)

    @property
    def ok(self) -> bool:
        """Nothing differs and nothing is stale."""
        return not self.stale and self.count("differs") == 0

    def verdict_line(self) -> str:
        line = (
            f"{self.spec}: {len(self.checks)} of {self.recorded} recorded cells recomputed: "
            f"{self.count('identical')} identical, {self.count('within tolerance')} within "
            f"tolerance, {self.count('differs')} differ"
        )
        if self.stale:
            line += f"; {len(self.stale)} recorded cells are no longer planned (stale values)"
        line += (
            " (the recorded numerics: identical expected)"
            if self.same_numerics
            else " (other numerics than recorded: each method's tolerance applies)"
        )
        return line + (" — reproduced" if self.ok else " — NOT reproduced")


def values_path(spec: Spec, directory: str | Path | None = None) -> Path:
    """``<directory>/<spec name>.csv``; by default the shipped specs' ``values/`` folder."""
    if directory is None:
        from kernbench.specs.shipped import specs_dir

        directory = specs_dir() / "values"
    return Path(directory) / f"{spec.name}.csv"


def record_values(spec: Spec, results_dir: str | Path, path: str | Path) -> int:
    """Write the values file of ``spec`` from its store in ``results_dir``; returns the number
    of cells written (every finished cell of the spec's current plan but those stopped by a
    wall-clock cap, which are counted in a comment line, as are planned cells the store does not
    hold finished).

    Raises
    ------
    UsageError
        The store holds no finished cell of the spec's plan, or its cells ran in more than one
        environment.
    """
    plan = {c.cell_id: c for c in plan_cells(spec, max_cells=None)}
    rows, capped = _finished_rows(plan, results_dir)
    if not rows:
        raise UsageError(
            "--record", f"{results_dir} holds no finished cell of {spec.name!r}'s plan"
        )
    from kernbench.store.environment import environments

    envs = environments(rows)
    if envs.mixed:  # a values file holds one environment's cells, so that a rerun can match
        raise UsageError("--record", f"{results_dir}: {envs.warning()}")
    numerics = dict(envs.numerics.most_common(1)[0][0]) if envs.numerics else {}
    buf = io.StringIO()
    buf.write(f"# kernbench values of spec {spec.name!r}: {len(rows)} finished cells\n")
    buf.write(f"# {envs.describe() or 'environment not recorded'}\n")
    buf.write(f"# numerics: {json.dumps(numerics, sort_keys=True)}\n")
    if capped:
        buf.write(
            f"# left out: {len(capped)} cell(s) stopped at their wall-clock cap (max_time), "
            "whose values depend on the machine's speed\n"
        )
    unfinished = len(plan) - len(rows) - len(capped)
    if unfinished:
        buf.write(
            f"# not recorded: {unfinished} planned cell(s) not finished in the store "
            "(not run, failed or stopped)\n"
        )
    regression = any(r.get("test_error") is None for r in rows)
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(_COLUMNS + ((_RMSE_COLUMN,) if regression else ()))
    for r in rows:
        writer.writerow(_values_line(r, plan[r["cell_id"]], regression=regression))
    from kernbench.files.writing import write_text_file

    write_text_file(path, buf.getvalue())
    return len(rows)


def _finished_rows(
    plan: Mapping[str, Cell], results_dir: str | Path
) -> tuple[list[dict], list[dict]]:
    """The store's finished cells of ``plan`` with a value, in plan order: those to record, and
    those stopped at their wall-clock cap."""
    with Store(results_dir) as store:
        rows = [r for r in store.rows() if r["cell_id"] in plan and r["status"] == "done"]
    rows = [r for r in rows if _value(r) is not None]
    order = {cid: i for i, cid in enumerate(plan)}
    rows.sort(key=lambda r: order[r["cell_id"]])
    capped = [r for r in rows if (r.get("result") or {}).get("stop_reason") == "max_time"]
    return [r for r in rows if r not in capped], capped


def _values_line(row: Mapping, cell: Cell, *, regression: bool) -> list[object]:
    """One cell's line of a values file (the RMSE column only in a regression spec's file)."""
    cpu = (row.get("result") or {}).get("cpu_time_s")
    error = row.get("test_error")
    line: list[object] = [
        row["cell_id"][:ID_CHARS],
        row["dataset"],
        row["method"],
        cell.method.estimator,
        int(row["realisation"]),
        repr(float(error)) if error is not None else "",
        f"{float(cpu):.2f}" if cpu is not None else "",
    ]
    if regression:
        line.append("" if error is not None else repr(float(_value(row))))
    return line


def _value(row: Mapping) -> float | None:
    """A store row's checked value: its test error, else (a regression cell) its test RMSE."""
    if row.get("test_error") is not None:
        return float(row["test_error"])
    rmse = (row.get("result") or {}).get("test_rmse")
    return None if rmse is None else float(rmse)


def load_values(path: str | Path) -> tuple[list[RecordedCell], str, dict[str, str]]:
    """The cells of a values file, the environment line it was recorded with and the recorded
    numerics (library versions, BLAS kernels, SIMD paths, numba target)."""
    text = Path(path).read_text(encoding="utf-8")
    comments = [ln[2:] for ln in text.splitlines() if ln.startswith("# ")]
    body = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    cells = []
    numerics: dict[str, str] = {}
    try:
        for row in csv.DictReader(body):
            cpu = row.get("cpu_s") or ""
            rmse = row.get(_RMSE_COLUMN) or ""
            cells.append(
                RecordedCell(
                    cell=row["cell"],
                    dataset=row["dataset"],
                    method=row["method"],
                    estimator=row["estimator"],
                    realisation=int(row["realisation"]),
                    test_error=math.nan if rmse else float(row["test_error"]),
                    cpu_s=float(cpu) if cpu else math.nan,
                    test_rmse=float(rmse) if rmse else None,
                )
            )
        for line in comments:
            if line.startswith("numerics: "):
                numerics = dict(json.loads(line.removeprefix("numerics: ")))
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(
            "--values",
            f"{path} is not a values file written by `kernbench verify --record` ({exc!r})",
        ) from None
    if not cells:
        raise UsageError("--values", f"{path} holds no recorded cell")
    return cells, (comments[1] if len(comments) > 1 else ""), numerics


def choose_sample(
    cells: Sequence[RecordedCell], *, budget_s: float, seed: int = 0
) -> list[RecordedCell]:
    """A seeded sample of ``cells`` whose recorded CPU adds up to at most ``budget_s``.

    Methods take turns (in a seeded order), each taking its next cell in a seeded shuffle that
    fits what is left of the budget, so every method is checked once before any twice. A cell
    without a recorded CPU time counts as 1 s.
    """
    rng = random.Random(seed)
    by_method: dict[str, list[RecordedCell]] = {}
    for c in cells:
        by_method.setdefault(c.method, []).append(c)
    queues = {m: rng.sample(group, len(group)) for m, group in sorted(by_method.items())}
    turn = sorted(queues)
    rng.shuffle(turn)
    left = budget_s
    chosen: list[RecordedCell] = []
    while turn:
        for m in list(turn):
            queue = queues[m]
            pick = next((c for c in queue if c.cost <= left), None)
            if pick is None:
                turn.remove(m)
                continue
            queue.remove(pick)
            chosen.append(pick)
            left -= pick.cost
    return chosen


def cell_tolerance(estimator: str) -> float:
    """A cell's tolerance in percentage points of test error (see the module docstring)."""
    entry = REVISIONS.get(estimator)
    return entry.cell_tolerance if entry is not None else PLUGIN_TOLERANCE


def verify(
    spec: Spec,
    values: Sequence[RecordedCell],
    sample: Sequence[RecordedCell],
    *,
    jobs: int = 1,
    recorded_environment: str = "",
    recorded_numerics: Mapping[str, str] | None = None,
    on_cell: Callable[..., None] | None = None,
    out_dir: str | Path | None = None,
) -> Verification:
    """Recompute ``sample`` (cells of ``values``) under ``spec`` and compare (module docstring).

    The cells are computed in a scratch store (``out_dir``, default a temporary directory)
    through the normal run, so timeouts, parameter taking and the backends behave as in
    ``kernbench run``.
    """
    plan: Mapping[str, Cell] = {c.cell_id[:ID_CHARS]: c for c in plan_cells(spec, max_cells=None)}
    outcome = Verification(
        spec=spec.name,
        recorded=len(values),
        recorded_environment=recorded_environment,
    )
    _note_environment(outcome, recorded_numerics)
    outcome.stale = [c for c in values if c.cell not in plan]
    todo = [c for c in sample if c.cell in plan]
    if not todo:
        return outcome
    ids = {plan[c.cell].cell_id for c in todo}
    rows = _rerun(spec, ids, jobs=jobs, on_cell=on_cell, out_dir=out_dir)
    for c in todo:
        tol = 0.0 if outcome.same_numerics else cell_tolerance(c.estimator)
        outcome.checks.append(check_cell(c, rows.get(c.cell), tol))
    return outcome


def check_cell(recorded: RecordedCell, row: Mapping | None, tol: float) -> CellCheck:
    """``recorded`` against its recomputed store ``row`` (None: not run), within ``tol``
    percentage points of test error, or ``tol`` per cent of the recorded test RMSE (0: identical
    only)."""
    now = None if row is None or row["status"] != "done" else _value(row)
    if now is None:
        error = (row or {}).get("error") or (row or {}).get("status") or "not run"
        return CellCheck(recorded, None, "differs", tol, error=str(error))
    if recorded.metric == "error":
        was, shown, allowed = recorded.test_error, 100 * now, tol
        moved = abs(100 * (now - was))
    else:
        was, shown = float(recorded.test_rmse), now
        moved, allowed = abs(now - was), tol / 100 * abs(was)
    if now == was:
        verdict = "identical"
    elif tol > 0 and moved <= allowed + 1e-9:
        verdict = "within tolerance"
    else:
        verdict = "differs"
    return CellCheck(recorded, shown, verdict, tol)


def _note_environment(outcome: Verification, recorded: Mapping[str, str] | None) -> None:
    """This process's environment on ``outcome``, and whether its numerics are the recorded
    ones."""
    from kernbench.store.environment import LIBRARIES, NUMERIC, Environments

    here = versions()
    outcome.environment = Environments([here]).describe() or ""
    outcome.same_numerics = bool(recorded) and all(
        _same_value(k, str(here.get(k)), v) for k, v in recorded.items() if k in LIBRARIES + NUMERIC
    )


def _same_value(key: str, here: str, recorded: str) -> bool:
    """Whether one recorded environment value is this process's.

    ``blas`` lists the BLAS libraries loaded when the process first asked, so it depends on
    what the process had imported by then as well as on the machine: a worker that had run a
    cvxpy fit also lists SCS's bundled OpenBLAS, the driver that checks the values may not. The
    lists are the same numerics when one holds the other (numpy's and SciPy's entries, with
    their versions and kernels, are in both); another machine's kernels or another version
    differ in those entries.
    """
    if key != "blas":
        return here == recorded
    mine, theirs = set(here.split(" + ")), set(recorded.split(" + "))
    return mine <= theirs or theirs <= mine


def _rerun(
    spec: Spec,
    cell_ids: set[str],
    *,
    jobs: int,
    on_cell: Callable[..., None] | None,
    out_dir: str | Path | None,
) -> dict[str, dict]:
    """Run the cells ``cell_ids`` of ``spec`` in a scratch store (``out_dir``, default a
    temporary directory); their rows by shortened identity."""
    from kernbench.runner.options import RunHooks, RunOptions
    from kernbench.runner.run import run_experiment

    with tempfile.TemporaryDirectory(prefix="kernbench-verify-") as scratch:
        out = Path(out_dir) if out_dir is not None else Path(scratch) / spec.name
        options = RunOptions(out_dir=out, jobs=jobs, cell_ids=cell_ids, max_cells=None)
        run_experiment(spec, options, hooks=RunHooks(on_cell=on_cell))
        with Store(out) as store:
            return {r["cell_id"][:ID_CHARS]: r for r in store.rows()}
