import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kernbench.errors import KernbenchError  # noqa: E402
from kernbench.report.figures import mean_trace, trace_figures  # noqa: E402
from kernbench.report.plot_kinds import plot_traces  # noqa: E402


def test_mean_trace_hand_example():
    traces = [
        {"iteration": [1, 2, 3], "test_error": [0.3, 0.2, 0.1]},
        {"iteration": [1, 2], "test_error": [0.5, 0.4]},  # stopped early: 0.4 carried forward
        {"iteration": [2, 4], "test_error": [0.6, None]},  # starts at 2; a missing value at 4
    ]
    it, mean = mean_trace(traces, "test_error")
    np.testing.assert_array_equal(it, [1, 2, 3, 4])
    np.testing.assert_allclose(
        mean,
        [
            (0.3 + 0.5) / 2,
            (0.2 + 0.4 + 0.6) / 3,
            (0.1 + 0.4 + 0.6) / 3,
            (0.1 + 0.4) / 2,  # the third realisation has no value at 4
        ],
    )
    assert mean_trace(traces, "objective")[0].size == 0


def _trace(rng, n_iter, with_time):
    t = {
        "iteration": list(range(1, n_iter + 1)),
        "train_error": list(np.sort(rng.uniform(0, 0.2, n_iter))[::-1]),
        "test_error": list(np.sort(rng.uniform(0.1, 0.3, n_iter))[::-1]),
        "objective": list(rng.uniform(size=n_iter)),
    }
    if with_time:
        t["time_s"] = list(np.cumsum(rng.uniform(0.01, 0.02, n_iter)))
    return t


@pytest.fixture
def trace_store(make_store, spec_dict, add_cell):
    """d1: AdaBoost (time_s) and CGENS (no time) traces, SVM without; d2: SVM only."""
    rng = np.random.default_rng(0)
    spec = spec_dict("tr", ["d1", "d2"], ["AdaBoost", "CGENS", "SVM"], n_realisations=3)
    directory, store = make_store("tr", spec)
    traces = {}
    for r in range(3):
        for m, n_iter, with_time in (("AdaBoost", 20, True), ("CGENS", 12 - r, False)):
            t = _trace(rng, n_iter, with_time)
            traces.setdefault(m, []).append(t)
            add_cell(store, "d1", m, r, t["test_error"][-1], result={"trace": t})
        add_cell(store, "d1", "SVM", r, 0.1)
        add_cell(store, "d2", "SVM", r, 0.1)
    # a failed cell's (partial) trace must not enter the mean
    add_cell(
        store, "d1", "CGENS", 3, None, status="failed", result={"trace": _trace(rng, 5, False)}
    )
    return directory, traces


def test_trace_figure_lines_and_values(trace_store):
    directory, traces = trace_store
    figures = trace_figures(directory)
    assert list(figures) == ["d1"]  # d2 has no iterative method
    fig = figures["d1"]
    ax_err, ax_time = fig.axes
    # two methods with traces x (test, train); SVM draws nothing
    assert len(ax_err.get_lines()) == 4
    assert len(ax_time.get_lines()) == 1  # only AdaBoost recorded time_s
    by_label = {line.get_label(): line for line in ax_err.get_lines()}
    assert set(by_label) == {
        "AdaBoost test (n=3)",
        "AdaBoost train (n=3)",
        "CGENS test (n=3)",
        "CGENS train (n=3)",
    }
    # equal lengths: the mean is the plain numpy mean over realisations, in percent
    ada = np.array([t["test_error"] for t in traces["AdaBoost"]])
    np.testing.assert_allclose(by_label["AdaBoost test (n=3)"].get_ydata(), 100 * ada.mean(0))
    np.testing.assert_array_equal(by_label["AdaBoost test (n=3)"].get_xdata(), np.arange(1, 21))
    # CGENS stopped at 12, 11, 10 iterations: last values carried forward
    cg = traces["CGENS"]
    padded = np.array(
        [t["train_error"] + [t["train_error"][-1]] * (12 - len(t["train_error"])) for t in cg]
    )
    np.testing.assert_allclose(by_label["CGENS train (n=3)"].get_ydata(), 100 * padded.mean(0))
    assert by_label["CGENS train (n=3)"].get_linestyle() == "--"
    time = np.array([t["time_s"] for t in traces["AdaBoost"]]).mean(0)
    np.testing.assert_allclose(ax_time.get_lines()[0].get_ydata(), time)


def test_plot_traces_writes_pngs(trace_store, tmp_path):
    directory, _ = trace_store
    paths = plot_traces(directory, tmp_path / "figs")
    assert paths == [tmp_path / "figs" / "trace_d1.png"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    default = plot_traces(directory)
    assert default == [directory / "figures" / "trace_d1.png"] and default[0].is_file()
    with pytest.raises(KernbenchError, match="unknown plot kind"):
        plot_traces(directory, tmp_path, kind="surface")


def test_single_panel_without_time(make_store, spec_dict, add_cell):
    directory, store = make_store("notime", spec_dict("notime", ["d"], ["M"], n_realisations=1))
    t = _trace(np.random.default_rng(1), 150, with_time=False)
    add_cell(store, "d", "M", 0, 0.1, result={"trace": t})
    fig = trace_figures(directory)["d"]
    assert len(fig.axes) == 1 and len(fig.axes[0].get_lines()) == 2
    assert fig.axes[0].get_xscale() == "log"  # 150 iterations: log axis


def test_a_long_title_wraps_instead_of_being_cut():
    from kernbench.report.figures import trace_figure

    long = "Shen & Liu Table I: 13 binary benchmarks with decision stumps, test error %: banana"
    fig = trace_figure(long, {"M": [{"iteration": [1, 2], "train_error": [0.2, 0.1]}]})
    title = fig.get_axes()[0].get_title()
    assert "\n" in title and title.replace("\n", " ") == long
