"""The live progress of `kernbench run`: an ETA that moves between completions, timed lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.progress.live import ProgressLines, RunClock, format_clock, progress_mode

runner = CliRunner()


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_eta_counts_down_between_completions_then_grows_when_a_cell_is_late():
    t = FakeClock()
    clock = RunClock(clock=t)
    clock.begin(10)
    assert clock.eta() is None  # nothing finished: no rate yet
    t.t += 10.0
    clock.finished(True)
    t.t += 10.0
    clock.finished(False)  # 2 cells in 20 s: 10 s a cell, 80 s to go
    assert clock.eta() == pytest.approx(80.0)
    t.t += 5.0  # no completion for 5 s: the estimate moves with the clock
    assert clock.eta() == pytest.approx(75.0)
    t.t += 5.0  # 30 s for 2 cells + the one under way: rate 30/3, ETA 10*10 - 30
    assert clock.eta() == pytest.approx(70.0)
    t.t += 15.0  # 45 s and still 2: at least 15 s a cell, so 150 - 45
    assert clock.eta() == pytest.approx(105.0)
    for _ in range(8):
        clock.finished(True)
    assert clock.eta() == 0.0
    assert (clock.done, clock.failed) == (9, 1)


def test_line_reports_counts_rate_elapsed_and_eta():
    t = FakeClock()
    clock = RunClock(clock=t)
    clock.begin(4)
    t.t += 60.0
    clock.finished(True)
    assert clock.line("quick") == (
        "quick: 1/4 cells (1 done, 0 failed), 1 cells/min, elapsed 0:01:00, ETA 0:03:00"
    )
    assert format_clock(3725.4) == "1:02:05" and format_clock(None) == "-:--:--"


def test_progress_lines_print_at_the_interval_and_once_at_the_end():
    clock = RunClock()
    lines: list[str] = []
    with ProgressLines(clock, "s", lines.append, every=0.01) as printer:
        printer._stop.wait(0.1)  # before begin(): the run does not know its cells yet
        assert lines == []
        clock.begin(2)
        while len(lines) < 2:
            printer._stop.wait(0.01)
    assert len(lines) >= 3 and all(line.startswith("s: 0/2 cells") for line in lines)


@pytest.mark.parametrize(
    ("env", "terminal", "expected"),
    [
        ({}, True, ("bar", 30.0)),
        ({}, False, ("lines", 30.0)),
        ({"KERNBENCH_PROGRESS_EVERY": "5"}, False, ("lines", 5.0)),
        ({"KERNBENCH_PROGRESS_EVERY": "nan"}, False, ("lines", 30.0)),
        ({"KERNBENCH_PROGRESS_EVERY": "-1"}, False, ("lines", 30.0)),
        ({"KERNBENCH_PROGRESS": "1"}, False, ("bar", 30.0)),
        ({"KERNBENCH_PROGRESS": "0"}, True, ("off", 30.0)),
    ],
)
def test_progress_mode_follows_the_terminal_and_the_environment(
    monkeypatch, env, terminal, expected
):
    for key in ("KERNBENCH_PROGRESS", "KERNBENCH_PROGRESS_EVERY"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert progress_mode(terminal) == expected


def test_run_without_a_terminal_prints_progress_lines(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("KERNBENCH_PROGRESS", raising=False)
    monkeypatch.setenv("KERNBENCH_PROGRESS_EVERY", "3600")  # only the first and the last line
    spec = {
        "name": "lines",
        "datasets": ["twonorm"],
        "protocol": {"n_realisations": 2, "cv_folds": 1, "train_size": 40, "test_size": 40},
        "methods": {"AB": {"estimator": "adaboost", "params": {"n_estimators": 3}}},
    }
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(spec))
    res = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "r"), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if re.match(r"lines: \d+/2 cells", ln)]
    assert lines[0].startswith("lines: 0/2 cells (0 done, 0 failed), no cell finished yet")
    assert re.match(
        r"lines: 2/2 cells \(2 done, 0 failed\), [\d.]+ cells/min, .*ETA 0:00:00", lines[-1]
    )
    # the same run again: nothing to do, so no "0/0 cells" progress line, only the summary
    res = runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "r"), "--jobs", "1"])
    assert res.exit_code == 0, res.output
    assert not re.search(r"lines: \d+/\d+ cells", res.output), res.output
    assert "nothing to do" in res.output


def test_the_rate_is_written_in_plain_digits_at_any_speed():
    from kernbench.progress.live import _per_minute

    assert _per_minute(2, 0.033) == "3636"  # fast cells: no scientific notation
    assert _per_minute(12, 300.0) == "2.4"
    assert _per_minute(1, 1200.0) == "0.05"
