"""NestedWalker part of `make eval` (called by sim/eval.py; shared machinery in sim/evalcore.py).

Builds the walker configurations (named ones from build/rtl/, test-only cache / walker
variants generated on demand into build/sim/rtl_tb/), generates the workloads of
sim/workloads/walker.py (while the builds run), runs every (configuration, workload) pair on
the harness sim/harness/walker.cpp, checks the first responses of every run against the
reference model tb/models/walker.py, and returns the NestedWalker section of report.md; writes
walker_results.json / .csv, runs/<config>__<workload>.json and walker_*.png.
"""
from __future__ import annotations

import csv
import json
import threading
import time
from pathlib import Path

import numpy as np

import harness_build as hbuild
import walkerio
from evalcore import build_configs, fmt_t, md_table, run_pool, say
from workloads import walker as wl

# ---- configurations ---------------------------------------------------------------------------
NAMED = {"x86": "walker_x86", "x86_5": "walker_x86_5", "rv39": "walker_rv39", "rv48": "walker_rv48"}
_NOCACHE = dict(walkers=1, guestPwcEntries=0, hostPwcEntries=0, nestedTlbEntries=0)
_X86 = dict(guest="x86_64_4", host="ept4")
# test-only parameter sets (generated on demand; everything else at its default)
TEST_ONLY = {
    "walker_evx_x86_c4": dict(_X86, guestPwcEntries=4, hostPwcEntries=4, nestedTlbEntries=4),
    "walker_evx_x86_c64": dict(_X86, guestPwcEntries=64, hostPwcEntries=64, nestedTlbEntries=64),
    "walker_evx_x86_w1": dict(_X86, walkers=1),
    "walker_evx_x86_5_base": dict(guest="x86_64_5", host="ept5", **_NOCACHE),
    "walker_evx_rv39_base": dict(guest="sv39", host="sv39x4", **_NOCACHE),
    "walker_evx_rv48_base": dict(guest="sv48", host="sv48x4", **_NOCACHE),
}
BASELINE = {"x86": "walker_baseline", "x86_5": "walker_evx_x86_5_base",
            "rv39": "walker_evx_rv39_base", "rv48": "walker_evx_rv48_base"}
X86_SWEEP = ["walker_baseline", "walker_evx_x86_c4", "walker_x86", "walker_evx_x86_c64", "walker_evx_x86_w1"]
QUICK_CONFIGS = ["walker_baseline", "walker_x86"]
QUICK_MIXES = ["thp_g60_h30", "gem_g60_h30"]
MIX_CONFIGS = ["walker_baseline", "walker_x86"]
PAIR_OF = {v: k for k, v in wl.PAIRS.items()}
THRASH_CONFIG = "walker_evx_x86_c4"  # also run capped at one walk in flight (harness --inflight 1)
AD_WORKLOAD = "seq_allwrites"  # x86 seq with 100% writes: the A/D lock's throughput
COLD_WALKS = 50           # "cold": mean reads of the first walks (caches filling)
GEMINI = {"thp": (0.18, 0.35), "gemini": (0.50, 0.81)}  # aligned huge pages (spec, seed 001)


def add_args(ap) -> None:
    g = ap.add_argument_group("NestedWalker")
    g.add_argument("--walker-walks", type=int, default=None,
                   help="walks per locality workload (default 10000; --quick 1500)")
    g.add_argument("--walker-accesses", type=int, default=None,
                   help="accesses per huge-page mix before the TLB filter (default 20000; --quick 3000)")
    g.add_argument("--walker-latency", type=int, default=100, help="memory latency in cycles (default 100)")
    g.add_argument("--walker-check", type=int, default=200,
                   help="responses per run compared with the reference model (default 200)")
    g.add_argument("--walker-configs", default=None, help="comma list of walker configurations (default: all)")


def config_list(args) -> list[str]:
    if args.walker_configs:
        return args.walker_configs.split(",")
    if args.quick:
        return list(QUICK_CONFIGS)
    out = list(X86_SWEEP)
    for p in ("x86_5", "rv39", "rv48"):
        out += [BASELINE[p], NAMED[p]]
    return out


