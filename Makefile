# The two commands of the README: `make demo` and `make test`. Each sets itself up:
# the virtual environment is created and the project installed into it on first use.

PYTHON ?= python3
export NO_MKDOCS_2_WARNING := 1
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# empty: the published set (every job at 1M and 5M rows, the scale jobs at 1M, 5M and 20M; python -m bench --help)
BENCH_ARGS ?=
# the tests run on two pytest-xdist workers (one Spark session each, local[2]), whole files per worker;
# a worker that dies is not replaced (the run stops, naming the test): xdist's file-by-file scheduling
# can hang when it replaces a crashed worker (pytest-xdist issue 1378)
PYTEST_WORKERS ?= 2
# Apache Hudi's Spark bundle, the oracle of the interop tests (tests/test_apache_hudi_interop.py) and of
# `hudi-conformance run --impl hudi_spark`: fetched once with Maven into .cache/apache-hudi (not committed).
# 1.2.0 (table version 9, as 1.2.1) for Spark 3.5 / Scala 2.12: Maven Central gave us no jar of 1.2.1's Spark
# bundles and no Spark 4 bundle of any release, so Spark 3.5 is the newest line it runs on here, and the
# project's pyspark is pinned to it (pyproject.toml). HUDI_VERSION=1.2.1 fetches that release where it is served.
HUDI_VERSION ?= 1.2.0
HUDI_SPARK   ?= 3.5
HUDI_SCALA   ?= 2.12
HUDI_CACHE   := .cache/apache-hudi
HUDI_ARTIFACT := hudi-spark$(HUDI_SPARK)-bundle_$(HUDI_SCALA)
HUDI_BUNDLE  := $(HUDI_CACHE)/$(HUDI_ARTIFACT)-$(HUDI_VERSION).jar
export HUDI_SPARK_BUNDLE ?= $(abspath $(HUDI_BUNDLE))

.PHONY: apache-hudi apache-hudi-or-skip mutants demo test lint typecheck imports unit docs docs-serve bench slow ci-slow clean check-python check-java

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory check-python
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $(STAMP)

check-python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "hudi-spec needs Python 3.11 or newer (set PYTHON=...)")'

check-java:
	@command -v java >/dev/null 2>&1 || { echo "Spark needs Java 17 or newer on PATH (e.g. apt-get install openjdk-17-jre-headless)"; exit 1; }

# Apache Hudi's Spark bundle (idempotent: nothing is fetched when the jar is there)
apache-hudi:
	@if [ ! -s $(HUDI_BUNDLE) ]; then \
	  command -v mvn >/dev/null 2>&1 || { echo "make apache-hudi needs Maven (mvn) on PATH (e.g. apt-get install maven)"; exit 1; }; \
	  mkdir -p $(HUDI_CACHE); \
	  mvn -q -B -Dstyle.color=never dependency:copy -Dartifact=org.apache.hudi:$(HUDI_ARTIFACT):$(HUDI_VERSION) \
	    -DoutputDirectory=$(HUDI_CACHE) -Dmdep.overWriteIfNewer=true > $(HUDI_CACHE)/maven.log 2>&1 || { \
	    rm -f $(HUDI_BUNDLE); tail -n 20 $(HUDI_CACHE)/maven.log; \
	    echo "could not fetch org.apache.hudi:$(HUDI_ARTIFACT):$(HUDI_VERSION) with Maven"; exit 1; }; \
	fi
	@echo "Apache Hudi $(HUDI_VERSION) (Spark $(HUDI_SPARK), Scala $(HUDI_SCALA)): $(abspath $(HUDI_BUNDLE))"

# `make test` goes on without the bundle: the tests that need Apache Hudi report one skip line with the reason
apache-hudi-or-skip:
	@$(MAKE) --no-print-directory apache-hudi || echo "the tests that need Apache Hudi will be skipped"

demo: $(STAMP) check-java
	$(BIN)/python -m reference.demo $(DEMO_ARGS)

test: $(STAMP) check-java apache-hudi-or-skip lint typecheck imports unit docs

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

unit: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -n $(PYTEST_WORKERS) --dist loadfile --max-worker-restart=0 --durations=10 $(PYTEST_ARGS)

# The tests marked slow, on the workers of `make unit`. `make ci-slow` is what CI runs after `make test`:
# derandomized like it (the ci hypothesis profile), without the explorations (marker explore: random trials
# by the hundred, the long fuzz, the whole corpus on every engine). `make slow` runs every slow test, the
# explorations included, with random and many hypothesis examples (the long profile). pytest's exit status 5
# (no test selected, e.g. PYTEST_ARGS naming none of them) is not a failure.
SLOW_PYTEST = $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --max-worker-restart=0 --durations=10

ci-slow: $(STAMP) check-java
	$(SLOW_PYTEST) -m "slow and not explore" $(PYTEST_ARGS) || test $$? -eq 5

slow: $(STAMP) check-java
	HYPOTHESIS_PROFILE=long $(SLOW_PYTEST) -m slow $(PYTEST_ARGS) || test $$? -eq 5

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis

# The mutation harness (conformance/mutants.py): each curated bug of reference/ applied alone to a copy and
# run against the corpus (then the machine's ci profile); minutes of work, run alone, never in `make test`.
mutants: .venv/.installed-stamp
	.venv/bin/python -m conformance.mutants --report mutants-report.md
