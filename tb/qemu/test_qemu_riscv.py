"""pytest entry of the QEMU cross-check of RISC-V translation (docs/qemu-crosscheck.md).

Per configuration (walker_rv39: Sv39 over Sv39x4, walker_rv48: Sv48 over Sv48x4):

* ``model``: QEMU (one process, every case) against the walker's reference model in the three
  modes (stage1, stage2, both), one for one, at least 2,000 addresses per mode;
* ``rtl``: the same cases of every mode through the NestedWalker RTL (cocotb, the walker
  environment; the request's mode), one for one against QEMU's results (the first
  XLAT_QEMU_RTL_CASES of each mode: 270 in make test, all under make soak K=test_qemu_riscv,
  which also draws fresh layouts).

    .venv/bin/python -m pytest tb/qemu -n 0 -s
    XLAT_SEED=7 .venv/bin/python -m pytest tb/qemu -k "walker_rv48 and model"

The two cases of a configuration share one layout and one QEMU run (same worker: both are in
the configuration's xdist group).
"""

from __future__ import annotations

import functools

import pytest

from xlat_tb.generate import skip_missing
from xlat_tb.paths import BUILD
from xlat_tb.qemu import QemuError, build_program, check_tools, run_qemu
from xlat_tb.regression import run_length
from xlat_tb.runner import run_config
from xlat_tb.seed import choose_seed

from .crosscheck import CONFIGS, run
from .rv_machine import RAM_MIB
from .rv_modes import DEVIATIONS, MODES

PER_MODE = 2000                # the floor: addresses per mode


@functools.lru_cache(maxsize=None)
def _report(config: str):
    try:
        check_tools()
    except QemuError as e:
        skip_missing(str(e))
    seed = choose_seed()
    print(f"\n[xlat] qemu/{config}: seed {seed} (reproduce: XLAT_SEED={seed} "
          f".venv/bin/python -m pytest tb/qemu -k {config})", flush=True)
    return run(config, seed=seed, per_mode=PER_MODE)


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("case", ["model", "rtl"])
def test_qemu_riscv(config, case):
    rep = _report(config)
    if case == "model":
        print("\n" + rep.table(), flush=True)
        bad = rep.mismatches
        assert not bad, (f"{len(bad)} cases differ between QEMU and the model (after QEMU 7.2's "
                         f"documented deviations):\n" + "\n".join(map(str, bad[:20])))
        for mode in MODES:
            n = rep.counts[mode]
            assert n["addresses"] >= PER_MODE, f"{mode}: {n['addresses']} addresses"
            assert 0 < n["traps"] < n["compared"], f"{mode}: {n['traps']} traps"
        # every deviation the docs list is still QEMU's behaviour somewhere in the run
        seen = {d for mode in MODES for d in DEVIATIONS if rep.counts[mode][d]}
        assert seen == set(DEVIATIONS), f"deviations never exercised: {set(DEVIATIONS) - seen}"
        return
    run_config(config, "qemu.tests_rtl", run="qemu_rtl",
               extra_env={"XLAT_QEMU_CASES": str(BUILD / "qemu" / config / "rtl_cases.json"),
                          "XLAT_QEMU_RTL_CASES": str(run_length("qemu"))})


def test_qemu_bad_blob(tmp_path):
    """A blob without the magic: the program says BADBLOB and QEMU exits with code 4, which
    run_qemu reports (no hang, no silent empty result)."""
    try:
        check_tools()
    except QemuError as e:
        skip_missing(str(e))
    elf = build_program(BUILD / "qemu")
    blob = tmp_path / "bad.bin"
    blob.write_bytes(bytes(64))
    with pytest.raises(QemuError, match=r"exit 4, 0 of 1 results"):
        run_qemu(elf, blob, 1, ram_mib=RAM_MIB, timeout=60)
