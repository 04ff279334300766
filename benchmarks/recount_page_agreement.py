"""Recount the agreement headlines of the paper pages from the tables the pages print.

The paper pages (docs/papers/*.md) print our mean ± spread beside the published number for each
(data set, method). This script reads those tables, looks up each published number, its spread,
spread kind and number of runs in the table's reference CSV through the spec's mapping (the same
lookup ``kernbench table`` does), and counts the cells whose means agree under the rule of
docs/tables-and-figures.md, ``|ours − published| <= max(2 · sqrt(s_o²/n_o + s_p²/n_p), 1.5)``,
beside the former rule on per-run spreads, ``max(2 · sqrt(s_o² + s_p²), 1.5)``. Rows of the spec's
``reference.stand_ins`` are counted apart.

Use it when no results store is at hand; with a store, ``kernbench table`` gives the same counts.

    python benchmarks/recount_page_agreement.py            # every table below
    python benchmarks/recount_page_agreement.py --list     # also each disagreeing cell
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path

from kernbench.report.reference import load_reference, match_reference
from kernbench.report.stats import published_stderr, within_tolerance
from kernbench.specs.load import load_spec

ROOT = Path(__file__).resolve().parents[1]

#: "published \| ours ± spread" (marks † and bold allowed), or "ours" alone
_CELL = re.compile(
    r"^\s*(?:(?P<pub>[\d.]+|–)‡?\s*\\\|\s*)?\**(?P<mean>\d+(?:\.\d+)?)\**"
    r"(?:\s*±\s*(?P<spread>\d+(?:\.\d+)?))?\**†?(?:\s*\(n=(?P<n>\d+)\))?"
)


@dataclass(frozen=True)
class PageTable:
    """A table of a docs page: the page, which ``| dataset |`` table on it (0 = the first), its
    spec and our number of runs."""

    name: str
    page: str
    index: int
    spec: str
    n_ours: int
    spread_kind: str = "std"  # what the page's ± of ours is


CGENS, CGENS_LOG = "docs/papers/cgens.md", "benchmarks/logs/cgens.md"
LIN_LI = "docs/papers/lin_li.md"
TABLES = [
    PageTable("CGENS Table I", CGENS, 0, "experiments/uci_stumps.yaml", 5),
    PageTable("CGENS Table IV", CGENS, 1, "experiments/spam_stumps.yaml", 20),
    PageTable("CGENS Table II", CGENS, 2, "experiments/uci_fourier_perceptron.yaml", 5),
    PageTable("CGENS Table III", CGENS, 3, "experiments/multiclass_uci.yaml", 10),
    PageTable(
        "CGENS Table II, one realisation (log)",
        CGENS_LOG,
        0,
        "experiments/uci_fourier_perceptron.yaml",
        1,
    ),
    PageTable(
        "CGENS Table III, one realisation (log)", CGENS_LOG, 1, "experiments/multiclass_uci.yaml", 1
    ),
    PageTable("ExRM Table 1", "docs/papers/exrm.md", 0, "experiments/exrm_table1.yaml", 10),
    PageTable("Lin & Li Table II", LIN_LI, 0, "experiments/lin_li_table2.yaml", 100, "stderr"),
    PageTable("Lin & Li Table I", LIN_LI, 1, "experiments/lin_li_table1.yaml", 100, "stderr"),
]


def _split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def _find_header(lines: list[str], table: PageTable) -> int:
    """The line index of the table's ``| dataset |`` header row."""
    return [j for j, ln in enumerate(lines) if ln.startswith("| dataset |")][table.index]


def recount(table: PageTable, *, show: bool = False) -> dict[str, tuple[int, int]]:
    """``{"new": (k, n), "old": (k, n), "like": (k, n), "stand_in": (k, n)}`` for one table."""
    lines = (ROOT / table.page).read_text(encoding="utf-8").splitlines()
    head = _find_header(lines, table)
    methods = [m.replace("\\", "") for m in _split_row(lines[head])[1:]]
    spec = load_spec(ROOT / table.spec, check_datasets=False)
    tspec = spec.table
    ref = load_reference(tspec.reference)
    counts = {k: [0, 0] for k in ("new", "old", "like", "stand_in")}
    for line in lines[head + 2 :]:
        if not line.startswith("|"):
            break
        row = _split_row(line)
        dataset = row[0].replace("\\", "").rstrip("*")
        if dataset == "avg. rank":
            continue
        for method, text in zip(methods, row[1:], strict=True):
            m = _CELL.match(text)
            if m is None:
                raise ValueError(f"{table.page}: cannot read cell {text!r} ({dataset}, {method})")
            pub = match_reference(
                ref,
                dataset,
                method,
                reference_methods=tspec.reference_methods,
                reference_datasets=tspec.reference_datasets,
            )
            if pub is None:
                continue
            if m["pub"] not in (None, "–") and float(m["pub"]) != pub.mean:
                raise ValueError(
                    f"{table.page}: {dataset}/{method} prints {m['pub']}, the CSV has {pub.text}"
                )
            n_o = int(m["n"]) if m["n"] else table.n_ours
            mean = float(m["mean"])
            spread = float(m["spread"]) if m["spread"] else None
            if spread is None:
                std_o = 0.0
            elif table.spread_kind == "std":
                std_o = spread
            else:
                std_o = spread * math.sqrt(n_o)
            se_o = std_o / math.sqrt(n_o)
            se_p = published_stderr(pub.spread, pub.spread_kind, pub.n_runs, n_fallback=n_o)
            new = within_tolerance(mean, se_o, pub.mean, se_p)
            # the former rule: per-run spreads of the published kind
            if pub.spread_kind == "stderr":
                old_o, old_p = se_o, pub.spread or 0.0
            else:
                old_o, old_p = std_o, pub.spread or 0.0
            old = abs(mean - pub.mean) <= max(2 * math.hypot(old_o, old_p), 1.5)
            stand_in = dataset in tspec.reference_stand_ins
            for key, ok in (("new", new), ("old", old)):
                counts[key][0] += ok
                counts[key][1] += 1
            part = "stand_in" if stand_in else "like"
            counts[part][0] += new
            counts[part][1] += 1
            if show and not new:
                band = max(2 * math.hypot(se_o, se_p), 1.5)
                print(
                    f"    {dataset:<12} {method:<15} ours {mean:6.2f} published {pub.mean:6.2f} "
                    f"|Δ| {abs(mean - pub.mean):5.2f} > band {band:4.2f}"
                    + ("  (stand-in)" if stand_in else "")
                )
    return {k: (v[0], v[1]) for k, v in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list each disagreeing cell")
    args = parser.parse_args()
    for table in TABLES:
        c = recount(table, show=args.list)
        k, n = c["new"]
        ko, no = c["old"]
        text = f"{table.name}: {k} of {n} agree (former rule on per-run spreads: {ko} of {no})"
        if c["stand_in"][1]:
            text += (
                f"; like for like {c['like'][0]}/{c['like'][1]}, "
                f"on stand-ins {c['stand_in'][0]}/{c['stand_in'][1]}"
            )
        print(text)


if __name__ == "__main__":
    main()
