"""pytest entry of the XlatMmu testbench (docs/xlat-mmu.md).

One pytest test per (configuration, cocotb test of tests_directed.py and tests_random.py); the
directed tests of a configuration share one simulation (xlat_tb/batch.py). tests_random.py is
the random multi-VM traffic against the composed model (XLAT_MMU_REQS: make test 400, make
soak 50,000; failed seeds in seeds.txt, replayed by make test).

    .venv/bin/python -m pytest tb/mmu                      # every configuration
    .venv/bin/python -m pytest tb/mmu -k "mmu_formal-"     # one configuration
"""

from pathlib import Path

import pytest

from xlat_tb.cases import cocotb_cases
from xlat_tb.regression import cases
from xlat_tb.runner import run_case

CONFIGS = ["mmu_formal", "mmu_x86", "mmu_rv"]
# make soak only (tb/README.md "Tiers"): mmu_formal runs the RISC-V formats, mmu_x86 the
# block-RAM L2; mmu_rv (both) is the third build of the same tests
EXTENDED = {"mmu_rv"}
CASES = cocotb_cases(Path(__file__).parent)


@pytest.mark.parametrize("config,suite,case,reg", cases("mmu", CONFIGS, CASES, EXTENDED))
def test_mmu(config, suite, case, reg):
    run_case("mmu", config, suite, case, reg)