def _pair_of_params(p: dict) -> str:
    return PAIR_OF.get((p["guest"], p["host"]), f"{p['guest']}/{p['host']}")


# ---- workloads -------------------------------------------------------------------------------
def make_workloads(args, pairs: list[str], out: Path) -> list[dict]:
    tdir = out / "walker_traces"
    tdir.mkdir(parents=True, exist_ok=True)
    n = args.walker_walks or (1500 if args.quick else 10000)
    acc = args.walker_accesses or (3000 if args.quick else 20000)
    specs = [(p, k) for p in pairs for k in wl.LOCALITY]
    mixes = (QUICK_MIXES if args.quick else list(wl.MIXES)) if "x86" in pairs else []
    specs += [("x86", m) for m in mixes]
    if "x86" in pairs and not args.quick:
        specs.append(("x86", AD_WORKLOAD))
    wks = []
    for i, (p, k) in enumerate(specs, 1):
        if k == AD_WORKLOAD:   # every walk writes a page never written: one A/D update each
            w = wl.locality(p, "seq", n, args.seed, write_p=1.0)
            w.name = k
        elif k in wl.LOCALITY:
            w = wl.locality(p, k, n, args.seed)
        else:
            w = wl.mix(p, k, acc, args.seed)
        name = f"{p}_{k}"
        mp, tp = tdir / f"{name}.mem", tdir / f"{name}.trace"
        walkerio.write_memory(w.words, mp)
        walkerio.write_trace(w.req, tp)
        wks.append({"name": name, "pair": p, "kind": w.kind, "wl": k, "w": w, "mem": mp, "trace": tp})
        say(f"[walker gen {i}/{len(specs)}] {name}: {w.n:,} walks, {len(w.words):,} table words "
            f"({w.facts['gen_seconds']:.1f} s)")
    return wks


# ---- one run ---------------------------------------------------------------------------------
def run_one(exe: Path, cfg: str, wk: dict, args, out: Path, inflight: int | None = None) -> dict:
    rdir = out / "runs"
    rdir.mkdir(parents=True, exist_ok=True)
    name = wk["name"] + (f"@inflight{inflight}" if inflight else "")
    js, lg = rdir / f"{cfg}__{name}.json", rdir / f"{cfg}__{name}.resp"
    w = wk["w"]
    t0 = time.monotonic()
    st = walkerio.run(exe, wk["mem"], wk["trace"], js, log=lg, latency=args.walker_latency,
                      warmup=int(w.n * args.warmup), label=name, inflight=inflight)
    log = walkerio.read_log(lg)
    man = hbuild.load_manifest(cfg)
    p = man["params"]
    exact = not any(int(p[k]) for k in ("guestPwcEntries", "hostPwcEntries", "nestedTlbEntries")) \
        and int(p["walkers"]) == 1
    chk = walkerio.check_against_model(w.words, w.req, log, dict(p), n=args.walker_check, exact_counts=exact)
    ok_rows = log[log["fault"] == 0]
    eff = (1 << (12 + 9 * ok_rows["pageSize"].astype(np.int64))) if len(ok_rows) else np.zeros(1)
    first = log[:COLD_WALKS]
    d = dict(st)
    d.update(config=cfg, workload=name, pair=wk["pair"], kind=wk["kind"], wl=wk["wl"],
             params=p, exact_model=exact, model_checked=chk["checked"],
             model_mismatches=chk["mismatches"][:10], n_mismatches=len(chk["mismatches"]),
             cold_reads=float(first["memReads"].mean()) if len(first) else 0.0,
             mean_eff_bytes=float(eff.mean()), facts=w.facts, wall_seconds=time.monotonic() - t0)
    win = d["window"]
    d["warm_reads"] = win["readsPerWalk"]
    d["warm_wpkc"] = win["walksPer1000Cycles"]
    walks = max(1, d["walks"])
    for k in ("guestPwcHits", "hostPwcHits", "nestedTlbHits"):
        d[k + "PerWalk"] = d["perf"][k] / walks
    js.write_text(json.dumps(d, indent=1, default=str))
    lg.unlink()
    return d


