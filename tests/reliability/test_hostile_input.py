"""Hostile input: fuzzed and malicious specs exit 2 naming the key path, with no traceback and no
side effect; names cannot escape their directories; downloads are catalogued and verified; no
pickle is loaded from an untrusted place. (benchmarks/fault_harness.py runs >= 500 fuzzed specs.)"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
import os
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import spec_fuzz as sf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernbench
from kernbench.datasets import fetch, list_datasets
from kernbench.errors import DataError
from kernbench.runner.results_dir import default_out_dir
from kernbench.specs.load import _NAME_RE

_SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
MIRROR = Path(os.environ.get("KERNBENCH_MIRROR") or _SHARED)


@pytest.mark.parametrize(("description", "text"), sf.RAW_DOCS, ids=[d for d, _ in sf.RAW_DOCS])
def test_malicious_documents_exit_2_naming_the_place(description, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a "touch pwned" that ran would land here
    outcome = sf.run_case(text, description, tmp_path / "case", monkeypatch)
    assert outcome.kind == "rejected", outcome
    assert sf.names_a_place(outcome), outcome
    assert not (tmp_path / "pwned").exists()


@settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=sf.mutated_specs(), n=st.integers(0, 10**9))
def test_fuzzed_specs_never_crash(case, n, tmp_path, monkeypatch):
    text, description = case
    outcome = sf.run_case(text, description, tmp_path / f"case{n}", monkeypatch)
    assert outcome.kind != "FAILURE", outcome
    if outcome.kind == "rejected":
        assert sf.names_a_place(outcome), outcome


@given(st.from_regex(_NAME_RE, fullmatch=True))
def test_every_valid_name_stays_directly_under_results(name):
    class _Spec:
        pass

    spec = _Spec()
    spec.name = name
    out = default_out_dir(spec)
    root = Path("results").resolve()
    assert out.resolve().parent == root


def test_catalogue_paths_are_relative_and_sources_are_https_and_checksummed():
    for entry in list_datasets():
        for raw in entry.all_files():
            path = Path(raw.path)
            assert not path.is_absolute() and ".." not in path.parts, raw.path
            # only a file kept outside the mirror may lack a checksum (none is published for it)
            assert len(raw.sha256) == 64 if raw.sha256 is not None else not entry.mirrored
            for src in raw.sources:
                assert urlsplit(src["url"]).scheme == "https", src
                if src.get("decompressed"):  # what the URL serves is checked before it is stored
                    assert raw.content_sha256 and len(raw.content_sha256) == 64, raw.path


class _FakeResponse(io.BytesIO):
    def __init__(self, body: bytes) -> None:
        super().__init__(body)
        self.headers = {"Content-Length": str(len(body))}


def _serve(monkeypatch, body_for):
    requested: list[str] = []

    def urlopen(req, timeout=None):
        url = req.full_url if hasattr(req, "full_url") else str(req)
        requested.append(url)
        return _FakeResponse(body_for(url))

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return requested


def _plain_file():
    for entry in list_datasets():
        for raw in entry.files:
            srcs = raw.sources
            if srcs and all("member" not in s and not s.get("decompressed") for s in srcs):
                if (MIRROR / raw.path).is_file():
                    return raw
    pytest.skip("no mirrored file with a plain download source")


def test_download_fetches_only_catalogued_urls_and_refuses_tampered_bytes(tmp_path, monkeypatch):
    raw = _plain_file()
    monkeypatch.setenv("KERNBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    monkeypatch.delenv("KERNBENCH_OFFLINE", raising=False)
    monkeypatch.setattr(fetch.time, "sleep", lambda s: None)  # no retry backoff in tests
    good = (MIRROR / raw.path).read_bytes()
    assert hashlib.sha256(good).hexdigest() == raw.sha256

    requested = _serve(monkeypatch, lambda url: good[:-1] + b"!")  # one byte changed
    with pytest.raises(DataError, match="checksum mismatch"):
        fetch.fetch_file(raw)
    dest = tmp_path / "cache" / raw.path
    assert not dest.exists()
    assert not list((tmp_path / "cache").rglob("*.part"))  # no partial file left behind
    catalogued = {s["url"] for s in raw.sources}
    assert requested and set(requested) <= catalogued

    requested = _serve(monkeypatch, lambda url: good)
    assert fetch.fetch_file(raw) == dest
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == raw.sha256
    assert set(requested) <= catalogued


def test_decompressed_source_is_verified_before_it_is_stored(tmp_path, monkeypatch):
    for entry in list_datasets():
        raws = [r for r in entry.files if any(s.get("decompressed") for s in r.sources)]
        if raws and (MIRROR / raws[0].path).is_file():
            raw = raws[0]
            break
    else:
        pytest.skip("no mirrored file with a decompressed source")
    monkeypatch.setenv("KERNBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    monkeypatch.setattr(fetch.time, "sleep", lambda s: None)
    content = gzip.decompress((MIRROR / raw.path).read_bytes())
    _serve(monkeypatch, lambda url: content + b"\n1 2 3\n")  # an extra row smuggled in
    with pytest.raises(DataError, match="checksum mismatch"):
        fetch.fetch_file(raw)
    assert not (tmp_path / "cache" / raw.path).exists()
    _serve(monkeypatch, lambda url: content)
    stored = fetch.fetch_file(raw)
    assert gzip.decompress(stored.read_bytes()) == content


def test_no_pickle_is_loaded_except_from_our_own_child_process():
    """Policy: the only unpickling in kernbench is isolation.py reading its own child's pipe."""
    package = Path(kernbench.__file__).parent
    loads = []
    for py in package.rglob("*.py"):
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in {"load", "loads", "Unpickler"}:
                base = node.value
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                if name in {"pickle", "joblib", "cloudpickle", "dill", "marshal", "shelve"}:
                    loads.append((py.relative_to(package).as_posix(), node.lineno))
            if isinstance(node, ast.keyword) and node.arg == "allow_pickle":
                assert not (isinstance(node.value, ast.Constant) and node.value.value), py
    assert {path for path, _ in loads} <= {"runner/execution/isolation.py"}, loads
