"""Catalogue look-ups, aliases, suggestions and option validation."""

from __future__ import annotations

import re

import pytest

from kernbench.datasets import get_dataset, list_datasets, resolve_options, validate_options
from kernbench.errors import DataError

IDA13 = [
    "banana", "breast-cancer", "diabetis", "flare-solar", "german", "heart", "image",
    "ringnorm", "splice", "thyroid", "titanic", "twonorm", "waveform",
]  # fmt: skip


def test_catalogue_has_at_least_30_datasets_with_unique_names():
    entries = list_datasets()
    assert len(entries) >= 30
    keys = [k.lower() for e in entries for k in (e.name, *e.aliases)]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("diabetis", "pima"), ("diabetes", "pima"), ("PIMA", "pima"),
        ("house-votes-84", "votes84"), ("bupa", "liver"), ("liver-disorders", "liver"),
        ("breast-cancer-wisconsin", "breast"), ("image", "ida-image"),
        ("breast-cancer", "ida-breast-cancer"), ("ida-thyroid", "thyroid"),
        ("wdbc-sklearn", "breast_cancer"),
    ],
)  # fmt: skip
def test_aliases_resolve(alias, name):
    assert get_dataset(alias).name == name


@pytest.mark.parametrize("name", IDA13)
def test_the_13_ida_names_have_predefined_realisations(name):
    entry = get_dataset(name)
    assert entry.task == "binary"
    assert entry.predefined is not None
    src = entry.predefined_entry().predefined
    assert src["kind"] in ("ida", "substitute")
    if src["kind"] == "substitute":  # every substitution is documented for footnotes
        assert entry.substitution and src.get("note")


def test_unknown_name_suggests_the_closest():
    with pytest.raises(DataError, match=r"unknown dataset 'sonr'; did you mean 'sonar'\?"):
        get_dataset("sonr")
    with pytest.raises(DataError, match="unknown dataset 'zzzzzz'") as exc:
        get_dataset("zzzzzz")
    assert "did you mean" not in str(exc.value)


def test_every_file_has_a_sha256_and_a_download_source():
    """Mirrored files carry their checksum; the papers' own, unmirrored files carry one only where
    it is published (tests/datasets/test_paper_data.py)."""
    for entry in list_datasets():
        for f in entry.files:
            if entry.mirrored or f.sha256 is not None:
                assert re.fullmatch(r"[0-9a-f]{64}", f.sha256), f.path
            assert f.sources, f.path
            assert all(s["url"].startswith(("http://", "https://")) for s in f.sources)


def test_options_are_validated_and_defaults_filled():
    assert resolve_options("twonorm", {"n_train": 50}) == {
        "a": None, "d": 20, "label_noise": 0.0, "n_test": 3000, "n_train": 50,
    }  # fmt: skip
    with pytest.raises(DataError, match=r"unknown option 'n_trian'; did you mean 'n_train'\?"):
        validate_options("twonorm", {"n_trian": 5})
    with pytest.raises(DataError, match="'label_noise' must be < 1.0"):
        validate_options("sonar", {"label_noise": 1.5})
    with pytest.raises(DataError, match="'n_train' must be an integer"):
        validate_options("ringnorm", {"n_train": 2.5})
    with pytest.raises(DataError, match="must be one of"):
        validate_options("german", {"encoding": "numeric"})
    validate_options("german", {"encoding": "onehot", "label_noise": 0.1})


def test_catalogue_checksums_equal_the_mirror_manifest(manifest):
    man = {f["path"]: f["sha256"] for d in manifest["datasets"] for f in d["files"]}
    files = {f.path: f.sha256 for e in list_datasets() if e.mirrored for f in e.files}
    assert files, "catalogue lists no files"
    for path, sha in files.items():
        assert man[path] == sha, path
