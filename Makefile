# kernbench — the README's two set-up commands are `make quickstart` and `make test`.
#
# Which Python: `make PYTHON=...` if given; else the active virtual environment ($VIRTUAL_ENV, or a
# conda environment's $CONDA_PREFIX); else the project's own virtual environment .venv, created with
# `python3 -m venv` on first use (a bare machine may have `python3` and no `python`).
ifneq ($(strip $(VIRTUAL_ENV)),)
PYTHON ?= $(VIRTUAL_ENV)/bin/python
else ifneq ($(strip $(CONDA_PREFIX)),)
PYTHON ?= $(CONDA_PREFIX)/bin/python
else
VENV := .venv
PYTHON ?= $(VENV)/bin/python
endif
# the interpreter is a prerequisite only when it is the project's .venv (made by the rule below)
VENV_PYTHON := $(if $(VENV),$(filter $(VENV)/bin/python,$(PYTHON)))
JOBS ?= 2
# Local dataset mirror used by tests and reproduction targets (CI has ../shared/datasets beside the clone).
KERNBENCH_MIRROR ?= $(abspath ../shared/datasets)
export KERNBENCH_MIRROR
STAMP := $(if $(VENV_PYTHON),$(VENV)/.install.stamp,.install.stamp)
# The reproduction environment: every package pinned, with hashes (`make lock` regenerates it from
# pyproject.toml). `make install LOCK=` installs from pyproject.toml's ranges instead.
LOCK ?= requirements-lock.txt

.PHONY: install lock test test-portable test-slow verify lint format quickstart bench clean reproduce reproduce-lin-li reproduce-cgens reproduce-cgens-pendigits reproduce-exrm reproduce-cgboost reproduce-cgboost-light reproduce-cgboost-figs reproduce-cgboost-table5-10k-tr2 reproduce-multiboost-cw reproduce-estimate faults docs docs-figures

ifdef VENV
$(VENV)/bin/python:
	@command -v python3 >/dev/null 2>&1 || { echo "error: python3 not found: install Python >= 3.11" >&2; exit 1; }
	@python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "error: kernbench needs Python >= 3.11; python3 is $$(python3 -V 2>&1) (activate a newer environment or give make PYTHON=...)" >&2; exit 1; }
	python3 -m venv $(VENV) || { rm -rf $(VENV); echo "error: could not create $(VENV) (Debian/Ubuntu: apt install python3-venv), or activate a virtual environment first" >&2; exit 1; }
	@echo "created the virtual environment $(VENV); '. $(VENV)/bin/activate' puts kernbench on your PATH"
endif

# From the lock: its pinned packages (hash-checked), then kernbench itself without resolving again.
define INSTALL
$(if $(LOCK),$(PYTHON) -m pip install -r $(LOCK) && $(PYTHON) -m pip install --no-deps -e .,$(PYTHON) -m pip install -e ".[dev,dask]")
endef

$(STAMP): pyproject.toml $(LOCK) $(VENV_PYTHON)
	$(INSTALL)
	@touch $(STAMP)

install: $(VENV_PYTHON) ## install kernbench with its dev extras (editable) from the lock file
	$(INSTALL)
	@touch $(STAMP)

lock: $(VENV_PYTHON) ## regenerate requirements-lock.txt from pyproject.toml (newest versions in its ranges)
	$(PYTHON) -m pip install -q "uv>=0.5"
	$(PYTHON) -m uv pip compile pyproject.toml --extra dev --extra dask --universal \
		--fork-strategy fewest --python-version 3.11 --generate-hashes --upgrade \
		--custom-compile-command "make lock" --quiet -o requirements-lock.txt

# The estimators' docstring Examples run as doctests with the fast suite (`python -m pytest
# --doctest-modules kernbench/methods` runs them alone).
DOCTESTS := --doctest-modules kernbench/methods
test: $(STAMP) ## the test suite (fast: slow tests and benchmarks excluded) and the estimators' doctests
	$(PYTHON) -m pytest -q -n $(JOBS) -m "not slow" tests $(DOCTESTS)

# The fast suite again as another machine would compute it: OpenBLAS forced to older kernels
# (it picks them at run time from the CPU) and numba compiling for a generic x86-64 CPU.
PORTABLE_SETTINGS := "OPENBLAS_CORETYPE=Prescott NUMBA_CPU_NAME=generic" "OPENBLAS_CORETYPE=Haswell"
test-portable: $(STAMP) ## the fast suite under two other OpenBLAS kernels and numba's generic CPU
	@for e in $(PORTABLE_SETTINGS); do echo "== $$e"; \
		env $$e $(PYTHON) -m pytest -q -n $(JOBS) -p no:cacheprovider -m "not slow" tests $(DOCTESTS) || exit 1; done

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
# Where the reproduction runs' cells go: BACKEND=dask (SCHEDULER=tcp://HOST:PORT for a cluster, else
# a LocalCluster of JOBS workers); unset, the local process pool.
BACKEND ?=
SCHEDULER ?=
BFLAG := $(if $(BACKEND),--backend $(BACKEND),) $(if $(SCHEDULER),--scheduler $(SCHEDULER),)

