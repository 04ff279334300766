import io

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from kernbench.errors import KernbenchError
from kernbench.report import (
    build_table,
    build_tables,
    render_table,
    summary_frame,
    write_table_md,
)

DATASETS = ["alpha", "beta"]
METHODS = ["A", "B", "C"]
N = 6


def _errors(seed: int = 0) -> dict[tuple[str, str], np.ndarray]:
    """Test errors (fractions) per cell: A best, B close to A, C clearly worse."""
    rng = np.random.default_rng(seed)
    out = {}
    for d in DATASETS:
        base = rng.uniform(0.1, 0.2, size=N)  # shared split difficulty (paired design)
        out[(d, "A")] = base
        out[(d, "B")] = base + rng.normal(0.002, 0.01, size=N)
        out[(d, "C")] = base + 0.05 + rng.normal(0, 0.005, size=N)
    return out


@pytest.fixture
def main_store(make_store, spec_dict, add_cell):
    """alpha/beta x A/B/C x 6 realisations; beta/C: realisation 3 failed, 4 and 5 never ran."""
    errors = _errors()
    directory, store = make_store("main", spec_dict("main", DATASETS, METHODS, n_realisations=N))
    for (d, m), values in errors.items():
        for r, v in enumerate(values):
            if (d, m) == ("beta", "C") and r >= 3:
                if r == 3:
                    add_cell(store, d, m, r, None, status="failed", error="ValueError: boom")
                continue
            add_cell(store, d, m, r, float(v), result={"fit_time_s": 0.1 * (r + 1)})
    return directory, errors


def _done(errors, d, m):
    """Percent values of the realisations recorded as done (independent of the package)."""
    v = 100.0 * errors[(d, m)]
    return v[:3] if (d, m) == ("beta", "C") else v


def test_cells_match_numpy(main_store):
    directory, errors = main_store
    table = build_table(directory)
    assert table.datasets == DATASETS and table.methods == METHODS
    for d in DATASETS:
        for m in METHODS:
            cell = table.cell(d, m)
            v = _done(errors, d, m)
            assert cell.n == v.size
            assert cell.n_expected == N
            assert cell.mean == pytest.approx(v.mean(), rel=1e-12)
            assert cell.spread == pytest.approx(v.std(ddof=1), rel=1e-12)
            assert cell.stderr == pytest.approx(v.std(ddof=1) / np.sqrt(v.size), rel=1e-12)


def test_best_and_significance_against_scipy(main_store):
    directory, errors = main_store
    table = build_table(directory)
    marks = []
    for d in DATASETS:
        means = {m: _done(errors, d, m).mean() for m in METHODS}
        best = min(means, key=means.get)
        for m in METHODS:
            cell = table.cell(d, m)
            assert cell.best == (m == best)
            if m == best:
                continue
            n = min(_done(errors, d, best).size, _done(errors, d, m).size)  # shared prefix
            p = sps.ttest_rel(_done(errors, d, best)[:n], _done(errors, d, m)[:n]).pvalue
            assert cell.p_value == pytest.approx(p, rel=1e-10)
            assert cell.not_significantly_worse == (p >= 0.05)
            marks.append(cell.not_significantly_worse)
    assert True in marks and False in marks  # the scenario exercises both decisions


def test_average_ranks_against_rankdata(main_store):
    directory, errors = main_store
    table = build_table(directory)
    per_dataset = [sps.rankdata([_done(errors, d, m).mean() for m in METHODS]) for d in DATASETS]
    expected = np.mean(per_dataset, axis=0)
    assert table.n_rank_datasets == 2
    for m, r in zip(METHODS, expected, strict=True):
        assert table.average_ranks[m] == pytest.approx(r)
    assert [table.cell("beta", m).rank for m in METHODS] == list(per_dataset[1])


def test_failures_are_counted_and_footnoted(main_store):
    directory, _ = main_store
    table = build_table(directory)
    cell = table.cell("beta", "C")
    assert dict(cell.problems) == {"failed": 1, "missing": 2}
    assert "3 of 6 realisation(s) averaged, 1 failed, 2 missing: beta: C." in table.notes
    assert "First error in beta: C: ValueError: boom" in table.notes
    md = render_table(table, "md")
    rows = [line for line in md.splitlines() if line.startswith(("| alpha", "| beta"))]
    assert "(n=3)" in rows[1]
    assert sum(r.count("(n=") for r in rows) == 1  # complete cells carry no count


