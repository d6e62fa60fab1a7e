"""Self-test of the shared infrastructure on a tiny fixture (xlat_selftest_fifo.sv)."""
