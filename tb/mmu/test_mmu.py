"""pytest entry of the XlatMmu testbench (docs/xlat-mmu.md).

One pytest test per (configuration, cocotb test of tests_directed.py); the directed tests of a
configuration share one simulation (xlat_tb/batch.py). Random multi-VM traffic against the
composed model is issue 12 part 5 (tests_random.py then joins).

    .venv/bin/python -m pytest tb/mmu                      # every configuration
    .venv/bin/python -m pytest tb/mmu -k "mmu_formal-"     # one configuration
"""

from pathlib import Path

import pytest

from xlat_tb.cases import cocotb_cases
from xlat_tb.regression import Regression
from xlat_tb.runner import run_case

CONFIGS = ["mmu_formal", "mmu_x86", "mmu_rv"]
# make soak only (tb/README.md "Tiers"): mmu_formal runs the RISC-V formats, mmu_x86 the
# block-RAM L2; mmu_rv (both) is the third build of the same tests
EXTENDED = {"mmu_rv"}
CASES = cocotb_cases(Path(__file__).parent, suites=("directed",))


@pytest.mark.parametrize("config,suite,case,reg", [
    pytest.param(c, s, t, Regression(), id=f"{c}-{t}",
                 marks=[pytest.mark.extended] if c in EXTENDED else [])
    for c in CONFIGS for s, t in CASES])
def test_mmu(config, suite, case, reg):
    run_case("mmu", config, suite, case, reg)
