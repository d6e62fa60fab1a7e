"""The cocotb tests of a testbench folder as pytest cases, so that each block's pytest entry
(tb/<block>/test_<block>.py) lists them the same way: one pytest case per cocotb test."""
from __future__ import annotations

import ast
from pathlib import Path


def cocotb_tests(path: Path) -> list[str]:
    """Names of the @cocotb.test functions of the Python file at `path`, in file order."""
    tree = ast.parse(Path(path).read_text())
    return [f.name for f in tree.body if isinstance(f, ast.AsyncFunctionDef)
            and any("cocotb.test" in ast.unparse(d) for d in f.decorator_list)]


def cocotb_cases(folder: Path, suites=("directed", "random")) -> list[tuple[str, str]]:
    """(suite, test) for every cocotb test of tests_<suite>.py in `folder`."""
    return [(s, t) for s in suites for t in cocotb_tests(Path(folder) / f"tests_{s}.py")]
