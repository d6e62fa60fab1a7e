"""pytest entry of the PrivCheck testbench (docs/privcheck.md).

`privcheck` is a test-only configuration (no named one: the check reaches the product inside
the walker and XlatMmu), generated on demand into build/sim/rtl_tb/privcheck/ by the project's
generator (xlat.Generate --block privcheck). One pytest case per cocotb test of
tests_directed.py (they share one simulation, xlat_tb/batch.py), and the lint of the wrapper,
which `make lint` does not see (it walks build/rtl/ only).

    .venv/bin/python -m pytest tb/privcheck
    .venv/bin/python -m pytest tb/privcheck -k exhaustive
"""

import subprocess
from pathlib import Path

import pytest

from xlat_tb.cases import cocotb_cases
from xlat_tb.generate import ensure_config
from xlat_tb.manifest import load_manifest
from xlat_tb.paths import REPO
from xlat_tb.regression import Regression
from xlat_tb.runner import run_case
from xlat_tb.verilator import verilator_env

CONFIG = "privcheck"
PARAMS: dict = {}   # the block has no parameters
CASES = cocotb_cases(Path(__file__).parent, suites=("directed",))


@pytest.mark.parametrize("config,suite,case,reg", [
    pytest.param(CONFIG, s, t, Regression(), id=f"{CONFIG}-{t}") for s, t in CASES])
def test_privcheck(config, suite, case, reg):
    run_case("privcheck", config, suite, case, reg, test_only=PARAMS)


def test_privcheck_lint():
    """The wrapper (and so xlat.common.PrivCheck) passes `verilator --lint-only -Wall` with the
    project's waivers only, as `make lint` runs every named configuration."""
    man = load_manifest(ensure_config("privcheck", CONFIG, PARAMS))
    r = subprocess.run(["verilator", "--lint-only", "-Wall", str(REPO / "rtl" / "lint" / "waivers.vlt"),
                        *man.sources, "--top-module", man.module],
                       capture_output=True, text=True, env=verilator_env(), timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
