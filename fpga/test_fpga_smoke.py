"""Smoke test of the FPGA flow (fpga/fpga.py --quick): runs Yosys synth_ecp5 + nextpnr-ecp5 and
synth_xilinx on the tiny babelfish_formal configuration (about 30 s) and checks that the report
has sane numbers and that the synthesis wrapper exposes every block port of the manifest.
The full run (four BabelFishTlb configurations) is `make fpga`, not part of `make test`."""
import json
import fcntl
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RTL = os.path.join(ROOT, "build", "rtl")
OUT = os.path.join(ROOT, "build", "fpga", "smoke")
CFG = "babelfish_formal"
sys.path.insert(0, HERE)
import gen_wrapper  # noqa: E402


def manifest(cfg):
    path = os.path.join(RTL, cfg, "manifest.json")
    assert os.path.exists(path), f"{path} missing: run `make rtl` first"
    return json.load(open(path))


def all_configs():
    return sorted(d for d in os.listdir(RTL) if os.path.exists(os.path.join(RTL, d, "manifest.json"))) \
        if os.path.isdir(RTL) else []


@pytest.mark.parametrize("cfg", all_configs() or [CFG])
def test_wrapper_covers_every_port(cfg):
    """The generated wrapper connects every manifest port once, and the chains have exactly as
    many bits as the block's data inputs / outputs."""
    m = manifest(cfg)
    text, n_in, n_out = gen_wrapper.wrapper_text(m)
    conns = dict(re.findall(r"^\s*\.(\w+)\(([^)]*)\)", text, re.M))
    names = [p["name"] for p in m["ports"]]
    assert sorted(conns) == sorted(names), "wrapper connections differ from manifest ports"
    for p in m["ports"]:
        c = conns[p["name"]]
        mm = re.fullmatch(r"(in_q|out_w)\[(\d+):(\d+)\]", c)
        if mm:
            assert int(mm.group(2)) - int(mm.group(3)) + 1 == p["width"], p
            assert mm.group(1) == ("in_q" if p["direction"] == "input" else "out_w"), p
        else:
            assert p["name"] in gen_wrapper.CLOCK_NAMES | gen_wrapper.RESET_NAMES, p
    assert n_in == sum(p["width"] for p in m["ports"] if p["direction"] == "input"
                       and p["name"] not in gen_wrapper.CLOCK_NAMES | gen_wrapper.RESET_NAMES)
    assert n_out == sum(p["width"] for p in m["ports"] if p["direction"] == "output")


def test_wrapper_reset_net():
    """The reset goes through the DCCA global by default and is a plain fabric net with
    `global_reset=False` (fpga.py CONFIG_RESETS / --reset fabric); the block's ports are the same."""
    m = manifest(CFG)
    glob, n_in, n_out = gen_wrapper.wrapper_text(m)
    fab, n_in2, n_out2 = gen_wrapper.wrapper_text(m, global_reset=False)
    assert re.search(r"^\s*DCCA \w+ \(\.CLKI\(rst_q\[1\]\), \.CE\(1'b1\), \.CLKO\(rst_g\)\);", glob, re.M)
    assert "DCCA" not in fab and re.search(r"^\s*assign rst_g = rst_q\[1\];", fab, re.M)
    assert (n_in, n_out) == (n_in2, n_out2)
    assert [l for l in glob.splitlines() if "DCCA" not in l] == [l for l in fab.splitlines() if "assign rst_g" not in l]


