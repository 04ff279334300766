"""Fetch and cache: the real download path against a local HTTP server, mirrors and checksums."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import re
import threading
from pathlib import Path

import pytest

from kernbench.datasets import ensure_available, get_dataset, load_pool
from kernbench.datasets.catalog import RawFile
from kernbench.datasets.fetch import (
    data_home,
    download,
    fetch_file,
    locate,
    verify_cache,
    verify_file,
)
from kernbench.errors import ChecksumError, DataError

PAYLOAD = b"".join(b"%d,%d,1\n" % (i, i * i) for i in range(5000))  # ~60 kB


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


class _Server:
    """A local HTTP server; ``drops[path] = k`` cuts the first k responses of ``path`` mid-body."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.drops: dict[str, int] = {}
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                outer.requests.append(self.path)
                body = outer.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if outer.drops.get(self.path, 0) > 0:
                    outer.drops[self.path] -= 1
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"


@pytest.fixture
def server():
    s = _Server()
    s.thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.is_file())


def test_download_is_atomic_and_retries_after_an_interrupted_body(server, tmp_path):
    server.files["/d.csv"] = PAYLOAD
    server.drops["/d.csv"] = 1
    raw = RawFile(path="toy/d.csv", sha256=sha(PAYLOAD), sources=({"url": server.url("/d.csv")},))
    seen: list[int] = []
    path = fetch_file(raw, offline=False, progress=lambda got, total: seen.append(got))
    assert path == data_home() / "toy" / "d.csv"
    assert path.read_bytes() == PAYLOAD
    assert server.requests == ["/d.csv", "/d.csv"]  # first attempt dropped, second complete
    assert _leftovers(data_home()) == ["d.csv"]  # no partial/temporary file left
    assert seen[-1] == len(PAYLOAD)


def test_interrupted_download_leaves_no_partial_file(server, tmp_path):
    server.files["/d.csv"] = PAYLOAD
    server.drops["/d.csv"] = 10
    dest = tmp_path / "out" / "d.csv"
    with pytest.raises(
        DataError, match=r"failed after 2 attempt\(s\) in \d+ s.*connection closed after"
    ):
        download(server.url("/d.csv"), dest, sha256=sha(PAYLOAD), retries=1, backoff=0.01)
    assert not dest.exists()
    assert _leftovers(tmp_path / "out") == []


def test_checksum_mismatch_refuses_the_download(server):
    server.files["/d.csv"] = PAYLOAD
    raw = RawFile(path="toy/d.csv", sha256="0" * 64, sources=({"url": server.url("/d.csv")},))
    with pytest.raises(DataError) as exc:
        fetch_file(raw, offline=False)
    assert "0" * 64 in str(exc.value) and sha(PAYLOAD) in str(exc.value)
    assert not (data_home() / "toy" / "d.csv").exists()


def test_next_source_is_tried_when_the_first_fails(server):
    server.files["/good"] = PAYLOAD
    raw = RawFile(
        path="toy/d.csv",
        sha256=sha(PAYLOAD),
        sources=({"url": server.url("/missing")}, {"url": server.url("/good")}),
    )
    assert fetch_file(raw, offline=False).read_bytes() == PAYLOAD


def test_decompressed_source_is_stored_compressed_and_verified(server):
    stored = gzip.compress(PAYLOAD, mtime=0)
    server.files["/d.asc"] = PAYLOAD
    raw = RawFile(
        path="ida-toy/d.asc.gz",
        sha256=sha(b"a differently compressed copy"),  # mirror's gzip bytes may differ ...
        content_sha256=sha(PAYLOAD),  # ... the content is what is verified
        sources=({"url": server.url("/d.asc"), "decompressed": True},),
    )
    path = fetch_file(raw, offline=False)
    assert path.read_bytes() == stored
    assert gzip.decompress(path.read_bytes()) == PAYLOAD


def test_member_of_an_archive(server, tmp_path):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("pkg/data/x.dat", PAYLOAD)
    server.files["/pkg.whl"] = buf.getvalue()
    raw = RawFile(
        path="x/keel/x.dat",
        sha256=sha(PAYLOAD),
        sources=(
            {
                "url": server.url("/pkg.whl"),
                "member": "pkg/data/x.dat",
                "archive_sha256": sha(buf.getvalue()),
            },
        ),
    )
    assert fetch_file(raw, offline=False).read_bytes() == PAYLOAD


def test_corrupt_byte_raises_checksum_error_with_both_hashes(tmp_path):
    good = tmp_path / "f.csv"
    good.write_bytes(PAYLOAD)
    raw = RawFile(path="f.csv", sha256=sha(PAYLOAD))
    verify_file(raw, good)
    corrupt = bytearray(PAYLOAD)
    corrupt[1234] ^= 0x01
    bad = tmp_path / "g.csv"
    bad.write_bytes(bytes(corrupt))
    with pytest.raises(ChecksumError) as exc:
        verify_file(raw, bad)
    msg = str(exc.value)
    assert "g.csv" in msg and sha(PAYLOAD) in msg and sha(bytes(corrupt)) in msg
    assert exc.value.expected == sha(PAYLOAD) and exc.value.actual == sha(bytes(corrupt))


