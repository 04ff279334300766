"""User dataset catalogues: YAML files of entries in the package catalogue's format, validated
like a spec (every error names the file and the key path) before any entry is used.

A catalogue is named by a spec (``catalog: my_datasets.yaml``, relative to the spec) or by
``$KERNBENCH_CATALOG``; ``files[].path`` is looked up beside the catalogue file first, then in the
cache and mirror. :mod:`kernbench.datasets.catalog` reads these files; it is kept apart from
:mod:`kernbench.datasets.user` (data files named in a spec), which builds on the catalogue.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kernbench.errors import CatalogueError, SpecError
from kernbench.files.checking import _NAME_RE, _Checker, _show, load_yaml

#: environment variable naming a user catalogue file
CATALOG_ENV = "KERNBENCH_CATALOG"

#: keys every catalogue entry must have
REQUIRED_KEYS = ("name", "task", "d", "classes", "recipe")
#: every key an entry may have (the optional ones default to "-" or empty)
ENTRY_KEYS = REQUIRED_KEYS + (
    "title",
    "aliases",
    "n",
    "class_counts",
    "source",
    "url",
    "citation",
    "description",
    "labels",
    "encoding",
    "missing",
    "files",
    "requires",
    "options",
    "predefined",
    "substitution",
    "papers",
    "mirrored",
)
_TEXT_KEYS = ("title", "source", "url", "citation", "description", "labels", "encoding", "missing")
_FILE_KEYS = {"path", "sha256", "bytes", "format", "content_sha256", "sources", "provenance"}
_FILE_FORMATS = ("uci-csv", "keel-dat", "libsvm", "ida-asc")
_SOURCE_KEYS = {"url", "decompressed", "member", "archive_sha256"}
_OPTION_KEYS = {"type", "default", "min", "max", "choices", "doc"}
_OPTION_TYPES = ("int", "float", "bool", "str")
#: recipe kind -> (required keys, optional keys)
_RECIPES: dict[str, tuple[set[str], set[str]]] = {
    "table": (
        {"label_column"},
        {
            "file",
            "files",
            "delimiter",
            "positive",
            "drop_columns",
            "missing",
            "value_map",
            "split_column",
            "skip_lines",
        },
    ),
    "libsvm": (set(), {"file", "files", "n_features", "positive"}),
    "generator": ({"function"}, set()),
    "sklearn": ({"loader"}, set()),
    "rescaled": ({"base"}, set()),
    "ida_pool": ({"stem"}, set()),
    "german": (set(), set()),
    "flare_solar": ({"file"}, set()),
    "splice": ({"file"}, set()),
}
#: the recipe kinds that read real-valued targets (a regression task)
_REGRESSION_RECIPES = ("table", "libsvm", "generator", "sklearn")
#: predefined kind -> (required keys, optional keys)
_PREDEFINED: dict[str, tuple[set[str], set[str]]] = {
    "ida": ({"stem", "present", "total"}, {"sizes"}),
    "alias": ({"dataset"}, set()),
    "fixed": ({"sizes"}, set()),
    "substitute": ({"sizes"}, {"total", "standardize", "note"}),
}
_SHA_RE = re.compile(r"^[0-9a-f]{64}$")


class _CatalogueChecker(_Checker):
    def fail(self, path: str, message: str) -> CatalogueError:
        return CatalogueError(self.file, path, message)


# -- catalogue entries ---------------------------------------------------------------------------
def validate_entry(
    ck: _Checker, raw: Any, path: str, base_dir: Path | None = None
) -> dict[str, Any]:
    """Check one catalogue entry; return it with ``files[].path`` found beside the catalogue
    made absolute (and the recipe's file names with them).

    Parameters
    ----------
    ck : checker
        Names the file in errors (a spec's or a catalogue's).
    raw : object
        The entry as loaded from YAML.
    path : str
        Its key path (``datasets[3]``).
    base_dir : Path, optional
        The catalogue file's directory; None for the package catalogue (paths are cache paths).
    """
    e = ck.mapping(raw, path, "a mapping (a catalogue entry)")
    ck.known_keys(e, set(ENTRY_KEYS), path)
    for key in REQUIRED_KEYS:
        if key not in e:
            raise ck.fail(
                f"{path}.{key}",
                f"missing required key {key!r} (required: {', '.join(REQUIRED_KEYS)})",
            )
    e = dict(e)
    ck.string(e["name"], f"{path}.name", pattern=_NAME_RE)
    task = ck.choice(e["task"], f"{path}.task", ("binary", "multiclass", "regression"))
    ck.integer(e["d"], f"{path}.d", low=1)
    classes = ck.integer(e["classes"], f"{path}.classes", low=0 if task == "regression" else 2)
    if task == "regression" and classes != 0:
        raise ck.fail(f"{path}.classes", f"a regression task has 0 classes, got {classes}")
    if task == "binary" and classes != 2:
        raise ck.fail(f"{path}.classes", f"a binary task has 2 classes, got {classes}")
    if e.get("n") is not None:
        ck.integer(e["n"], f"{path}.n", low=1)
    for key in _TEXT_KEYS:
        if e.get(key) is not None and not isinstance(e[key], str):
            raise ck.fail(f"{path}.{key}", f"expected a string, got {_show(e[key])}")
    for key in ("aliases", "requires", "papers"):
        values = e.get(key) or []
        if not isinstance(values, list):
            raise ck.fail(f"{path}.{key}", f"expected a list of strings, got {_show(values)}")
        pattern = None if key == "papers" else _NAME_RE
        for j, v in enumerate(values):
            ck.string(v, f"{path}.{key}[{j}]", pattern=pattern)
    if e.get("class_counts") is not None:
        counts = ck.mapping(e["class_counts"], f"{path}.class_counts")
        for label, count in counts.items():
            ck.integer(count, f"{path}.class_counts.{label}", low=0)
    if "mirrored" in e and not isinstance(e["mirrored"], bool):
        raise ck.fail(f"{path}.mirrored", f"expected true or false, got {_show(e['mirrored'])}")
    renamed = _check_files(ck, e, path, base_dir)
    _check_recipe(ck, e, path, renamed)
    _check_options(ck, e, path)
    _check_predefined(ck, e, path)
    return e


def _check_files(ck: _Checker, e: dict[str, Any], path: str, base_dir: Path | None) -> dict:
    files = e.get("files") or []
    if not isinstance(files, list):
        raise ck.fail(f"{path}.files", f"expected a list of files, got {_show(files)}")
    renamed: dict[str, str] = {}
    out = []
    for j, item in enumerate(files):
        fpath = f"{path}.files[{j}]"
        f = dict(ck.mapping(item, fpath, "a mapping {path, sha256, ...}"))
        ck.known_keys(f, _FILE_KEYS, fpath)
        # a file outside the mirror may lack a checksum where none is published
        required = ("path",) if e.get("mirrored") is False else ("path", "sha256")
        for key in required:
            if key not in f:
                raise ck.fail(f"{fpath}.{key}", f"missing required key {key!r}")
        rel = ck.string(f["path"], f"{fpath}.path")
        parts = Path(rel).parts
        if Path(rel).is_absolute() or ".." in parts:
            raise ck.fail(f"{fpath}.path", f"expected a relative path without '..', got {rel!r}")
        for key in ("sha256", "content_sha256"):
            if key in f and (not isinstance(f[key], str) or not _SHA_RE.match(f[key])):
                raise ck.fail(f"{fpath}.{key}", f"expected 64 hex digits, got {_show(f[key])}")
        if f.get("format") is not None:
            ck.choice(f["format"], f"{fpath}.format", _FILE_FORMATS)
        if f.get("bytes") is not None:
            ck.integer(f["bytes"], f"{fpath}.bytes", low=0)
        sources = f.get("sources") or []
        if not isinstance(sources, list):
            raise ck.fail(f"{fpath}.sources", f"expected a list, got {_show(sources)}")
        for k, src in enumerate(sources):
            spath = f"{fpath}.sources[{k}]"
            s = ck.mapping(src, spath, "a mapping {url, ...}")
            ck.known_keys(s, _SOURCE_KEYS, spath)
            url = ck.string(s.get("url"), f"{spath}.url")
            if not url.startswith("https://"):
                raise ck.fail(f"{spath}.url", f"expected an https:// URL, got {url!r}")
        if base_dir is not None and (base_dir / rel).is_file():  # beside the catalogue file
            renamed[rel] = f["path"] = str((base_dir / rel).resolve())
        out.append(f)
    e["files"] = out
    return renamed


def _check_recipe(ck: _Checker, e: dict[str, Any], path: str, renamed: dict[str, str]) -> None:
    rpath = f"{path}.recipe"
    r = dict(ck.mapping(e["recipe"], rpath, "a mapping {kind, ...}"))
    kind = ck.choice(r.get("kind"), f"{rpath}.kind", tuple(_RECIPES))
    required, optional = _RECIPES[kind]
    ck.known_keys(r, required | optional | {"kind"}, rpath)
    for key in sorted(required):
        if key not in r:
            raise ck.fail(f"{rpath}.{key}", f"missing required key {key!r} for kind {kind!r}")
    if kind in ("table", "libsvm") and ("file" in r) == ("files" in r):
        raise ck.fail(rpath, "expected exactly one of 'file' or 'files'")
    if kind == "libsvm" and "files" in r and len(r["files"]) != 2:
        raise ck.fail(f"{rpath}.files", "expected two files: the training part and the test part")
    if kind == "table":
        ck.integer(r["label_column"], f"{rpath}.label_column")
        if e["task"] == "binary" and not r.get("positive"):
            raise ck.fail(f"{rpath}.positive", "a binary task needs the raw labels of the +1 class")
        for key in ("drop_columns",):
            for j, v in enumerate(r.get(key) or []):
                ck.integer(v, f"{rpath}.{key}[{j}]")
        if r.get("missing") is not None:
            ck.choice(r["missing"], f"{rpath}.missing", ("drop_rows",))
        if r.get("delimiter") is not None:
            ck.string(r["delimiter"], f"{rpath}.delimiter")
    if e["task"] == "regression" and kind not in _REGRESSION_RECIPES:
        raise ck.fail(
            f"{rpath}.kind",
            f"a regression task reads its real-valued targets with a "
            f"{' or '.join(repr(k) for k in _REGRESSION_RECIPES)} recipe, not {kind!r}",
        )
    if e["task"] == "regression" and r.get("positive") is not None:
        raise ck.fail(f"{rpath}.positive", "a regression task has no +1 class: remove 'positive'")
    if r.get("positive") is not None:
        positive = r["positive"]
        if not isinstance(positive, list) or not positive:
            raise ck.fail(f"{rpath}.positive", f"expected a list of labels, got {_show(positive)}")
        for j, v in enumerate(positive):
            if not isinstance(v, str | int | float) or isinstance(v, bool):
                raise ck.fail(f"{rpath}.positive[{j}]", f"expected a label, got {_show(v)}")
    if kind == "generator":
        from kernbench.datasets import generators

        if not callable(getattr(generators, str(r["function"]), None)):
            raise ck.fail(f"{rpath}.function", f"no generator {r['function']!r}")
    listed = {f["path"] for f in e["files"]} | set(renamed)
    names = [("file", r["file"])] if "file" in r else []
    names += [(f"files[{j}]", v) for j, v in enumerate(r.get("files") or [])]
    for key, name in names:
        ck.string(name, f"{rpath}.{key}")
        if name not in listed and not e.get("requires"):
            raise ck.fail(f"{rpath}.{key}", f"{name!r} is not one of the entry's files[].path")
    if "file" in r:
        r["file"] = renamed.get(r["file"], r["file"])
    if "files" in r:
        r["files"] = [renamed.get(v, v) for v in r["files"]]
    e["recipe"] = r


def _check_options(ck: _Checker, e: dict[str, Any], path: str) -> None:
    options = ck.mapping(e.get("options") or {}, f"{path}.options")
    for key, spec in options.items():
        opath = f"{path}.options.{key}"
        o = ck.mapping(spec, opath, "a mapping {type, default, doc, ...}")
        ck.known_keys(o, _OPTION_KEYS, opath)
        if "type" not in o:
            raise ck.fail(f"{opath}.type", "missing required key 'type'")
        ck.choice(o["type"], f"{opath}.type", _OPTION_TYPES)


def _check_predefined(ck: _Checker, e: dict[str, Any], path: str) -> None:
    if e.get("predefined") is None:
        return
    ppath = f"{path}.predefined"
    p = ck.mapping(e["predefined"], ppath, "a mapping {kind, ...}")
    kind = ck.choice(p.get("kind"), f"{ppath}.kind", tuple(_PREDEFINED))
    required, optional = _PREDEFINED[kind]
    ck.known_keys(p, required | optional | {"kind"}, ppath)
    for key in sorted(required):
        if key not in p:
            raise ck.fail(f"{ppath}.{key}", f"missing required key {key!r} for kind {kind!r}")
    if "sizes" in p:
        sizes = p["sizes"]
        if not isinstance(sizes, list) or len(sizes) != 2:
            raise ck.fail(f"{ppath}.sizes", f"expected [n_train, n_test], got {_show(sizes)}")
        for j, v in enumerate(sizes):
            ck.integer(v, f"{ppath}.sizes[{j}]", low=1)


def load_catalogue_file(file: str | Path) -> list[dict[str, Any]]:
    """The validated entries of a user catalogue file (``datasets:`` list, optional ``version``).

    Raises
    ------
    CatalogueError
        Naming the file and the key path of the first problem.
    """
    file = str(file)
    ck = _CatalogueChecker(file)
    try:
        data = load_yaml(file)
    except SpecError as exc:  # no such file, bad YAML: the same words, as a catalogue error
        raise CatalogueError(file, "", exc.detail) from None
    top = ck.mapping(data if data is not None else {}, "", "a mapping with a 'datasets' list")
    ck.known_keys(top, {"version", "datasets"}, "")
    entries = top.get("datasets")
    if not isinstance(entries, list) or not entries:
        raise ck.fail("datasets", f"expected a non-empty list of entries, got {_show(entries)}")
    base = Path(file).resolve().parent
    out = [validate_entry(ck, raw, f"datasets[{i}]", base) for i, raw in enumerate(entries)]
    seen: dict[str, int] = {}
    for i, e in enumerate(out):
        for key in (e["name"], *(e.get("aliases") or ())):
            if key.lower() in seen:
                raise ck.fail(
                    f"datasets[{i}].name", f"name {key!r} is used twice (see datasets[{seen[key]}])"
                )
            seen[key.lower()] = i
    return out
