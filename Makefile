PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: install demo test lint bench bench-smoke clean

$(BIN)/tooldisc: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,spark,fast]'
	touch $(BIN)/tooldisc

install: $(BIN)/tooldisc

demo: install
	$(BIN)/tooldisc eval --k 15

test: install
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=15
	$(MAKE) --no-print-directory bench-smoke

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/tooldisc bench --tools 180,10000,100000

bench-smoke: install
	$(BIN)/tooldisc bench --tools 180,2000 --queries 50 --repeats 2 --out /tmp/tooldisc-bench-smoke.json

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