@pytest.fixture(scope="module")
def smoke_run():
    """One flow run per pytest session: pytest-xdist workers that both need it take a lock, and
    the second reuses the first's results (same test-run id) instead of racing in OUT."""
    manifest(CFG)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", str(os.getpid()))
    marker = os.path.join(OUT, "run_id")
    with open(OUT + ".lock", "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        done = os.path.exists(marker) and open(marker).read() == run_id
        if not done:
            out = os.path.relpath(OUT, ROOT)
            p = subprocess.run([sys.executable, os.path.join(HERE, "fpga.py"), "--out", out, "--quick"],
                               cwd=ROOT, capture_output=True, text=True, timeout=1200)
            assert p.returncode == 0, p.stdout + p.stderr
            with open(marker, "w") as f:
                f.write(run_id)
    return json.load(open(os.path.join(OUT, "results.json")))


def test_quick_flow(smoke_run, tmp_path):
    """One test over the one flow run (three tests on it would let both pytest-xdist workers
    take one, the second idling its core while the first runs the flow)."""
    check_numbers(smoke_run)
    check_netlist_keeps_every_port()
    check_readme_table_from_run(smoke_run, tmp_path)


def check_numbers(smoke_run):
    """The report has sane numbers for the configuration."""
    rows = {r["config"]: r for r in smoke_run["results"]}
    assert CFG in rows
    r = rows[CFG]
    e, x, p = r["ecp5_block"], r["xilinx"], r["nextpnr"]
    assert e["lut4_equiv"] > 0 and e["ff"] > 0, e
    assert x["lut6"] > 0 and x["ff"] > 0, x
    # FF count is technology independent for a flop-based block: both flows must agree.
    assert e["ff"] == x["ff"], (e["ff"], x["ff"])
    assert p["fmax_mhz"] is not None and 5 < p["fmax_mhz"] < 500, p["fmax_mhz"]
    assert p["comb"] >= e["lut4"] and p["ff"] >= e["ff"], p
    assert p["io"] == 5, "wrapper should leave 5 pins (clk, rst, si, load, so)"
    cp = p["critical_path"]
    assert cp and cp["start"] and cp["end"] and cp["delay_ns"] > 0, cp
    report = open(os.path.join(OUT, "report.md")).read()
    assert CFG in report and "Fmax" in report and "LFE5U-45F" in report
    assert os.path.getsize(os.path.join(OUT, "results.csv")) > 0


def check_netlist_keeps_every_port():
    """After synthesis the block module still has every manifest port at its width (nothing
    was dropped or constant-folded across the wrapper boundary)."""
    m = manifest(CFG)
    net = json.load(open(os.path.join(OUT, CFG, "ecp5.json")))
    mods = net["modules"]
    assert m["module"] in mods, list(mods)
    ports = mods[m["module"]]["ports"]
    for p in m["ports"]:
        assert p["name"] in ports, p["name"]
        assert ports[p["name"]]["direction"] == p["direction"], p
        assert len(ports[p["name"]]["bits"]) == p["width"], p
    top = mods["fpga_top"]
    assert sorted(top["ports"]) == ["clk", "load", "rst", "si", "so"]


def check_readme_table_from_run(smoke_run, tmp_path):
    """fpga/readme_table.py rewrites only the marked block of a README, with one row per
    configuration of the run carrying that run's own figures; --check then agrees."""
    import readme_table
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\nbefore\n{readme_table.BEGIN}\nstale row\n{readme_table.END}\nafter\n")
    results = os.path.join(OUT, "results.json")
    p = subprocess.run([sys.executable, os.path.join(HERE, "readme_table.py"), "--results", results,
                        "--readme", str(readme)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    text = readme.read_text()
    assert text.startswith("# title\nbefore\n") and text.endswith("\nafter\n") and "stale row" not in text
    r = {x["config"]: x for x in smoke_run["results"]}[CFG]
    row = next(line for line in text.splitlines() if line.startswith(f"| {CFG} |"))
    assert str(r["nextpnr"]["fmax_mhz"]) in row and f"| {r['ecp5_block']['lut4_equiv']} |" in row, row
    assert r["nextpnr"]["critical_path"]["start"] in row
    chk = subprocess.run([sys.executable, os.path.join(HERE, "readme_table.py"), "--results", results,
                          "--readme", str(readme), "--check"], capture_output=True, text=True)
    assert chk.returncode == 0, chk.stderr
    # a named second table (--section) is rewritten alone; the main one is left as it was
    begin, end = readme_table.markers("blk")
    readme.write_text(text + f"{begin}\nstale named row\n{end}\n")
    p = subprocess.run([sys.executable, os.path.join(HERE, "readme_table.py"), "--results", results,
                        "--readme", str(readme), "--section", "blk"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    both = readme.read_text()
    assert both.startswith(text) and "stale named row" not in both, both
    named = both[len(text):].splitlines()
    assert named[0] == begin and named[-1] == end and any(x.startswith(f"| {CFG} |") for x in named), named
