"""cocotb testbench of NestedWalker (docs/nested-walker.md)."""