def test_markdown_bold_mark_and_rank_row(main_store):
    directory, _ = main_store
    table = build_table(directory)
    md = render_table(table)
    lines = md.splitlines()
    assert lines[0] == "### Synthetic main"
    assert lines[2] == "| dataset | A | B | C |"
    for d in DATASETS:
        row = next(line for line in lines if line.startswith(f"| {d} |"))
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        for m, text in zip(METHODS, cells, strict=True):
            c = table.cell(d, m)
            body = f"{c.mean:.2f} ± {c.spread:.2f}"
            if c.best:
                assert text.startswith(f"**{body}**")
            elif c.not_significantly_worse:
                assert text.startswith(f"{body}†")
            else:
                assert text.startswith(body) and "†" not in text and "**" not in text
    rank_row = next(line for line in lines if line.startswith("| avg. rank |"))
    assert f"{table.average_ranks['C']:.2f}" in rank_row
    assert "paired two-sided t-test" in md and "α = 0.05" in md


def test_csv_round_trip(main_store):
    directory, _ = main_store
    table = build_table(directory)
    frame = pd.read_csv(io.StringIO(render_table(table, "csv")))
    assert list(frame.columns[:9]) == [
        "dataset",
        "method",
        "mean",
        "spread",
        "n",
        "published_mean",
        "published_spread",
        "best",
        "not_significantly_worse",
    ]
    assert len(frame) == len(DATASETS) * len(METHODS)
    for row in frame.itertuples():
        c = table.cell(row.dataset, row.method)
        assert row.mean == c.mean  # full precision survives the round trip
        assert row.spread == c.spread
        assert row.n == c.n
        assert bool(row.best) == c.best
        assert bool(row.not_significantly_worse) == c.not_significantly_worse
        assert np.isnan(row.published_mean)


def test_latex_booktabs(main_store):
    directory, _ = main_store
    table = build_table(directory)
    tex = render_table(table, "latex")
    for token in (r"\toprule", r"\midrule", r"\bottomrule", r"\begin{tabular}{lrrr}"):
        assert token in tex
    for d in DATASETS:
        for m in METHODS:
            c = table.cell(d, m)
            body = f"{c.mean:.2f} $\\pm$ {c.spread:.2f}"
            if c.best:
                assert f"\\textbf{{{body}}}" in tex
            elif c.not_significantly_worse:
                assert f"\\underline{{{body}}}" in tex
    with pytest.raises(ValueError, match="format"):
        render_table(table, "html")  # type: ignore[arg-type]


def test_summary_frame_matches_numpy(main_store):
    directory, errors = main_store
    frame = summary_frame(directory).set_index(["dataset", "method"])
    for d in DATASETS:
        for m in METHODS:
            v = _done(errors, d, m)
            row = frame.loc[(d, m)]
            assert row["mean"] == pytest.approx(v.mean())
            assert row["std"] == pytest.approx(v.std(ddof=1))
            assert row["stderr"] == pytest.approx(v.std(ddof=1) / np.sqrt(v.size))
            assert row["n"] == v.size
            assert row["fit_time_s"] == pytest.approx(np.mean(0.1 * (np.arange(v.size) + 1)))
    assert frame.loc[("beta", "C"), "n_failed"] == 1
    assert frame.loc[("beta", "C"), "n_missing"] == 2
    assert frame.loc[("alpha", "A"), "n_failed"] == 0


def test_other_values_and_errors(main_store):
    directory, _ = main_store
    table = build_table(directory, value="fit_time_s")
    assert table.unit == ""
    assert table.cell("alpha", "A").mean == pytest.approx(np.mean(0.1 * np.arange(1, N + 1)))
    assert "Fit time (s)" in render_table(table)
    with pytest.raises(KernbenchError, match="unknown table value"):
        build_table(directory, value="accuracy")
    with pytest.raises(KernbenchError, match="no results store"):
        build_table(directory / "absent")


def test_stderr_spread_kind(make_store, spec_dict, add_cell):
    values = np.array([0.10, 0.14, 0.12, 0.17])
    spec = spec_dict("se", ["d"], ["M"], n_realisations=4, table={"spread": "stderr"})
    directory, store = make_store("se", spec)
    for r, v in enumerate(values):
        add_cell(store, "d", "M", r, float(v))
    cell = build_table(directory).cell("d", "M")
    assert cell.spread == pytest.approx(np.std(100 * values, ddof=1) / 2.0)
    assert "mean ± stderr" in render_table(build_table(directory))


