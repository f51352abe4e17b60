# alterflow developer commands. Everything starts from `make install`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
UV_VERSION := 0.13.9
STAMP  := $(VENV)/.installed

export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export PYTHONUNBUFFERED := 1

.PHONY: install demo demo-s3 test test-compose test-fleet redis test-fast bench spark-answers lock clean airflow browser lint format

# The project's own modules compiled ahead: this environment sets PYTHONDONTWRITEBYTECODE, so each
# `alterflow` process would compile every module it imports (about 50 ms of a 0.2 s query).
# compileall rewrites only what changed since.
PROJECT_DIRS := alterflow catalog expectations spark_jobs dags plugins
install: $(STAMP)
	@$(BIN)/python -m compileall -q $(PROJECT_DIRS) >/dev/null

# Rebuilt only when the lock or the project metadata changes, so a second run is instant.
$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --disable-pip-version-check "uv==$(UV_VERSION)"
	$(BIN)/uv pip sync --python $(BIN)/python -q --compile-bytecode requirements.lock  # as pip does: no first import compiles
	$(BIN)/uv pip install --python $(BIN)/python -q --no-deps -e .
	rm -rf alterflow.egg-info  # the build's leftover: on sys.path (tests) it is a second copy of the distribution, entry points and all
	$(BIN)/python -m alterflow.install_check
	@# Spark drivers started here then start about twice as fast (docs/heavyweight.md#spark-start-up);
	@# without Java the rest of alterflow still works, so a failure only says so.
	$(BIN)/alterflow spark-archive || echo "Spark drivers will start without the archive of Spark's classes"
	@touch $(STAMP)

# Re-resolve the pinned set (pyspark-client is excluded: it would overwrite pyspark's Python files).
lock:
	$(BIN)/uv pip compile pyproject.toml --extra airflow --extra celery --extra s3 --extra dev --python-version 3.11 \
	    --excludes requirements.excludes -o requirements.lock --no-header

# A fresh home each time, so the demo always starts from an empty catalog.
DEMO_HOME := $(abspath .alterflow/demo)
# DEMO_WAREHOUSE=s3://bucket/prefix puts both demo catalogs' warehouses in a bucket (demo-s3 below).
DEMO_WAREHOUSE ?=
DEMO_SQL := ALTERFLOW_HOME=$(DEMO_HOME) $(if $(DEMO_WAREHOUSE),ALTERFLOW_WAREHOUSE='$(DEMO_WAREHOUSE)/demo') $(BIN)/alterflow sql -f
DEMO_MIGRATE := ALTERFLOW_HOME=$(DEMO_HOME)/shop $(if $(DEMO_WAREHOUSE),ALTERFLOW_WAREHOUSE='$(DEMO_WAREHOUSE)/shop') \
    $(BIN)/alterflow migrate --dir examples/migrations
demo: install
	rm -rf $(DEMO_HOME)
	$(DEMO_SQL) examples/lightweight.sql
	$(DEMO_SQL) examples/heavyweight.sql
	@echo "--- the next ALTER is expected to fail validation and be cancelled:"
	@! $(DEMO_SQL) examples/heavyweight_fails.sql
	$(DEMO_SQL) examples/heavyweight_after.sql
	@echo "--- migrations as code: lint (with the analysis of today's data), apply, status (docs/migrations.md)"
	$(DEMO_MIGRATE) lint --analyze
	$(DEMO_MIGRATE) apply
	$(DEMO_MIGRATE) status

# The same demo with its warehouse in a fresh bucket of moto's S3 server, started for the run.
# Against your own store: `make demo DEMO_WAREHOUSE=s3://bucket/new-prefix` with the AWS variables
# set (docs/deploy.md); a prefix holds one catalog's warehouse, so use a new one each run.
demo-s3: install
	$(BIN)/python deploy/s3_demo.py $(MAKE) --no-print-directory demo

