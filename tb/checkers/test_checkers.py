"""The bindable checkers (rtl/checkers/, docs/checkers.md) in simulation.

babelfish_tlb_chk is bound (`bind BabelFishTlb ...`, Verilator `--assert`) into babelfish_formal
(the smallest BabelFishTlb: a short build), both sides asserted; the tracked context and page S
is the first fill's after reset or an invalidation of everything (SYM_FROM_FILL = 1: a constant S
is rarely looked up by the random test: 2000 operations with the constant {vpn 2, pcid 1,
ccid 1} gave 3 lookups of S and no hit; re-chosen after each kind-0 invalidation, seed 1 gives
6 responses to S in 2000 operations, 5 hits, all checked).
Cases:

* the random test of tb/babelfish with the checker bound passes; a directed sequence makes the
  isolation rule check private, shared (cross) hits of S and a PC-bit miss;
* a fill held while not ready passes (the control), the same fill with its PPN changed while
  not ready fails the simulation on the checker's fill channel rule (the planted violation).
"""

from __future__ import annotations

from xlat_tb import checkers
from xlat_tb.manifest import available, load_manifest
from xlat_tb.paths import SIM_BUILD
from xlat_tb.runner import run_cocotb

import pytest

CONFIG = "babelfish_formal"
SYM = {"sym_sel_vpn": 0, "sym_sel_pcid": 0, "sym_sel_ccid": 0}   # unused: SYM_FROM_FILL
NAME = "chk_" + CONFIG


def _run(cases, *, config=CONFIG, fail=True, extra_env=None, in_assume=0):
    if not available(config):
        pytest.skip(f"{config} not generated (make)")
    m = load_manifest(config)
    name = "chk_" + config
    bind = SIM_BUILD / name / "bind.sv"
    bind.parent.mkdir(parents=True, exist_ok=True)
    more = {"SYM_FROM_FILL": 1} if m.module == "BabelFishTlb" else {}
    text = checkers.bind_text(m, SYM if m.module == "BabelFishTlb" else None,
                              in_assume=in_assume, out_assume=0, more=more)
    if not bind.exists() or bind.read_text() != text:
        bind.write_text(text)
    return run_cocotb(name=name, sources=m.sources + checkers.sources(m) + [bind],
                      toplevel=m.module, test_module="checkers.tests_bind", run="_".join(cases),
                      testcases=list(cases), build_args=["--assert", "+define+XLAT_CHK_STATS"],
                      extra_env={"XLAT_CONFIG": config, "XLAT_MANIFEST": str(m.path),
                                 **(extra_env or {})},
                      fail=fail, rerun_waves=fail)


def test_random_bound():
    # the random test's own length (make test's, or make soak's floor): a shorter run leaves
    # required coverage bins of tb/babelfish empty on some seeds (2000 operations: seeds 2, 4)
    _run(["test_random_bound", "test_isolation_directed"])


def test_planted_input_violation():
    _run(["test_fill_held"])
    try:
        ok = _run(["test_fill_changed_while_stalled"], fail=False).ok
    except RuntimeError:   # the runner's verdict when the simulator stops ($stop of an assertion)
        ok = False
    log = (SIM_BUILD / NAME / "test_fill_changed_while_stalled" / "sim.log").read_text()
    assert not ok, "the checker let a fill change while stalled pass"
    assert "c_fill.r_hold" in log, "the failure is not the fill channel rule:\n" + log[-2000:]


# every other block's checker bound in its formal configuration's random test (a Verilator
# build each: make soak only); the length is make test's for that block. The input side is
# left out (IN_ASSUME = 2): those tests drive bad input on purpose (unknown completion tags,
# memory responses nobody asked for: the blocks' "Bad input" rows), which the input rules
# would rightly flag; the outputs' rules are asserted.
OTHERS = {"walker": "walker_formal", "pml": "pml_formal", "devtlb": "devtlb_formal",
          "perforated": "perforated_formal", "mmu": "mmu_formal"}


@pytest.mark.extended
@pytest.mark.parametrize("block", sorted(OTHERS))
def test_block_random_bound(block):
    _run(["test_block_random_bound"], config=OTHERS[block], extra_env={"XLAT_CHK_BLOCK": block},
         in_assume=2)
