"""The bindable checkers (rtl/checkers/, docs/checkers.md) in simulation.

babelfish_tlb_chk is bound (`bind BabelFishTlb ...`, Verilator `--assert`) into babelfish_formal
(the smallest BabelFishTlb: a short build and a small VPN space, so the random test looks up the
tracked context and page often); the tracked context and page S is a constant of the bind
(vpn 2, pcid 1, ccid 1: a page and a process of the random test's pools). Cases:

* the random test of tb/babelfish with the checker bound passes, and the checker saw hits of S;
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
SYM = {"sym_vpn": 2, "sym_pcid": 1, "sym_ccid": 1}
NAME = "chk_" + CONFIG
OPS = "2000"


def _run(cases, *, fail=True, extra_env=None):
    if not available(CONFIG):
        pytest.skip(f"{CONFIG} not generated (make)")
    m = load_manifest(CONFIG)
    bind = SIM_BUILD / NAME / "bind.sv"
    bind.parent.mkdir(parents=True, exist_ok=True)
    text = checkers.bind_text(m, SYM, in_assume=0, out_assume=0)
    if not bind.exists() or bind.read_text() != text:
        bind.write_text(text)
    return run_cocotb(name=NAME, sources=m.sources + checkers.sources(m) + [bind],
                      toplevel=m.module, test_module="checkers.tests_bind", run="_".join(cases),
                      testcases=list(cases), build_args=["--assert", "+define+XLAT_CHK_STATS"],
                      extra_env={"XLAT_CONFIG": CONFIG, "XLAT_MANIFEST": str(m.path),
                                 **(extra_env or {})},
                      fail=fail, rerun_waves=fail)


def test_random_bound():
    _run(["test_random_bound"], extra_env={"XLAT_RANDOM_OPS": OPS})


def test_planted_input_violation():
    _run(["test_fill_held"])
    res = _run(["test_fill_changed_while_stalled"], fail=False)
    log = (SIM_BUILD / NAME / "test_fill_changed_while_stalled" / "sim.log").read_text()
    assert not res.ok, "the checker let a fill change while stalled pass"
    assert "c_fill.r_hold" in log, "the failure is not the fill channel rule:\n" + log[-2000:]