quickstart: $(STAMP) ## run the quickstart experiment on embedded data and print its table
	$(KB) run experiments/quickstart.yaml --jobs $(JOBS)
	$(KB) table results/quickstart
	@$(if $(VENV_PYTHON),echo "kernbench is installed in $(VENV): run '. $(VENV)/bin/activate' (the README's next line) to put kernbench on your PATH",true)

# Reruns a seeded sample of every recorded page's cells (experiments/values/*.csv, written with
# `kernbench verify SPEC --record RESULTS_DIR`) and compares each with its recorded value. Each
# spec's sample holds VERIFY_PER_SPEC seconds of recorded CPU, less when the specs together would
# pass VERIFY_BUDGET: a second of recorded CPU took about 2.5 s of worker time to rerun (data
# preparation and selection around the fits), so 900 s keeps `make verify` near 20 min at JOBS=2.
VERIFY_BUDGET ?= 900
VERIFY_PER_SPEC ?= 150
VERIFY_SEED ?= 0
verify: $(STAMP) ## rerun a sample of each published page's cells and compare with the recorded values
	@files="$(wildcard experiments/values/*.csv)"; n=$$(echo $$files | wc -w); \
	[ $$n -gt 0 ] || { echo "no values files in experiments/values" >&2; exit 2; }; \
	each=$$(( $(VERIFY_BUDGET) / n )); [ $$each -le $(VERIFY_PER_SPEC) ] || each=$(VERIFY_PER_SPEC); \
	status=0; for f in $$files; do \
		$(KB) verify $$(basename $$f .csv) --values $$f --budget $$each \
			--seed $(VERIFY_SEED) --jobs $(JOBS) || status=1; done; exit $$status

bench: $(STAMP)
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(PYTHON) $$f || exit 1; done

faults: $(STAMP) ## fault harness: kills, fuzzed specs, Dask, signals, worker kills, silent schedulers, huge inputs, symlinks, plug-ins, PID-only signals
	$(PYTHON) benchmarks/fault_harness.py

# reproduce runs the five papers one after the other (CG-Boost last, its hours), each step resumable:
# rerun the same command after a stop and every spec skips its finished cells. It first prints what
# is known of the time: the recorded wall time of each target (docs/papers/*.md, "Run time") and,
# for each spec with a store under results/ already, `kernbench status`'s estimate of what remains.
REPRO_SPECS := lin_li_table1 lin_li_table2 uci_stumps uci_fourier_perceptron spam_stumps \
	multiclass_uci exrm_table1 exrm_table3 exrm_equivalence exrm_fig1_lambda exrm_fig1_time \
	multiboost_cw cgboost_table2 cgboost_table3_4 cgboost_fig1 cgboost_fig4 cgboost_table5
reproduce: $(STAMP) ## all five papers: Lin & Li, CGENS, ExRM, MultiBoost_cw, CG-Boost (resumable)
	@$(MAKE) --no-print-directory reproduce-estimate
	$(MAKE) reproduce-lin-li
	$(MAKE) reproduce-cgens
	$(MAKE) reproduce-exrm
	$(MAKE) reproduce-multiboost-cw
	$(MAKE) reproduce-cgboost
	@$(MAKE) --no-print-directory reproduce-estimate

# The time `make reproduce` needs, printed before it starts (and after it ends): recorded wall
# times at JOBS=2 on a 2-core machine, then the estimate of what remains for stores already begun.
reproduce-estimate: $(STAMP)
	@echo "make reproduce at JOBS=2 on 2 cores, recorded (docs/papers/*.md, Run time):"
	@echo "  reproduce-lin-li ~41 min, reproduce-cgens ~3 h 23 min, reproduce-exrm ~6 min,"
	@echo "  reproduce-multiboost-cw ~48 min, reproduce-cgboost ~2 h (3.0 h of one core):"
	@echo "  about 7 h in all from an empty results/ (docs/performance.md: where it goes)"
	@for s in $(REPRO_SPECS); do \
		if [ -f results/$$s/results.sqlite ]; then \
			$(KB) status results/$$s --jobs $(JOBS) | grep -E "cells finished|^estimate|nothing remains" \
				| sed "s|^|  $$s: |"; \
		fi; done

