"""The stop signals (SIGINT, SIGTERM) this process has received since its last run began.

The command line's handler (:mod:`kernbench.runner.lifecycle.stop`) records them here; every layer
that must tell a stop from a failure reads them here, without importing the runner (a plug-in file
interrupted while it loads is stopped, not broken).
"""

from __future__ import annotations

__all__ = ["record", "reset", "stop_signal"]

_received: list[int] = []


def record(signum: int) -> None:
    """Note a stop signal (called from a signal handler)."""
    _received.append(signum)


def stop_signal() -> int | None:
    """The number of the first stop signal received since the last :func:`reset`, or None."""
    return _received[0] if _received else None


def reset() -> None:
    """Forget any signal received (a new run starts)."""
    _received.clear()
