"""Directed tests of the AXI tops' wrappers (docs/axi-testplan.md)."""
