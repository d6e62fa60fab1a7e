"""pytest entry of the NestedWalker -> PmlLogger integration test (tests_integration.py).

The walker configuration is walker_x86 (x86-64 4-level over EPT 4-level: gpaBits 48, GPA
page 36 bits); the logger is the test-only pml_tbx_walker48 (paBits 48 so its GPA page is
also 36 bits, vaBits 48 = the guest's canonical VA width, 4 contexts, 16-entry buffers so
the software agent drains on exits during the run).  The top module is generated from both
manifests into build/sim/pml_walker_top/ (integration_top.py).

    .venv/bin/python -m pytest tb/pml/test_integration.py
"""

import ast
from pathlib import Path

import pytest

from xlat_tb.generate import ensure_config, skip_missing
from xlat_tb.manifest import available, load_manifest, manifest_path
from xlat_tb.paths import SIM_BUILD
from xlat_tb.runner import run_cocotb

WALKER = "walker_x86"
LOGGER = ("pml_tbx_walker48", dict(contexts=4, paBits=48, vaBits=48, entries=16, queueDepth=4,
                                   idBits=4, vmidBits=16, asidBits=16, dedupEntries=0))


def cocotb_tests() -> list[str]:
    tree = ast.parse((Path(__file__).parent / "tests_integration.py").read_text())
    return [f.name for f in tree.body if isinstance(f, ast.AsyncFunctionDef)
            and any("cocotb.test" in ast.unparse(d) for d in f.decorator_list)]


@pytest.mark.parametrize("case", cocotb_tests())
def test_integration(case):
    if not available(WALKER):
        skip_missing(f"{manifest_path(WALKER)} missing: generate the RTL first (make)")
    from .integration_top import generate

    wman = load_manifest(WALKER)
    pman = load_manifest(ensure_config("pml", *LOGGER))
    out = SIM_BUILD / "pml_walker_top" / "top"
    top, pm, sources, notes = generate(wman, pman, out)
    for n in notes:
        print(f"[xlat] integration: {n}")
    run_cocotb(name="pml_walker_top", sources=sources, toplevel="PmlWalkerTop",
               test_module="pml.tests_integration", run=case, testcases=[case],
               extra_env={"XLAT_CONFIG": "pml_walker_top", "XLAT_MANIFEST": str(wman.path),
                          "XLAT_PML_MANIFEST": str(pm)})
