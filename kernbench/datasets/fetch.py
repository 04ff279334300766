"""Obtaining raw files: cache directory, local mirror, downloads with checksums.

Where files live
    The cache is ``$KERNBENCH_DATA``, else ``<project root>/data`` when kernbench runs from a
    checkout, else ``~/.cache/kernbench``. A mirror (``$KERNBENCH_MIRROR`` or ``--mirror DIR``) is
    a directory laid out like the cache (``<dataset>/<file>``); files are read from it in place,
    after their sha256 is checked, or copied into the cache (``kernbench data fetch --mirror DIR``).

Downloads
    Only the ``sources`` catalogued for a file are fetched (urllib), into a temporary file in the
    destination directory that is renamed atomically (``os.replace``) once complete and verified,
    with retries and exponential backoff. A partial download never remains under the final name. A
    checksum mismatch refuses the file (:class:`~kernbench.errors.ChecksumError`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import shutil
import socket
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from kernbench.datasets.catalog import DatasetEntry, RawFile, get_dataset, list_datasets
from kernbench.datasets.parsers import read_bytes
from kernbench.errors import ChecksumError, DataError

__all__ = [
    "data_home",
    "mirror_root",
    "sha256_file",
    "verify_file",
    "locate",
    "require",
    "fetch_file",
    "fetch_datasets",
    "ensure_available",
    "verify_cache",
    "availability",
    "download",
    "offline_hint",
    "missing_files",
    "unavailable",
]

_CHUNK = 1 << 16
ProgressHook = Callable[[int, int | None], None]  # (bytes received so far, total or None)


def _project_root() -> Path | None:
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "kernbench").is_dir():
        return root
    return None


def data_home() -> Path:
    """The download cache: ``$KERNBENCH_DATA``, ``<checkout>/data`` or ``~/.cache/kernbench``."""
    env = os.environ.get("KERNBENCH_DATA")
    if env:
        return Path(env).expanduser()
    root = _project_root()
    if root is not None:
        return root / "data"
    return Path("~/.cache/kernbench").expanduser()


def mirror_root(mirror: str | Path | None = None) -> Path | None:
    """The local mirror directory: ``mirror`` if given, else ``$KERNBENCH_MIRROR``, else None."""
    chosen = mirror if mirror is not None else os.environ.get("KERNBENCH_MIRROR") or None
    if chosen is None:
        return None
    path = Path(chosen).expanduser()
    if not path.is_dir():
        raise DataError(f"dataset mirror {str(path)!r} is not a directory")
    return path


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes (streamed)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


_verified: dict[tuple[str, int, int], bool] = {}


def verify_file(raw: RawFile, path: str | Path) -> None:
    """Check ``path`` against the catalogue checksum of ``raw``.

    A compressed file is also accepted when its decompressed content matches ``content_sha256``
    (a file fetched from a source serving the uncompressed text and compressed locally). Results
    are memoised per (path, size, mtime) for the process.

    Raises
    ------
    ChecksumError
        Naming the file, the expected and the actual sha256.
    """
    path = Path(path)
    if raw.sha256 is None:  # no published checksum: nothing to compare with
        return
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if _verified.get(key):
        return
    actual = sha256_file(path)
    if actual != raw.sha256:
        content_ok = False
        if raw.content_sha256 is not None:
            with contextlib.suppress(DataError):
                content_ok = hashlib.sha256(read_bytes(path)).hexdigest() == raw.content_sha256
        if not content_ok:
            raise ChecksumError(str(path), raw.sha256, actual)
    _verified[key] = True


def locate(raw: RawFile, mirror: str | Path | None = None) -> Path | None:
    """The verified local copy of ``raw`` (cache first, then mirror), or None if absent."""
    cached = data_home() / raw.path
    if cached.is_file():
        verify_file(raw, cached)
        return cached
    root = mirror_root(mirror)
    if root is not None and (root / raw.path).is_file():
        verify_file(raw, root / raw.path)
        return root / raw.path
    return None


def _fetch_command(names: Iterable[str]) -> str:
    return "kernbench data fetch " + " ".join(sorted(set(names)))


def require(raw: RawFile, dataset: str) -> Path:
    """The verified local path of ``raw``; missing -> DataError naming the fetch command."""
    path = locate(raw)
    if path is None:
        raise DataError(
            f"dataset {dataset!r}: file {raw.path} is not in the cache ({data_home()}) nor in a "
            f"mirror; run `{_fetch_command([dataset])}` (or add `--mirror DIR` / set "
            "KERNBENCH_MIRROR to a local copy)"
        )
    return path


def _atomic_write(dest: Path, write: Callable[[Path], None]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def download(
    url: str,
    dest: str | Path,
    *,
    sha256: str | None = None,
    retries: int = 3,
    backoff: float = 1.0,
    timeout: float = 30.0,
    max_seconds: float = 60.0,
    progress: ProgressHook | None = None,
) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying ``sha256`` when given.

    The body is streamed into a temporary file beside ``dest``; a connection that drops before
    ``Content-Length`` bytes arrived counts as a failure. Failures are retried up to ``retries``
    times with exponential backoff (``backoff * 2**attempt`` seconds), all attempts together
    within ``max_seconds`` (no retry starts that would end its wait past it, and each attempt's
    ``timeout`` is cut to what remains). A host name that does not resolve (no network, or a
    typo) fails at once. ``dest`` is only ever the complete, verified file.

    Raises
    ------
    ChecksumError
        The complete body has another sha256 (not retried: the source serves different bytes).
    DataError
        All attempts failed, or the time ran out.
    """
    dest = Path(dest)
    last: Exception | None = None
    start = time.monotonic()
    attempts = 0
    for attempt in range(retries + 1):
        if attempt:
            wait = backoff * 2 ** (attempt - 1)
            if time.monotonic() - start + wait >= max_seconds:
                break
            time.sleep(wait)
        remaining = max_seconds - (time.monotonic() - start)
        attempts += 1
        try:
            _download_once(url, dest, sha256, max(0.1, min(timeout, remaining)), progress)
            return dest
        except ChecksumError:
            raise
        except urllib.error.HTTPError as exc:
            if exc.code < 500:  # 404 and friends are permanent: do not retry
                raise DataError(f"download of {url} failed: HTTP {exc.code} {exc.reason}") from None
            last = exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, socket.gaierror):  # the name does not resolve: no network
                raise DataError(
                    f"download of {url} failed: cannot resolve its host ({exc.reason}); no network?"
                ) from None
            last = exc
        except (OSError, ValueError, DataError) as exc:
            last = exc
    spent = time.monotonic() - start
    raise DataError(
        f"download of {url} failed after {attempts} attempt(s) in {spent:.0f} s: {last}"
    )


