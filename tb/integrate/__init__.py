"""README and packaging routes (docs/packaging.md).  Not named `packaging`: tb/ is on PYTHONPATH
(Makefile), and a package of that name would shadow the `packaging` library matplotlib imports."""
