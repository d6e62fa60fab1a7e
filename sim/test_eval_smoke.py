"""Smoke tests of the evaluation harness (part of `make test`, so `make eval` cannot rot).

- the C++ harness on the generated RTL agrees, access by access, with an independent replay of
  the same OS/walker semantics on the reference model tb/models/babelfish.py (sim/refreplay.py),
  for L1 and L2, sharing on and off, on a small adversarial trace;
- skipping idle walk cycles changes nothing (compared with simulating every cycle);
- an external trace round-trips (text <-> npz) and replays through `sim/eval.py --trace`;
- `sim/eval.py --quick` writes the report with its table and plots;
- on the tiny formal configuration (2-bit PCIDs, 3-bit PC mask): PCID reuse (inval kind 2) and
  out-of-range pcIdx, against the reference model and the RTL's perf_badPcIdx.

The harness binaries are cached under build/eval/obj/<config>/ (shared with `make eval`):
the first run builds three of them (about 20 s per L1 configuration and 36 s for L2 on 2 cores).
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
    if not (ROOT / "build" / "rtl" / cfg / "manifest.json").exists():
        pytest.skip(f"build/rtl/{cfg} missing: run `make` first")


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


@pytest.mark.parametrize("cfg", CONFIGS)
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
    lat = hbuild.load_manifest(cfg)["derived"]["latency"]
    assert st["cycles"] >= st["lookups"] * lat + st["walks"] * 7 + st["fills"]


@pytest.mark.parametrize("cfg", ["babelfish_l1", "babelfish_l2"])
def test_idle_skipping_is_exact(cfg, stress):
    _need_rtl(cfg)
    _, binp, d = stress
    exe = hbuild.build(cfg, OUT)
    a = _run(exe, binp, d / "a.json", "--walk-latency", 25)
    b = _run(exe, binp, d / "b.json", "--walk-latency", 25, "--exact-idle")
    skip = {"run_seconds", "total_seconds", "lookups_per_second", "cycles_per_second",
            "idleCyclesSkipped", "total"}
    assert {k: v for k, v in a.items() if k not in skip} == {k: v for k, v in b.items() if k not in skip}
    assert b["idleCyclesSkipped"] == 0 < a["idleCyclesSkipped"]


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


def test_quick_eval_report(tmp_path):
    _need_rtl("babelfish_l1")
    out = tmp_path / "eval"
    r = subprocess.run([sys.executable, str(HERE / "eval.py"), "--out", str(out), "--quick",
                        "--accesses", "6000", "--obj-root", str(OUT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6/6] babelfish_l1" in r.stdout and "left]" in r.stdout  # progress lines
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