def test_reference_columns_and_tolerance(make_store, spec_dict, add_cell, lin_li_csv):
    datasets, methods = ["twonorm", "twonorm noisy"], ["SVM-Stump", "AB-Stump", "CGENS"]
    table_spec = {
        "spread": "stderr",
        "reference": str(lin_li_csv),
        "reference_methods": {"AB-Stump": {"method": "AdaBoost-Stump", "T": 100}},
        "reference_datasets": {"twonorm noisy": "twonorm-n"},
    }
    spec = spec_dict("ref", datasets, methods, n_realisations=5, table=table_spec)
    directory, store = make_store("ref", spec)
    rng = np.random.default_rng(3)
    centre = {  # percent; twonorm-noisy AB-Stump far from the published 12.6
        ("twonorm", "SVM-Stump"): 3.0,
        ("twonorm", "AB-Stump"): 5.5,
        ("twonorm", "CGENS"): 4.0,
        ("twonorm noisy", "SVM-Stump"): 3.4,
        ("twonorm noisy", "AB-Stump"): 20.0,
        ("twonorm noisy", "CGENS"): 6.0,
    }
    ours = {}
    for (d, m), c in centre.items():
        ours[(d, m)] = c + rng.normal(0, 0.3, size=5)
        for r, v in enumerate(ours[(d, m)]):
            add_cell(store, d, m, r, float(v) / 100)
    published = {
        ("twonorm", "SVM-Stump"): (2.86, 0.04),
        ("twonorm", "AB-Stump"): (5.06, 0.06),
        ("twonorm noisy", "SVM-Stump"): (3.08, 0.06),
        ("twonorm noisy", "AB-Stump"): (12.6, 0.14),
    }
    table = build_table(directory)
    within = 0
    for (d, m), (pm, ps) in published.items():
        cell = table.cell(d, m)
        assert (cell.published.mean, cell.published.spread) == (pm, ps)
        v = ours[(d, m)]
        se = v.std(ddof=1) / np.sqrt(v.size)  # published kind is stderr
        ok = abs(v.mean() - pm) <= max(2 * np.hypot(se, ps), 1.5)
        assert cell.within_tolerance == ok
        within += ok
    assert table.cell("twonorm", "CGENS").published is None
    assert table.tolerance == (within, 4)
    assert 0 < within < 4  # both outcomes exercised

    md = render_table(table)
    ab = table.cell("twonorm", "AB-Stump")
    assert f"5.06 \\| {ab.mean:.2f} ± {ab.spread:.2f}" in md
    assert "– \\| " in md  # CGENS has no published value
    assert "| dataset (published \\| ours) |" in md  # the header says which side is which
    assert f"{within} of 4 of our means agree with the published one" in md
    assert "max(2 × sqrt(s_o²/n_o + s_p²/n_p), 1.5 points)" in md
    assert "lin_li_table1.csv" in md

    tex = render_table(table, "latex")
    assert r"\multicolumn{2}{c}{SVM-Stump}" in tex and "paper & ours" in tex
    assert r"\cmidrule(lr){2-3}" in tex

    frame = pd.read_csv(io.StringIO(render_table(table, "csv")))
    row = frame[(frame.dataset == "twonorm noisy") & (frame.method == "AB-Stump")].iloc[0]
    assert (row.published_mean, row.published_spread) == (12.6, 0.14)

    plain = build_table(directory, reference=False)
    assert plain.cell("twonorm", "AB-Stump").published is None
    assert "\\|" not in render_table(plain)


