"""Every ``kernbench`` command in the code blocks of the README and the docs is one the command
line accepts as written (its verb, options and arguments parsed by the real parser), and those
that need no network, no results store and no long computation run to exit 0 here:
``--help``, ``methods``, ``specs``, ``plot --kind list``, ``data list``/``info`` and
``validate`` or ``run --dry-run`` of a spec file the repository has."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
import typer.main
import yaml
from typer.testing import CliRunner

from kernbench.cli import app

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
_SHELL = ("", "bash", "console", "sh", "shell", "text")
_INLINE = re.compile(r"`(kernbench [^`\n]+)`")
#: words of the docs that stand for a value the reader supplies
_PLACEHOLDER = re.compile(
    r"^(?:[A-Z](?:[A-Z_]*[A-Z])?|\.\.\.|<.*>|\[.*\](?:\.\.\.)?|\{.*\})$|[A-Z]{3,}[=/]|[=/][A-Z]{3,}$"
)


def documented_commands() -> list[tuple[str, list[str], bool]]:
    """``(where, argv after "kernbench")`` of each command line in the pages' code blocks and of
    each inline code span that starts with ``kernbench``."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        blocks = [(b, True) for lang, b in _BLOCK.findall(text) if lang in _SHELL]
        spans = [(b, False) for b in _INLINE.findall(_BLOCK.sub("", text))]
        found += _commands(f"{page.relative_to(ROOT)}", blocks + spans)
    return found


def help_commands() -> list[tuple[str, list[str], bool]]:
    """The ``kernbench ...`` spans of the command line's own help texts (what --help prints)."""
    spans = []
    stack = [("kernbench", typer.main.get_command(app))]
    while stack:
        name, command = stack.pop()
        texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
        # a bare verb is a mention (`kernbench run`); with options, an instruction to run
        spans += [(s, len(s.split()) > 2) for text in texts for s in _INLINE.findall(text)]
        stack += [(f"{name} {k}", c) for k, c in getattr(command, "commands", {}).items()]
    return _commands("--help", spans)


def _commands(where: str, blocks: list[tuple[str, bool]]) -> list[tuple[str, list[str], bool]]:
    """The command lines of ``blocks`` (text, whether a missing argument is an error there)."""
    found = []
    for block, strict in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            for part in re.split(r"\s*(?:&&|;|\|\|)\s*", line):
                part = re.split(r"\s+#", part, maxsplit=1)[0].strip()  # a trailing comment
                if not part.startswith("kernbench ") or "\\|" in part:  # not `a \| b`
                    continue
                try:
                    argv = shlex.split(part)[1:]
                except ValueError:  # an unbalanced quote: not a command line
                    continue
                if "|" in argv or ">" in argv:
                    argv = argv[: min(argv.index(x) for x in ("|", ">") if x in argv)]
                found.append((f"{where}: {part}", argv, strict))
    return found


COMMANDS = documented_commands() + help_commands()


def test_the_docs_have_commands_to_check():
    assert len(COMMANDS) > 50
    assert ("plot", "--kind", "list") in {
        tuple(a) for w, a, _ in COMMANDS if w.startswith("--help")
    }


def parse(argv: list[str]) -> str | None:
    """Parse ``argv`` as ``kernbench`` would, down to the verb's own options, and run nothing:
    the parser's message when it refuses them, else None. (Typer vendors its own copy of click,
    so the parser's classes are told by what they do, not imported.)"""
    command = typer.main.get_command(app)
    try:
        ctx = command.make_context("kernbench", list(argv), resilient_parsing=False)
        while hasattr(command, "resolve_command"):  # a group: its verb next
            args = [*getattr(ctx, "_protected_args", ()), *ctx.args]
            if not args:
                return None
            name, command, rest = command.resolve_command(ctx, args)
            ctx = command.make_context(name, rest, parent=ctx, resilient_parsing=False)
    except SystemExit:
        return None
    except Exception as exc:
        if type(exc).__name__ == "Exit" and not getattr(exc, "exit_code", 0):  # --help
            return None
        if hasattr(exc, "format_message"):  # a usage error: missing argument, unknown option
            return exc.format_message() or None  # (a group given no verb: its help, no error)
        raise
    return None


#: the commands written out in full (a placeholder such as SPEC or DIR stands for the reader's)
CONCRETE = [c for c in COMMANDS if not any(_PLACEHOLDER.search(a) for a in c[1])]