# ---- report ----------------------------------------------------------------------------------
def _f(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def _pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def _human(b: float) -> str:
    for unit, sz in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= sz:
            return f"{b / sz:.1f} {unit}"
    return f"{b:.0f} B"


def plots(res: dict, results: list[dict], out: Path) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    def read_ticks(ax):  # plain numbers on a log axis
        ax.yaxis.set_major_locator(FixedLocator([1, 2, 3, 4, 6, 10, 15, 24, 35]))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(ScalarFormatter())

    short = {"x86": "x86-64 4 / EPT 4", "x86_5": "x86-64 5 / EPT 5", "rv39": "Sv39 / x4", "rv48": "Sv48 / x4"}
    made = []
    get = lambda c, w: res.get((c, w))  # noqa: E731
    loc = [k for k in wl.LOCALITY]
    # reads per walk: x86 cache sweep, and baseline vs default for every pair
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    ax = axes[0]
    sweep = [("walker_baseline", 0), ("walker_evx_x86_c4", 4), ("walker_x86", 16), ("walker_evx_x86_c64", 64)]
    for k, mk in zip(loc, "osd"):
        pts = [(e, get(c, f"x86_{k}")["warm_reads"]) for c, e in sweep if get(c, f"x86_{k}")]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], mk + "-", label=k)
        w1 = get("walker_evx_x86_w1", f"x86_{k}")
        if w1:
            ax.plot([16], [w1["warm_reads"]], mk, mfc="none", ms=11, color=ax.lines[-1].get_color())
    ax.set_xscale("symlog", linthresh=4)
    ax.set_xticks([0, 4, 16, 64], ["0 (baseline)", "4", "16 (default)", "64"])
    ax.set_yscale("log")
    read_ticks(ax)
    ax.set_xlabel("entries per cache (guest PWC = host PWC = nested TLB)")
    ax.set_ylabel("memory reads per walk (warm)")
    ax.set_title("x86-64 over EPT (hollow: 16 entries, 1 walker)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax = axes[1]
    pairs = [p for p in wl.PAIRS if get(NAMED[p], f"{p}_seq")]
    x = np.arange(len(pairs))
    wdt = 0.13
    for j, k in enumerate(loc):
        b = [get(BASELINE[p], f"{p}_{k}") for p in pairs]
        dflt = [get(NAMED[p], f"{p}_{k}") for p in pairs]
        ax.bar(x + (2 * j - 2.5) * wdt, [r["warm_reads"] if r else 0 for r in b], wdt,
               color=f"C{j}", alpha=0.45, label=f"{k}, no caches")
        ax.bar(x + (2 * j - 1.5) * wdt, [r["warm_reads"] if r else 0 for r in dflt], wdt,
               color=f"C{j}", label=f"{k}, default")
    ax.set_xticks(x, [short[p] for p in pairs], fontsize=8)
    ax.set_yscale("log")
    read_ticks(ax)
    ax.set_ylim(1.5, 60)
    ax.set_ylabel("memory reads per walk (warm)")
    ax.set_title("light: no caches, 1 walker; dark: 16 entries, 4 walkers")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=6, ncol=3, loc="upper center")
    fig.tight_layout()
    fig.savefig(out / "walker_reads.png", dpi=110)
    plt.close(fig)
    made.append("walker_reads.png")

    # throughput: walks per 1000 cycles
    fig, ax = plt.subplots(figsize=(8, 3.8))
    bars = [("walker_baseline", "no caches, 1 walker"), ("walker_evx_x86_w1", "16-entry caches, 1 walker"),
            ("walker_x86", "16-entry caches, 4 walkers")]
    x = np.arange(len(loc))
    for j, (c, lab) in enumerate(bars):
        v = [get(c, f"x86_{k}")["warm_wpkc"] if get(c, f"x86_{k}") else 0 for k in loc]
        ax.bar(x + (j - 1) * 0.27, v, 0.27, label=lab)
    ax.set_xticks(x, [f"x86 {k}" for k in loc])
    ax.set_ylabel("walks per 1000 cycles (warm)")
    ax.set_title("memory latency 100 cycles")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "walker_throughput.png", dpi=110)
    plt.close(fig)
    made.append("walker_throughput.png")

    mixes = [r for r in results if r["kind"] == "mix" and r["config"] == "walker_x86"]
    if mixes:
        fig, ax = plt.subplots(figsize=(8.5, 3.8))
        x = np.arange(len(mixes))
        ax.axhspan(100 * GEMINI["thp"][0], 100 * GEMINI["thp"][1], color="gray", alpha=0.15,
                   label="Gemini paper: stock THP 18-35%")
        ax.axhspan(100 * GEMINI["gemini"][0], 100 * GEMINI["gemini"][1], color="green", alpha=0.12,
                   label="Gemini paper: with Gemini 50-81%")
        ax.bar(x - 0.2, [100 * (r["facts"]["aligned_fraction_pages"] or 0) for r in mixes], 0.4,
               label="aligned guest huge pages")
        ax.bar(x + 0.2, [100 * r["hugeAligned"] / max(1, r["hugeGuest"]) for r in mixes], 0.4,
               label="aligned walks (perf_hugeAligned / perf_hugeGuest)")
        ax.set_xticks(x, [r["wl"] for r in mixes], fontsize=8, rotation=15)
        ax.set_ylabel("%")
        ax.set_ylim(0, 135)
        ax.set_yticks([0, 20, 40, 60, 80, 100])
        ax.legend(fontsize=7, loc="upper center", ncol=2)
        ax.grid(alpha=0.3, axis="y")
        fig.tight_layout()
        fig.savefig(out / "walker_aligned.png", dpi=110)
        plt.close(fig)
        made.append("walker_aligned.png")
    return made


