"""``kernbench report PATH --html``: one self-contained HTML page per results directory.

A page holds the experiment's table (published numbers beside ours, with the agreement verdict per
cell when the spec names a reference), the figures found in the results directory (embedded as
``data:`` URIs), and the run's provenance: kernbench and library versions, git revision, hosts,
wall time, status counts and every cell that did not finish with its error. The page loads nothing
from elsewhere (no scripts, no external styles or images). For a tree of results directories an
``index.html`` links the pages.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import os
from collections import Counter
from pathlib import Path
from typing import Any

from kernbench.files.writing import write_text_file
from kernbench.report.render import _count, _dataset_label, _legend, _ours, _published_text
from kernbench.report.significance_html import significance_html
from kernbench.report.tables import Table, build_table
from kernbench.store import Store, find_stores
from kernbench.store.environment import environments

__all__ = ["REPORT_HTML", "write_html_report", "write_html_reports"]

REPORT_HTML = "report.html"
_MAX_FAILED = 200

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
@media (max-width: 1500px) { body { margin: 1em; } }
div.wide { overflow-x: auto; max-width: 100%; } p, ul { max-width: 80em; }
p, li, code { overflow-wrap: anywhere; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
table.results { font-size: 0.8em; font-variant-numeric: tabular-nums; }
table.results th, table.results td { padding: 0.15em 0.3em; }
table.results td.ours { white-space: normal; }
table.stats td:first-child { text-align: left; }
table.results td.verdict, table.results th.sub { font-size: 0.85em; }
th { background: #f3f3f3; } td.dataset, th.dataset { text-align: left; }
th[colspan] { text-align: center; }
td.ours.best { font-weight: bold; }
td.published { color: #555; background: #fafafa; }
td.agrees { background: #e6f4e6; } td.differs { background: #fbe5e5; }
td.verdict { text-align: center; }
table.prov td, table.index td { text-align: left; white-space: normal; overflow-wrap: anywhere; }
table.index th { text-align: left; } table.index td.count { text-align: right; }
table.failed { width: 100%; }
table.failed td { text-align: left; white-space: normal; overflow-wrap: anywhere;
  font-family: monospace; font-size: 0.9em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
table.prov { max-width: 80em; }
p.legend, ul.notes { font-size: 0.9em; color: #444; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _verdict(within: bool | None) -> tuple[str, str]:
    """(css class, text) of the agreement verdict of a cell with a published value."""
    if within is None:
        return "", ""
    return ("agrees", "agrees") if within else ("differs", "differs")


def _ours_text(table: Table, cell: Any) -> str:
    """``mean ± spread`` kept on one line (no-break spaces); a count after it may wrap."""
    text = _ours(cell, table.unit == "%", "\u00a0±\u00a0")
    if cell.not_significantly_worse and not cell.best:
        text += "†"
    return text + _count(cell)


def _table_html(table: Table) -> str:
    ref = table.has_reference
    span = ' rowspan="2"' if ref else ""
    head1 = [f'<th class="dataset"{span}>dataset</th>']
    head2: list[str] = []
    for m in table.methods:
        if ref:
            head1.append(f'<th colspan="3">{_e(m)}</th>')
            head2 += [
                '<th class="sub" title="published">paper</th>',
                '<th class="sub">ours</th>',
                '<th class="sub">verdict</th>',
            ]
        else:
            head1.append(f"<th>{_e(m)}</th>")
    rows = ["<tr>" + "".join(head1) + "</tr>"]
    if ref:
        rows.append("<tr>" + "".join(head2) + "</tr>")
    for d in table.datasets:
        tds = [f'<td class="dataset">{_e(_dataset_label(table, d))}</td>']
        for m in table.methods:
            cell = table.cell(d, m)
            klass = "ours best" if cell.best else "ours"
            ours = _e(_ours_text(table, cell))
            if not ref:
                tds.append(f'<td class="{klass}">{ours}</td>')
                continue
            published = _published_text(cell)
            vclass, vtext = _verdict(cell.within_tolerance if cell.published else None)
            tds.append(f'<td class="published">{_e(published)}</td>')
            tds.append(f'<td class="{klass} {vclass}">{ours}</td>')
            tds.append(f'<td class="verdict {vclass}">{_e(vtext)}</td>')
        rows.append("<tr>" + "".join(tds) + "</tr>")
    ranks = []
    for m in table.methods:
        rank = table.average_ranks[m]
        text = "–" if rank is None else f"{rank:.2f}"
        ranks.append(f'<td colspan="3">{text}</td>' if ref else f"<td>{text}</td>")
    rows.append('<tr><td class="dataset">avg. rank</td>' + "".join(ranks) + "</tr>")
    legend = _legend(table, bold="bold", mark="†", alpha="α", pm=" ± ")
    if ref:
        legend.append(
            "Verdict: 'agrees' (green) when our mean agrees with the published one under the rule "
            "above, 'differs' (red) otherwise; ‡ marks a published number measured on another "
            "data set (a stand-in)."
        )
    parts = ['<div class="wide"><table class="results">', *rows, "</table></div>"]
    parts += [f'<p class="legend">{_e(line)}</p>' for line in legend]
    if table.notes:
        items = "".join(f"<li>{_e(n)}</li>" for n in table.notes)
        parts.append(f'<ul class="notes">{items}</ul>')
    return "\n".join(parts)


def _figures_html(directory: Path, *, skip_cd: bool = False) -> str:
    """Every PNG in the results directory and below it, embedded; with ``skip_cd`` not a drawn
    CD diagram (``cd_*.png``), which the statistics section shows already."""
    pngs = sorted(
        p
        for p in directory.rglob("*.png")
        if p.is_file() and not (skip_cd and p.name.startswith("cd_"))
    )
    if not pngs:
        return "<p>No figures in this results directory (`kernbench plot` draws them).</p>"
    parts = []
    for png in pngs:
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        rel = png.relative_to(directory)
        parts.append(
            f'<figure><img alt="{_e(rel)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(rel)}</figcaption></figure>"
        )
    return "\n".join(parts)


def _when(ts: float | None) -> str:
    if ts is None:
        return "–"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _provenance(directory: Path) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """(label, value) rows about the run and the cells that did not finish."""
    with Store(directory) as store:
        rows = store.rows()
        version = store.get_meta("kernbench_version")
        prov = store.get_meta("provenance") or {}
        created = store.get_meta("created_at")
    counts = Counter(r["status"] for r in rows)
    started = [r["started_at"] for r in rows if r.get("started_at")]
    finished = [r["finished_at"] for r in rows if r.get("finished_at")]
    busy = sum(
        r["finished_at"] - r["started_at"]
        for r in rows
        if r.get("started_at") and r.get("finished_at")
    )
    envs = environments(rows)
    hosts: set[str] = set()
    for r in rows:
        result = r.get("result") or {}
        if result.get("host"):
            hosts.add(str(result["host"]))
    git = prov.get("git") or {}
    table = [
        ("kernbench", str(version or "–")),
        ("git revision", f"{git.get('sha', '–')}{' (dirty)' if git.get('dirty') else ''}"),
        ("driver host", str(prov.get("driver_host", "–"))),
        ("worker hosts", ", ".join(sorted(hosts)) or "–"),
        ("store created", _when(created)),
        ("first cell started", _when(min(started) if started else None)),
        ("last cell finished", _when(max(finished) if finished else None)),
        (
            "wall time (first cell start → last end)",
            f"{max(finished) - min(started):.1f} s" if started and finished else "–",
        ),
        ("cell time (sum)", f"{busy:.1f} s"),
        ("cells", ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none"),
        ("environment", envs.describe() or "–"),
    ]
    if envs.mixed:
        table.append(("warning", str(envs.warning())))
    failed = [r for r in rows if r["status"] not in ("done", "skipped")]
    failed.sort(key=lambda r: (r["dataset"], r["method"], r["realisation"]))
    return table, failed


def _failed_html(failed: list[dict[str, Any]]) -> str:
    if not failed:
        return "<p>Every cell finished.</p>"
    head = (
        "<tr><th>dataset</th><th>realisation</th><th>method</th><th>status</th><th>error</th></tr>"
    )
    body = [
        f"<tr><td>{_e(r['dataset'])}</td><td>{_e(r['realisation'])}</td><td>{_e(r['method'])}"
        f"</td><td>{_e(r['status'])}</td><td>{_e(r.get('error') or '')}</td></tr>"
        for r in failed[:_MAX_FAILED]
    ]
    more = len(failed) - _MAX_FAILED
    tail = f"<p>… and {more} more (cells.csv lists them all).</p>" if more > 0 else ""
    return f'<table class="failed">{head}{"".join(body)}</table>{tail}'


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def write_html_report(
    directory: str | os.PathLike[str],
    reference: bool = True,
    control: str | None = None,
    rope: float | None = None,
) -> Path:
    """Write ``report.html`` into a results directory; returns its path. ``control`` and
    ``rope`` as in :func:`~kernbench.report.significance_html.significance_html`."""
    directory = Path(directory)
    table = build_table(directory, reference=reference)
    prov, failed = _provenance(directory)
    stats_html = significance_html(directory, value=table.value, control=control, rope=rope)
    prov_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in prov)
    body = "\n".join(
        [
            f"<h1>{_e(table.title)}</h1>",
            f"<p>Results directory: <code>{_e(directory)}</code></p>",
            "<h2>Table</h2>",
            _table_html(table),
            stats_html,
            "<h2>Figures</h2>",
            _figures_html(directory, skip_cd="<figure>" in stats_html),
            "<h2>Run provenance</h2>",
            f'<table class="prov">{prov_rows}</table>',
            f"<h2>Cells that did not finish ({len(failed)})</h2>",
            _failed_html(failed),
        ]
    )
    out = directory / REPORT_HTML
    write_text_file(out, _page(table.title, body))
    return out


def write_html_reports(
    path: str | os.PathLike[str],
    reference: bool = True,
    control: str | None = None,
    rope: float | None = None,
) -> list[Path]:
    """A page per results directory at or below ``path``; with several, an ``index.html`` in
    ``path`` (listed first in the returned paths): a table with each experiment's title, its
    page, its cells by status and when its last cell finished."""
    path = Path(path)
    pages = [
        write_html_report(d, reference=reference, control=control, rope=rope)
        for d in find_stores(path)
    ]
    if len(pages) < 2 or not path.is_dir():
        return pages
    rows = "".join(_index_row(path, page) for page in pages)
    body = (
        "<h1>kernbench results</h1>"
        f"<p>{len(pages)} results directories below <code>{_e(path)}</code>.</p>"
        '<div class="wide"><table class="index"><tr><th>experiment</th><th>results directory'
        "</th><th>done</th><th>not finished</th><th>last cell finished</th></tr>"
        f"{rows}</table></div>"
    )
    index = path / "index.html"
    write_text_file(index, _page("kernbench results", body))
    return [index, *pages]


def _index_row(root: Path, page: Path) -> str:
    """One experiment of the index: title (linking its page), directory, counts, last finish."""
    with Store(page.parent) as store:
        spec = store.get_meta("spec") or {}
        rows = store.rows()
    title = spec.get("title") or spec.get("name") or page.parent.name
    done = sum(r["status"] in ("done", "skipped") for r in rows)
    finished = [r["finished_at"] for r in rows if r.get("finished_at")]
    href = _e(page.relative_to(root).as_posix())
    klass = ' class="count differs"' if len(rows) - done else ' class="count"'
    return (
        f'<tr><td><a href="{href}">{_e(title)}</a></td>'
        f"<td><code>{_e(page.parent.relative_to(root).as_posix())}</code></td>"
        f'<td class="count">{done}</td><td{klass}>{len(rows) - done}</td>'
        f"<td>{_when(max(finished) if finished else None)}</td></tr>"
    )