def test_substitute_splits_footnoted(make_store, spec_dict, add_cell):
    spec = spec_dict("flags", ["banana", "thyroid"], ["M", "K"], n_realisations=3)
    directory, store = make_store("flags", spec)
    for r in range(3):
        for m in ("M", "K"):
            # flags the protocol asked for (label noise) or plain facts (stratified) are no note
            benign = {"split": "random", "stratified": True, "flags": ["label_noise"]}
            add_cell(store, "banana", m, r, 0.1 + 0.01 * r, result={"split_info": benign})
            info = {
                "split": "synthetic_split",
                "stratified": True,
                "flags": ["synthetic_split", "substitute", "label_noise"],
                "substitution": "thyroid from the UCI pool",
            }
            if r == 0:
                info["rebuilt_scaling"] = True
            add_cell(store, "thyroid", m, r, 0.05 + 0.01 * r, result={"split_info": info})
    table = build_table(directory)
    assert table.dataset_flags == {
        "thyroid": {"rebuilt_scaling": 1, "substitute": 3, "synthetic_split": 3}
    }
    md = render_table(table)
    assert "| thyroid\\* |" in md and "| banana |" in md  # an escaped '*' renders as '*'
    assert "- thyroid\\*: substitute splits" in md
    assert table.notes == [
        "thyroid*: substitute splits or data: rebuilt_scaling in 1 of 3 realisation(s), "
        "substitute in 3 of 3 realisation(s), synthetic_split in 3 of 3 realisation(s) "
        "(thyroid from the UCI pool)."
    ]


def test_stale_and_superseded_rows(make_store, spec_dict, add_cell):
    spec = spec_dict("stale", ["d"], ["M"], n_realisations=2, estimators={"M": "new_est"})
    directory, store = make_store("stale", spec)
    add_cell(store, "d", "M", 0, 0.90, estimator="old_est", finished_at=10.0)  # other estimator
    add_cell(store, "d", "M", 0, 0.80, estimator="new_est", finished_at=20.0)  # superseded
    add_cell(store, "d", "M", 0, 0.10, estimator="new_est", finished_at=30.0)
    add_cell(store, "d", "M", 1, 0.20, estimator="new_est", finished_at=31.0)
    add_cell(store, "d", "Gone", 0, 0.5, finished_at=32.0)  # label no longer in the spec
    table = build_table(directory)
    assert table.methods == ["M"]
    assert table.cell("d", "M").values == pytest.approx({0: 10.0, 1: 20.0})
    joined = " ".join(table.notes)
    assert "estimator the spec no longer uses" in joined
    assert "superseded" in joined and "labels not in the spec" in joined


def test_fallback_fewer_skips_absent_realisations(make_store, spec_dict, add_cell):
    protocol = {"realisations": "predefined", "fallback": "fewer"}
    spec = spec_dict("fewer", ["d"], ["M", "K"], n_realisations=5, protocol=protocol)
    directory, store = make_store("fewer", spec)
    for m in ("M", "K"):
        for r in range(5):
            if r < 3:
                add_cell(store, "d", m, r, 0.1 + 0.02 * r)
            else:
                add_cell(store, "d", m, r, None, status="skipped", error="not available")
    table = build_table(directory)
    assert table.cell("d", "M").n_expected == 3 and not table.cell("d", "M").problems
    assert "(n=" not in render_table(table)
    assert any("2 realisation(s) the source does not have" in n for n in table.notes)


def test_capped_run_gives_one_note(make_store, spec_dict, add_cell):
    spec = spec_dict("capped", ["d", "e"], ["M", "K"], n_realisations=10)
    directory, store = make_store("capped", spec)
    for d in ("d", "e"):
        for m in ("M", "K"):
            for r in range(2):
                add_cell(store, d, m, r, 0.1 + 0.01 * r + (m == "K") * 0.05)
    table = build_table(directory)
    assert table.notes == ["2 of 10 realisation(s) averaged, 8 missing: every cell."]


def test_cells_never_run_are_grouped(make_store, spec_dict, add_cell):
    spec = spec_dict("partial", ["d", "e", "f"], ["M", "K"], n_realisations=2)
    directory, store = make_store("partial", spec)
    for r in range(2):
        add_cell(store, "d", "M", r, 0.1)
        add_cell(store, "d", "K", r, 0.2)
        add_cell(store, "e", "M", r, 0.3)
    table = build_table(directory)
    assert table.notes == ["Not run (3 of 6 cells): e: K; f (all methods)."]
    assert table.cell("f", "M").mean is None
    assert "| f | n/a | n/a |" in render_table(table)
    assert table.n_rank_datasets == 1


