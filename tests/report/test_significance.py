"""Statistics over data sets from a store: one number per cell whatever the order of rows,
what is left out named, the text, the verdicts, the HTML section and the figures."""

from __future__ import annotations

import random

import pytest

from kernbench.errors import KernbenchError
from kernbench.report.cd_diagram import bayes_diagram, cd_diagram, cd_figure
from kernbench.report.significance import build_comparison
from kernbench.report.significance_html import significance_html
from kernbench.report.significance_text import render_comparison
from kernbench.report.stat_tests import corrected_resampled_ttest


def test_cd_figure_names_every_method():
    fig = cd_figure([1.2, 2.5, 3.1, 3.2], ["A", "B", "C", "D"], 1.25, "t")
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert all(name in texts for name in "ABCD") and "CD = 1.25" in texts


def _experiment(cells):
    """An Experiment of ``{(dataset, method): [(status, error), ...]}`` (errors as fractions)."""
    from pathlib import Path

    from kernbench.report.collect import Experiment

    datasets = list(dict.fromkeys(d for d, _ in cells))
    methods = list(dict.fromkeys(m for _, m in cells))
    rows = {
        key: {
            r: {"status": st, "test_error": err, "result": {"n_train": 100, "n_test": 50}}
            for r, (st, err) in enumerate(values)
        }
        for key, values in cells.items()
    }
    return Experiment(Path("."), "t", "t", datasets, methods, rows, dict.fromkeys(datasets, 2))


def test_a_timed_out_cell_leaves_its_dataset_out_or_counts_as_a_loss():
    cells = {}
    for i, d in enumerate(["d1", "d2", "d3", "d4"]):
        cells[(d, "A")] = [("done", 0.10 + 0.01 * i), ("done", 0.12 + 0.01 * i)]
        cells[(d, "B")] = [("done", 0.20), ("done", 0.22)]
        cells[(d, "C")] = [("done", 0.30), ("done", 0.31)]
    cells[("d4", "A")] = [("done", 0.05), ("timeout", None)]
    exp = _experiment(cells)
    excluded = build_comparison(exp)
    assert excluded.datasets == ["d1", "d2", "d3"] and excluded.left_out == ["d4"]
    assert excluded.timed_out == [("d4", "A")]
    assert excluded.friedman.average_ranks.tolist() == [1.0, 2.0, 3.0]
    text = render_comparison(excluded)
    assert "- d4: timed out: A" in text
    loss = build_comparison(exp, timeouts="loss")
    assert loss.datasets == ["d1", "d2", "d3", "d4"]
    assert loss.friedman.average_ranks.tolist() == pytest.approx([1.5, 1.75, 2.75])
    assert loss.wtl[0, 1].tolist() == [3, 0, 1]  # A loses d4 to B by its time-out
    # a method that timed out everywhere stays in the comparison (and leaves every set out)
    cells.update({(d, "D"): [("timeout", None)] for d in ["d1", "d2", "d3", "d4"]})
    everywhere = build_comparison(_experiment(cells))
    assert everywhere.methods == ["A", "B", "C", "D"] and everywhere.datasets == []
    assert everywhere.friedman is None
    # the corrected t-test per data set: A against C on d1 from the two realisations
    s = next(x for x in loss.per_dataset["d1"] if (x.a, x.b) == ("A", "C"))
    assert s.t == pytest.approx(corrected_resampled_ttest([10.0, 12.0], [30.0, 31.0], 100, 50)[0])


