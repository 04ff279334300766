"""The experiment spec: YAML in, validated and typed objects out.

``types`` (the frozen dataclasses), ``load`` (reading and checking a spec),
``compose`` (what an extending spec takes from its base), ``checking`` (bounded YAML loading and
the checker whose errors name file, key path and value), ``keep`` (``keep:`` and ``remove:``),
``param_transforms`` (a ``take``'s named maps), ``shipped`` (the paper specs runnable by name),
``summary`` (the composed spec in one screen) and ``listing`` (long lists in messages, cut).
"""
