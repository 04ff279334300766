"""User-facing CLI behaviour: filters that say when they match nothing, the help examples."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from typer.testing import CliRunner

from kernbench.cli import app
from kernbench.cli.run import run

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "experiments" / "quickstart.yaml")
runner = CliRunner()


def test_run_help_example_selects_cells(tmp_path):
    example = next(
        line.split("Example:", 1)[1] for line in run.__doc__.splitlines() if "Example:" in line
    )
    args = shlex.split(example)[1:]  # drop "kernbench"
    assert args[:2] == ["run", "experiments/quickstart.yaml"]
    args[1] = QUICKSTART
    res = runner.invoke(app, [*args, "--dry-run", "--out", str(tmp_path)], terminal_width=200)
    assert res.exit_code == 0, res.output
    assert int(re.search(r": (\d+) cells", res.output).group(1)) > 0


def test_only_matching_nothing_exits_2_with_suggestion(tmp_path):
    res = runner.invoke(
        app, ["run", QUICKSTART, "--out", str(tmp_path), "--only", "dataset=ringnrom"]
    )
    assert res.exit_code == 2
    assert "dataset=ringnrom matches no dataset" in res.output
    assert "did you mean 'ringnorm'?" in res.output
    assert not list(tmp_path.iterdir())  # nothing was run


def test_only_accepts_an_estimator_name(tmp_path):
    res = runner.invoke(
        app,
        ["run", QUICKSTART, "--dry-run", "--only", "method=svm_stump", "--only", "realisation=0"],
        terminal_width=200,
    )
    assert res.exit_code == 0, res.output
    planned = res.output.split("\nthe spec (all ")[0]  # the cells; then the whole spec's summary
    assert planned.count("svm_stump") == 5 and "SVM-Perc" not in planned


def _catalogue_with_a_mirrored_file(tmp_path: Path) -> tuple[Path, Path]:
    """A user catalogue whose one file lives only in a mirror directory (not beside it)."""
    import hashlib

    mirror = tmp_path / "mirror"
    data = mirror / "my-set" / "d.csv"
    data.parent.mkdir(parents=True)
    data.write_text("".join(f"{i},{i % 3},{'a' if i % 2 else 'b'}\n" for i in range(20)))
    sha = hashlib.sha256(data.read_bytes()).hexdigest()
    entry = {
        "name": "my-set",
        "task": "binary",
        "d": 2,
        "classes": 2,
        "files": [{"path": "my-set/d.csv", "sha256": sha}],
        "recipe": {"kind": "table", "file": "my-set/d.csv", "label_column": -1, "positive": ["a"]},
    }
    catalogue = tmp_path / "cat" / "my_datasets.yaml"
    catalogue.parent.mkdir()
    catalogue.write_text(yaml.safe_dump({"datasets": [entry]}))
    return catalogue, mirror


def test_validate_several_specs_checks_data_offline(tmp_path, monkeypatch):
    catalogue, mirror = _catalogue_with_a_mirrored_file(tmp_path)
    monkeypatch.setenv("KERNBENCH_CATALOG", str(catalogue))
    monkeypatch.setenv("KERNBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    spec = tmp_path / "mine.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "mine",
                "datasets": ["my-set"],
                "protocol": {"n_realisations": 2, "cv_folds": 2},
                "methods": {"A": {"estimator": "adaboost"}},
            }
        )
    )
    res = runner.invoke(app, ["validate", QUICKSTART, str(spec)])
    assert res.exit_code == 2
    assert "quickstart.yaml: ok — 5 datasets × 5 realisations × 4 methods = 100 cells" in res.output
    text = " ".join(res.output.split())
    assert f"error: {spec}: `export KERNBENCH_MIRROR=DIR` (a local copy of the data)" in text
    assert "1 dataset(s) not in the cache" in text
    assert "run `kernbench data fetch my-set`" in res.output
    assert "add `--mirror DIR` to copy from a local copy" in res.output
    assert "Traceback" not in res.output
    assert runner.invoke(app, ["validate", "--no-data", str(spec)]).exit_code == 0
    monkeypatch.setenv("KERNBENCH_MIRROR", str(mirror))
    res = runner.invoke(app, ["validate", QUICKSTART, str(spec)])
    assert res.exit_code == 0, res.output
    assert res.output.count("data available") == 2


def test_table_on_a_missing_path_says_it_is_missing(tmp_path):
    missing = tmp_path / "no-such-results"
    res = runner.invoke(app, ["table", str(missing)])
    assert res.exit_code == 2 and f"{missing}: no such file or directory" in res.output
    res = runner.invoke(app, ["table", str(tmp_path)])  # exists, holds no store
    assert res.exit_code == 2 and f"no results store at or below {tmp_path}" in res.output


def test_table_on_a_shipped_specs_alias_names_the_directory_its_results_went_to(tmp_path):
    res = runner.invoke(
        app, ["table", str(tmp_path / "results" / "cgens-table1")], terminal_width=300
    )
    assert res.exit_code == 2
    assert f"`kernbench run cgens-table1` writes its results to {tmp_path}/results/uci_stumps/" in (
        " ".join(res.output.split())
    )
    res = runner.invoke(app, ["table", str(tmp_path / "results" / "uci_stumps")])
    assert res.exit_code == 2 and "writes its results" not in res.output  # the right name: no hint


def test_version_option_prints_the_installed_version():
    import kernbench

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"kernbench {kernbench.__version__}"


def test_option_defaults_in_brackets_survive_the_help_markup():
    res = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    line = next(ln for ln in res.output.splitlines() if "--out" in ln)
    assert "Results directory. [default: (results/<name>)]" in line
    res = runner.invoke(app, ["table", "--help"], env={"COLUMNS": "200"})
    assert "[default: (the spec's table.value)]" in res.output
    import typer.main

    for info in [*app.registered_commands]:  # a bracket in a help text is eaten as Rich markup
        for param in (
            typer.main.get_command(app).commands[info.name or info.callback.__name__].params
        ):
            assert "[" not in (getattr(param, "help", None) or ""), (info.name, param.name)


def test_run_announces_each_download_before_it_starts(tmp_path, monkeypatch):
    """A dataset missing from cache and mirror is fetched with a line saying from where to where."""
    import hashlib
    import http.server
    import threading

    body = "".join(f"{i},{(i * 7) % 5},{'a' if i % 2 else 'b'}\n" for i in range(40)).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/far.csv"
    entry = {
        "name": "far-set",
        "task": "binary",
        "d": 2,
        "classes": 2,
        "files": [
            {
                "path": "far-set/far.csv",
                "sha256": hashlib.sha256(body).hexdigest(),
                "sources": [{"url": url}],
            }
        ],
        "recipe": {
            "kind": "table",
            "file": "far-set/far.csv",
            "label_column": -1,
            "positive": ["a"],
        },
    }
    from kernbench.datasets import catalog

    catalog.register_entry(entry, origin="test")  # a user catalogue takes https:// sources only
    spec = {
        "name": "far",
        "datasets": ["far-set"],
        "protocol": {"n_realisations": 1, "cv_folds": 1, "train_size": 0.5},
        "methods": {"AB": {"estimator": "adaboost", "params": {"n_estimators": 3}}},
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.setenv("KERNBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    monkeypatch.delenv("KERNBENCH_OFFLINE", raising=False)
    try:
        res = runner.invoke(
            app, ["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "r"), "--jobs", "1"]
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
        catalog._REGISTERED.clear()
    assert res.exit_code == 0, res.output
    assert f"downloading far-set from {url} into {tmp_path / 'cache' / 'far-set'}, 1/1" in (
        res.output
    )


# -- #48 part 5: the small things that cost a newcomer minutes -----------------------------------
def test_a_method_typo_says_did_you_mean_once(tmp_path):
    spec = tmp_path / "typo.yaml"
    spec.write_text(yaml.safe_dump({"name": "t", "datasets": ["iris"], "methods": {
        "A": {"estimator": "adabost"}}}))  # fmt: skip
    res = runner.invoke(app, ["validate", "--no-data", str(spec)])
    assert res.exit_code == 2 and res.output.count("did you mean") == 1, res.output
    assert "'adaboost'" in res.output


def test_plot_kind_list_needs_no_path_and_a_kind_typo_gets_a_suggestion():
    from kernbench.report import PLOT_KINDS

    res = runner.invoke(app, ["plot", "--kind", "list"])  # as `kernbench --help` writes it
    assert res.exit_code == 0, res.output
    assert [line.split()[0] for line in res.output.splitlines()] == sorted(PLOT_KINDS)
    res = runner.invoke(app, ["plot", "results/x", "--kind", "cdd"])
    assert res.exit_code == 2 and "unknown kind 'cdd'; did you mean 'cd'?" in res.output
    res = runner.invoke(app, ["plot", "--kind", "cd"])
    assert res.exit_code == 2 and "PATH: missing" in res.output


def test_methods_describes_a_class_of_a_plug_in_file(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "my_method.py").write_text(
        "from sklearn.base import BaseEstimator, ClassifierMixin\n\n\n"
        "class PolyLogReg(ClassifierMixin, BaseEstimator):\n"
        '    """Logistic regression on polynomial features.\n\n'
        "    Parameters\n    ----------\n    degree : int\n        Degree of the features.\n"
        '    """\n\n'
        "    def __init__(self, degree=2):\n        self.degree = degree\n"
    )
    monkeypatch.chdir(tmp_path)
    for name in ("sub/my_method.py:PolyLogReg", "sub/my_method:PolyLogReg"):
        res = runner.invoke(app, ["methods", name], terminal_width=200)
        assert res.exit_code == 0, res.output
        assert "my_method.py:PolyLogReg (plug-in file)" in res.output
        assert "Logistic regression on polynomial features." in res.output
        assert re.search(r"degree\s+2\s+-\s+Degree of the features\.", res.output)
    (tmp_path / "sub" / "bare.py").write_text(
        "from sklearn.base import BaseEstimator, ClassifierMixin\n\n\n"
        "class Bare(ClassifierMixin, BaseEstimator):\n    pass\n"
    )
    res = runner.invoke(app, ["methods", "sub/bare.py:Bare"], terminal_width=200)
    assert res.exit_code == 0 and "(no docstring)" in res.output, res.output
    assert "Mixin class" not in res.output  # not scikit-learn's ClassifierMixin's docstring
    res = runner.invoke(app, ["methods", "sub/my_method.py:Nope"])
    assert res.exit_code == 2 and "has no attribute 'Nope'" in res.output


