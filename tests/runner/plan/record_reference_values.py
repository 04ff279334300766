"""Record the reference fits that ``test_revisions.py`` compares against.

    python tests/runner/plan/record_reference_values.py            # every method
    python tests/runner/plan/record_reference_values.py cgens drm  # only these

Run it after declaring a change of a method's numerics in ``kernbench/runner/plan/revisions.py``;
the file keeps each method's values with 17 significant digits (exact float64 round trip) and the
versions they were recorded with.
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

VALUES = Path(__file__).with_name("reference_values.json")
_LIBRARIES = ("numpy", "scipy", "scikit-learn", "numba", "highspy", "cvxpy")


def main(names: list[str]) -> None:
    from kernbench.runner.plan.revisions import REVISIONS, reference_values

    recorded = json.loads(VALUES.read_text()) if VALUES.exists() else {"methods": {}}
    for name in names or sorted(REVISIONS):
        recorded["methods"][name] = [float(v) for v in reference_values(name)]
    recorded["methods"] = dict(sorted(recorded["methods"].items()))
    recorded["recorded_with"] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        **{lib: metadata.version(lib) for lib in _LIBRARIES},
    }
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in recorded["methods"].items()]
    VALUES.write_text(
        '{\n "recorded_with": '
        + json.dumps(recorded["recorded_with"])
        + ',\n "methods": {\n'
        + ",\n".join(lines)
        + "\n }\n}\n"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
