"""The package's import rules, read from the source with ``ast`` (no module is imported).

* the report reads stores: nothing from ``methods``, ``runner`` or ``weak``;
* ``solvers`` are generic numerics: nothing from ``weak``, ``methods``, ``runner`` or ``report``;
* the store knows nothing of the runner, the methods or the report;
* the runner's rooms: ``runner.plan`` (what to compute) imports none of the others,
  ``runner.cell`` (how one cell is computed) nothing from ``runner.execution`` (where cells run),
  ``runner.lifecycle`` (stops, process ends) nothing from the three, and none of them imports the
  runner's hall (the run, its options, its record sink, ``verify``);
* the spec knows nothing of the store, the runner or the report; progress nothing of the runner
  or the report; nothing but ``python -m kernbench`` imports the command line;
* no import cycle among kernbench's modules (imports inside functions included).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "kernbench"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """kernbench modules imported anywhere in ``path`` (``from a import b`` -> ``a.b`` when
    ``a.b`` is a module, else ``a``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("kernbench"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not node.module.startswith("kernbench"):
                continue
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports_of(path) for name, path in MODULES.items()}

#: the runner's modules that put its rooms together into a run
RUN_HALL = tuple(
    f"kernbench.runner.{p.stem}" for p in (PACKAGE / "runner").glob("*.py") if p.stem != "__init__"
)

RULES = [
    ("kernbench.report", ("kernbench.methods", "kernbench.runner", "kernbench.weak")),
    (
        "kernbench.solvers",
        ("kernbench.weak", "kernbench.methods", "kernbench.runner", "kernbench.report"),
    ),
    ("kernbench.store", ("kernbench.runner", "kernbench.methods", "kernbench.report")),
    ("kernbench.cells.records", ("kernbench.store", "kernbench.runner", "kernbench.report")),
    ("kernbench.specs", ("kernbench.store", "kernbench.runner", "kernbench.report")),
    ("kernbench.progress", ("kernbench.runner", "kernbench.report")),
    ("kernbench.runner.plan", ("kernbench.runner.cell", "kernbench.runner.execution", *RUN_HALL)),
    ("kernbench.runner.cell", ("kernbench.runner.execution", *RUN_HALL)),
    (
        "kernbench.runner.lifecycle",
        ("kernbench.runner.plan", "kernbench.runner.cell", "kernbench.runner.execution", *RUN_HALL),
    ),
    ("kernbench.runner.execution", RUN_HALL),
]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize(("package", "forbidden"), RULES, ids=[r[0] for r in RULES])
def test_layer_rule(package, forbidden):
    bad = sorted(
        f"{mod} imports {imp}"
        for mod, imps in GRAPH.items()
        if _inside(mod, package)
        for imp in imps
        if any(_inside(imp, f) for f in forbidden)
    )
    assert not bad, bad


def test_only_the_entry_point_imports_the_command_line():
    """The command line calls the library, never the reverse: only ``python -m kernbench``
    imports ``kernbench.cli``."""
    bad = sorted(
        f"{mod} imports {imp}"
        for mod, imps in GRAPH.items()
        if not _inside(mod, "kernbench.cli") and mod != "kernbench.__main__"
        for imp in imps
        if _inside(imp, "kernbench.cli")
    )
    assert not bad, bad


def test_no_import_cycle():
    edges = {m: {i for i in imps if i in GRAPH and i != m} for m, imps in GRAPH.items()}
    # a package's __init__ re-exporting its own submodules is not a cycle of design
    for m in edges:
        edges[m] = {i for i in edges[m] if not (_inside(i, m) and MODULES[m].name == "__init__.py")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(edges[m]):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state and (cycle := visit(n)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (cycle := visit(m)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_rules_see_real_imports():
    """The reader is not blind: known edges are found."""
    assert "kernbench.store.sqlite" in GRAPH["kernbench.store.merge"]
    assert "kernbench.runner.cell.compute" in GRAPH["kernbench.runner.execution.cell_task"]
    assert "kernbench.runner.run" in RUN_HALL and "kernbench.runner.plan" not in RUN_HALL
