"""Python reference models of the xlat blocks (the docs/ pages are their contracts)."""
