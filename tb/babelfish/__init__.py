"""cocotb testbench of BabelFishTlb (docs/babelfish-tlb.md)."""
