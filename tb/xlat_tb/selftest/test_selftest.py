"""pytest entry of the infrastructure self-test (builds the fixture with Verilator)."""

from pathlib import Path

from xlat_tb.runner import run_cocotb

HERE = Path(__file__).resolve().parent


def test_infrastructure_selftest():
    run_cocotb(name="xlat_selftest", sources=[HERE / "xlat_selftest_fifo.sv"],
               toplevel="xlat_selftest_fifo", test_module="xlat_tb.selftest.cocotb_selftest",
               run="fifo")


def test_failure_writes_waveform():
    """A failing cocotb test is reported with its seed and rerun with the same seed, which
    writes an FST waveform (what a developer opens with `make wave`)."""
    res = run_cocotb(name="xlat_selftest", sources=[HERE / "xlat_selftest_fifo.sv"],
                     toplevel="xlat_selftest_fifo", test_module="xlat_tb.selftest.cocotb_selftest",
                     run="deliberate_failure", testcases=["test_deliberate_failure"],
                     extra_env={"XLAT_SELFTEST_FAIL": "1"}, fail=False)
    assert res.failed == ["test_deliberate_failure"], res.failed
    assert res.waves is not None and res.waves.is_file() and res.waves.stat().st_size > 0
    assert res.waves.suffix == ".fst"