def test_corrupt_cached_dataset_file_is_refused_and_reported_by_verify(mirror):
    raw = get_dataset("sonar").files[0]
    cached = data_home() / raw.path
    cached.parent.mkdir(parents=True)
    data = bytearray((mirror / raw.path).read_bytes())
    data[100] ^= 0xFF
    cached.write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match=raw.sha256):
        locate(raw)
    rows = verify_cache()
    assert [(p, s) for p, s, _ in rows] == [(raw.path, "corrupt")]


def test_fetch_from_mirror_copies_and_verifies(mirror):
    raw = get_dataset("heart").files[0]
    path = fetch_file(raw)
    assert path == data_home() / raw.path
    assert path.read_bytes() == (mirror / raw.path).read_bytes()
    assert verify_cache() == [(raw.path, "ok", "")]


def test_offline_without_mirror_names_the_fetch_command(monkeypatch):
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    with pytest.raises(DataError, match=r"run `kernbench data fetch sonar votes84`"):
        ensure_available(["votes84", "sonar", "iris"])
    with pytest.raises(DataError, match=r"`kernbench data fetch sonar`"):
        load_pool("sonar")
    ensure_available(["iris", "threenorm", "circle"])  # embedded: nothing to fetch


def test_ensure_available_accepts_the_mirror_in_place(mirror):
    ensure_available(["sonar", "diabetis", "banana"])
    assert not data_home().exists() or _leftovers(data_home()) == []  # read in place, no copy


def test_mirror_root_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNBENCH_MIRROR", str(tmp_path / "nope"))
    with pytest.raises(DataError, match="is not a directory"):
        ensure_available(["sonar"])


def _registered_remote_set(server) -> str:
    """A catalogued binary dataset whose one file is served by ``server``; its name."""
    from kernbench.datasets.catalog import register_entry

    server.files["/toy.csv"] = PAYLOAD
    register_entry(
        {
            "name": "remote-toy",
            "task": "binary",
            "d": 2,
            "classes": 2,
            "files": [
                {
                    "path": "remote-toy/toy.csv",
                    "sha256": sha(PAYLOAD),
                    "sources": [{"url": server.url("/toy.csv")}],
                }
            ],
            "recipe": {"kind": "table", "file": "remote-toy/toy.csv", "label_column": -1},
        },
        origin="test",
    )
    return "remote-toy"


def test_each_download_is_announced_with_its_source_destination_and_count(server, monkeypatch):
    from kernbench.datasets import catalog

    monkeypatch.delenv("KERNBENCH_OFFLINE")
    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    name = _registered_remote_set(server)
    try:
        lines: list[str] = []
        ensure_available([name, "iris"], report=lines.append)
        assert lines == [
            f"downloading {name} from {server.url('/toy.csv')} into "
            f"{data_home() / 'remote-toy'}, 1/1"
        ]
        assert (data_home() / "remote-toy" / "toy.csv").read_bytes() == PAYLOAD
        lines.clear()
        ensure_available([name], report=lines.append)  # cached now: nothing to announce
        assert lines == []
    finally:
        catalog._REGISTERED.clear()


def test_retries_stop_within_the_time_budget(server, monkeypatch):
    server.files["/d.csv"] = PAYLOAD
    server.drops["/d.csv"] = 100
    slept: list[float] = []
    now = [1000.0]  # a clock that only the waits advance

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr("kernbench.datasets.fetch.time.sleep", sleep)
    monkeypatch.setattr("kernbench.datasets.fetch.time.monotonic", lambda: now[0])
    dest = data_home() / "budget" / "d.csv"
    with pytest.raises(DataError, match=r"failed after 3 attempt\(s\) in 3 s"):
        # waits of 1, 2, 4, 8 s: the third (4 s) would pass the 5 s budget, so it is not taken
        download(server.url("/d.csv"), dest, retries=10, backoff=1.0, max_seconds=5.0)
    assert slept == [1.0, 2.0]
    assert not dest.exists()


def test_a_host_that_does_not_resolve_fails_at_once(monkeypatch, tmp_path):
    import socket
    import urllib.error

    calls: list[str] = []

    def unresolvable(*args, **kwargs):
        calls.append("open")
        raise urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))

    monkeypatch.setattr("kernbench.datasets.fetch.urllib.request.urlopen", unresolvable)
    monkeypatch.setattr("kernbench.datasets.fetch.time.sleep", lambda s: calls.append("sleep"))
    with pytest.raises(DataError, match="cannot resolve its host .*no network"):
        download("https://example.invalid/x.csv", tmp_path / "x.csv")
    assert calls == ["open"]  # no retry, no wait


def test_the_offline_hint_for_grand_fits_a_screen_and_gives_the_fix_first(monkeypatch):
    """#48: validating a spec extending grand without a mirror printed one 72,362-character
    line listing every file of 25 data sets, the fix buried in it."""
    from typer.testing import CliRunner

    from kernbench.cli import app

    monkeypatch.delenv("KERNBENCH_MIRROR", raising=False)
    res = CliRunner().invoke(app, ["validate", "grand"], terminal_width=100)
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert text.startswith("error: grand: `export KERNBENCH_MIRROR=DIR` (a local copy of the data)")
    assert "25 dataset(s) not in the cache" in text and "heart and 20 more" in text
    assert re.search(r"\d+ missing file\(s\): .* and \d+ more \(`kernbench data info NAME`", text)
    assert len(text) < 1200
