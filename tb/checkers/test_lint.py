"""Every checker of rtl/checkers/ lints clean with `verilator --lint-only -Wall` (the project's
waivers only, docs/lint.md), bound (`bind`, the text xlat_tb.checkers writes) into its block's
formal configuration with the parameters from that configuration's manifest, so that every
width the helper derives meets the block's ports."""

from __future__ import annotations

import subprocess

import pytest

from xlat_tb import checkers
from xlat_tb.manifest import available, load_manifest
from xlat_tb.paths import REPO, SIM_BUILD
from xlat_tb.verilator import verilator_env

WAIVERS = REPO / "rtl" / "lint" / "waivers.vlt"
# one configuration per block (the smallest: a short lint); the three largest RTLs (3-8 s of
# lint each) run in make soak
CONFIGS = ["babelfish_formal", "pml_formal", "devtlb_formal"]
EXTENDED = ["walker_formal", "perforated_formal", "mmu_formal"]


def _lint(files, top):
    r = subprocess.run(["verilator", "--lint-only", "-Wall", str(WAIVERS), *map(str, files),
                        "--top-module", top], env=verilator_env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, f"lint of {top}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


@pytest.mark.parametrize("config", CONFIGS + [pytest.param(c, marks=pytest.mark.extended)
                                              for c in EXTENDED])
def test_checker_bound(config):
    if not available(config):
        pytest.skip(f"{config} not generated (make)")
    m = load_manifest(config)
    bind = SIM_BUILD / "chk_lint" / f"{config}_bind.sv"
    bind.parent.mkdir(parents=True, exist_ok=True)
    bind.write_text(checkers.bind_text(m))
    _lint(m.sources + checkers.sources(m) + [bind], m.module)