def section(args, results: list[dict], pngs, build_times, skipped, wall) -> list[str]:
    res = {(r["config"], r["workload"]): r for r in results}
    get = lambda c, w: res.get((c, w))  # noqa: E731
    cfgs = list(dict.fromkeys(r["config"] for r in results))
    L = ["## NestedWalker\n"]
    checked = sum(r["model_checked"] for r in results)
    mism = sum(r["n_mismatches"] for r in results)
    L.append(f"NestedWalker part ({'quick smoke run' if args.quick else 'full sweep'}, {fmt_t(wall)}): "
             f"driven by sim/harness/walker.cpp. Per run, the harness checked its own counts (walks, "
             f"reads, writes, faults, dirty events, huge/aligned/splintered) against the RTL's `perf_*` "
             f"counters and the port protocol; the first {args.walker_check} responses of every run were "
             f"compared with the reference model tb/models/walker.py (translation and fault fields; "
             f"memReads/memWrites too for cache-less single-walker configurations): "
             f"**{checked:,} responses in {len(results)} runs, {mism} mismatches**.\n")
    L.append("### Setup\n")
    rows = []
    for c in cfgs:
        r = next(x for x in results if x["config"] == c)
        p = r["params"]
        rows.append([c, wl.PAIR_LABEL.get(r["pair"], r["pair"]),
                     p["walkers"], f"{p['guestPwcEntries']}/{p['hostPwcEntries']}/{p['nestedTlbEntries']}",
                     r["coldReads"], "named" if c in NAMED.values() or c == "walker_baseline" else "test-only",
                     build_times.get(c, "-")])
    L += md_table(["config", "guest / host", "walkers", "gPWC/hPWC/nTLB entries", "coldReads", "kind", "build (s)"], rows)
    L.append("")
    if skipped:
        L.append("Skipped: " + "; ".join(f"{c} ({why})" for c, why in skipped.items()) + "\n")
    L.append(f"Memory: every access is answered {args.walker_latency} cycles after it is accepted "
             f"(one response per cycle; the memory is always ready); `resp` and `dirty` are always "
             f"ready; the harness offers requests back to back (each with a free id), so `walkers` walks "
             f"are in flight whenever the trace has work. Reads per walk count every memory read of a "
             f"walk (`resp.memReads`), including the A/D lock's re-read of a leaf: the workloads arm "
             f"dirty logging (host data leaves start with D clear), so the first write to each host page "
             f"costs one locked re-read, one write and one dirty event (25% of requests are writes). "
             f"*Warm* = after the first {100 * args.warmup:.0f}% of the walks; *cold* = the first "
             f"{COLD_WALKS} walks (empty caches); walks per 1000 cycles are warm. Workloads "
             f"(sim/workloads/walker.py, seed {args.seed}): one VM, one process, real page tables at both "
             f"stages; `seq` = consecutive 4 KiB pages once each, `stride` = every 513th page (a new guest "
             f"leaf table per walk), `random` = uniform over 64 GiB; all 4 KiB at both stages.\n")

    L.append("### Reads per walk\n")
    rows = []
    for p in wl.PAIRS:
        for k in wl.LOCALITY:
            b, d = get(BASELINE[p], f"{p}_{k}"), get(NAMED[p], f"{p}_{k}")
            if not b and not d:
                continue
            rows.append([wl.PAIR_LABEL[p], k, (d or b)["coldReads"], _f(b and b["warm_reads"]),
                         _f(d and d["cold_reads"]), _f(d and d["warm_reads"]),
                         f"{b['warm_reads'] / d['warm_reads']:.1f}x" if b and d else "-",
                         _f(d and d["guestPwcHitsPerWalk"]) + " / " + _f(d and d["hostPwcHitsPerWalk"]) + " / "
                         + _f(d and d["nestedTlbHitsPerWalk"])])
    L += md_table(["guest / host", "workload", "coldReads", "no caches, 1 walker", "default: cold",
                   "default: warm", "fewer reads", "default: gPWC / hPWC / nTLB hits per walk"], rows,
                  "llrrrrrr")
    L.append("\n*default* = 16 entries in each cache, 4 walkers (the named configuration of the pair). "
             "Without caches a 4 KiB walk reads exactly coldReads entries (plus the locked re-read on a "
             "write that sets D).\n")
    sw = [c for c in X86_SWEEP if any(r["config"] == c for r in results)]
    if len(sw) > 2:
        L.append("x86-64 over EPT, warm reads per walk against cache size and walkers:\n")
        lab = {"walker_baseline": "0 entries, 1 walker", "walker_evx_x86_c4": "4, 4 walkers",
               "walker_x86": "16, 4 walkers", "walker_evx_x86_c64": "64, 4 walkers",
               "walker_evx_x86_w1": "16, 1 walker"}
        rows = [[k] + [_f(get(c, f"x86_{k}") and get(c, f"x86_{k}")["warm_reads"]) for c in sw]
                for k in wl.LOCALITY]
        L += md_table(["workload"] + [lab[c] for c in sw], rows, "l" + "r" * len(sw))
        L.append("")
        t4 = [(k, get(THRASH_CONFIG, f"x86_{k}"), get(THRASH_CONFIG, f"x86_{k}@inflight1")) for k in ("stride", "random")]
        t4 = [x for x in t4 if x[1] and x[2]]
        if t4:
            L.append("With 4 entries per cache, 4 walks in flight against one (the same RTL, harness "
                     "`--inflight 1`): "
                     + "; ".join(f"{k}: {a['warm_reads']:.2f} against {b['warm_reads']:.2f} reads per walk "
                                 f"({a['warm_reads'] / b['warm_reads']:.2f}x), {a['guestPwcHitsPerWalk']:.2f} "
                                 f"against {b['guestPwcHitsPerWalk']:.2f} guest PWC hits" for k, a, b in t4)
                     + ". Against thrashing, walks in flight that miss the same entry leave one copy (fills "
                       "are de-duplicated by key), each walk in flight pins the entry of its latest hit in "
                       "each cache, and an eviction takes an entry of the highest re-reference value (an entry "
                       "filled once and never hit before one that walks hit or filled together), so the "
                       "level-1 guest PWC and nested-TLB entries that every walk fills and never uses again "
                       "should replace each other, not the upper levels the walks share "
                       "(docs/nested-walker.md, \"Caches\"); a ratio well above 1 means they still do.\n")

    L.append("### Throughput (walks per 1000 cycles, 100-cycle memory)\n")
    rows = []
    for p in wl.PAIRS:
        for k in wl.LOCALITY:
            b, d = get(BASELINE[p], f"{p}_{k}"), get(NAMED[p], f"{p}_{k}")
            w1 = get("walker_evx_x86_w1", f"{p}_{k}") if p == "x86" else None
            if not b and not d:
                continue
            rows.append([wl.PAIR_LABEL[p], k, _f(b and b["warm_wpkc"]), _f(w1 and w1["warm_wpkc"]),
                         _f(d and d["warm_wpkc"]),
                         f"{d['warm_wpkc'] / w1['warm_wpkc']:.2f}x" if d and w1 else "-",
                         _f(d and d["window"]["meanWalkLatency"], 0)])
    L += md_table(["guest / host", "workload", "no caches, 1 walker", "default caches, 1 walker",
                   "default caches, 4 walkers", "4 vs 1 walker", "mean walk latency (4 walkers, cycles)"],
                  rows, "llrrrrr")
    L.append("\nA walk costs about (reads + writes) x 100 cycles plus a few cycles of step-engine work per "
             "read; with 4 walkers four walks overlap their memory waits (the memory accepts one access "
             "per cycle and never limits here), so walks per 1000 cycles scale with the walkers until "
             "the walks run out of independent work.\n")

    ad = [(c, get(c, f"x86_{AD_WORKLOAD}"), get(c, "x86_seq")) for c in X86_SWEEP]
    ad = [x for x in ad if x[1] and x[2]]
    if ad:
        L.append("A/D updates: the walker locks each leaf address it updates (docs/nested-walker.md, "
                 "\"A/D\"): an update holds its entry's lock for a locked re-read and a write, two memory "
                 "round trips, and walks updating different entries overlap. Walks per 1000 cycles of "
                 "`seq` with every request a write (each walk sets D in the host leaf of a fresh data page: "
                 "one update per walk; guest leaves are created dirty) against `seq` with 25% writes:\n")
        rows = [[c, _f(b["warm_wpkc"]), _f(a["warm_wpkc"]), _f(a["writesPerWalk"]),
                 _f(a["window"]["meanWalkLatency"], 0)] for c, a, b in ad]
        L += md_table(["config", "seq, 25% writes", "seq, 100% writes", "writes per walk (100%)",
                       "mean walk latency (100%)"], rows, "lrrrr")
        w4, w1 = get("walker_x86", f"x86_{AD_WORKLOAD}"), get("walker_evx_x86_w1", f"x86_{AD_WORKLOAD}")
        if w4 and w1:
            L.append(f"\nWith 100% writes, 4 walkers give {w4['warm_wpkc'] / w1['warm_wpkc']:.2f}x the walks "
                     f"per 1000 cycles of one walker (same caches): a single walker-wide lock would bound "
                     f"both at about one update per 2 x {args.walker_latency} cycles "
                     f"(~{1000 / (2 * args.walker_latency + 5):.1f} walks per 1000 cycles).\n")

    mixes = [r for r in results if r["kind"] == "mix"]
    if mixes:
        L.append("### Guest/host huge-page mixes (x86-64 over EPT)\n")
        L.append(f"Random 4 KiB accesses over a 2 GiB region, filtered by a {wl.TLB_ENTRIES}-entry fully "
                 "associative LRU TLB holding each translation at its effective page size "
                 "(min(guest leaf, host leaf)); the misses are the walks. `g2m_h*`: every guest region is one "
                 "2 MiB page, the host uses 4 KiB / 2 MiB / 1 GiB pages; `thp_g60_h30/70`: 60% of the guest "
                 "regions are huge, the host backs each 2 MiB GPA region with a huge page with probability "
                 "30% / 70%, independently of the guest (stock THP at both levels); `gem_g60_h30/70`: the "
                 "same host budget placed on the guest's huge regions first (Gemini-like). "
                 "*Aligned (pages)*: guest huge pages whose host leaf is at least 2 MiB, of the distinct guest "
                 "huge pages touched (Gemini's measure, from the tables); *aligned (walks)*: "
                 "`perf_hugeAligned / perf_hugeGuest` of the RTL. *Reach*: mean effective page size of the "
                 f"distinct translations the walks returned x {wl.TLB_ENTRIES} entries (the memory a TLB of that "
                 "size covers when it holds such translations; compare with the 2 GiB footprint).\n")
        rows = []
        for name in wl.MIXES:
            d = get("walker_x86", f"x86_{name}")
            b = get("walker_baseline", f"x86_{name}")
            if not d:
                continue
            f = d["facts"]
            rows.append([name, _pct(f["guest_huge_fraction"]), f["host_policy"], f"{1000 * d['walks'] / f['accesses']:.0f}",
                         _pct(f["aligned_fraction_pages"]), _pct(d["hugeAligned"] / max(1, d["hugeGuest"])),
                         f"{d['splintered']:,}", _human(d["mean_eff_bytes"]),
                         _human(f["mean_eff_bytes_distinct"] * wl.TLB_ENTRIES),
                         _f(b and b["warm_reads"]), _f(d["warm_reads"])])
        L += md_table(["mix", "guest huge", "host", "walks / 1000 accesses", "aligned (pages)", "aligned (walks)",
                       "splintered walks", "mean effective page (per walk)", "reach", "reads/walk no caches",
                       "reads/walk default"], rows, "lllrrrrrrrr")
        L.append("\nAligned walks are fewer than aligned pages: a splintered guest huge page is cached at "
                 "4 KiB, so it misses the TLB (and is walked) once per 4 KiB page touched, an aligned one once "
                 "per 2 MiB. Huge leaves also shorten the walk itself (a 2 MiB guest leaf skips one guest "
                 "level, a 2 MiB / 1 GiB host leaf one / two host levels of every host walk).\n")
    for p in pngs:
        L.append(f"![{p}]({p})\n")

    L.append("### Beside the paper (Gemini, seed 001)\n")
    thp = [get("walker_x86", f"x86_{m}") for m in ("thp_g60_h30", "thp_g60_h70")]
    gem = [get("walker_x86", f"x86_{m}") for m in ("gem_g60_h30", "gem_g60_h70")]
    rows = []
    if any(thp):
        rows.append(["aligned guest huge pages, stock THP", "18-35%",
                     ", ".join(f"{r['wl']}: {_pct(r['facts']['aligned_fraction_pages'])}" for r in thp if r)])
    if any(gem):
        rows.append(["aligned guest huge pages, with Gemini", "50-81%",
                     ", ".join(f"{r['wl']}: {_pct(r['facts']['aligned_fraction_pages'])}" for r in gem if r)])
    if rows:
        L += md_table(["figure", "paper", "this evaluation"], rows)
        L.append("\nWhat differs: Gemini measures real guests and hosts running stock Linux THP under memory "
                 "fragmentation, where huge pages form independently at the two levels; here the placement is "
                 "synthetic and sets the answer by construction (independent placement gives aligned = the "
                 "host's huge fraction; coordinated placement gives min(1, host budget / guest huge "
                 "fraction)). What the evaluation adds is that the walker classifies every walk correctly "
                 "(the RTL's hugeAligned / splintered counters agree with the tables) and what alignment "
                 "buys: TLB reach, walks per access and reads per walk in the table above.\n")

    L.append("### Simulation speed and build\n")
    rows = []
    for c in cfgs:
        rr = [r for r in results if r["config"] == c]
        rows.append([c, build_times.get(c, "-"), len(rr), f"{sum(r['walks'] for r in rr):,}",
                     f"{sum(r['cycles'] for r in rr) / 1e6:.1f}M",
                     f"{100 * sum(r['idleCyclesSkipped'] for r in rr) / max(1, sum(r['cycles'] for r in rr)):.0f}%",
                     f"{np.mean([r['walks_per_second'] for r in rr]) / 1e3:.0f}k"])
    L += md_table(["config", "build (s)", "runs", "walks", "cycles", "idle cycles skipped", "walks/s"], rows,
                  "lrrrrrr")
    L.append("\nIdle cycles (every walk waiting for memory) are skipped exactly: the harness compares the "
             "model's whole state after two cycles with the same inputs and, at a fixed point, jumps to the "
             "next memory response (`--exact-idle` simulates them; the smoke test checks both agree). "
             "Raw data: walker_results.csv, walker_results.json, runs/walker_*.json.\n")
    return L


