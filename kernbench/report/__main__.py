"""Paper-specific report steps that are not plot kinds: ``python -m kernbench.report PAPER ...``.

``exrm table3|equivalence RESULTS_DIR [--out F]`` (ExRM/DRM Table 3's averages and the
equivalence check) and ``multiboost_cw convergence|fig6 ...`` (iterations to a training error,
and Fig. 6 from the FCD benchmark's replay CSV). One entry for both, so that running a step does
not execute a module the package has already imported (each figure module registers its plot
kinds when :mod:`kernbench.report` is imported).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


def _entries() -> dict[str, Callable[[Sequence[str] | None], None]]:
    from kernbench.report import figures_exrm, figures_multiboost_cw

    return {"exrm": figures_exrm.main, "multiboost_cw": figures_multiboost_cw.main}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    entries = _entries()
    if not args or args[0] not in entries:
        names = ", ".join(entries)
        print(f"usage: python -m kernbench.report {{{names}}} ...", file=sys.stderr)
        return 2
    entries[args[0]](args[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