@pytest.mark.parametrize(("where", "argv", "strict"), CONCRETE, ids=[c[0] for c in CONCRETE])
def test_each_documented_command_parses(where, argv, strict):
    """A code block's command, or one the help names, parses whole; a command named in a
    sentence of the docs (`kernbench table`, `kernbench run --jobs 2`) may leave its arguments
    to the sentence, but its verb and options are real."""
    refused = parse(argv)
    if refused is not None and not strict and refused.startswith("Missing argument"):
        return
    assert refused is None, f"{where}: {refused}"


def test_the_parse_check_sees_a_missing_argument():
    assert "Missing argument" in parse(["table"])
    assert "No such option" in parse(["run", "x.yaml", "--no-such-option"])
    assert parse(["--help"]) is None and parse(["run", "x.yaml", "--jobs", "2"]) is None


def _runs_here(argv: list[str]) -> bool:
    """A command that needs no network, store or long run, whose files the repository has."""
    if any(_PLACEHOLDER.search(a) for a in argv):
        return False
    verb = argv[0] if argv else ""
    if "--help" in argv or argv == ["specs"] or argv == ["methods"]:
        return True
    if verb == "methods":  # a method kernbench registers (a plug-in's is not installed here)
        from kernbench.methods import registry

        return len(argv) == 2 and argv[1] in registry()
    if verb == "plot":
        return argv[1:] == ["--kind", "list"]
    if verb == "data":
        return argv[1:] == ["list"] or (argv[1:2] == ["info"] and len(argv) == 3)
    files = [a for a in argv[1:] if a.endswith((".yaml", ".yml"))]
    if verb == "validate" or (verb == "run" and "--dry-run" in argv):
        return bool(files) and all((ROOT / f).is_file() for f in files)
    return False


RUNNABLE = [(w, a) for w, a, _ in COMMANDS if _runs_here(a)]


def test_some_documented_commands_run_here():
    assert {a[0] for _, a in RUNNABLE} >= {"methods", "specs", "plot", "data"}


@pytest.mark.parametrize(("where", "argv"), RUNNABLE, ids=[w for w, _ in RUNNABLE])
def test_documented_commands_that_need_no_network_run_as_written(where, argv, tmp_path):
    mirror = os.environ.get("KERNBENCH_MIRROR")
    if argv[0] == "validate" and not (mirror and Path(mirror).is_dir()):
        argv = [*argv, "--no-data"]  # the data check needs the mirror (or a download)
    if argv[0] == "run":
        argv = [*argv, "--out", str(tmp_path / "results")]
    res = CliRunner().invoke(app, argv, terminal_width=200, catch_exceptions=False)
    assert res.exit_code == 0, f"{where}: exit {res.exit_code}\n{res.output[-2000:]}"


def test_every_plot_kind_is_listed_where_the_kinds_are_listed():
    """The README's list of kinds and the kinds table of docs/tables-and-figures.md name every
    kind ``kernbench plot --kind list`` prints (the README named 6 of 13, not the CD diagram)."""
    from kernbench.report import PLOT_KINDS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if "`--kind list` shows the kinds" in x)
    assert set(re.findall(r"`(\w+)`", line.split("shows the kinds", 1)[1])) == set(PLOT_KINDS)
    page = (ROOT / "docs" / "tables-and-figures.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", page.split("| kind | what it draws |", 1)[1], re.M)
    assert set(rows) == set(PLOT_KINDS)


def test_docs_python_examples_use_public_scikit_learn_api_only():
    """No example imports scikit-learn's private modules (``sklearn.utils._param_validation``)."""
    private = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S):
            private += [
                f"{page.relative_to(ROOT)}: {line.strip()}"
                for line in block.splitlines()
                if re.search(r"\b(?:from|import)\s+sklearn\S*\._", line)
            ]
    assert not private, private


def test_the_plug_in_example_of_own_method_validates_as_written(tmp_path):
    page = (ROOT / "docs" / "own-method.md").read_text(encoding="utf-8")
    code = re.search(r"`my_method.py`:\n\n```python\n(.*?)^```", page, re.M | re.S).group(1)
    (tmp_path / "my_method.py").write_text(code)
    spec = {
        "name": "mine",
        "datasets": ["iris"],
        "protocol": {"n_realisations": 1, "cv_folds": 2},
        "plugins": ["my_method.py"],
        "methods": {"C": {"estimator": "shrunk_centroid", "grid": {"shrink": [0.0, 0.5, 0.9]}}},
    }
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(spec))
    res = CliRunner().invoke(app, ["validate", "--no-data", str(path)])
    assert res.exit_code == 0, res.output
    spec["methods"]["C"]["grid"]["shrink"] = [0.5, "x"]
    path.write_text(yaml.safe_dump(spec))
    res = CliRunner().invoke(app, ["validate", "--no-data", str(path)])
    assert res.exit_code == 2 and "methods.C.grid.shrink[1]" in res.output, res.output
