# Two entry points for a fresh machine: `make demo` and `make test`.

# Python's bytecode cache stays on for what make runs, whatever the environment says: with
# PYTHONDONTWRITEBYTECODE set, each of the suite's Python processes (hundreds of CLI and server
# subprocesses) compiles worldkit from source again, about 0.35 s a server start here, and pytest
# rewrites every test module's asserts anew in each worker (some 7 s of each worker's collection).
# The caches are `__pycache__/` folders beside the sources (ignored by git).
unexport PYTHONDONTWRITEBYTECODE
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast install clean

$(STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	@# the distribution was called `worldkit` before it became `worldkit-bench`: an older venv's copy goes
	$(BIN)/pip uninstall -q -y worldkit 2>/dev/null || true
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	@# setuptools leaves a build-time worldkit.egg-info here; run from this folder it would shadow the
	@# installed metadata (entry points, the editable marker inspect_ai reads), so it goes.
	rm -rf worldkit.egg-info
	touch $(STAMP)

install: $(STAMP)

DEMO_STORE := sqlite:///out/demo/store.db
DEMO_TASK := overlays/pharmaco_demo/qualification-sweep

demo: $(STAMP)
	@rm -rf out/demo && mkdir -p out/demo
	@echo "== 1. materialize: what EMP-QC-001 sees on 2026-03-02 at revision r2"
	@$(BIN)/worldkit materialize --world pharmaco_demo --rev r2 --date 2026-03-02 --seat EMP-QC-001 --out out/demo/projection
	@echo "== 2. verify: the world and its tasks against the frozen manifests"
	@$(BIN)/worldkit verify --world pharmaco_demo
	@echo "== 3. apply a task overlay: sealed candidate and verifier packages"
	@$(BIN)/worldkit overlay apply $(DEMO_TASK) --out out/demo/task
	@echo "== 4. run the oracle and the noop agent through the seat's MCP tools, and grade them"
	@$(BIN)/worldkit run --overlay $(DEMO_TASK) --agent oracle --judge facts --out out/demo/runs --store $(DEMO_STORE)
	@$(BIN)/worldkit run --overlay $(DEMO_TASK) --agent noop --judge facts --out out/demo/runs --store $(DEMO_STORE)
	@echo "== 5. report"
	@$(BIN)/worldkit report out/demo/runs --html out/demo/report.html

# The whole suite (slow end-to-end tests included), spread over the cores by pytest-xdist, its scratch
# (TMPDIR) on a RAM disk where there is one (/dev/shm): the suite creates and deletes hundreds of
# thousands of files, and ext4 scans past recently deleted inodes on every creation that follows
# (half the time of the file-heavy tests here). Set TEST_TMPDIR to choose the scratch folder.
test: $(STAMP)
	@$(call scratch_run,$(BIN)/python -m pytest -n auto --dist worksteal)

# The same, without the end-to-end tests marked `slow` (make test and CI run those too).
test-fast: $(STAMP)
	@$(call scratch_run,$(BIN)/python -m pytest -n auto --dist worksteal -m "not slow")

# $(1) with TMPDIR a fresh folder under $(TEST_TMPDIR) (default /dev/shm if writable, else $TMPDIR or
# /tmp), removed afterwards; the command's exit status is kept.
TEST_TMPDIR ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm)
define scratch_run
base="$(TEST_TMPDIR)"; scratch=$$(mktemp -d "$${base:-$${TMPDIR:-/tmp}}/worldkit-test-XXXXXX") && echo "test scratch (TMPDIR): $$scratch" && \
TMPDIR=$$scratch $(1); status=$$?; rm -rf "$$scratch"; exit $$status
endef

clean:
	rm -rf $(VENV) out .worldkit
