# Two entry points for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install clean

$(STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	@rm -rf out/demo
	@$(BIN)/worldkit materialize --world pharmaco_demo --rev r2 --date 2026-03-02 --seat EMP-QC-001 --out out/demo/projection

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) out .worldkit
