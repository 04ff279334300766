"""docs/modules.md's module tree lists exactly the package's modules, so it cannot go stale."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "docs" / "modules.md"


def tree_entries(text: str) -> list[str]:
    """Paths named by the first code block under "## Module tree" (2 spaces per level)."""
    section = text.split("## Module tree", 1)[1]
    block = re.search(r"```\n(.*?)```", section, flags=re.S).group(1)
    stack: list[str] = []
    paths = []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, f"odd indentation in the module tree: {line!r}"
        name = line.split()[0]
        stack = stack[: indent // 2]
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
            paths.append("/".join(stack) + "/")
        else:
            paths.append("/".join([*stack, name]))
    return paths


def package_modules() -> set[str]:
    return {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "kernbench").rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    }


def test_parser_reads_nesting() -> None:
    text = "## Module tree\n```\nkernbench/\n  a.py   x\n  sub/\n    b.py  y\n  c.py\n```\n"
    assert tree_entries(text) == [
        "kernbench/",
        "kernbench/a.py",
        "kernbench/sub/",
        "kernbench/sub/b.py",
        "kernbench/c.py",
    ]


def test_module_tree_matches_the_package() -> None:
    entries = tree_entries(MODULES.read_text(encoding="utf-8"))
    documented = {e for e in entries if e.endswith(".py")}
    actual = package_modules()
    missing, stale = sorted(actual - documented), sorted(documented - actual)
    assert not missing and not stale, (
        f"docs/modules.md module tree is out of date: add {missing}, remove {stale}"
    )
    assert len(documented) == len([e for e in entries if e.endswith(".py")]), "listed twice"
    for e in entries:  # directories and package data named in the tree exist
        assert (ROOT / e).exists(), f"docs/modules.md names {e}, which does not exist"
