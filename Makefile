PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export PYTHONDONTWRITEBYTECODE := 1
# The import package's folders (pyproject's package-dir): the editable install leaves them
# uncompiled, so install compiles them once, as pip does for every other installed package.
PACKAGE_DIRS := tooldisc cli discovery metrics gold reports canary agent evaluation

.PHONY: install demo test lint bench bench-smoke fuzz screenshots clean

$(BIN)/tooldisc: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,spark,fast]'
	$(BIN)/python -m compileall -q $(PACKAGE_DIRS)
	touch $(BIN)/tooldisc

# The query loops compiled ahead of time (docs/kernels.md): a no-op when the module matching the
# loops' sources and the numba, numpy and Python versions exists, so it runs on every install.
# Without a C compiler the install still succeeds (the JIT runs); CI's tests require the module.
install: $(BIN)/tooldisc
	$(BIN)/tooldisc kernels build || echo 'note: the compiled query loops were not built (a C compiler is needed); discovery runs them through numba JIT instead' >&2

demo: install
	$(BIN)/tooldisc eval --k 15

# The smoke bench runs first: it fails fast, and its first queries compile numba's loops into
# their on-disk cache once, instead of in each test process that first calls them.
test: install
	$(MAKE) --no-print-directory bench-smoke
	$(BIN)/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder --durations=15

# The fuzz properties (marked `fuzz`) at their large counts (tests/fuzzing.py).
fuzz: install
	TOOLDISC_FUZZ=1 $(BIN)/python -m pytest -m fuzz -n 2 --dist loadfile -q

# PNGs of every report kind at 500 and 1280 px (headless chromium; not committed): for review.
SCREENSHOTS ?= screenshots
screenshots: install
	$(BIN)/python -m tests.reports.browser $(SCREENSHOTS)

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/tooldisc bench --tools 180,10000,100000

bench-smoke: install
	$(BIN)/tooldisc bench --tools 180,2000 --queries 50 --repeats 2 --out /tmp/tooldisc-bench-smoke.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
