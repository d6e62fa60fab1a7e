"""Shared cocotb infrastructure of the xlat testbenches (reused by every block under tb/).

* ``paths``     repository / build locations
* ``manifest``  build/rtl/<config>/manifest.json loading (ports, widths, params)
* ``seed``      XLAT_SEED handling (printed, settable)
* ``runner``    pytest helper: verilator build + cocotb run, FST rerun on failure
* ``cycle``     CycleLoop: one coroutine drives and samples every component once per cycle
* ``drivers``   DecoupledSource (valid/bits, holds while !ready, random gaps), ReadyDriver
* ``monitors``  ValidMonitor, DecoupledMonitor
* ``backpressure`` gap / stall patterns shared by sources and ready drivers
* ``coverage``  a small functional-coverage collector with required bins
"""