reproduce-lin-li: $(STAMP) ## Lin & Li Tables I-II and Fig. 2 (100 runs by default; REALISATIONS=N to cap)
	$(KB) run experiments/lin_li_table1.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/lin_li_table1 --out results/lin_li_table1.md
	$(KB) run experiments/lin_li_table2.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) --reuse results/lin_li_table1
	$(KB) table results/lin_li_table2 --out results/lin_li_table2.md
	$(KB) run experiments/lin_li_fig2.yaml --jobs $(JOBS) $(BFLAG)
	$(KB) plot results/lin_li_fig2 --kind boundary --out results/figures

reproduce-cgens: $(STAMP) ## Shen & Liu Tables I-IV and Figs 1, 2, 3, 5 (REALISATIONS=N to cap)
	$(KB) run experiments/uci_stumps.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/uci_stumps --out results/uci_stumps.md
	$(KB) run experiments/uci_fourier_perceptron.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/uci_fourier_perceptron --out results/uci_fourier_perceptron.md
	$(KB) run experiments/spam_stumps.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/spam_stumps --out results/spam_stumps.md
	$(KB) plot results/spam_stumps --kind fig5 --out results/figures
	$(KB) run experiments/multiclass_uci.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/multiclass_uci --out results/multiclass_uci.md
	$(KB) plot results/multiclass_uci --kind fig3 --out results/figures
	$(KB) run experiments/cgens_fig1.yaml --jobs $(JOBS) $(BFLAG)
	$(KB) plot results/cgens_fig1 --kind boundary_trace --out results/figures
	$(KB) run experiments/cgens_fig2.yaml --jobs 1 $(BFLAG)
	$(KB) plot results/cgens_fig2 --kind time --out results/figures

reproduce-cgens-pendigits: $(STAMP) ## Table III's protocol on pendigits, the row the paper names without a number (not in reproduce-cgens: hours)
	$(KB) run experiments/multiclass_pendigits.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/multiclass_pendigits --out results/multiclass_pendigits.md

reproduce-exrm: $(STAMP) ## Guo, Wang & Ling Tables 1-3, Fig. 1 and the equivalence experiment (REALISATIONS=N to cap)
	$(KB) run experiments/exrm_table1.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/exrm_table1 --out results/exrm_table1.md
	$(KB) run experiments/exrm_table2.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) --reuse results/exrm_table1
	$(KB) table results/exrm_table2 --out results/exrm_table2.md
	$(KB) run experiments/exrm_table3.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/exrm_table3 --out results/exrm_table3.md
	$(KB) paper exrm-table3 results/exrm_table3 --out results/exrm_table3_average.md
	$(KB) run experiments/exrm_equivalence.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) --reuse results/exrm_table1
	$(KB) paper exrm-equivalence results/exrm_equivalence --out results/exrm_equivalence.md
	$(KB) run experiments/exrm_fig1_lambda.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) plot results/exrm_fig1_lambda --kind exrm_fig1 --out results/figures
	$(KB) run experiments/exrm_fig1_convergence.yaml --jobs $(JOBS) $(BFLAG)
	$(KB) plot results/exrm_fig1_convergence --kind exrm_fig1 --out results/figures
	$(KB) run experiments/exrm_fig1_time.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) plot results/exrm_fig1_time --kind exrm_fig1 --out results/figures

reproduce-cgboost: $(STAMP) ## Bi, Zhang & Bennett Tables 2-5 (Table 2 at TR1 and TR2), Figs 1-4, the benchmark (hours; REALISATIONS=N to cap)
	$(KB) run experiments/cgboost_table2.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/cgboost_table2 --out results/cgboost_table2.md
	$(KB) run experiments/cgboost_table3_4.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/cgboost_table3_4 --out results/cgboost_table3_4.md
	$(KB) plot results/cgboost_table3_4 --kind cgboost_fig2 --out results/figures
	$(KB) plot results/cgboost_table3_4 --kind cgboost_fig3 --out results/figures
	$(MAKE) reproduce-cgboost-figs
	$(PYTHON) benchmarks/bench_cgboost.py --out results/bench_cgboost.csv

# The parts of reproduce-cgboost that run in minutes here: the 1-norm rows of Tables 2-4 (their
# 2-norm rows need every kernel column), Fig. 1, Fig. 4 and Table 5.
CGB_LP := $(foreach m,linear RBF composite mixture,--only method=$(m)-1n)
CGB_LP34 := $(foreach m,L Q R LQ-comp LR-comp LQR-comp LQR-mix LQR-reg,--only method=$(m)-1n)
reproduce-cgboost-light: $(STAMP) ## CG-Boost in about an hour: 1-norm rows of Tables 2-4, Table 5, Figs 1-4 (REALISATIONS=N to cap)
	$(KB) run experiments/cgboost_table2.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) $(CGB_LP)
	$(KB) table results/cgboost_table2 --out results/cgboost_table2.md
	$(KB) run experiments/cgboost_table3_4.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) $(CGB_LP34)
	$(KB) table results/cgboost_table3_4 --out results/cgboost_table3_4.md
	$(KB) plot results/cgboost_table3_4 --kind cgboost_fig2 --out results/figures
	$(KB) plot results/cgboost_table3_4 --kind cgboost_fig3 --out results/figures
	$(MAKE) reproduce-cgboost-figs