# ---- driver ----------------------------------------------------------------------------------
def run(args, out: Path) -> tuple[list[str], bool]:
    t_start = time.monotonic()
    configs = config_list(args)
    test_only = {c: TEST_ONLY[c] for c in configs if c in TEST_ONLY}
    say(f"[eval] NestedWalker configurations: {', '.join(configs)}")
    built: dict = {}

    def builder():
        built["r"] = build_configs(configs, args.obj_root, tag="walker build", test_only=test_only,
                                   block="walker")
    th = threading.Thread(target=builder)
    th.start()                      # builds run while the workloads are generated
    pairs = []
    for c in configs:
        if c in TEST_ONLY:
            pairs.append(_pair_of_params(TEST_ONLY[c]))
        else:
            try:
                pairs.append(_pair_of_params(hbuild.load_manifest(c)["params"]))
            except FileNotFoundError:
                pass
    pairs = [p for p in wl.PAIRS if p in pairs]
    wks = make_workloads(args, pairs, out)
    th.join()
    if "r" not in built:
        raise RuntimeError("walker harness build failed (see the messages above)")
    exes, build_times, skipped = built["r"]
    jobs = []
    for c, exe in exes.items():
        pc = _pair_of_params(hbuild.load_manifest(c)["params"])
        for w in wks:
            if w["pair"] != pc:
                continue
            if w["kind"] == "mix" and c not in MIX_CONFIGS:
                continue
            jobs.append((c, w, None))
            if c == THRASH_CONFIG and w["wl"] in ("stride", "random"):
                jobs.append((c, w, 1))   # the same, one walk in flight: see section()
    weight = lambda j: j[1]["w"].n * (6 if hbuild.load_manifest(j[0])["params"]["guestPwcEntries"] == 0 else 1)  # noqa: E731
    jobs.sort(key=lambda j: -weight(j))
    say(f"[eval] NestedWalker: {len(jobs)} runs on {args.jobs} parallel jobs")

    def describe(j, d):
        c, w, _ = j
        if d is None:
            return f"{c} {w['name']}"
        agree = "counters agree" if d["counters_agree"] else "COUNTER MISMATCH"
        model = f"model ok ({d['model_checked']})" if not d["n_mismatches"] else f"MODEL MISMATCH x{d['n_mismatches']}"
        return (f"{c:22s} {d['workload']:18s} reads/walk {d['warm_reads']:6.2f}  walks/kcycle {d['warm_wpkc']:6.2f}  "
                f"{d['walks_per_second'] / 1e3:5.0f}k walks/s  {agree}, {model}")

    results, failures = run_pool(jobs, lambda j: run_one(exes[j[0]], j[0], j[1], args, out, j[2]),
                                 workers=args.jobs, weight=weight, describe=describe)
    order = {c: i for i, c in enumerate(configs)}
    wk_order = {w["name"]: i for i, w in enumerate(wks)}
    results.sort(key=lambda r: (wk_order[r["workload"].split("@")[0]], order[r["config"]], r["workload"]))
    (out / "walker_results.json").write_text(json.dumps({"runs": results}, indent=1, default=str))
    keys = ["workload", "config", "pair", "walks", "cycles", "memReads", "memWrites", "readsPerWalk",
            "cold_reads", "warm_reads", "walksPer1000Cycles", "warm_wpkc", "faults", "dirtyEvents",
            "hugeGuest", "hugeAligned", "splintered", "mean_eff_bytes", "guestPwcHitsPerWalk",
            "hostPwcHitsPerWalk", "nestedTlbHitsPerWalk", "model_checked", "n_mismatches", "counters_agree"]
    with open(out / "walker_results.csv", "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(keys)
        for r in results:
            wr.writerow([r.get(k) for k in keys])
    res = {(r["config"], r["workload"]): r for r in results}
    pngs = plots(res, results, out) if results else []
    wall = time.monotonic() - t_start
    lines = section(args, results, pngs, build_times, skipped, wall)
    bad = [r for r in results if not r["counters_agree"] or r["n_mismatches"]]
    say(f"[eval] NestedWalker: {len(results)} runs, {fmt_t(wall)}")
    if failures or bad:
        say(f"[eval] ERROR: NestedWalker: {len(failures)} failed runs, {len(bad)} runs with counter or "
            f"model mismatches")
        return lines, False
    return lines, True