# Everything but the Compose stack (below), which CI runs as a step of its own (.ci/run): on two
# cores it takes about 7 minutes from nothing (Docker's install, a debootstrap base, image builds).
# Two pytest processes (pytest-xdist), a test file each at a time: alone, the suite keeps about half
# of two cores busy, the rest of its time waits on JVMs, servers and subprocesses (docs/limits.md).
# TEST_PROCESSES=0 runs it in this one process.
TEST_PROCESSES ?= 2
test: install browser lint
	$(BIN)/python -m pytest -q -p no:cacheprovider --timeout=1200 --durations=80 -m "not compose and not fleet" -n $(TEST_PROCESSES) --dist loadfile  # --durations: where the time goes, printed at the end

# docker-compose.yaml built and started for real: installs Debian's docker.io and starts dockerd
# when needed (root or sudo), builds on a debootstrap base. .ci/run runs it after `make test`.
test-compose: install
	$(BIN)/python -m pytest -q -p no:cacheprovider --timeout=2400 -m compose

# Airflow on the CeleryExecutor (make airflow AIRFLOW_EXECUTOR=celery's command) with two workers, a
# Redis of the test's own and PostgreSQL: a worker killed mid-conversion and one mid-load, then ALTERs
# on five tables while loads land, with the catalog, the broker and the scheduler restarted; then the
# fleet benchmark's team load, 50 ALTERs on 20 tables, judged by its end state
# (tests/e2e/test_airflow_fleet.py). .ci/run runs it after the Compose stack.
test-fleet: install redis
	$(BIN)/python -m pytest -q -p no:cacheprovider --timeout=1800 -m fleet

# ruff (configured in pyproject.toml): lint, and a format check that changes nothing.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Airflow on this machine, no Docker: `airflow standalone` (scheduler, dag-processor, triggerer,
# api-server) with the project's dags and plugins, LocalExecutor, user admin/admin, and the same
# ALTERFLOW_* catalog and warehouse as the CLI (deploy/airflow_env.py); Airflow's own metadata in
# PostgreSQL when one answers at 127.0.0.1:5432, else SQLite (the banner says which). AIRFLOW_PORT (8080) and
# ALTERFLOW_AIRFLOW_HOME (airflow/ under ALTERFLOW_HOME if set, else .alterflow/airflow) may be overridden. Foreground; Ctrl-C stops everything.
# AIRFLOW_EXECUTOR=celery runs the CeleryExecutor instead, with AIRFLOW_WORKERS (2) Celery workers on the
# Redis at ALTERFLOW_CELERY_BROKER (redis://127.0.0.1:6379/0); it needs the PostgreSQL metadata database.
AIRFLOW_PORT ?= 8080
AIRFLOW_EXECUTOR ?= $(or $(ALTERFLOW_AIRFLOW_EXECUTOR),local)
AIRFLOW_WORKERS ?= 2
airflow: install
	$(BIN)/python deploy/airflow_env.py --port $(AIRFLOW_PORT) --executor $(AIRFLOW_EXECUTOR) --workers $(AIRFLOW_WORKERS) standalone

# Headless Chromium for the browser test (Debian's packages, installed when missing; needs root or sudo).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; else \
	    echo "installing Debian's chromium and chromium-driver (apt-get)"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	        chromium chromium-driver fonts-liberation >/dev/null; \
	fi

# Redis's server for the fleet test, which starts a broker of its own (Debian's package, installed
# when missing; needs root or sudo).
redis:
	@if command -v redis-server >/dev/null; then :; else \
	    echo "installing Debian's redis-server (apt-get)"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends redis-server >/dev/null; \
	fi

# Spark's answers to the query corpus of tests/query/test_differential.py, recorded again (about
# 5 minutes): after a change of the corpus, its tables or Spark's version.
spark-answers: install
	$(BIN)/python -m tests.query.spark_answers

bench: install redis
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .alterflow