N_TEST = 135
#: error counts per (dataset, method) over 4 realisations; on d1, B and C make 118 errors each,
#: spread differently over the realisations (their float means differed in the last bit when
#: summed in another order)
COUNTS = {
    "d1": {
        "A": [20, 22, 21, 19],
        "B": [30, 28, 29, 31],
        "C": [29, 29, 30, 30],
        "D": [40, 41, 39, 42],
    },
    "d2": {
        "A": [10, 12, 11, 9],
        "B": [14, 15, 13, 16],
        "C": [18, 17, 19, 20],
        "D": [25, 24, 26, 23],
    },
    "d3": {
        "A": [33, 35, 34, 32],
        "B": [31, 30, 33, 32],
        "C": [40, 39, 41, 42],
        "D": [38, 37, 36, 39],
    },
    "d4": {"A": [5, 6, 4, 5], "B": [7, 8, 9, 6], "C": [6, 5, 7, 8], "D": [12, 11, 13, 10]},
    "d5": {
        "A": [50, 52, 51, 49],
        "B": [55, 53, 54, 56],
        "C": [51, 50, 52, 53],
        "D": [60, 61, 59, 58],
    },
    "d6": {"A": [1, 2, 1, 0], "B": [3, 2, 4, 3], "C": [2, 3, 2, 3], "D": [8, 7, 9, 6]},
}


def _write(make_store, spec_dict, add_cell, name, counts, *, shuffle=None, extra=(), where=None):
    datasets = list(counts)
    methods = sorted({m for by in counts.values() for m in by} | {m for _, m, *_ in extra})
    spec = spec_dict(name, datasets, methods, n_realisations=4)
    directory, store = make_store(where or name, spec)
    cells = [
        (d, m, r, c / N_TEST, "done")
        for d, by in counts.items()
        for m, cs in by.items()
        for r, c in enumerate(cs)
    ] + list(extra)
    times = [1000.0 + i for i in range(len(cells))]
    if shuffle is not None:
        shuffle.shuffle(cells)  # the store's row order
        shuffle.shuffle(times)  # and the order the cells finished in
    for (d, m, r, err, status), t in zip(cells, times, strict=True):
        add_cell(
            store,
            d,
            m,
            r,
            err,
            status=status,
            finished_at=t,
            result={"n_train": N_TEST, "n_test": N_TEST},
            error="boom" if status == "failed" else None,
        )
    store.close()
    return directory


def _everything(directory):
    from kernbench.report import build_table, render_table

    table = render_table(build_table(directory, reference=False), fmt="md")
    text = render_comparison(build_comparison(directory, control="A", bayes=True))
    everyone = render_comparison(build_comparison(directory))
    import io

    (fig,) = cd_diagram(directory).values()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return table, text, everyone, buf.getvalue()


def test_shuffling_finished_at_and_row_order_changes_no_statistic(make_store, spec_dict, add_cell):
    base = _write(make_store, spec_dict, add_cell, "s", COUNTS)
    reference = _everything(base)
    for seed in (1, 2):
        other = _write(
            make_store,
            spec_dict,
            add_cell,
            "s",
            COUNTS,
            shuffle=random.Random(seed),
            where=f"s{seed}",
        )
        assert _everything(other) == reference
    comp = build_comparison(base)
    d1 = comp.scores[0]
    assert d1[1] == d1[2] == 100 * 118 / (4 * N_TEST)  # B and C: equal counts, one float
    from kernbench.report import build_table

    table = build_table(base, reference=False)
    assert table.cell("d1", "B").mean == table.cell("d1", "C").mean == d1[1]
    assert table.cell("d1", "B").rank == table.cell("d1", "C").rank == 2.5
    ranks = dict(zip(comp.methods, comp.friedman.average_ranks, strict=True))
    assert ranks == pytest.approx(table.average_ranks)  # the table row and the CD diagram agree


def test_failed_and_missing_cells_are_named_and_pairs_kept_complete(
    make_store, spec_dict, add_cell
):
    counts = {d: dict(by) for d, by in COUNTS.items()}
    counts["d2"]["A"] = [10, 12, 9]  # realisation 3 of A on d2 failed (below)
    extra = [("d2", "A", 3, None, "failed")]
    extra += [(d, "E", r, None, "failed") for d in COUNTS for r in range(4)]
    directory = _write(make_store, spec_dict, add_cell, "f", counts, extra=extra)
    comp = build_comparison(directory)
    assert comp.methods == ["A", "B", "C", "D"]
    assert ("E", "no finished cell with a value (24 failed)") in comp.excluded
    assert "realisation(s) 4 left out (no value from A)" in comp.dropped["d2"]
    # d2's means are over realisations 1-3 for every method: B's is (14 + 15 + 13) / 3 rows
    assert comp.scores[1][1] == pytest.approx(100 * 42 / (3 * N_TEST))
    text = render_comparison(comp)
    assert "- E: no finished cell with a value" in text and "- d2: realisation(s) 4" in text