def test_store_without_spec_and_parent_directories(make_store, spec_dict, add_cell, tmp_path):
    directory, store = make_store("nospec", None)
    for r in range(3):
        add_cell(store, "z", "M", r, 0.2)
        add_cell(store, "a", "M", r, 0.1)
    table = build_table(directory)
    assert table.datasets == ["a", "z"] and table.name == "nospec"
    assert table.cell("a", "M").n_expected == 3
    assert table.cell("a", "M").spread == 0.0

    other, store2 = make_store("second", spec_dict("second", ["d"], ["M"], n_realisations=1))
    add_cell(store2, "d", "M", 0, 0.3)
    tables = build_tables(tmp_path)
    assert [t.name for t in tables] == ["nospec", "second"]

    path = write_table_md(other, render_table(tables[1]))
    assert path == other / "table.md"
    assert path.read_text(encoding="utf-8").startswith("### Synthetic second")
    assert "30.00" in path.read_text(encoding="utf-8")


def test_stand_in_rows_marked_in_every_format_and_counted_apart(
    make_store, spec_dict, add_cell, lin_li_csv
):
    """A published number on another data set carries ‡ (md, LaTeX, HTML), the CSV says so, the
    notes name the paper's data set and the agreement line counts it apart."""
    from kernbench.report.html import write_html_report

    table_spec = {
        "spread": "stderr",
        "reference": str(lin_li_csv),
        "reference_methods": {"AB-Stump": {"method": "AdaBoost-Stump", "T": 100}},
        "reference_datasets": {"our-twonorm": "twonorm", "our-noisy": "twonorm-n"},
        "reference_stand_ins": {"our-noisy": "Lin & Li's noisy twonorm"},
    }
    spec = spec_dict(
        "si", ["our-twonorm", "our-noisy"], ["SVM-Stump", "AB-Stump"], table=table_spec
    )
    directory, store = make_store("si", spec)
    # published: twonorm 2.86 / 5.06, twonorm-n 3.08 / 12.6 (stderr, 100 runs); ours n = 5
    ours = {
        ("our-twonorm", "SVM-Stump"): [2.8, 2.9, 3.0, 2.7, 2.9],  # agrees
        ("our-twonorm", "AB-Stump"): [9.0, 9.2, 9.1, 8.9, 9.0],  # does not
        ("our-noisy", "SVM-Stump"): [3.1, 3.0, 3.2, 3.1, 2.9],  # agrees (stand-in)
        ("our-noisy", "AB-Stump"): [12.0, 12.2, 12.5, 12.1, 12.4],  # agrees (stand-in)
    }
    for (d, m), values in ours.items():
        for r, v in enumerate(values):
            add_cell(store, d, m, r, v / 100)
    table = build_table(directory)
    assert table.tolerance == (3, 4) and table.tolerance_stand_ins == (2, 2)
    assert table.cell("our-noisy", "AB-Stump").stand_in == "Lin & Li's noisy twonorm"
    assert table.cell("our-twonorm", "AB-Stump").stand_in is None

    md = render_table(table)
    assert "| our-noisy | 3.08‡ \\| " in md and "| our-twonorm | 2.86 \\| " in md
    assert "Like for like 1/2; on stand-ins (‡: published on another data set) 2/2." in md
    assert "‡ our-noisy: the published numbers were measured on Lin & Li's noisy twonorm" in md
    tex = render_table(table, "latex")
    assert r"12.6$^\ddagger$ &" in tex and r"5.06 &" in tex
    assert "‡" not in tex  # every mark in LaTeX's own notation
    frame = pd.read_csv(io.StringIO(render_table(table, "csv")))
    row = frame[(frame.dataset == "our-noisy") & (frame.method == "AB-Stump")].iloc[0]
    assert bool(row.stand_in) and row.published_dataset == "twonorm-n"
    assert row.published_n_runs == 100
    assert not frame[frame.dataset == "our-twonorm"].stand_in.any()
    page = write_html_report(directory).read_text(encoding="utf-8")
    assert '<td class="published">3.08‡</td>' in page
    assert '<td class="published">2.86</td>' in page


def test_large_values_print_whole_not_in_exponent_notation(make_store, spec_dict, add_cell):
    """Iterations and seconds from 1000 up (CG-Boost's Table 5: 1000 columns, 4266 s) print as
    whole numbers; smaller ones keep three significant digits."""
    spec = spec_dict("iters", ["d"], ["M", "K"], n_realisations=1)
    directory, store = make_store("iters", spec)
    add_cell(store, "d", "M", 0, 0.1, result={"fit_time_s": 4266.4})
    add_cell(store, "d", "K", 0, 0.2, result={"fit_time_s": 0.123456})
    text = render_table(build_table(directory, value="fit_time_s"))
    assert "| d | 4266 | **0.123** |" in text and "e+03" not in text
