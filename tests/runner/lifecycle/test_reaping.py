"""A worker ends with its parent; a stopped run's processes are found and ended."""

from __future__ import annotations

import subprocess
import sys
import time

from kernbench.store.lock import pid_alive

#: a parent that starts a child watching it, prints the child's pid, then waits to be killed
PARENT = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", '''
import time
from kernbench.runner.lifecycle.reaping import watch_parent
watch_parent()
print("watching", flush=True)
time.sleep(600)
'''], stdout=subprocess.PIPE, text=True)
assert child.stdout.readline().strip() == "watching"
print(child.pid, flush=True)
time.sleep(600)
"""


def _wait_dead(pid: int, limit_s: float = 60.0) -> bool:
    """Wait (bounded: only a hang exceeds it) until ``pid`` has ended or is a zombie."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_worker_ends_when_its_parent_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert pid_alive(child)
        parent.kill()
        parent.wait()
        assert _wait_dead(child)
    finally:
        parent.kill()
        parent.communicate()


#: a process that starts a child with a grandchild, prints their pids, ends them, and exits
STOPPED = """
import subprocess, sys, time
from kernbench.runner.lifecycle.reaping import descendants, end_descendants
GRANDCHILD = "import subprocess; subprocess.run(['sleep', '600'])"
child = subprocess.Popen([sys.executable, "-c", GRANDCHILD])
deadline = time.monotonic() + 60
while len(descendants()) < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
found = descendants()
print(" ".join(map(str, found)), flush=True)
assert found[0] == child.pid  # parents first
print(end_descendants(), flush=True)
"""


def test_a_stopped_process_finds_and_ends_every_process_below_it():
    done = subprocess.run(
        [sys.executable, "-c", STOPPED], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    pids, sent = done.stdout.splitlines()
    found = [int(p) for p in pids.split()]
    assert len(found) == 2 and int(sent) == 2  # the child and its grandchild
    assert all(_wait_dead(pid) for pid in found)
