"""pytest entry of the AXI tops' testbench (docs/packaging.md "AXI", docs/axi-testplan.md).

Two kinds of cases, each on the `*_axi` configurations `make` writes:

* the block's own constrained-random test run on its AXI top (``<block>.tests_random``: the
  environments take the AXI top as an option, xlat_tb/axi.py): the memory behind cocotbext-axi
  channel models with pauses on every channel and out-of-order responses, the CSR traffic
  through cocotbext-axi's AxiLiteMaster; shorter runs than the plain configuration's (the
  block's logic is the plain test's; these runs check the wrapper around it);
* the wrappers' directed tests (``axi.tests_directed``), on pml_default_axi (CSR slave, write
  master) and walker_rv39_axi (counter registers, read and strobed-write master).

`make test` runs pml_default_axi and walker_rv39_axi (two Verilator builds); the other two tops
are `extended` (`make soak`): a build each, and XlatMmu's random test is long.

    .venv/bin/python -m pytest tb/axi -n 0 -q
    XLAT_SEED=5 .venv/bin/python -m pytest tb/axi -k "walker_rv39_axi-random"
"""

import ast
import os
from pathlib import Path

import pytest

from xlat_tb.regression import LENGTHS
from xlat_tb.runner import run_config
from xlat_tb.seed import override

# (AXI top, block whose random test runs on it, its length here, extended)
RANDOM = [
    ("pml_default_axi", "pml", 3000, False),
    ("walker_rv39_axi", "walker", 300, False),
    ("perforated_default_axi", "perforated", 500, True),
    ("mmu_rv_axi", "mmu", 800, True),
]
# AXI top -> its directed module in tb/axi (one simulation each)
DIRECTED = {"pml_default_axi": "tests_pml", "walker_rv39_axi": "tests_walker"}


def _tests(module: str) -> list[str]:
    """The module's ``__all__``: its own cocotb tests and the block's it runs on the top."""
    tree = ast.parse((Path(__file__).parent / f"{module}.py").read_text())
    return next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                and any(getattr(t, "id", "") == "__all__" for t in n.targets))


def _param(args, extended, id):
    return pytest.param(*args, id=id, marks=[pytest.mark.extended] if extended else [])


@pytest.mark.parametrize("config,block,length", [
    _param((c, b, n), ext, f"{c}-random") for c, b, n, ext in RANDOM])
def test_random_on_axi_top(config, block, length):
    """The block's random test through the AXI top (its length: this table's, unless the
    block's length variable is set, as `make soak` does)."""
    var = LENGTHS[block][0]
    env = {var: os.environ.get(var) or str(length)}
    run_config(config, f"{block}.tests_random", run="random_axi", testcases=["test_random"],
               extra_env=env, seed=override())


@pytest.mark.parametrize("config", list(DIRECTED))
def test_directed(config):
    """Every directed test of the top's module in one simulation (a Verilator build and a
    simulator start each, shared with the random case's build)."""
    module = DIRECTED[config]
    run_config(config, f"axi.{module}", run="directed", testcases=_tests(module))
