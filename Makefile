# The README's two commands: `make run` and `make test`. Both set up everything from scratch.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PG_URL ?= postgres://postgres@127.0.0.1:5432/nekomem
REDIS_TEST_URL ?= redis://127.0.0.1:6379/15

.PHONY: install run test lint test-sqlite test-postgres bench bench-faults

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	$(PY) -m nekomem.embeddings.fetch
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) manage.py prepare
	$(PY) manage.py serve

# Style, the architecture's import and locking boundaries (nekomem/devtools/boundaries.py), the
# kernel's share of the code (kernel_share.py), modules by subject (module_size.py), types.
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m nekomem.devtools.boundaries
	$(PY) -m nekomem.devtools.kernel_share --quiet
	$(PY) -m nekomem.devtools.module_size
	$(VENV)/bin/mypy .

# Embedded default (SQLite + ORM broker), then PostgreSQL + Redis.
test-sqlite: install
	NEKOMEM_REQUIRE_MODELS=1 env -u DATABASE_URL -u REDIS_URL $(PY) -m pytest

test-postgres: install
	NEKOMEM_REQUIRE_MODELS=1 DATABASE_URL=$(PG_URL) REDIS_URL=$(REDIS_TEST_URL) $(PY) -m pytest

# The two databases' runs go side by side (each waits on its servers and browser as much as on the
# CPU); each one's output is printed whole when it ends.
test: lint
	$(MAKE) --no-print-directory --output-sync=target -j2 test-sqlite test-postgres

bench: install
	$(PY) bench/cache_throughput.py
	$(PY) bench/recall_eval.py --write-results
	$(PY) bench/recall_speed.py
	$(PY) bench/recall_realistic.py
	$(PY) bench/recall_index_changes.py
	$(PY) bench/import_facts.py
	$(PY) bench/extraction_throughput.py
	$(PY) bench/reflections_speed.py
	$(PY) bench/new_dialog_speed.py
	$(PY) bench/install_mode.py

# Mixed load with SIGKILLs and outages (about 15 minutes): not part of `make bench`.
bench-faults: install
	$(PY) bench/load_faults.py
