"""``python -m kernbench`` = the ``kernbench`` command."""

from kernbench.cli import main

main()
