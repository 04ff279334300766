"""The command line's state lives in Typer's context, made fresh per command: ``--debug`` in one
invocation changes nothing in the next, and the error guard reads it from there."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernbench.cli import app

CLI = Path(__file__).resolve().parents[2] / "kernbench" / "cli"

runner = CliRunner()


def test_debug_is_per_invocation(tmp_path):
    missing = str(tmp_path / "none")
    with_debug = runner.invoke(app, ["--debug", "status", missing])
    assert with_debug.exit_code != 2 and with_debug.exception is not None  # raised, traceback
    plain = runner.invoke(app, ["status", missing])
    assert plain.exit_code == 2 and plain.stderr.startswith("error:"), plain.output
    again = runner.invoke(app, ["--debug", "status", missing])
    assert again.exception is not None and again.exit_code != 2


def test_no_module_of_the_cli_holds_mutable_state():
    """No module-level dict, list or set assigned in kernbench/cli (state travels in ctx.obj)."""
    found = []
    for path in CLI.glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
                node.value, ast.Dict | ast.List | ast.Set
            ):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, found


def test_backend_choices_are_shown():
    res = runner.invoke(app, ["run", "--help"])
    assert "local|dask" in res.output


def test_the_entry_point_loads_no_typer_before_the_stop_handler():
    """``kernbench.cli`` itself is light: ``main()`` installs the stop handler before Typer and
    the verbs' modules are imported, so a signal during start-up is a clean stop."""
    import subprocess
    import sys

    code = (
        "import sys, kernbench.cli; print(sorted(m for m in ('typer', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


#: SIGTERM while ``main()`` imports the command line (its handler already installed)
STOPPED_WHILE_LOADING = """
import builtins, os, signal, sys
import kernbench.cli as cli
real_import = builtins.__import__

def stop_on_the_app(name, *args, **kwargs):
    if name == "kernbench.cli.application":
        os.kill(os.getpid(), signal.SIGTERM)
    return real_import(name, *args, **kwargs)

builtins.__import__ = stop_on_the_app
sys.argv = ["kernbench", "specs"]
cli.main()
"""


#: SIGTERM while Typer builds the command from the verbs (before any verb's guard runs)
STOPPED_WHILE_BUILDING = """
import os, signal, sys, time
import typer.main
real_get_command = typer.main.get_command

def slow_get_command(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(1)
    return real_get_command(*args, **kwargs)

typer.main.get_command = slow_get_command
import kernbench.cli as cli
sys.argv = ["kernbench", "specs"]
cli.main()
"""


@pytest.mark.parametrize("script", [STOPPED_WHILE_LOADING, STOPPED_WHILE_BUILDING])
def test_a_stop_while_the_command_line_loads_exits_143_with_one_line(script):
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 143, (done.returncode, done.stderr)
    assert done.stderr.strip() == "interrupted", done.stderr
