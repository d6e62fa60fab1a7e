"""FuseSoC route (issue 13 item 2; docs/packaging.md): the cores `make` writes beside the Verilog
make build/rtl a FuseSoC library, and each block's configuration runs through FuseSoC and Edalize
with Verilator as a user's flow would run it: `fusesoc library add`, then `fusesoc run`."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from xlat_tb.verilator import verilator_env
import yaml

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "build" / "rtl"
VENV_BIN = ROOT / ".venv" / "bin"
FUSESOC = str(VENV_BIN / "fusesoc") if (VENV_BIN / "fusesoc").exists() else "fusesoc"
VERSION = re.search(r"<artifactId>xlat</artifactId>\s*<version>([^<]+)</version>",
                    (ROOT / "rtl" / "pom.xml").read_text()).group(1)

# one configuration of each block for `fusesoc run --target lint` (make test)
LINT = ["babelfish_l1", "walker_rv39", "pml_default", "devtlb_base", "perforated_default", "mmu_formal"]
# the sim target builds a Verilator binary (~10-40 s of CPU each): README.md's FuseSoC route
# (tb/integrate/test_readme_routes.py) runs walker_baseline's in make test, these one of every
# other block in make soak, and an AXI top (its m_axi_* / s_axil_* valid outputs watched too)
SIM_EXTENDED = ["babelfish_l1", "pml_default", "devtlb_base", "perforated_flops", "mmu_formal",
                "pml_default_axi"]


def _manifest(config: str) -> dict:
    path = RTL / config / "manifest.json"
    if not path.exists():
        pytest.fail(f"{path} missing: run `make` first", pytrace=False)
    return json.loads(path.read_text())


def _env() -> dict:
    env = verilator_env()
    env["PATH"] = f"{VENV_BIN}:{env['PATH']}"          # FuseSoC and Python of the venv
    return env


def _fusesoc(conf: Path, *args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([FUSESOC, "--config", str(conf), *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=900)


def _library(tmp: Path, rtl: Path) -> Path:
    """A user's FuseSoC setup with `rtl` added as a local library; returns its config file."""
    conf = tmp / "fusesoc.conf"
    conf.write_text("")
    r = _fusesoc(conf, "library", "add", "--sync-type", "local", "xlat", str(rtl), cwd=tmp)
    assert r.returncode == 0, r.stdout + r.stderr
    return conf


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fusesoc")
    return tmp, _library(tmp, RTL)


def _run(library, config: str, target: str) -> subprocess.CompletedProcess:
    tmp, conf = library
    return _fusesoc(conf, "run", "--target", target, "--work-root", str(tmp / f"{config}-{target}"),
                    f"xlat:ip:{config}:{VERSION}", cwd=tmp)


@pytest.mark.parametrize("config", sorted(p.name for p in RTL.iterdir() if (p / "manifest.json").exists())
                         if RTL.exists() else [])
def test_core_matches_manifest(config):
    """Every configuration has a core: its name, files (the manifest's, in order) and top."""
    m = _manifest(config)
    core_path = RTL / config / f"xlat_ip_{config}.core"
    text = core_path.read_text()
    assert text.startswith("CAPI=2:\n")
    core = yaml.safe_load(text)
    assert core["name"] == f"xlat:ip:{config}:{VERSION}"
    rtl_files = [f if isinstance(f, str) else next(iter(f)) for f in core["filesets"]["rtl"]["files"]]
    assert rtl_files == ["params.svh"] + m["files"]
    for f in rtl_files + core["filesets"]["waivers"]["files"] + core["filesets"]["smoke"]["files"]:
        assert (RTL / config / f).exists(), f
    assert core["targets"]["default"]["toplevel"] == m["module"]
    assert core["targets"]["lint"]["toplevel"] == m["module"]
    # the waivers a user lints with are the ones `make lint` uses
    assert (RTL / config / "xlat_waivers.vlt").read_text() == (ROOT / "rtl" / "lint" / "waivers.vlt").read_text()
    # the smoke bench watches every output channel's valid
    smoke = (RTL / config / f"xlat_smoke_{config}.sv").read_text()
    valids = [p["name"] for p in m["ports"] if p["direction"] == "output"
              and ((p["name"].endswith("_valid") and not p["name"].startswith("dbg_"))
                   or re.fullmatch(r"(m_axi|s_axil)_[a-z]+valid", p["name"]))]
    assert valids
    for v in valids:
        assert f"if ({v}) $fatal" in smoke, v


@pytest.mark.parametrize("config", LINT)
def test_fusesoc_lint(library, config):
    """`fusesoc run --target lint`: verilator --lint-only -Wall with the project's waivers, clean."""
    r = _run(library, config, "lint")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_fusesoc_lint_fails_on_a_lint_error(tmp_path):
    """The lint target really lints: a copy of a configuration with a truncating assignment planted
    in its top module fails through FuseSoC (WIDTHTRUNC, a warning that -Wall makes fatal)."""
    config = "walker_baseline"
    m = _manifest(config)
    lib = tmp_path / "lib"
    shutil.copytree(RTL / config, lib / config)
    top = lib / config / f"{m['module']}.sv"
    sv = top.read_text()
    i = sv.rindex("endmodule")
    top.write_text(sv[:i] + "  wire [1:0] xlat_planted = 3'h5;\n" + sv[i:])
    r = _run((tmp_path, _library(tmp_path, lib)), config, "lint")
    assert r.returncode != 0
    assert "WIDTHTRUNC" in r.stdout + r.stderr


def _sim(library, config):
    r = _run(library, config, "sim")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"xlat smoke {config}: " in r.stdout and "no output valid" in r.stdout, r.stdout[-2000:]


@pytest.mark.extended
@pytest.mark.parametrize("config", SIM_EXTENDED)
def test_fusesoc_sim(library, config):
    """`fusesoc run --target sim`: the generated smoke bench (reset, idle, no output valid)."""
    _sim(library, config)
