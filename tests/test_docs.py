"""The documentation site: it builds strictly, its generated pages are current, it cites nothing
outside the repository, and every figure it shows comes from a make target."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current() -> None:
    expected = _gen().cli_reference()
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == expected, (
        "docs/cli.md differs from the Typer app: run `python docs/gen_reference.py`"
    )


def test_spec_reference_is_current() -> None:
    gen = _gen()
    current = (DOCS / "spec.md").read_text(encoding="utf-8")
    assert gen.spec_page(current) == current, (
        "docs/spec.md's generated tables differ from the spec schema: "
        "run `python docs/gen_reference.py`"
    )


def test_every_protocol_key_is_documented_in_the_spec_page() -> None:
    from kernbench.specs.types import Protocol

    text = (DOCS / "spec.md").read_text(encoding="utf-8")
    for f in dataclasses.fields(Protocol):
        assert f"| `{f.name}` |" in text, f"protocol key {f.name!r} missing from docs/spec.md"
    # each key has a description taken from Protocol's docstring, not an empty cell
    rows = [line for line in text.splitlines() if line.startswith("| `") and line.endswith("|")]
    protocol_rows = [
        r for r in rows if r.split("|")[1].strip(" `") in Protocol.__dataclass_fields__
    ]
    assert all(r.split("|")[3].strip() for r in protocol_rows)
    from kernbench.specs.load import TABLE_KEYS

    table_keys = {f"`table.{k}`" for k in TABLE_KEYS}
    section = text.split("### `table` keys", 1)[1].split("###", 1)[0]
    table_rows = [
        r
        for r in section.splitlines()
        if r.split("|")[1:2] != [] and r.split("|")[1].strip() in table_keys
    ]
    assert len(table_rows) == len(TABLE_KEYS) and all(r.split("|")[3].strip() for r in table_rows)


def test_attribute_docs_parses_combined_numpy_entries() -> None:
    class Example:
        """Summary.

        Attributes
        ----------
        a, b : int
            Shared text
            on two lines.
        c : str
            Alone.
        """

    assert _gen().attribute_docs(Example) == {
        "a": "Shared text on two lines.",
        "b": "Shared text on two lines.",
        "c": "Alone.",
    }


def test_mkdocs_build_is_strict_clean(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs is in the dev extra: `make install`")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "site" / "papers" / "lin_li" / "index.html").is_file()


def test_readme_is_at_most_12_kb() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size <= 12 * 1024, f"README.md is {size} bytes; move detail into docs/"


# built from pieces so that this file does not match itself
_OUTSIDE = re.compile("|".join([r"METHODS" + r"\.md", r"PROTOCOLS" + r"\.md", r"shared" + "/"]))


def test_nothing_cites_files_outside_the_repository() -> None:
    paths = [ROOT / "README.md", ROOT / "mkdocs.yml"]
    for top in ("kernbench", "experiments", "benchmarks", "tests", "docs"):
        paths += [
            p
            for p in (ROOT / top).rglob("*")
            if p.is_file() and p.suffix in {".py", ".md", ".yaml", ".yml", ".txt", ".csv"}
        ]
    hits = []
    for p in paths:
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if _OUTSIDE.search(line):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "citations of files outside the repository:\n" + "\n".join(hits)


def test_every_figure_the_docs_show_is_made_by_a_make_target() -> None:
    """Each PNG a reproduction page (docs/papers/) embeds is copied by `make docs-figures` from a
    PNG that a reproduction target draws with `kernbench plot ... --kind KIND --out
    results/figures` from a store. (Other pages may show screenshots of the tool itself.)"""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    copies = dict(
        (dst, src)
        for src, dst in re.findall(r"cp results/figures/(\S+\.png) docs/(\S+\.png)", makefile)
    )
    kinds = set(re.findall(r"plot \S+ --kind (\S+) --out results/figures", makefile))
    # figures of benchmark measurements (not of a store) are drawn by a named make line
    drawn = set(re.findall(r"--out results/figures/(\S+\.png)", makefile))
    shown = set()
    for page in (DOCS / "papers").rglob("*.md"):
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text(encoding="utf-8")):
            image = (page.parent / target).resolve()
            assert image.is_file(), f"{page.relative_to(ROOT)} shows a missing {target}"
            shown.add(image.relative_to(DOCS).as_posix())
    assert shown, "no figures found: the pattern is wrong"
    for image in sorted(shown):
        assert image in copies, f"docs/{image} is not copied by `make docs-figures`"
        src = copies[image]
        assert src in drawn or any(src.startswith(kind + "_") for kind in kinds), (
            f"results/figures/{src} (for docs/{image}) is drawn by no reproduction target"
        )


def test_every_spec_file_the_docs_run_exists() -> None:
    """A command in the README or a docs page naming `experiments/NAME.yaml` names a real file."""
    pages = [ROOT / "README.md", *DOCS.rglob("*.md")]
    named = set()
    for page in pages:
        for line in page.read_text(encoding="utf-8").splitlines():
            for name in re.findall(r"kernbench \w+ experiments/([\w.-]+\.ya?ml)\b", line):
                named.add((page.relative_to(ROOT).as_posix(), name))
    assert named, "no spec file found in the docs: the pattern is wrong"
    missing = sorted(
        f"{page}: experiments/{name}"
        for page, name in named
        if not (ROOT / "experiments" / name).is_file()
    )
    assert not missing, "the docs run spec files that do not exist:\n" + "\n".join(missing)


def test_spec_page_lists_every_key_a_dataset_mapping_accepts(tmp_path: Path) -> None:
    """The `datasets[i]` row of docs/spec.md against the keys the validator names when it
    refuses an unknown one (read from its message, not from the constant the page is made of)."""
    from kernbench.errors import SpecError
    from kernbench.specs.load import parse_spec

    data = {"name": "k", "datasets": [{"name": "iris", "zzz": 1}], "methods": {}}
    with pytest.raises(SpecError) as info:
        parse_spec(data, file=str(tmp_path / "k.yaml"))
    accepted = set(re.search(r"\(allowed: ([^)]*)\)", str(info.value)).group(1).split(", "))
    assert {
        "file",
        "format",
        "label_column",
        "positive",
        "delimiter",
        "header",
        "sha256",
        "task",
    } <= accepted
    text = (DOCS / "spec.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `datasets[i]` (a mapping)"))
    assert set(re.findall(r"`(\w+)`", row.split("|")[2])) == accepted


def test_performance_page_answers_first_and_its_log_lives_beside_the_csvs() -> None:
    """docs/performance.md: at most 15 KB, a summary table first (what, against, result, how to
    rerun), each figure of it found in the dated log under benchmarks/, each script it runs real."""
    page = DOCS / "performance.md"
    text = page.read_text(encoding="utf-8")
    assert page.stat().st_size <= 15 * 1024, f"docs/performance.md is {page.stat().st_size} bytes"
    assert re.findall(r"^## (.+)$", text, flags=re.M)[0] == "Summary"
    summary = text.split("## Summary", 1)[1].split("\n## ", 1)[0]
    assert "| what | against | result | rerun |" in summary
    rows = [r for r in summary.splitlines() if r.startswith("| ") and not r.startswith("| what")]
    assert len(rows) >= 10
    log_path = ROOT / "benchmarks" / "logs" / "performance.md"
    assert "`benchmarks/logs/performance.md`" in text and log_path.is_file()
    log = log_path.read_text(encoding="utf-8")
    for row in rows:
        what, _against, result, rerun = (c.strip() for c in row.strip("|").split("|"))
        for number in re.findall(r"\d+(?:\.\d+)?", result):
            assert number in log, f"{what}: {number} is not in the log"
        for script in re.findall(r"benchmarks/(\w+\.py)", rerun):
            assert (ROOT / "benchmarks" / script).is_file(), f"{what}: no benchmarks/{script}"
