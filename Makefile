# kernbench — the README's two set-up commands are `make quickstart` and `make test`.
PYTHON ?= python
JOBS ?= 2
# Local dataset mirror used by tests and reproduction targets (CI has ../shared/datasets beside the clone).
KERNBENCH_MIRROR ?= $(abspath ../shared/datasets)
export KERNBENCH_MIRROR
STAMP := .install.stamp

.PHONY: install test test-slow lint format quickstart bench clean reproduce reproduce-lin-li reproduce-cgens faults reproduce-multiboost-cw

$(STAMP): pyproject.toml
	$(PYTHON) -m pip install -e ".[dev,dask]"
	@touch $(STAMP)

install: ## install kernbench with its dev extras (editable)
	$(PYTHON) -m pip install -e ".[dev,dask]"
	@touch $(STAMP)

test: $(STAMP) ## the test suite (fast: slow tests and benchmarks excluded)
	$(PYTHON) -m pytest -q -n $(JOBS) -m "not slow" tests

test-slow: $(STAMP)
	$(PYTHON) -m pytest -q -n $(JOBS) -m slow tests

lint: $(STAMP)
	$(PYTHON) -m ruff check kernbench tests benchmarks
	$(PYTHON) -m ruff format --check kernbench tests benchmarks

format: $(STAMP)
	$(PYTHON) -m ruff format kernbench tests benchmarks
	$(PYTHON) -m ruff check --fix kernbench tests benchmarks

KB := $(PYTHON) -m kernbench
# Reproduction targets take REALISATIONS=N for a quick look (the specs' defaults are the papers').
REALISATIONS ?=
RFLAG := $(if $(REALISATIONS),--realisations $(REALISATIONS),)

quickstart: $(STAMP) ## run the quickstart experiment on embedded data and print its table
	$(KB) run experiments/quickstart.yaml --jobs $(JOBS)
	$(KB) table results/quickstart

bench: $(STAMP)
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(PYTHON) $$f || exit 1; done

faults: $(STAMP) ## fault harness: >= 50 kill trials, >= 500 fuzzed specs, Dask worker kills
	$(PYTHON) benchmarks/fault_harness.py

reproduce: reproduce-lin-li reproduce-cgens reproduce-multiboost-cw

reproduce-lin-li: $(STAMP) ## Lin & Li Tables I-II and Fig. 2 (100 runs by default; REALISATIONS=N to cap)
	$(KB) run experiments/lin_li_table1.yaml --jobs $(JOBS) $(RFLAG)
	$(KB) table results/lin_li_table1 --out results/lin_li_table1.md
	$(KB) run experiments/lin_li_table2.yaml --jobs $(JOBS) $(RFLAG) --reuse results/lin_li_table1
	$(KB) table results/lin_li_table2 --out results/lin_li_table2.md
	$(PYTHON) -m kernbench.report.figures_boundary --out results/lin_li_fig2.png

reproduce-cgens: $(STAMP) ## Shen & Liu Tables I-IV and Figs 1, 2, 3, 5 (REALISATIONS=N to cap)
	$(KB) run experiments/uci_stumps.yaml --jobs $(JOBS) $(RFLAG)
	$(KB) table results/uci_stumps --out results/uci_stumps.md
	$(KB) run experiments/uci_fourier_perceptron.yaml --jobs $(JOBS) $(RFLAG)
	$(KB) table results/uci_fourier_perceptron --out results/uci_fourier_perceptron.md
	$(KB) run experiments/spam_stumps.yaml --jobs $(JOBS) $(RFLAG)
	$(KB) table results/spam_stumps --out results/spam_stumps.md
	$(KB) plot results/spam_stumps --kind fig5 --out results/figures
	$(KB) run experiments/multiclass_uci.yaml --jobs $(JOBS) $(RFLAG)
	$(KB) table results/multiclass_uci --out results/multiclass_uci.md
	$(KB) plot results/multiclass_uci --kind fig3 --out results/figures
	$(PYTHON) -m kernbench.report.figures_cgens fig1 --out results/cgens_fig1.png
	$(PYTHON) benchmarks/bench_cgens_vs_lpboost.py --repeats 1
	$(PYTHON) -m kernbench.report.figures_cgens fig2 --out results/cgens_fig2.png

reproduce-multiboost-cw: $(STAMP) ## Lin et al. (ACCV 2012) Figs 1, 2 and 6 (REALISATIONS=N to cap)
	$(KB) run experiments/multiboost_cw.yaml --jobs $(JOBS) $(RFLAG)
	$(KB) table results/multiboost_cw --out results/multiboost_cw.md
	$(KB) plot results/multiboost_cw --kind multiboost_cw --out results/figures
	$(PYTHON) -m kernbench.report.figures_multiboost_cw convergence --results results/multiboost_cw
	OMP_NUM_THREADS=1 $(PYTHON) benchmarks/bench_fcd.py --repeats 1
	$(PYTHON) -m kernbench.report.figures_multiboost_cw fig6 --out results/multiboost_cw_fig6.png

clean:
	rm -rf .pytest_cache .ruff_cache build dist *.egg-info $(STAMP)
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