def test_too_few_data_sets_is_said(make_store, spec_dict, add_cell):
    small = {d: COUNTS[d] for d in ("d1", "d2", "d3")}
    comp = build_comparison(_write(make_store, spec_dict, add_cell, "n3", small))
    assert all(t.p >= 0.25 for t in comp.pairs)
    assert "no pair can be significant, whatever the results" in render_comparison(comp)


def test_control_ends_with_one_verdict_per_method(make_store, spec_dict, add_cell):
    directory = _write(make_store, spec_dict, add_cell, "v", COUNTS)
    text = render_comparison(build_comparison(directory, control="A", bayes=True, rope=0.5))
    verdict = text.split("## Verdict against A", 1)[1].strip().splitlines()
    assert [line.split(":")[0] for line in verdict] == ["- B", "- C", "- D"]
    # N = 6: the smallest Wilcoxon p is 1/32, 3 pairs after Holm 3/32 > 0.05
    assert all("no detectable difference from A" in line for line in verdict)
    assert all("Nemenyi" in line and "Bayes" in line for line in verdict)
    assert "rope ± 0.5 points" in text
    # the Holm-Wilcoxon rows say which method is better
    assert "| A vs D | 0.0 | 0.0312 | 0.0938 | exact | A | " in text


def test_plots_refuse_one_data_set_or_one_method(make_store, spec_dict, add_cell):
    one_set = _write(make_store, spec_dict, add_cell, "one", {"d1": COUNTS["d1"]})
    with pytest.raises(KernbenchError, match="at least 2 methods over at least 2 complete"):
        cd_diagram(one_set)
    one_method = {d: {"A": by["A"]} for d, by in COUNTS.items()}
    with pytest.raises(KernbenchError, match="1 method"):
        bayes_diagram(_write(make_store, spec_dict, add_cell, "onem", one_method))
    from typer.testing import CliRunner

    from kernbench.cli import app

    res = CliRunner().invoke(app, ["plot", str(one_set), "--kind", "cd"])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_html_section_is_tables_and_one_cd_diagram(make_store, spec_dict, add_cell):
    from kernbench.report.html import write_html_report
    from kernbench.report.plot_kinds import plot_traces

    directory = _write(make_store, spec_dict, add_cell, "h", COUNTS)
    section = significance_html(directory, value="test_error")
    assert "<pre>" not in section and '<table class="stats">' in section
    plot_traces(directory, kind="cd")  # a drawn cd_*.png in the results directory
    page = write_html_report(directory, reference=False).read_text(encoding="utf-8")
    assert page.count("<img") - page.count('alt="figures/') == 1  # the section's CD diagram
    assert "cd_" not in page
    figs = bayes_diagram(directory)
    assert list(figs) == ["h"]


def test_html_report_with_a_control_has_a_verdict_table(make_store, spec_dict, add_cell):
    from typer.testing import CliRunner

    from kernbench.cli import app

    directory = _write(make_store, spec_dict, add_cell, "hc", COUNTS)
    section = significance_html(directory, value="test_error", control="A", rope=0.5)
    verdict = section.split("<h3>Verdict against A</h3>", 1)[1]
    rows = verdict.split("<tr>")[2:]  # after the header
    assert [r.split("</td>")[0].removeprefix("<td>") for r in rows] == ["B", "C", "D"]
    assert "Bayesian signed-rank test of A (the control)" in section
    assert "rope ± 0.5" in section
    assert "Verdict against" not in significance_html(directory, value="test_error")
    runner = CliRunner()
    res = runner.invoke(app, ["report", str(directory), "--control", "A"])
    assert res.exit_code == 0, res.output
    assert "Verdict against A" in (directory / "report.html").read_text(encoding="utf-8")
    res = runner.invoke(app, ["report", str(directory), "--control", "Z"])
    assert res.exit_code == 2 and "Traceback" not in res.output and "'Z'" in res.output
