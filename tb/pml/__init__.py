"""PmlLogger cocotb testbench (docs/pml-logger.md)."""
