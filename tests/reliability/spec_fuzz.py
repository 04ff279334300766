"""Hostile experiment specs for the fuzz tests and benchmarks/fault_harness.py.

Two families, both as YAML text:

* *mutations* of a valid spec: at a random key path, replace the value by a hostile one (wrong
  types, huge or non-finite numbers, unicode, deep nesting), delete the key, or add an unknown key;
* *raw documents*: YAML tags (``!!python/object/apply:os.system``...), alias bombs ("billion
  laughs"), very deep nesting, malformed syntax, binary junk.

:func:`run_case` feeds one document to ``kernbench run SPEC --out DIR`` in-process (Typer's
``CliRunner``) with the execution replaced by planning only, so a spec that happens to be valid
costs nothing; it reports the exit code, whether a traceback was printed, whether anything was
created, and the key path the error named.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

BASE: dict[str, Any] = {
    "name": "fuzz",
    "title": "fuzzed spec",
    "datasets": ["breast_cancer", {"name": "iris", "label": "iris2", "options": {"positive": [0]}}],
    "protocol": {
        "realisations": "random",
        "n_realisations": 2,
        "train_size": 0.5,
        "cv_folds": 2,
        "seed": 1,
        "preprocess": "standardize",
        "stratify": True,
        "timeout_s": 60,
    },
    "methods": {
        "ada": {"estimator": "adaboost", "grid": {"n_estimators": [5, 10]}},
        "svm": {"estimator": "svm_stump", "params": {"C": 1.0}},
    },
    "table": {"value": "test_error", "format": "md"},
}


def key_paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys / indices) into ``doc``, the root included."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += key_paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for j, v in enumerate(doc):
            out += key_paths(v, (*prefix, j))
    return out


PATHS = key_paths(BASE)

hostile_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31, 2**63, 10**30, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e-308, 0.0]),
    st.text(max_size=30),
    st.sampled_from(
        ["../../etc/passwd", "/etc/passwd", "..", "a/b", "ümlaut", "名前", "\u202e", "x" * 500,
         "${HOME}", "$(touch pwned)", "{{7*7}}", "%s%n", "C:\\\\x", "~"]
    ),
)  # fmt: skip

hostile_values = st.recursive(
    hostile_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=10), st.integers()), inner, max_size=4),
    ),
    max_leaves=12,
)


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


@st.composite
def mutated_specs(draw: st.DrawFn) -> tuple[str, str]:
    """(YAML text, description) of one mutation of :data:`BASE`."""
    doc = copy.deepcopy(BASE)
    path = draw(st.sampled_from(PATHS))
    op = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add", "nest", "many"]))
    if op == "delete" and path:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    elif op == "add":
        parent = doc
        for key in path:
            parent = parent[key]
        if not isinstance(parent, dict):
            op = "replace"
        else:
            parent[draw(st.text(min_size=1, max_size=12))] = draw(hostile_values)
    elif op == "nest":
        depth = draw(st.integers(min_value=5, max_value=400))
        value: Any = draw(hostile_scalars)
        for _ in range(depth):
            value = [value] if draw(st.booleans()) else {"k": value}
        doc = _set(doc, path, value)
    elif op == "many":
        for _ in range(draw(st.integers(min_value=2, max_value=5))):
            paths = key_paths(doc)
            doc = _set(doc, draw(st.sampled_from(paths)), draw(hostile_values))
    if op == "replace" or (op == "delete" and not path):
        doc = _set(doc, path, draw(hostile_values))
    text = yaml.safe_dump(doc, allow_unicode=draw(st.booleans()), sort_keys=False)
    return text, f"{op} at {'.'.join(map(str, path)) or '<root>'}"


def _bomb(levels: int, width: int) -> str:
    lines = ["name: bomb", "datasets: [breast_cancer]", "methods:", "  a:"]
    lines += ["    estimator: adaboost", "    params:"]
    lines.append(f"      l0: &l0 [{', '.join(['lol'] * width)}]")
    for i in range(1, levels):
        lines.append(f"      l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


_MINI = "name: x\ndatasets: [iris]\nmethods: {a: {estimator: adaboost}}\n"


def _merge_chain(size: int) -> str:
    """Each mapping merges the previous one (the merged pairs grow quadratically)."""
    lines = [_MINI.rstrip("\n"), "x0: &x0 {k0: 0}"]
    i = 1
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(f"x{i}: &x{i} {{<<: *x{i - 1}, k{i}: {i}}}")
        i += 1
    return "\n".join(lines) + "\n"


RAW_DOCS: list[tuple[str, str]] = [
    ("python object tag", "!!python/object/apply:os.system ['touch pwned']\n"),
    ("python name tag", "name: !!python/name:os.system\ndatasets: [iris]\nmethods: {}\n"),
    ("python object in params", "name: x\ndatasets: [iris]\nmethods:\n  a:\n    estimator: "
     "adaboost\n    params: {n_estimators: !!python/object/new:int [3]}\n"),
    ("binary tag", "name: !!binary aGVsbG8=\ndatasets: [iris]\nmethods: {}\n"),
    ("set tag", "name: x\ndatasets: !!set {iris: null}\nmethods: {}\n"),
    ("timestamp seed", "name: x\nprotocol: {seed: 2001-12-14t21:59:43.10-05:00}\n"
     "datasets: [iris]\nmethods: {a: {estimator: adaboost}}\n"),
    ("custom tag", "name: !shell 'rm -rf /'\ndatasets: [iris]\nmethods: {}\n"),
    ("billion laughs", _bomb(9, 10)),
    ("alias bomb in grid", "name: x\ndatasets: [iris]\nmethods:\n  a:\n    estimator: adaboost\n"
     "    grid:\n      n_estimators: &g [1, 2, 3]\n      h: [*g, *g, *g]\n"),
    ("deep list", "[" * 5000 + "]" * 5000 + "\n"),
    ("deep mapping", "a: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n"),
    ("unclosed", "name: [x\n"),
    ("tab indent", "name: x\n\tdatasets: [iris]\n"),
    ("binary junk", "\x00\x01\x02\xff name"),
    ("bom", "\ufeffname: x\ndatasets: [iris]\nmethods: 3\n"),
    ("duplicate keys", "name: x\nname: y\ndatasets: [iris]\nmethods: {}\n"),
    ("merge key", "base: &b {estimator: adaboost}\nname: x\ndatasets: [iris]\nmethods:\n"
     "  a: {<<: *b, grid: {n_estimators: [1]}}\n"),
    ("complex key", "? [a, b]\n: 1\nname: x\n"),
    ("null key", "null: 1\nname: x\ndatasets: [iris]\nmethods: {}\n"),
    ("huge int", f"name: x\nprotocol: {{seed: {10**400}}}\ndatasets: [iris]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("inf realisations", "name: x\nprotocol: {n_realisations: .inf}\ndatasets: [iris]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("nan in grid", "name: x\ndatasets: [iris]\nmethods: {a: {estimator: svm_stump, "
     "grid: {C: [1, .nan]}}}\n"),
    ("dataset path escape", "name: x\ndatasets: ['../../etc/passwd']\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("dataset absolute path", "name: x\ndatasets: [{name: /etc/passwd, label: p}]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("name path escape", "name: ../../outside\ndatasets: [iris]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("name with slash", "name: a/b\ndatasets: [iris]\nmethods: {a: {estimator: adaboost}}\n"),
    ("label path escape", "name: x\ndatasets: [{name: iris, label: ../x}]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("method label escape", "name: x\ndatasets: [iris]\n"
     "methods: {'../m': {estimator: adaboost}}\n"),
    ("empty document", ""),
    ("just a string", "hello\n"),
    ("just a list", "- 1\n- 2\n"),
    ("unicode keys", "nämé: x\ndatasets: [iris]\nmethods: {a: {estimator: adaboost}}\n"),
    ("rtl override", "name: \"x\u202e\"\ndatasets: [iris]\nmethods: {a: {estimator: adaboost}}\n"),
    ("oversized spec", "name: x\ndatasets: [iris]\nmethods: {a: {estimator: svm_stump, grid: {C: ["
     + ", ".join(["1"] * 100_000) + "]}}}\n"),
    ("merge chain 234 KB", _merge_chain(234_000)),
    ("merge doubling", _MINI + "".join(
        f"y{i}: &y{i} {{<<: [*y{i - 1}, *y{i - 1}], c{i}: {i}}}\n" for i in range(1, 40)
    ).replace("<<: [*y0, *y0]", "a: 1")),
    ("a million cells", "name: x\ndatasets: [iris]\nprotocol: {n_realisations: 100000}\n"
     "methods: {" + ", ".join(f"m{j}: {{estimator: adaboost}}" for j in range(10)) + "}\n"),
    ("name with newline", "name: \"evil\\n\"\ndatasets: [iris]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("label with newline", "name: x\ndatasets: [{name: iris, label: \"x\\n\"}]\n"
     "methods: {a: {estimator: adaboost}}\n"),
    ("reference escape", _MINI + "table: {reference: {file: ../../../../../../etc/passwd}}\n"),
    ("reference absolute", _MINI + "table: {reference: {file: /etc/passwd}}\n"),
    ("rtl override in a key path", _MINI + "table: {reference: {file: spec.yaml, "
     "methods: {\"a\u202ex\": y}}}\n"),
    ("deep block sequence", "- " * 3000 + "x\n"),
    ("deep block mapping", "".join(f"{' ' * i}k:\n" for i in range(600)) + " " * 600 + "v\n"),
]  # fmt: skip


@dataclass
class CaseOutcome:
    """What ``kernbench run`` did with one document."""

    description: str
    exit_code: int
    traceback: bool
    side_effect: bool
    key_path: str | None
    message: str
    detail: str | None = None

    @property
    def kind(self) -> str:
        if self.exit_code == 2 and not self.traceback and not self.side_effect:
            return "rejected"
        if self.exit_code == 0 and not self.traceback:
            return "accepted"
        return "FAILURE"


def run_case(text: str, description: str, workdir: Path, monkeypatch: Any) -> CaseOutcome:
    """``kernbench run`` on ``text`` in-process; execution replaced by planning only."""
    from typer.testing import CliRunner

    import kernbench.runner.run as run
    from kernbench.cli import app
    from kernbench.errors import SpecError
    from kernbench.runner.plan.cells import plan_cells
    from kernbench.runner.record_sink import RunSummary
    from kernbench.specs.load import load_spec

    def plan_only(spec: Any, options: Any, **_: Any):
        cells = plan_cells(spec, realisations=options.realisations, only=options.only)
        return RunSummary(out_dir=Path(options.out_dir), planned=len(cells))

    monkeypatch.setattr(run, "run_experiment", plan_only)
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.yaml"
    spec_path.write_text(text, encoding="utf-8", errors="surrogateescape")
    out_dir = workdir / "out"
    before = set(workdir.iterdir())
    result = CliRunner().invoke(app, ["run", str(spec_path), "--out", str(out_dir)])
    output = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        output += f"\nTraceback: {type(result.exception).__name__}: {result.exception}"
    after = set(workdir.iterdir())
    key_path = detail = None
    if result.exit_code == 2:
        try:
            load_spec(spec_path)
        except SpecError as exc:
            key_path, detail = exc.path, exc.detail
        except Exception:  # noqa: S110 - the CLI already reported it; only SpecError has a path
            pass
    return CaseOutcome(
        description=description,
        exit_code=result.exit_code,
        traceback="Traceback" in output,
        side_effect=bool(after - before) or Path("pwned").exists(),
        key_path=key_path,
        message=" ".join(output.split())[:300],
        detail=detail,
    )


def names_a_place(outcome: CaseOutcome) -> bool:
    """A rejection names the key path, or (YAML-level problems) a line/column or the document."""
    if outcome.key_path is None:  # not a SpecError: the planner's cell limit names the count
        return "cells, more than the limit" in outcome.message and "--max-cells" in outcome.message
    if outcome.key_path:
        return True
    return any(
        w in (outcome.detail or "")
        for w in (
            "invalid YAML",
            "empty",
            "top level",
            "nested too deeply",
            "cannot read spec",
            "characters, more than",
            "values while loading",
        )
    )