def _download_once(
    url: str, dest: Path, sha256: str | None, timeout: float, progress: ProgressHook | None
) -> None:
    def write(tmp: Path) -> None:
        h = hashlib.sha256()
        req = urllib.request.Request(url, headers={"User-Agent": "kernbench"})
        with urllib.request.urlopen(req, timeout=timeout) as resp, open(tmp, "wb") as out:
            total = resp.headers.get("Content-Length")
            total_n = int(total) if total is not None else None
            got = 0
            while True:
                chunk = resp.read(_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                h.update(chunk)
                got += len(chunk)
                if progress is not None:
                    progress(got, total_n)
            if total_n is not None and got != total_n:
                raise DataError(f"connection closed after {got} of {total_n} bytes")
        if sha256 is not None and h.hexdigest() != sha256:
            raise ChecksumError(url, sha256, h.hexdigest())

    _atomic_write(dest, write)


def _from_source(raw: RawFile, source: dict, dest: Path, progress: ProgressHook | None) -> None:
    url = source["url"]
    if "member" in source:
        archive = data_home() / "_archives" / url.rstrip("/").rsplit("/", 1)[-1]
        if not archive.is_file() or (
            source.get("archive_sha256") and sha256_file(archive) != source["archive_sha256"]
        ):
            download(url, archive, sha256=source.get("archive_sha256"), progress=progress)
        with zipfile.ZipFile(archive) as z:
            payload = z.read(source["member"])
        if hashlib.sha256(payload).hexdigest() != raw.sha256:
            raise ChecksumError(
                f"{url}!{source['member']}", raw.sha256, hashlib.sha256(payload).hexdigest()
            )
        _atomic_write(dest, lambda tmp: tmp.write_bytes(payload))
    elif source.get("decompressed"):
        # the source serves the uncompressed text: verify it, then store it compressed
        plain = dest.with_name(dest.name + ".download")
        download(url, plain, sha256=raw.content_sha256, progress=progress)
        try:
            data = plain.read_bytes()
            _atomic_write(dest, lambda tmp: tmp.write_bytes(gzip.compress(data, mtime=0)))
        finally:
            plain.unlink(missing_ok=True)
    else:
        download(url, dest, sha256=raw.sha256, progress=progress)
    verify_file(raw, dest)


def fetch_file(
    raw: RawFile,
    *,
    mirror: str | Path | None = None,
    progress: ProgressHook | None = None,
    offline: bool | None = None,
) -> Path:
    """Make ``raw`` present in the cache: already there, copied from a mirror, or downloaded.

    Returns the cache path. Raises :class:`ChecksumError` for a corrupt cached or mirrored file and
    :class:`DataError` when no source succeeds (or ``offline``, default ``$KERNBENCH_OFFLINE``).
    """
    dest = data_home() / raw.path
    if dest.is_file():
        verify_file(raw, dest)
        return dest
    root = mirror_root(mirror)
    if root is not None and (root / raw.path).is_file():
        src = root / raw.path
        verify_file(raw, src)
        _atomic_write(dest, lambda tmp: shutil.copyfile(src, tmp))
        verify_file(raw, dest)
        return dest
    if offline is None:
        offline = os.environ.get("KERNBENCH_OFFLINE", "") not in ("", "0")
    if offline:
        raise DataError(
            f"{raw.path}: not cached, no mirror, and offline (KERNBENCH_OFFLINE); give "
            "`--mirror DIR` or set KERNBENCH_MIRROR to a local copy, or fetch with network access"
        )
    errors = []
    for source in raw.sources:
        try:
            _from_source(raw, source, dest, progress)
            return dest
        except DataError as exc:  # includes ChecksumError: try the next source
            errors.append(f"{source['url']}: {exc}")
    detail = "; ".join(errors) if errors else "no download source catalogued"
    raise DataError(f"{raw.path}: could not be fetched ({detail})")


def _expand(names: Iterable[str]) -> list[DatasetEntry]:
    out: dict[str, DatasetEntry] = {}
    for name in names:
        entry = get_dataset(name)
        out[entry.name] = entry
    return list(out.values())


def fetch_datasets(
    names: Iterable[str],
    *,
    mirror: str | Path | None = None,
    show_progress: bool = True,
    offline: bool | None = None,
    predefined: bool = True,
) -> list[Path]:
    """Fetch every raw file of the named datasets into the cache (rich progress bar)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TransferSpeedColumn,
    )

    files: dict[str, RawFile] = {}
    for entry in _expand(names):
        for raw in entry.all_files(predefined):
            files.setdefault(raw.path, raw)
    paths = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        disable=not show_progress,
        transient=True,
    ) as bar:
        overall = bar.add_task("datasets", total=len(files))
        for raw in files.values():
            task = bar.add_task(raw.path, total=raw.bytes)

            def hook(got: int, total: int | None, task: int = task) -> None:
                bar.update(task, completed=got, total=total)

            paths.append(fetch_file(raw, mirror=mirror, progress=hook, offline=offline))
            bar.remove_task(task)
            bar.advance(overall)
    return paths


def ensure_available(
    names: Iterable[str],
    *,
    mirror: str | Path | None = None,
    predefined: bool = True,
    report: Callable[[str], None] | None = None,
) -> None:
    """Make sure every raw file of the named datasets can be read, fetching what is missing.

    Files already in the cache or in the mirror (``$KERNBENCH_MIRROR``) are verified and used in
    place; missing ones are downloaded unless ``$KERNBENCH_OFFLINE`` is set. Embedded datasets need
    nothing. ``predefined=False`` (a random-split protocol) skips the predefined-split files.
    ``report`` is given one line before each dataset is fetched (``downloading australian from
    https://... into DIR, 1/3``).

    Raises
    ------
    DataError
        When a file cannot be obtained; the message gives the exact ``kernbench data fetch ...``
        command that fixes it.
    ChecksumError
        When a cached or mirrored file is corrupt.
    """
    entries = _expand(names)
    missing: dict[str, list[RawFile]] = {}
    for entry in entries:
        for raw in entry.all_files(predefined):
            if locate(raw, mirror) is None:
                missing.setdefault(entry.name, []).append(raw)
    if not missing:
        return
    try:
        for k, (name, files) in enumerate(missing.items(), start=1):
            if report is not None:
                report(_fetch_line(name, files, k, len(missing)))
            fetch_datasets([name], mirror=mirror, show_progress=False, predefined=predefined)
    except ChecksumError:
        raise
    except DataError as exc:
        raise DataError(
            f"dataset(s) {', '.join(sorted(missing))} not available ({exc}); run "
            f"`{_fetch_command(missing)}` with network access, or `{_fetch_command(missing)} "
            "--mirror DIR` (or set KERNBENCH_MIRROR) to copy them from a local mirror"
        ) from None


def _fetch_line(name: str, files: list[RawFile], k: int, n: int) -> str:
    """``downloading NAME from URL into DIR, k/n`` (or why nothing can be downloaded)."""
    if os.environ.get("KERNBENCH_OFFLINE", "") not in ("", "0"):
        return f"dataset {name} is missing and KERNBENCH_OFFLINE is set, {k}/{n}"
    urls = [src["url"] for raw in files for src in raw.sources]
    where = f"from {urls[0]}" if urls else "(no download source catalogued)"
    more = f" and {len(files) - 1} more file(s)" if len(files) > 1 else ""
    into = data_home() / Path(files[0].path).parent
    return f"downloading {name} {where}{more} into {into}, {k}/{n}"


def unavailable(
    names: Iterable[str], *, mirror: str | Path | None = None, predefined: bool = True
) -> list[str]:
    """The named datasets that lack a verified file in the cache and the mirror (no download).

    Raises
    ------
    ChecksumError
        A cached or mirrored file is corrupt.
    """
    return sorted(
        entry.name
        for entry in _expand(names)
        if any(locate(raw, mirror) is None for raw in entry.all_files(predefined))
    )


def require_local(where: object, datasets: Iterable[tuple[str, bool]]) -> None:
    """Refuse, before any work, datasets that are neither in the cache nor in the mirror.

    Parameters
    ----------
    where : object
        What needs them (a spec's path), named first in the message.
    datasets : iterable of (str, bool)
        Catalogue names, each with whether its realisations are the predefined splits.

    Raises
    ------
    DataError
        Naming the ``kernbench data fetch`` command (or the mirror setting) that makes the missing
        ones available.
    """
    from kernbench.errors import DataError

    pairs = set(datasets)
    missing: set[str] = set()
    for predefined in (False, True):
        names = sorted({name for name, p in pairs if p is predefined})
        if names:
            missing.update(unavailable(names, predefined=predefined))
    if missing:
        raise DataError(f"{where}: {offline_hint(missing)}")


def offline_hint(missing: Iterable[str]) -> str:
    """What to run to make ``missing`` datasets available, first; then which datasets and files
    are missing, the first few of each with a count (one screen, however many are missing)."""
    from kernbench.errors import cut_list

    names = sorted(set(missing))
    fetch = _fetch_command(names)
    root = os.environ.get("KERNBENCH_MIRROR") or None
    if root:
        fix = f"run `{fetch}` (downloads; add `--mirror DIR` to copy from a local copy)"
        where = f"the mirror {root}"
    else:
        fix = (
            f"`export KERNBENCH_MIRROR=DIR` (a local copy of the data), or run `{fetch}` "
            "(downloads; add `--mirror DIR` to copy from a local copy)"
        )
        where = "a mirror (KERNBENCH_MIRROR is not set)"
    text = (
        f"{fix}: {len(names)} dataset(s) not in the cache ({data_home()}) nor in {where}: "
        f"{cut_list(names)}"
    )
    files = missing_files(names)
    if files:
        shown = [
            f"{f.path} (from {f.sources[0]['url'] if f.sources else 'no catalogued source'}"
            + (", no published checksum" if f.sha256 is None else "")
            + ")"
            for f in files
        ]
        text += f"; {len(files)} missing file(s): {cut_list(shown, 2, '; ')}"
        if len(files) > 3:
            text += " (`kernbench data info NAME` lists a dataset's files)"
    return text


def missing_files(names: Iterable[str], *, mirror: str | Path | None = None) -> list[RawFile]:
    """The raw files of the named datasets that are in neither the cache nor the mirror (no
    hashing, no download), each once, in catalogue order."""
    cache = data_home()
    try:
        root = mirror_root(mirror)
    except DataError:
        root = None
    out: dict[str, RawFile] = {}
    for entry in _expand(names):
        for f in entry.all_files():
            present = (cache / f.path).is_file() or (root is not None and (root / f.path).is_file())
            if not present:
                out.setdefault(f.path, f)
    return list(out.values())


def availability(entry: DatasetEntry, mirror: str | Path | None = None) -> str:
    """``embedded``, ``cached``, ``mirror``, ``partial`` or ``missing`` (existence, no hashing)."""
    files = entry.all_files()
    if not files:
        return "embedded"
    cache = data_home()
    if all((cache / f.path).is_file() for f in files):
        return "cached"
    try:
        root = mirror_root(mirror)
    except DataError:
        root = None
    if root is not None and all(
        (cache / f.path).is_file() or (root / f.path).is_file() for f in files
    ):
        return "mirror"
    if any((cache / f.path).is_file() for f in files):
        return "partial"
    return "missing"


def verify_cache() -> list[tuple[str, str, str]]:
    """Re-check every catalogued file present in the cache.

    Returns
    -------
    list of (path, status, detail)
        status is ``ok`` or ``corrupt`` (detail gives both hashes); absent files are not listed.
    """
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    _verified.clear()
    for entry in list_datasets():
        for raw in entry.files:
            path = data_home() / raw.path
            if raw.path in seen or not path.is_file():
                continue
            seen.add(raw.path)
            try:
                verify_file(raw, path)
                out.append((raw.path, "ok", ""))
            except ChecksumError as exc:
                out.append((raw.path, "corrupt", f"expected {exc.expected}, actual {exc.actual}"))
    return out
