import pytest

from kernbench.errors import KernbenchError
from kernbench.report.reference import (
    Published,
    ReferenceMatchError,
    load_reference,
    match_reference,
)

METHODS = {
    "SVM-Stump": {"method": "SVM-Stump"},
    "AB-Stump-100": {"method": "AdaBoost-Stump", "T": 100},
    "AB-Stump-1000": {"method": "AdaBoost-Stump", "T": 1000.0},
    "AB-Perc-100": {"method": "AdaBoost-Perc", "T": "100"},
}


def _match(ref, dataset, method, **kw):
    return match_reference(ref, dataset, method, reference_methods=METHODS, **kw)


def test_filters_pick_the_T100_and_T1000_rows(lin_li_csv):
    ref = load_reference(lin_li_csv)
    assert _match(ref, "twonorm", "AB-Stump-100") == Published(
        5.06, 0.06, "stderr", "5.06", "0.06", n_runs=100, dataset="twonorm"
    )
    assert _match(ref, "twonorm", "AB-Stump-1000") == Published(
        4.97, 0.06, "stderr", "4.97", "0.06", n_runs=100, dataset="twonorm"
    )
    assert _match(ref, "twonorm-n", "AB-Stump-1000").mean == 15.5
    assert _match(ref, "threenorm", "AB-Perc-100").mean == 18.2  # string filter, text compare
    # the SVM rows have an empty T; a method filter alone is unique for them
    assert _match(ref, "threenorm", "SVM-Stump") == Published(
        17.7, 0.10, "stderr", "17.7", "0.10", n_runs=100, dataset="threenorm"
    )


def test_printed_text_is_kept(lin_li_csv):
    ref = load_reference(lin_li_csv)
    pub = _match(ref, "twonorm", "AB-Perc-100")
    assert pub.text == "3.08"
    # "3.00" stays "3.00" and "0.10" stays "0.10"
    pub = match_reference(
        ref, "twonorm", "x", reference_methods={"x": {"method": "AdaBoost-Perc", "T": 1000}}
    )
    assert (pub.text, pub.spread_text) == ("3.00", "0.04")
    assert _match(ref, "threenorm", "SVM-Stump").spread_text == "0.10"


def test_label_defaults_and_dataset_mapping(lin_li_csv):
    ref = load_reference(lin_li_csv)
    # a method label not in the mapping is looked up by name
    assert match_reference(ref, "twonorm", "SVM-Perc").mean == 2.55
    # our dataset label -> the CSV's name
    pub = match_reference(
        ref, "twonorm noisy", "SVM-Perc", reference_datasets={"twonorm noisy": "twonorm-n"}
    )
    assert pub.mean == 2.76
    # no such row -> None (rendered as a dash)
    assert match_reference(ref, "ringnorm", "SVM-Perc") is None
    assert match_reference(ref, "twonorm", "CGENS") is None
    # a value without a reference metric has no published number
    assert match_reference(ref, "twonorm", "SVM-Perc", value="model_size") is None
    assert match_reference(ref, "twonorm", "SVM-Perc", value="train_error") is None


def test_ambiguous_filter_names_the_distinguishing_column(lin_li_csv):
    ref = load_reference(lin_li_csv)
    with pytest.raises(ReferenceMatchError, match=r"matches 2 rows .*'T'") as info:
        match_reference(
            ref, "twonorm", "AB", reference_methods={"AB": {"method": "AdaBoost-Stump"}}
        )
    assert isinstance(info.value, KernbenchError)  # the CLI turns it into exit code 2


def test_unknown_filter_column_and_missing_file(lin_li_csv, tmp_path):
    ref = load_reference(lin_li_csv)
    with pytest.raises(ReferenceMatchError, match="n_base"):
        match_reference(ref, "twonorm", "AB", reference_methods={"AB": {"n_base": 10}})
    with pytest.raises(ReferenceMatchError, match="not found"):
        load_reference(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ReferenceMatchError, match="lacks column"):
        load_reference(bad)


def test_none_filter_matches_empty_field(lin_li_csv):
    ref = load_reference(lin_li_csv)
    pub = match_reference(
        ref, "twonorm", "S", reference_methods={"S": {"T": None, "paper_header": "SVM-Perc"}}
    )
    assert pub.mean == 2.55
