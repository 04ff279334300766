"""The experiment spec: YAML in, validated and typed objects out.

``types`` (the frozen dataclasses; the split protocol and the plug-in sources, which enter a cell's
identity, are defined in :mod:`kernbench.cells.protocol` and :mod:`kernbench.cells.sources`, and
re-exported here), ``load`` (reading and checking a spec), ``compose`` (what an extending spec
takes from its base), ``keep`` (``keep:`` and ``remove:``), ``param_transforms`` (a ``take``'s
named maps), ``shipped`` (the paper specs runnable by name) and ``summary`` (the composed spec in
one screen). The checker shared with the user catalogues is :mod:`kernbench.files.checking`.
"""
