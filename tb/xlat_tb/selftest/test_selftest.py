"""pytest entry of the infrastructure self-test (builds the fixture with Verilator)."""

from pathlib import Path

from xlat_tb.runner import run_cocotb

HERE = Path(__file__).resolve().parent


def test_infrastructure_selftest():
    run_cocotb(name="xlat_selftest", sources=[HERE / "xlat_selftest_fifo.sv"],
               toplevel="xlat_selftest_fifo", test_module="xlat_tb.selftest.cocotb_selftest",
               run="fifo")
