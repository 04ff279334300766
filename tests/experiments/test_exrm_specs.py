"""The ExRM experiment specs: the paper's protocol, one published value per Table 1-3 cell, and
Table 2 / the equivalence experiment reusing Table 1's cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernbench.report.reference import load_reference, match_reference
from kernbench.runner.plan.cells import plan_cells
from kernbench.specs.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
EXP = ROOT / "experiments"
DATASETS = ["german", "diabetes", "australian", "sonar", "splice", "liver", "heart", "ionosphere"]
TABLES = {
    "exrm_table1.yaml": "test_error",
    "exrm_table2.yaml": "fit_time_s",
    "exrm_table3.yaml": "test_error",
}


@pytest.mark.parametrize("name", [*TABLES, "exrm_equivalence.yaml"])
def test_paper_protocol(name: str) -> None:
    spec = load_spec(EXP / name)
    assert [d.label for d in spec.datasets] == DATASETS
    assert all(d.name.endswith("-scale") for d in spec.datasets)  # the LIBSVM _scale versions
    p = spec.protocol
    assert (p.realisations, p.n_realisations, p.train_size, p.cv_folds) == ("random", 10, 150, 1)
    assert p.preprocess is None and p.stratify is False
    for m in spec.methods:  # λ = 2, or λ/C for the equivalence experiment's PSVM(λ/C) columns
        if m.estimator in ("exrm", "psvm"):
            allowed = [2.0, 2.0 / 10, 2.0 / 30] if "-l0." in m.label else [2.0]
            assert m.params["lam"] in [pytest.approx(v) for v in allowed], m.label


@pytest.mark.parametrize("name", list(TABLES))
def test_every_cell_has_one_published_value(name: str) -> None:
    spec = load_spec(EXP / name)
    ref = load_reference(spec.table.reference)
    for d in spec.datasets:
        for m in spec.methods:
            pub = match_reference(
                ref,
                d.label,
                m.label,
                reference_methods=spec.table.reference_methods,
                reference_datasets=spec.table.reference_datasets,
                value=TABLES[name],
            )
            assert pub is not None, (name, d.label, m.label)


def _ids(name: str) -> dict[tuple[str, str, int], str]:
    cells = plan_cells(load_spec(EXP / name), fingerprint=lambda name, options: f"fp-{name}")
    return {(c.dataset.label, c.method.label, c.realisation): c.cell_id for c in cells}


def test_table2_and_equivalence_reuse_table1_cells() -> None:
    t1 = _ids("exrm_table1.yaml")
    assert _ids("exrm_table2.yaml") == t1
    eq = _ids("exrm_equivalence.yaml")
    shared = [k for k in eq if k in t1]
    assert len(shared) == 4 * 8 * 10  # L1/L2-ExRM10/30
    assert all(eq[k] == t1[k] for k in shared)