def test_no_flag_shows_a_bool_placeholder_in_help():
    import typer.main

    command = typer.main.get_command(app)
    verbs = [[]] + [[name] for name in command.commands]
    for verb in verbs:
        res = runner.invoke(app, [*verb, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0 and "--help" in res.output, verb
        assert "<bool>" not in res.output, verb
    res = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert "<int range>" in res.output  # options that take a value keep their type


def test_an_extending_spec_is_titled_by_its_own_name_not_the_bases(tmp_path):
    from kernbench.specs.load import load_spec

    spec = tmp_path / "mine.yaml"
    spec.write_text(yaml.safe_dump({"extends": "grand", "name": "mine"}))
    assert load_spec(spec, check_datasets=False).title == "mine"
    spec.write_text(yaml.safe_dump({"extends": "grand", "name": "mine", "title": "Mine"}))
    assert load_spec(spec, check_datasets=False).title == "Mine"


def test_max_cells_counts_the_cells_this_run_selects_too(tmp_path):
    args = ["run", QUICKSTART, "--max-cells", "1", "--realisations", "1", "--out", str(tmp_path)]
    for extra in ([], ["--dry-run"]):
        res = runner.invoke(app, [*args, *extra])
        text = " ".join(res.output.split())
        assert res.exit_code == 2, text
        assert "the spec plans 100 cells (20 of them selected by --realisations/--only" in text
    assert not list(tmp_path.iterdir())


def test_command_line_errors_are_one_line_and_exit_2(tmp_path):
    # click's own errors (an unknown verb or option, a value out of its choices or of the wrong
    # type, a missing argument), like the verbs' errors: one line on stderr, exit 2, no box
    spec = tmp_path / "s.yaml"
    cases = [
        (["run", str(spec), "--backend", "foo"], "kernbench run: Invalid value for '--backend'"),
        (["run", str(spec), "--nonsense"], "kernbench run: No such option: --nonsense"),
        (["run", str(spec), "--jobs", "abc"], "Invalid value for '--jobs'"),
        (["run"], "kernbench run: Missing argument"),
        (["nosuchverb"], "kernbench: No such command 'nosuchverb'"),
        (["data", "nosuch"], "kernbench data: No such command 'nosuch'"),
    ]
    for args, needle in cases:
        res = CliRunner().invoke(app, args, prog_name="kernbench")
        assert res.exit_code == 2, (args, res.output)
        assert res.stderr.startswith("error: ") and needle in res.stderr, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and "╭" not in res.stderr, res.stderr
        assert "--help`)" in res.stderr  # where to look next


def test_no_arguments_print_the_help():
    res = CliRunner().invoke(app, [], prog_name="kernbench")
    assert res.exit_code == 2 and "Usage: kernbench" in res.output and "run" in res.output