# Fig. 1 (toy regression), Fig. 4 (improper C) and Table 5 (iterations vs training size). Table 5
# runs every cell but one: our 1-norm TR2 column (not the paper's) at 10 000 points reaches its
# 1000-column cap after about 2 h on one core, longer than all the rest of Table 5 together and a
# floor no number of workers lowers; reproduce-cgboost-table5-10k-tr2 runs it into the same store.
T5_SMALL := --only dataset=letter-1k --only dataset=letter-2k --only dataset=letter-5k
T5_10K := --only dataset=letter-10k
reproduce-cgboost-figs: $(STAMP)
	$(KB) run experiments/cgboost_fig1.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/cgboost_fig1 --out results/cgboost_fig1.md
	$(KB) plot results/cgboost_fig1 --kind cgboost_fig1 --out results/figures
	$(KB) run experiments/cgboost_fig4.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) plot results/cgboost_fig4 --kind cgboost_fig4 --out results/figures
	$(KB) run experiments/cgboost_table5.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) $(T5_SMALL)
	$(KB) run experiments/cgboost_table5.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) $(T5_10K) \
		--only method=mixture --only method=mixture-1n
	$(KB) table results/cgboost_table5 --out results/cgboost_table5.md
	$(KB) table results/cgboost_table5 --value fit_time_s --out results/cgboost_table5_time.md

reproduce-cgboost-table5-10k-tr2: $(STAMP) ## Table 5's one left-out cell: our 1-norm TR2 column at 10 000 points (about 2 h on one core)
	$(KB) run experiments/cgboost_table5.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG) $(T5_10K) \
		--only method=mixture-1n-TR2
	$(KB) table results/cgboost_table5 --out results/cgboost_table5.md
	$(KB) table results/cgboost_table5 --value fit_time_s --out results/cgboost_table5_time.md

reproduce-multiboost-cw: $(STAMP) ## Lin et al. (ACCV 2012) Figs 1, 2 and 6 (REALISATIONS=N to cap)
	$(KB) run experiments/multiboost_cw.yaml --jobs $(JOBS) $(BFLAG) $(RFLAG)
	$(KB) table results/multiboost_cw --out results/multiboost_cw.md
	$(KB) plot results/multiboost_cw --kind multiboost_cw --out results/figures
	$(KB) paper multiboost-cw-convergence results/multiboost_cw --out results/multiboost_cw_convergence.md
	OMP_NUM_THREADS=1 $(PYTHON) benchmarks/bench_fcd.py --repeats 1 --out-dir results
	$(KB) paper multiboost-cw-fig6 --csv results/bench_fcd_fig6.csv --out results/figures/multiboost_cw_fig6.png

docs: $(STAMP) ## build the documentation site into site/ (warnings are errors, as in `make test`)
	$(PYTHON) -m mkdocs build --strict

# The figures the reproduction pages show, copied from what the reproduction targets drew from
# their stores (run the reproduce-* targets first).
docs-figures:
	cp results/figures/boundary_threenorm-2d.png docs/lin_li_fig2.png
	cp results/figures/boundary_trace_circle.png docs/cgens_fig1.png
	cp results/figures/fig5_spambase.png docs/cgens_fig5_spambase.png
	cp results/figures/exrm_fig1_lambda.png docs/papers/exrm_fig1_lambda.png
	cp results/figures/exrm_fig1_convergence.png docs/papers/exrm_fig1_convergence.png
	cp results/figures/exrm_fig1_time.png docs/papers/exrm_fig1_time.png
	cp results/figures/multiboost_cw_fig6.png docs/papers/multiboost_cw_fig6.png
	cp results/figures/multiboost_cw_figs1_2.png docs/papers/multiboost_cw_figs1_2.png
	cp results/figures/cgboost_fig2_pendigits-odd_LQR-mix-1n.png docs/papers/cgboost_fig2_pendigits.png
	cp results/figures/cgboost_fig3_pendigits-odd.png docs/papers/cgboost_fig3_pendigits.png
	cp results/figures/cgboost_fig1_toy.png docs/papers/cgboost_fig1_toy.png
	cp results/figures/cgboost_fig4_pendigits-odd.png docs/papers/cgboost_fig4_pendigits.png

clean:  # keeps .venv (remove it by hand to start afresh)
	rm -rf .pytest_cache .ruff_cache build dist site *.egg-info $(STAMP)
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
