"""Smoke tests of the evaluation harness (part of `make test`, so `make eval` cannot rot).

- the C++ harness on the generated RTL agrees, access by access, with an independent replay of
  the same OS/walker semantics on the reference model tb/models/babelfish.py (sim/refreplay.py),
  for L1 and L2, sharing on and off, on a small adversarial trace;
- skipping idle walk cycles changes nothing (compared with simulating every cycle);
- the overlapped lookups (back to back, squashed behind a miss) give exactly the figures of the
  blocking core simulated cycle by cycle (`--blocking`), on L1 and L2;
- an external trace round-trips (text <-> npz) and replays through `sim/eval.py --trace`;
- `sim/eval.py --quick` writes the report with its table and plots;
- on the tiny formal configuration (2-bit PCIDs, 3-bit PC mask): PCID reuse (inval kind 2) and
  out-of-range pcIdx, against the reference model and the RTL's perf_badPcIdx.
- NestedWalker (sim/harness/walker.cpp) on walker_baseline and walker_x86: every response of a
  random machine with faults of every kind, huge pages and A/D updates (tb's Scenario) equals the
  reference model tb/models/walker.py (memReads/memWrites too on the baseline), the dirty events
  equal the model's, the baseline reads exactly coldReads entries per cold 4 KiB walk, idle
  skipping is exact, and `sim/eval.py --quick --blocks walker` writes its report section.
- PmlLogger (sim/harness/pml.cpp) on pml_default and pml_dedup: every port transaction of an
  EPML run on 3 contexts with exits and guest interrupts replays on the reference model
  tb/models/pml.py (a corrupted write is caught), the counters agree with the RTL, without the
  filter the exits / guest interrupts are the doc's count per buffer, idle skipping is exact,
  the busy-cycle union is right, and `sim/eval.py --quick --blocks pml` writes its section.
- DevTlb (sim/harness/devtlb.cpp) on devtlb_base and devtlb_full: every port transaction of a
  16-tenant random-interleaved run replays on the reference model tb/models/devtlb.py with the
  counters at the end (a corrupted response is caught), the harness's counts agree with every
  perf_* counter, idle skipping is exact, and `sim/eval.py --quick --blocks devtlb` writes its
  section.
- PerforatedL2Tlb (sim/harness/perforated.cpp) on perforated_default (perforated tables) and
  perforated_off (their splintered twin), allocated dispersed and unallocated clustered holes on
  a 64-region footprint: every handshake of the run replays on tb/models/perforated.py with the
  counters at the end (a corrupted response is caught), every response equals the builder's
  records (a wrong expectation fails the harness), its counts agree with every perf_* counter,
  idle skipping is exact, and `sim/eval.py --quick --blocks perforated` writes its section.
- XlatMmu (sim/harness/mmu.cpp) on mmu_formal, extended only (its own Verilator build): every
  response of a two-VM container run equals the composed model tb/models/xlat_mmu.py (source
  included) with the counters at the end, PML log writes and exits agree with the RTL's
  counters, a corrupted response is caught, idle skipping past perf_busyCycles is exact.

The harness binaries are cached under build/eval/obj/<config>/ (shared with `make eval`):
the first run builds twelve of them, at -O0 as one translation unit each (tb/README.md "Build
time"), and the builds are most of its time (sim/README.md "The smoke tests' time").
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
# The smoke runs are short, so the harness models compile at -O0 here (the build, not the run,
# is their cost); `make eval` builds its own -O2 binaries (the optimisation is part of the
# harness cache key). Set before harness_build is imported; eval.py subprocesses inherit it.
os.environ.setdefault("XLAT_EVAL_OPT", "-O0")

import harness_build as hbuild  # noqa: E402
import refreplay  # noqa: E402
import traceio  # noqa: E402
from workloads import babelfish as wl  # noqa: E402

OUT = Path(os.environ.get("XLAT_EVAL_OBJ_ROOT", ROOT / "build" / "eval"))  # harness cache root
# L1 pair + L2 with sharing (the SRAM timing path); the L2 baseline only with XLAT_EVAL_SMOKE_FULL=1
# (each L2 build costs ~35 s the first time; `make eval` builds and caches all four)
CONFIGS = ["babelfish_l1", "babelfish_l1_noshare", "babelfish_l2"]
if os.environ.get("XLAT_EVAL_SMOKE_FULL"):
    CONFIGS.append("babelfish_l2_noshare")


def _need_rtl(cfg):
    from xlat_tb.generate import skip_missing

    if not (ROOT / "build" / "rtl" / cfg / "manifest.json").exists():
        skip_missing(f"build/rtl/{cfg} missing: run `make` first")


def _run(exe, binp, out, *extra):
    r = subprocess.run([str(exe), "--trace", str(binp), "--out", str(out), *map(str, extra)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(Path(out).read_text())


@pytest.fixture(scope="module")
def stress(tmp_path_factory):
    d = tmp_path_factory.mktemp("stress")
    tr = wl.stress(2500, seed=7)
    binp = d / "stress.bin"
    traceio.write_harness_input(tr, binp)
    return tr, binp, d


@pytest.mark.parametrize("cfg", [pytest.param(c, marks=[pytest.mark.extended] if c.endswith("_noshare")
                                              else []) for c in CONFIGS])
def test_harness_matches_reference_model(cfg, stress):
    _need_rtl(cfg)
    tr, binp, d = stress
    exe = hbuild.build(cfg, OUT, log=lambda m: print(m))
    st = _run(exe, binp, d / f"{cfg}.json", "--log", d / f"{cfg}.log", "--walk-latency", 7)
    flags = np.fromfile(d / f"{cfg}.log", dtype=np.uint8)
    ref, c = refreplay.replay(tr, hbuild.load_manifest(cfg))
    assert st["counters_agree"], "RTL perf counters disagree with the harness"
    assert len(flags) == len(ref) == st["lookups"]
    bad = np.nonzero(flags != ref)[0]
    assert len(bad) == 0, f"first difference at access {bad[0]}: rtl {flags[bad[0]]:#x} model {ref[bad[0]]:#x}"
    for k in ("hits", "misses", "sharedHits", "crossHits", "permFaults", "walks", "cowFaults",
              "fills", "invals"):
        assert st[k] == c[k], k
    # the trace exercises what it is meant to
    assert st["cowFaults"] > 0 and st["permFaults"] > 0 and st["misses"] > 0
    sharing = hbuild.load_manifest(cfg)["params"]["sharing"]
    assert (st["crossHits"] > 0) == bool(sharing)
    # cycle accounting: every lookup costs the latency, every walk the walk latency
    lat = hbuild.load_manifest(cfg)["params"]["latency"]
    assert st["cycles"] >= st["lookups"] * lat + st["walks"] * 7 + st["fills"]


@pytest.mark.parametrize("cfg", ["babelfish_l1", "babelfish_l2"])
def test_idle_skipping_is_exact(cfg, stress):
    _need_rtl(cfg)
    _, binp, d = stress
    exe = hbuild.build(cfg, OUT)
    a = _run(exe, binp, d / "a.json", "--walk-latency", 25)
    b = _run(exe, binp, d / "b.json", "--walk-latency", 25, "--exact-idle")
    skip = {"run_seconds", "total_seconds", "lookups_per_second", "cycles_per_second",
            "idleCyclesSkipped", "total", "simulated_cycles"}
    assert {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}
    assert b["idleCyclesSkipped"] == 0 < a["idleCyclesSkipped"]
    assert b["simulated_cycles"] - a["simulated_cycles"] == a["idleCyclesSkipped"]


@pytest.mark.parametrize("cfg", ["babelfish_l1", "babelfish_l2"])
def test_overlapped_lookups_are_exact(cfg, stress):
    """The default lookup mode (issued back to back while they hit; squashed and re-simulated
    behind a miss or a permission fault) gives exactly what the blocking core sees when every
    cycle of every lookup is simulated (--blocking): every statistic, cycle counts, stall
    cycles and time slices included, the RTL counters and every access's flags. Also with a
    checkpoint every 3 lookups (squashing then re-simulates the lookups since the checkpoint),
    without miss prediction (--predict-window 0: every miss squashes what follows it) and with
    every lookup predicted to miss (a window of 1: lookups issued one at a time, a miss never
    re-simulated)."""
    _need_rtl(cfg)
    _, binp, d = stress
    exe = hbuild.build(cfg, OUT)
    runs, flags = {}, {}
    for name, extra in (("blocking", ["--blocking"]), ("overlapped", []),
                        ("every3", ["--checkpoint-every", 3]), ("nopredict", ["--predict-window", 0]),
                        ("alone", ["--predict-window", 1])):
        runs[name] = _run(exe, binp, d / f"{cfg}_{name}.json", "--walk-latency", 25, "--warmup", 500,
                          "--log", d / f"{cfg}_{name}.log", *extra)
        flags[name] = np.fromfile(d / f"{cfg}_{name}.log", dtype=np.uint8)
    mode = {"run_seconds", "total_seconds", "lookups_per_second", "cycles_per_second", "lookup_mode",
            "simulated_cycles", "lookups_issued", "lookups_squashed", "checkpoint_every",
            "predict_window"}
    same = lambda r: {k: v for k, v in r.items() if k not in mode}  # noqa: E731
    for name in ("overlapped", "every3", "nopredict", "alone"):
        assert same(runs[name]) == same(runs["blocking"]), name
        assert np.array_equal(flags[name], flags["blocking"]), name
        if name != "alone":
            assert runs[name]["lookups_squashed"] > 0, name
    b, o = runs["blocking"], runs["overlapped"]
    assert b["lookup_mode"] == "blocking" and o["lookup_mode"] == "overlapped"
    assert b["counters_agree"] and b["stallCycles"] > 0 and b["permFaults"] > 0
    # (this trace misses often: each miss costs the overlapped mode the lookups it squashes, so
    # it evaluates no fewer cycles here than the blocking mode; on the built-in workloads it
    # evaluates about a third of them, sim/README.md)


def test_external_trace_roundtrip(tmp_path):
    _need_rtl("babelfish_l1")
    tr = wl.stress(800, seed=3)
    txt, npz = tmp_path / "t.txt", tmp_path / "t.npz"
    traceio.save_text(tr, txt)
    traceio.save_npz(tr, npz)
    a, b = traceio.load(txt), traceio.load(npz)
    for k in traceio.ACCESS_KEYS + traceio.MAP_KEYS:
        assert np.array_equal(a[k], tr[k]) and np.array_equal(b[k], tr[k]), k
    # the documented text example parses
    ex = tmp_path / "ex.txt"
    ex.write_text((HERE / "README.md").read_text().split("```text\n", 1)[1].split("```", 1)[0])
    e = traceio.load(ex)
    assert len(e["pid"]) >= 5 and traceio.validate(e)["groups"] == 2
    # eval.py --trace replays it on the L1 pair and reports the same statistics as the harness
    out = tmp_path / "eval"
    r = subprocess.run([sys.executable, str(HERE / "eval.py"), "--out", str(out), "--trace", str(txt),
                        "--levels", "L1", "--warmup", "0", "--obj-root", str(OUT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((out / "results.json").read_text())
    runs = {x["config"]: x for x in res["runs"]}
    assert set(runs) == {"babelfish_l1", "babelfish_l1_noshare"}
    direct = _run(hbuild.build("babelfish_l1", OUT), out / "traces" / "ext_t.bin", tmp_path / "d.json",
                  "--walk-latency", 30)
    for k in ("hits", "misses", "sharedHits", "crossHits", "cycles"):
        assert runs["babelfish_l1"][k] == direct[k], k
    rep = (out / "report.md").read_text()
    assert "ext_t" in rep and "sharing on vs off" in rep


def _quick_eval(out, block: str, *extra) -> str:
    """`sim/eval.py --quick --blocks BLOCK` into ``out``; returns its output (asserting success)."""
    r = subprocess.run([sys.executable, str(HERE / "eval.py"), "--out", str(out), "--quick", "--blocks", block,
                        *extra, "--obj-root", str(OUT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_quick_eval_report(tmp_path):
    _need_rtl("babelfish_l1")
    out = tmp_path / "eval"
    stdout = _quick_eval(out, "babelfish", "--accesses", "6000")
    assert "6/6] babelfish_l1" in stdout and "left]" in stdout  # progress lines
    rep = (out / "report.md").read_text()
    assert "| containers_n4 | L1 |" in rep and "Beside the paper" in rep
    for png in ("babelfish_mpkl.png", "babelfish_shared.png"):
        assert (out / png).stat().st_size > 1000


def test_pcid_recycling_and_bad_pcidx_on_formal_config(tmp_path):
    """babelfish_formal has 2-bit PCIDs/CCIDs and a 3-bit PC mask: processes that come and go
    force PCID reuse (inval kind 2), and later CoW writers get a pcIdx beyond the mask."""
    cfg = "babelfish_formal"
    _need_rtl(cfg)
    st = wl.stress(1600, seed=11)
    keep = np.isin(st["pid"], [10, 11, 20])
    tr = {k: st[k][keep] for k in traceio.ACCESS_KEYS}
    half = len(tr["pid"]) // 2
    tr["pid"] = tr["pid"].copy()
    tr["pid"][half:] += 1000           # the first three processes exit, three new ones start
    m = {k: st[k] for k in traceio.MAP_KEYS}
    for k in traceio.MAP_KEYS:
        extra = m[k] + (1000 if k == "map_pid" else 0)
        tr[k] = np.concatenate([m[k], extra])
    binp = tmp_path / "r.bin"
    traceio.write_harness_input(tr, binp)
    exe = hbuild.build(cfg, OUT)
    res = _run(exe, binp, tmp_path / "r.json", "--log", tmp_path / "r.log", "--walk-latency", 3)
    ref, c = refreplay.replay(tr, hbuild.load_manifest(cfg))
    flags = np.fromfile(tmp_path / "r.log", dtype=np.uint8)
    assert res["counters_agree"]
    assert np.array_equal(flags, ref)
    assert res["pcidRecycles"] == 3 and res["invals"] == c["invals"]
    assert res["sharedHits"] > 0 and res["cowFaults"] > 0
    # the fourth CoW writer of group 1 gets pcIdx 3 >= pcBits: no shared hits, counted by the RTL
    assert res["badPcIdxProcs"] >= 1
    assert res["badPcIdxLookups"] == res["perf"]["badPcIdx"] > 0


# ----------------------------------------------------------------------------- NestedWalker
WALKER_CONFIGS = ["walker_baseline", "walker_x86"]


@pytest.fixture(scope="module")
def walker_stress(tmp_path_factory):
    """A random machine from the testbench's builder: two VMs, shared guest tables, guest and
    host pages of every size (aligned and splintered), leaves with A/D clear, random
    permissions and one broken entry of every kind the formats can express."""
    import walkerio
    from models.walker import WalkerConfig
    from xlat_tb.pagetables import Scenario

    d = tmp_path_factory.mktemp("walker")
    cfg = WalkerConfig("x86_64_4", "ept4", "hardware", 52)
    s = Scenario.random(cfg, 21, regions=30, ad_clear_p=0.25)
    rng = np.random.default_rng(5)
    targets = s.targets + s.bad
    req = {k: [] for k in walkerio.REQ_FIELDS}
    for i in rng.integers(0, len(targets), 900):
        t = targets[i]
        r = s.request(t, cmd=int(rng.choice([t.cmd, 1])) if t.kind == "ok" else None)
        for k in walkerio.REQ_FIELDS:
            req[k].append(getattr(r, k))
    words = dict(s.mem.words)
    walkerio.write_memory(words, d / "stress.mem")
    walkerio.write_trace(req, d / "stress.trace")
    return words, req, d


@pytest.mark.parametrize("cfg", WALKER_CONFIGS)
def test_walker_harness_matches_reference_model(cfg, walker_stress):
    import walkerio
    from models.walker import SparseMemory, WalkRequest, WalkerConfig, walk

    _need_rtl(cfg)
    words, req, d = walker_stress
    man = hbuild.load_manifest(cfg)
    exe = hbuild.build(cfg, OUT, log=lambda m: print(m))
    st = walkerio.run(exe, d / "stress.mem", d / "stress.trace", d / f"{cfg}.json", log=d / f"{cfg}.resp",
                      latency=23, jitter=9)
    log = walkerio.read_log(d / f"{cfg}.resp")
    assert st["counters_agree"] and st["protocolErrors"] == 0
    assert len(log) == st["walks"] == len(req["gva"])
    assert sorted(log["index"].tolist()) == list(range(len(req["gva"])))
    baseline = man["params"]["walkers"] == 1 and man["params"]["nestedTlbEntries"] == 0
    chk = walkerio.check_against_model(words, req, log, man["params"], n=len(log), exact_counts=baseline)
    assert chk["mismatches"] == [], chk["mismatches"][:5]
    # dirty events: one per host leaf whose D goes 0 -> 1, whatever order the walks ran in
    mem, wcfg, events = SparseMemory(words), WalkerConfig.from_params(man["params"]), 0
    for i in range(len(req["gva"])):
        events += len(walk(mem, wcfg, WalkRequest(id=0, **{k: int(req[k][i]) for k in walkerio.REQ_FIELDS})).dirty)
    assert st["dirtyEvents"] == st["perf"]["dirtyEvents"] == events > 0
    # the machine exercises what it is meant to
    assert st["faults"] > 50 and st["memWrites"] > 0 and st["hugeAligned"] > 0 and st["splintered"] > 0
    assert len(set(st["faultKinds"][k] > 0 for k in ("1", "2", "4", "5"))) == 1  # every kind seen
    if not baseline:
        assert st["perf"]["nestedTlbHits"] > 0 and st["perf"]["guestPwcHits"] > 0


def test_walker_baseline_reads_cold_reads_per_walk(tmp_path):
    """No caches, one walker: every read-only 4 KiB/4 KiB walk reads exactly coldReads words;
    the default configuration never more, and far fewer once warm."""
    import walkerio
    from workloads import walker as wwl

    w = wwl.locality("x86", "seq", 400, seed=3, write_p=0.0)
    walkerio.write_memory(w.words, tmp_path / "m")
    walkerio.write_trace(w.req, tmp_path / "t")
    for cfg in WALKER_CONFIGS:
        _need_rtl(cfg)
        cold = hbuild.load_manifest(cfg)["derived"]["coldReads"]
        st = walkerio.run(hbuild.build(cfg, OUT), tmp_path / "m", tmp_path / "t", tmp_path / "s.json",
                          log=tmp_path / "r", warmup=100)
        log = walkerio.read_log(tmp_path / "r")
        assert st["counters_agree"] and st["faults"] == 0 and st["memWrites"] == 0
        if cfg == "walker_baseline":
            assert cold == 24 and set(log["memReads"].tolist()) == {cold}
            assert st["coldWalks"] == st["walks"] == 400
            assert walkerio.check_against_model(w.words, w.req, log, hbuild.load_manifest(cfg)["params"],
                                                exact_counts=True)["mismatches"] == []
        else:
            # a cold walk with caches already hits its own fills (the guest's table pages share
            # upper host levels): never more than coldReads
            assert log["memReads"].max() <= cold
            assert st["window"]["readsPerWalk"] < 3 and st["window"]["walksPer1000Cycles"] > 10


def test_walker_idle_skipping_is_exact(walker_stress):
    import walkerio

    _need_rtl("walker_x86")
    _, _, d = walker_stress
    exe = hbuild.build("walker_x86", OUT)
    runs = [walkerio.run(exe, d / "stress.mem", d / "stress.trace", d / f"i{k}.json", latency=40, jitter=15,
                         exact_idle=bool(k)) for k in (0, 1)]
    skip = {"run_seconds", "total_seconds", "walks_per_second", "cycles_per_second", "simulatedCycles",
            "idleCyclesSkipped"}
    a, b = ({k: v for k, v in r.items() if k not in skip} for r in runs)
    assert a == b
    assert runs[1]["idleCyclesSkipped"] == 0 < runs[0]["idleCyclesSkipped"]
    # back-pressure on resp / dirty / mem_req (no skipping then): same translations, counters agree
    c = walkerio.run(exe, d / "stress.mem", d / "stress.trace", d / "bp.json", latency=40,
                     resp_ready=0.6, dirty_ready=0.5, mem_req_ready=0.7, seed=3)
    assert c["counters_agree"] and c["walks"] == a["walks"] and c["faults"] == a["faults"]


def test_walker_quick_eval_report(tmp_path):
    for cfg in WALKER_CONFIGS:
        _need_rtl(cfg)
    out = tmp_path / "eval"
    stdout = _quick_eval(out, "walker", "--walker-walks", "400", "--walker-accesses", "800")
    assert "[run 10/10]" in stdout and "left]" in stdout and "MISMATCH" not in stdout
    rep = (out / "report.md").read_text()
    assert "## NestedWalker" in rep and ", 0 mismatches**" in rep and "Beside the paper (Gemini" in rep
    assert "| x86-64 4-level / EPT 4 | seq | 24 |" in rep
    for png in ("walker_reads.png", "walker_throughput.png", "walker_aligned.png"):
        assert (out / png).stat().st_size > 1000


# ---- PmlLogger (sim/harness/pml.cpp) ------------------------------------------------------------
# the second configuration of a block only in make soak (README.md "Tiers"): a harness build each
def _second_in_soak(names: list[str]) -> list:
    """``names`` as parameters, the second one marked ``extended``."""
    return [pytest.param(n, marks=[pytest.mark.extended] if i else []) for i, n in enumerate(names)]


PML_CONFIGS = ["pml_default", "pml_dedup"]


@pytest.fixture(scope="module")
def pml_work(tmp_path_factory):
    """EPML on 3 contexts, ~1100 events each (two PML buffers' worth), short service times so a
    few exits and guest interrupts happen within a few thousand cycles."""
    import pmlio
    from workloads import pml as pwl

    d = tmp_path_factory.mktemp("pml")
    w = pwl.bursts(3, 3300, seed=5, mode="epml", burst=(64, 256), gap=(16, 128))
    pmlio.write_workload(w, d / "w.bin")
    return w, d


def _owed_exits(w, part: int, entries: int) -> int:
    """Doc rule: a buffer armed at entries-1 takes `entries` entries; the next part to come up
    for it finds it full and raises one exit (guest interrupt), so n entries owed to one buffer
    (software re-arming at each exit) raise ceil(n / entries) - 1 of them."""
    from workloads import pml as pwl
    vm, asid = np.asarray(w.ev["vmid"]), np.asarray(w.ev["asid"])
    total = 0
    for c in range(w.active):
        mine = vm == c if part == 0 else (vm == c) & (asid == pwl.TRACKED_ASID)
        total += max(0, -(-int(mine.sum()) // entries) - 1)
    return total


@pytest.mark.parametrize("cfg", _second_in_soak(PML_CONFIGS))
def test_pml_harness_matches_reference_model(cfg, pml_work):
    """Every transaction of the whole run replays on tb/models/pml.py; the counters agree with
    the RTL; without the filter the exits and guest interrupts are the doc's count."""
    import pmlio

    _need_rtl(cfg)
    w, d = pml_work
    exe = hbuild.build(cfg, OUT, log=lambda m: print(m))
    man = hbuild.load_manifest(cfg)
    st = pmlio.run(exe, d / "w.bin", d / f"{cfg}.json", events=d / f"{cfg}.ev", log=d / f"{cfg}.log",
                   log_cycles=10 ** 9, latency=7, exit_service=60, irq_service=30)
    assert st["counters_agree"] and st["protocolErrors"] == 0
    log = pmlio.read_log(d / f"{cfg}.log")
    chk = pmlio.check_against_model(log, man)
    assert chk["mismatches"] == []
    assert chk["checked"] == int(np.sum(log["kind"] != pmlio.LOG_PERF)) > 3 * w.n
    assert st["events"] == st["accepted"] == w.n
    E = int(man["params"]["entries"])
    if int(man["params"]["dedupEntries"]) == 0:
        assert st["exits"] == _owed_exits(w, 0, E) > 0
        assert st["guestIrqs"] == _owed_exits(w, 1, E) > 0
        assert st["deduped"] == 0 and st["writes"] == w.n + int(np.sum(np.asarray(w.ev["asid"]) == 1))
    else:
        assert st["deduped"] > 0 and st["exits"] > 0 and st["guestIrqs"] > 0
    # per-event records agree with the counts
    ev = pmlio.read_events(d / f"{cfg}.ev")
    assert int(ev["deduped"].sum()) == st["deduped"]
    assert int(np.sum(ev["written"] > 0)) == w.n - st["deduped"]
    assert np.all(ev["accepted"] >= ev["offered"])
    wrote = ev["written"] > 0
    assert np.all(ev["written"][wrote] > ev["accepted"][wrote])
    # the model check is not vacuous: one wrong write datum is caught
    bad = log.copy()
    k = int(np.flatnonzero(bad["kind"] == pmlio.LOG_WRITE)[len(bad) // 8])
    bad["z"][k] ^= 1 << 12
    assert pmlio.check_against_model(bad, man)["mismatches"]


def test_pml_idle_skipping_is_exact(pml_work):
    import pmlio

    _need_rtl("pml_default")
    w, d = pml_work
    exe = hbuild.build("pml_default", OUT)
    runs = [pmlio.run(exe, d / "w.bin", d / f"i{k}.json", events=d / f"i{k}.ev", latency=7,
                      exit_service=300, irq_service=100, exact_idle=bool(k)) for k in (0, 1)]
    skip = {"run_seconds", "total_seconds", "cycles_per_second", "simulatedCycles", "idleCyclesSkipped"}
    a, b = ({k: v for k, v in r.items() if k not in skip} for r in runs)
    assert a == b
    assert runs[1]["idleCyclesSkipped"] == 0 < runs[0]["idleCyclesSkipped"]
    assert (d / "i0.ev").read_bytes() == (d / "i1.ev").read_bytes()


def test_pml_busy_cycles_is_the_union_of_intervals():
    import pmlio

    rng = np.random.default_rng(4)
    s = np.sort(rng.integers(0, 400, 60))
    e = s + rng.integers(0, 30, 60)
    covered = set()
    for a, b in zip(s, e):
        covered.update(range(int(a), int(b) + 1))
    assert pmlio.busy_cycles(s, e) == len(covered)


def test_pml_quick_eval_report(tmp_path):
    for cfg in PML_CONFIGS:
        _need_rtl(cfg)
    out = tmp_path / "eval"
    stdout = _quick_eval(out, "pml", "--pml-events", "800", "--pml-check-cycles", "2000")
    assert "[pml run  8/8]" in stdout and "MISMATCH" not in stdout
    rep = (out / "report.md").read_text()
    assert "## PmlLogger" in rep and "**8 of 8 runs agree**" in rep and " runs, 0 mismatches**" in rep
    rows = [ln for ln in rep.splitlines() if ln.startswith("| pml_")]
    assert len(rows) >= 8
    res = json.loads((out / "pml_results.json").read_text())["runs"]
    assert {(r["config"], r["mode"], r["active"]) for r in res} == \
        {(c, m, a) for c in PML_CONFIGS for m in ("pml", "epml") for a in (1, 8)}


# ---- DevTlb (sim/harness/devtlb.cpp) -----------------------------------------------------------
DT_CONFIGS = ["devtlb_full", "devtlb_base"]


@pytest.fixture(scope="module")
def dt_work(tmp_path_factory):
    """16 tenants (more than the 8 rows / ways: misses, claims, PTB, prefetches) in random order."""
    sys.path.insert(0, str(ROOT / "tb"))
    import devtlbio
    from workloads import devtlb as dwl

    d = tmp_path_factory.mktemp("devtlb")
    w = dwl.streaming(16, 500, seed=3, interleave="rand")
    devtlbio.write_workload(w, d / "w.bin")
    return w, d


# short round trip and packets so that a small run has misses, merges and prefetches in flight
DT_TIMING = dict(latency=300, packet_ps=20000, cycle_ps=500, window=32)


@pytest.mark.parametrize("cfg", _second_in_soak(DT_CONFIGS))
def test_devtlb_harness_matches_reference_model(cfg, dt_work):
    """Every transaction of the whole run replays on tb/models/devtlb.py, the counters at the end
    equal the model's, the harness's own counts agree with every perf_* counter; a corrupted
    response is caught."""
    import devtlbio

    _need_rtl(cfg)
    w, d = dt_work
    exe = hbuild.build(cfg, OUT)
    st = devtlbio.run(exe, d / "w.bin", d / f"{cfg}.json", log=d / f"{cfg}.log", warmup=100, **DT_TIMING)
    assert st["counters_agree"] and st["protocolErrors"] == 0
    assert st["requests"] == 3 * w.packets and st["misses"] > 50 and st["hits"] > 50
    if cfg == "devtlb_full":
        assert st["prefetches"] > 10 and st["pbHits"] > 0 and st["perf"]["claims"] > 0
    man = hbuild.load_manifest(cfg)
    log = devtlbio.read_log(d / f"{cfg}.log")
    chk = devtlbio.check_against_model(log, man)
    assert chk["mismatches"] == [] and chk["counters_checked"] >= 15
    assert chk["checked"] == int(np.sum(log["kind"] != devtlbio.LOG_PERF)) > 2 * st["requests"]
    bad = log.copy()
    k = int(np.flatnonzero(bad["kind"] == devtlbio.LOG_RESP)[len(bad) // 8])
    bad["y"][k] ^= 1
    assert devtlbio.check_against_model(bad, man)["mismatches"]


def test_devtlb_idle_skipping_is_exact(dt_work):
    import devtlbio

    _need_rtl("devtlb_full")
    w, d = dt_work
    exe = hbuild.build("devtlb_full", OUT)
    runs = [devtlbio.run(exe, d / "w.bin", d / f"i{k}.json", warmup=100, exact_idle=bool(k), **DT_TIMING)
            for k in (0, 1)]
    skip = {"run_seconds", "total_seconds", "cycles_per_second", "simulatedCycles", "idleCyclesSkipped",
            "cpu_seconds", "requests_per_cpu_second", "requests_per_simulated_cycle"}
    a, b = ({k: v for k, v in r.items() if k not in skip} for r in runs)
    assert a == b
    assert runs[1]["idleCyclesSkipped"] == 0 < runs[0]["idleCyclesSkipped"]


def test_devtlb_link_model_bounds():
    """HyperSIO's timing in cycles: 0.5 ns a cycle, 900 + 2 x 50 ns per ATS round trip, 61.68 ns
    a 1542-byte packet at 200 Gb/s."""
    import devtlbio

    t = devtlbio.Timing()
    assert (t.cycle_ps, t.ats_cycles, t.packet_ps) == (500, 2000, 61680)
    assert devtlbio.Timing(clock_ghz=1.0, dram_accesses=0).ats_cycles == 900


def test_devtlb_quick_eval_report(tmp_path):
    for cfg in DT_CONFIGS:
        _need_rtl(cfg)
    out = tmp_path / "eval"
    stdout = _quick_eval(out, "devtlb", "--devtlb-packets", "400", "--devtlb-tenants", "4,16")
    assert "[devtlb run  8/8]" in stdout and "MISMATCH" not in stdout
    rep = (out / "report.md").read_text()
    assert "## DevTlb" in rep and "**8 of 8 runs agree**" in rep and " runs, 0 mismatches**" in rep
    assert "| `devtlb_base` (Base) | 100.0% |" in rep
    res = json.loads((out / "devtlb_results.json").read_text())["runs"]
    assert {(r["config"], r["interleave"], r["tenants"]) for r in res} == \
        {(c, i, t) for c in DT_CONFIGS for i in ("rr", "rand") for t in (4, 16)}
    assert (out / "devtlb_util.png").stat().st_size > 1000


# ---- PerforatedL2Tlb -------------------------------------------------------------------------
PF_CONFIGS = ["perforated_default", "perforated_off"]


@pytest.fixture(scope="module")
def pf_work(tmp_path_factory):
    """Dispersed allocated holes in half of 8 regions (the hole pages repeat: installed holes
    hit), and clustered unallocated ones (faults) in half of 256 regions (more than the 2 MiB
    array holds: walks, evictions); each in the perforated tables and their splintered twin."""
    import perforatedio
    from workloads import perforated as pwl

    d = tmp_path_factory.mktemp("perforated")
    works = {}
    for key, kw in (("alloc", dict(regions=8, frac=0.5, holes=64, layout="dispersed", allocated=True)),
                    ("unalloc", dict(regions=256, frac=0.5, holes=8, layout="clustered", allocated=False))):
        for mode in ("perforated", "splintered"):
            w = pwl.random_access(2500, mode=mode, seed=3, **kw)
            perforatedio.write_workload(w, d / f"{key}_{mode}.mem", d / f"{key}_{mode}.trace")
            works[(key, mode)] = w
    return works, d


@pytest.mark.parametrize("cfg", _second_in_soak(PF_CONFIGS))
@pytest.mark.parametrize("key", ["alloc", "unalloc"])
def test_perforated_harness_matches_reference_model(cfg, key, pf_work):
    """Every response of the whole run replays on tb/models/perforated.py (every field, source and
    memReads included, every mem_req address) with the counters at the end; the harness checked
    every response against the builder's records and its own counts against every perf_*
    counter; a corrupted response is caught by the replay, a wrong expectation by the harness."""
    import perforatedio

    _need_rtl(cfg)
    works, d = pf_work
    mode = "perforated" if cfg == "perforated_default" else "splintered"
    w = works[(key, mode)]
    mem, tr = d / f"{key}_{mode}.mem", d / f"{key}_{mode}.trace"
    exe = hbuild.build(cfg, OUT)
    st = perforatedio.run(exe, mem, tr, d / f"{cfg}_{key}.json", log=d / f"{cfg}_{key}.log", warmup=500)
    assert st["counters_agree"] and st["protocolErrors"] == 0 and st["mismatches"] == 0
    p = st["perf"]
    assert p["requests"] == 2500 and p["walks"] > (100 if key == "unalloc" else 0)
    assert p["hits2m"] + p["hits4k"] > 1000
    if cfg == "perforated_default":
        assert p["holes"] > 10 and p["bitmapLookups"] > 50 and p["bitmapReads"] > 10
        assert (p["filterSkips"] > 50) == (key == "unalloc")   # clustered: most filter bits 0
        assert (p["hits4k"] > 10) == (key == "alloc")          # allocated holes get installed
    else:
        assert p["holes"] == p["bitmapLookups"] == p["filterSkips"] == 0 and p["fills4k"] > 100
    assert (p["faults"] > 0) == (key == "unalloc")
    man = hbuild.load_manifest(cfg)
    log = perforatedio.read_log(d / f"{cfg}_{key}.log")
    chk = perforatedio.check_against_model(log, w, man)
    assert chk["mismatches"] == [] and chk["counters_checked"] and chk["checked"] == 2500
    bad = log.copy()
    k = int(np.flatnonzero(bad["kind"] == perforatedio.L_RESP)[len(bad) // 20])
    bad["y"][k] ^= 1
    assert perforatedio.check_against_model(bad, w, man)["mismatches"]
    # a response that differs from the builder's records fails the run (exit status 3)
    import dataclasses
    w2 = dataclasses.replace(w, exp_ppn=w.exp_ppn.copy())
    i = int(np.flatnonzero(w.exp_ppn)[7])
    w2.exp_ppn[i] ^= 1
    perforatedio.write_trace(w2, d / "bad.trace")
    with pytest.raises(RuntimeError, match="MISMATCH request"):
        perforatedio.run(exe, mem, d / "bad.trace", d / "bad.json")


def test_perforated_idle_skipping_is_exact(pf_work):
    import perforatedio

    _need_rtl("perforated_default")
    works, d = pf_work
    exe = hbuild.build("perforated_default", OUT)
    runs = [perforatedio.run(exe, d / "alloc_perforated.mem", d / "alloc_perforated.trace", d / f"i{k}.json",
                             warmup=500, jitter=7, exact_idle=bool(k)) for k in (0, 1)]
    skip = {"run_seconds", "total_seconds", "cycles_per_second", "simulatedCycles", "idleCyclesSkipped",
            "requests_per_second"}
    a, b = ({k: v for k, v in r.items() if k not in skip} for r in runs)
    assert a == b
    assert runs[1]["idleCyclesSkipped"] == 0 < runs[0]["idleCyclesSkipped"]


def test_perforated_quick_eval_report(tmp_path):
    for cfg in PF_CONFIGS:
        _need_rtl(cfg)
    out = tmp_path / "eval"
    stdout = _quick_eval(out, "perforated", "--perforated-requests", "1500")
    assert "[perforated run  4/4]" in stdout and "MISMATCH" not in stdout
    rep = (out / "report.md").read_text()
    assert "## PerforatedL2Tlb" in rep and "**4 of 4 runs agree**" in rep and "4 runs, 0 mismatches**" in rep
    assert "### Targets: 10% of the regions fragmented" in rep
    res = json.loads((out / "perforated_results.json").read_text())["runs"]
    assert {(r["config"], r["workload"]) for r in res} == {
        ("perforated_default", "ideal"), ("perforated_default", "f10_h8_clus_alloc"),
        ("perforated_default", "f10_h8_disp_alloc"), ("perforated_off", "f10_h8_disp_alloc")}
    ideal = next(r for r in res if r["workload"] == "ideal")
    assert ideal["perf"]["bitmapLookups"] == ideal["perf"]["holes"] == ideal["perf"]["filterSkips"] == 0
    for png in ("perforated_reads.png", "perforated_caches.png"):
        assert (out / png).stat().st_size > 1000


# ---- XlatMmu (sim/harness/mmu.cpp) --------------------------------------------------------------
@pytest.fixture(scope="module")
def mmu_work(tmp_path_factory):
    """Two VMs of two container processes on mmu_formal, every host leaf of data 4 KiB (a dirty
    event per page first written; 4-entry PML buffers: the hypervisor's path runs often)."""
    import mmuio
    from workloads import mmu as mwl

    d = tmp_path_factory.mktemp("mmu")
    w = mwl.containers("mmu_formal", 2, 2, 2500, seed=5, slice_len=300, h2m=0.0)
    mmuio.write_workload(w, d / "m.mem", d / "m.trace")
    return w, d


@pytest.mark.extended
def test_mmu_harness_matches_composed_model(mmu_work):
    """Extended (soak): the XlatMmu harness is a Verilator build of its own (about a minute for
    mmu_formal on this machine), which no make-test case makes (tb/mmu's cocotb models are
    built for VPI, not for a C++ harness). Every response of the whole run (source included)
    equals the composed model's, the model's mmu_* / l1_* / l2_* counters equal the RTL's, the
    harness's own counts agree with the RTL's counters (PML log writes and exits included), a
    corrupted response is caught, and skipping idle cycles changes nothing."""
    import mmuio

    _need_rtl("mmu_formal")
    w, d = mmu_work
    exe = hbuild.build("mmu_formal", OUT)
    runs = []
    for k in (0, 1):
        runs.append(mmuio.run(exe, d / "m.mem", d / "m.trace", d / f"s{k}.json", log=d / f"r{k}.log", warmup=500,
                              pml_mask=mmuio.pml_mask(w, 2), pml_service=300, exact_idle=bool(k), jitter=5))
    st = runs[0]
    assert st["counters_agree"] and st["protocolErrors"] == 0
    assert st["l1Hits"] > 500 and st["l2Hits"] > 10 and st["walks"] > 100 and st["faults"] == 0
    assert st["pmlWrites"] > 8 and st["exits"] >= 2 and st["adWrites"] > 0
    log = mmuio.read_log(d / "r0.log")
    chk = mmuio.check_against_model(w, log, dict(st["counters"]))
    assert chk["mismatches"] == [] and chk["checked"] == 2500 and chk["counters_compared"] > 20
    bad = log.copy()
    bad["source"][len(bad) // 2] ^= 1
    assert mmuio.check_against_model(w, bad)["mismatches"]
    skip = {"run_seconds", "total_seconds", "cycles_per_second", "simulatedCycles", "idleCyclesSkipped",
            "requests_per_second"}
    a, b = ({k: v for k, v in r.items() if k not in skip} for r in runs)
    assert a == b
    assert runs[1]["idleCyclesSkipped"] == 0 < runs[0]["idleCyclesSkipped"]


@pytest.mark.extended
def test_mmu_external_trace(tmp_path):
    """Extended (soak), as the test above (the same build): a trace in BabelFishTlb's format (two
    containers of the built-in generator, text round trip) on the composed MMU, copy-on-write
    pages read-only (a write to one a page fault: no OS in this harness); every response and
    counter equals the composed model's."""
    import mmuio
    from workloads import mmu as mwl

    _need_rtl("mmu_formal")
    tr = wl.containers(2, 4000, 1)
    traceio.save_text(tr, tmp_path / "t.txt")
    w = mwl.from_trace("mmu_formal", traceio.load(tmp_path / "t.txt"))
    assert len(w) == 4000 and w.meta["processes"] >= 1
    mmuio.write_workload(w, tmp_path / "m.mem", tmp_path / "m.trace")
    st = mmuio.run(hbuild.build("mmu_formal", OUT), tmp_path / "m.mem", tmp_path / "m.trace", tmp_path / "s.json",
                   log=tmp_path / "r.log", pml_mask=2, pml_service=100)
    assert st["counters_agree"] and st["walks"] > 50 and st["l1Hits"] > 500
    chk = mmuio.check_against_model(w, mmuio.read_log(tmp_path / "r.log"), dict(st["counters"]))
    assert chk["mismatches"] == [] and chk["checked"] == 4000 and chk["counters_compared"] > 20
