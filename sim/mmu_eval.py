"""XlatMmu part of `make eval` (called by sim/eval.py; shared machinery in sim/evalcore.py).

Issue 12 item 7: the composed MMU on container workloads inside VMs (sim/workloads/mmu.py:
N VMs x P processes of one container group each, real page tables of both stages), on the
named configurations ``mmu_rv`` and ``mmu_x86``, with both TLB levels on and with the L2 off
(CTRL through the CSR port). Each run is sim/harness/mmu.cpp (one request at a time, a latency
memory on the one memory port, PmlLogger on in every VM's context with a hypervisor that answers
its exits; its own counts against every counter the RTL has that it can count); every response of
the run (``--mmu-check``, default the whole run) is replayed on the composed model
tb/models/xlat_mmu.py with the RTL's policy, which must give the same answer from the same
level and, on a whole-run replay, the same mmu_*, l1_* and l2_* counters. BabelFish sharing on
vs off: the RTL fills every entry private (docs/xlat-mmu.md decided 9) and has no sharing knob,
so the sharing-on column is the composed model's (M5), on the same workloads, beside its
sharing-off figures (which the RTL matches exactly). Writes mmu_results.json / .csv and
runs/mmu_*.json and returns the section of report.md.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import harness_build as hbuild
import mmuio
from evalcore import build_and_run, check_summary, fmt_t, md_table, say, section_verdict, write_results
from workloads import mmu as wl

CONFIGS = ["mmu_rv", "mmu_x86"]
WORKLOADS = ["vm1_c8", "vm2_c4", "vm4_c2"]
QUICK_WORKLOADS = ["vm2_c4"]
LEVELS = {"L1+L2": 3, "L1 only": 1}          # CTRL values (bit 0 L1, bit 1 L2)


# --mmu-* options: (name, type, default, help)
OPTIONS = (
    ("accesses", int, None, "accesses per workload (default 30000, the first 20%% warm-up; --quick 3000)"),
    ("latency", int, 100, "memory latency in cycles (default 100)"),
    ("pml-service", int, 2000, "cycles from a PML exit to the hypervisor's new buffer (default 2000)"),
    ("check", int, 0, "responses of every run replayed on the composed model (default 0: the whole run, "
                      "counters included)"),
    ("configs", str, None, "comma list (default mmu_rv,mmu_x86)"),
    ("workloads", str, None, f"comma list of {','.join(wl.BUILTIN)} (default {','.join(WORKLOADS)})"),
)


def add_args(ap) -> None:
    g = ap.add_argument_group("XlatMmu")
    for name, typ, default, hlp in OPTIONS:
        g.add_argument(f"--mmu-{name}", type=typ, default=default, help=hlp)
    g.add_argument("--mmu-no-sharing", action="store_true", help="skip the model's sharing-on figures")


def _workloads(args, out: Path) -> list[dict]:
    """The built-in workloads, or with --trace the external trace alone, per configuration."""
    tdir = out / "mmu_traces"
    tdir.mkdir(parents=True, exist_ok=True)
    n = args.mmu_accesses or (3000 if args.quick else 30000)
    names = args.mmu_workloads.split(",") if args.mmu_workloads else (QUICK_WORKLOADS if args.quick else WORKLOADS)
    configs = args.mmu_configs.split(",") if args.mmu_configs else (CONFIGS[:1] if args.quick else CONFIGS)
    trace = None
    if args.trace:
        import traceio
        trace = traceio.load(args.trace)
        names = [Path(args.trace).stem]
    wks = []
    for c in configs:
        for name in names:
            t0 = time.monotonic()
            if trace is not None:
                w = wl.from_trace(c, trace, args.seed, name=name)
            else:
                vms, procs = wl.BUILTIN[name]
                w = wl.containers(c, vms, procs, n, args.seed, name=name)
            mp, tp = tdir / f"{c}__{name}.mem", tdir / f"{c}__{name}.trace"
            mmuio.write_workload(w, mp, tp)
            wks.append(dict(config=c, name=name, w=w, mem=mp, trace=tp))
            say(f"[mmu gen] {c} {name}: {len(w):,} accesses, {w.meta['pages']:,} pages "
                f"{'mapped' if trace is not None else 'per process'}, {len(w.words):,} table words "
                f"({time.monotonic() - t0:.1f} s)")
    return wks


def run_one(exe: Path, job: dict, args, out: Path) -> dict:
    rdir = out / "runs"
    rdir.mkdir(parents=True, exist_ok=True)
    w = job["w"]
    name = f"{job['name']}@{job['ctrl']}"
    js, lg = rdir / f"{job['config']}__{name}.json", rdir / f"{job['config']}__{name}.resp"
    man = hbuild.load_manifest(job["config"])
    t0 = time.monotonic()
    st = mmuio.run(exe, job["mem"], job["trace"], js, log=lg, latency=args.mmu_latency,
                   warmup=int(len(w) * args.warmup), pml_mask=mmuio.pml_mask(w, man["params"]["pmlContexts"]),
                   pml_service=args.mmu_pml_service, ctrl=job["ctrl"], label=name)
    harness_s = time.monotonic() - t0
    rtl = dict(st["counters"])
    chk = mmuio.check_against_model(w, mmuio.read_log(lg), rtl, ctrl=job["ctrl"], limit=args.mmu_check)
    d = dict(st)
    d.update(config=job["config"], workload=job["name"], levels=job["levels"], meta=w.meta,
             model_checked=chk["checked"], model_counters=chk.get("counters_compared", 0),
             model_mismatches=chk["mismatches"][:10], n_mismatches=len(chk["mismatches"]),
             harness_seconds=harness_s)
    if job["ctrl"] == 3 and not args.mmu_no_sharing:
        warm = int(len(w) * args.warmup)
        d["model_sharing_off"] = mmuio.model_figures(w, sharing=False, warmup=warm)
        d["model_sharing_on"] = mmuio.model_figures(w, sharing=True, warmup=warm)
    d["wall_seconds"] = time.monotonic() - t0
    js.write_text(json.dumps(d, indent=1, default=str))
    lg.unlink()
    return d


def _f(x, nd=2):
    return f"{x:.{nd}f}"


def section(args, results: list[dict], build_times: dict, skipped: dict, wall: float) -> list[str]:
    L = ["## XlatMmu (issue 12 item 7)\n"]
    L.append("The composed MMU (L1 -> L2 -> NestedWalker -> PmlLogger, one request at a time) on "
             "container groups inside VMs (sim/workloads/mmu.py: N VMs x P processes of one ccid group each, "
             "the group's image mapped alike in every process, a private heap slice per process; both stages' "
             f"tables in memory), memory latency {args.mmu_latency} cycles, PmlLogger on in every VM's context "
             f"(a PML exit answered {args.mmu_pml_service} cycles later, the vCPU out meanwhile). Window: "
             f"after the first {args.warmup:.0%} of the accesses. Per 1000 accesses: L1 misses (answered by "
             "the L2 or a walk), walks (L2 misses); reads per walk: the walker's memory reads of the "
             "walks; cycles per access: the core's, issue to response, exit stalls included.\n")
    rows = []
    for r in results:
        w = r["window"]
        rows.append([r["config"], r["workload"], r["levels"], f"{w['requests']:,}",
                     _f(w["l1MissesPer1000"], 1), _f(100 * w["l2HitRate"], 1) if r["levels"] != "L1 only" else "-",
                     _f(w["l2MissesPer1000"], 1), _f(w["readsPerWalk"]), _f(w["cyclesPerAccess"]),
                     f"{_f(w['latencyL1'], 1)} / {_f(w['latencyL2'], 1) if w['l2Hits'] else '-'} / "
                     f"{_f(w['latencyWalk'], 1)}",
                     w["adWrites"], _f(w["pmlWritesPer1000"], 1), w["exits"],
                     f"{r['model_checked']:,}" + ("" if not r["n_mismatches"] else " MISMATCH"),
                     "yes" if r["counters_agree"] else "NO"])
    L += md_table(["config", "workload", "TLB levels", "accesses", "L1 misses / 1000", "L2 hit %",
                   "walks / 1000", "reads / walk", "cycles / access", "latency L1 / L2 / walk",
                   "A/D writes", "PML writes / 1000", "PML exits", "responses = model", "counters agree"],
                  rows, "llllrrrrrrrrrrl")
    shr = [r for r in results if "model_sharing_on" in r]
    if shr:
        L.append("")
        L.append("**Sharing on vs off** (the composed model, `MmuPolicy.rtl()` but for `sharing`): the RTL "
                 "builds its TLBs with `sharing` false and fills every entry private (docs/xlat-mmu.md "
                 "decided 9), so it has no sharing-on configuration; the model's sharing-off figures are the "
                 "RTL's (every response and counter compared above), the sharing-on ones are M5's (a walk "
                 "fill of a process with pcIdxValid 0 shared in its ccid group).\n")
        rows = []
        for r in shr:
            a, b = r["model_sharing_off"], r["model_sharing_on"]
            rows.append([r["config"], r["workload"], _f(a["l1MissesPer1000"], 1), _f(b["l1MissesPer1000"], 1),
                         _f(a["l2MissesPer1000"], 1), _f(b["l2MissesPer1000"], 1),
                         f"{b['l1CrossHits']:,} / {b['l2CrossHits']:,}",
                         _f(100 * (1 - b["l2MissesPer1000"] / max(a["l2MissesPer1000"], 1e-9)), 1)])
        L += md_table(["config", "workload", "L1 misses / 1000 off", "on", "walks / 1000 off", "on",
                       "cross hits L1 / L2 (on, whole run)", "walks saved %"], rows, "llrrrrrr")
    L.append("")
    L.append("Builds: " + ", ".join(f"{c} {t} s" if t[0].isdigit() else f"{c} {t}" for c, t in build_times.items())
             + (f"; skipped: {skipped}" if skipped else "") + f". Section: {fmt_t(wall)}. Raw data: "
             "mmu_results.csv, mmu_results.json, runs/mmu_*.json.\n")
    return L


def run(args, out: Path) -> tuple[list[str], bool]:
    t_start = time.monotonic()
    wks = _workloads(args, out)
    jobs = [dict(config=k["config"], name=k["name"], w=k["w"], mem=k["mem"], trace=k["trace"], levels=lv, ctrl=c)
            for k in wks for lv, c in LEVELS.items()]

    def describe(j, d):
        if d is None:
            return f"{j['config']} {j['name']} {j['levels']}"
        w = d["window"]
        return (f"{d['config']:8s} {d['workload']:7s} {d['levels']:8s} walks/1000 {w['l2MissesPer1000']:6.1f} "
                f"reads/walk {w['readsPerWalk']:5.2f} cycles/access {w['cyclesPerAccess']:6.2f}  "
                f"{check_summary(d)}")

    results, failures, build_times, skipped = build_and_run(
        "XlatMmu", "mmu", jobs, args, out, run_one, test_only={}, weight=lambda j: len(j["w"]) * (3 if j["ctrl"] == 3 else 1),
        describe=describe)
    order = {(k["config"], k["name"]): i for i, k in enumerate(wks)}
    results.sort(key=lambda r: (order[(r["config"], r["workload"])], r["levels"] != "L1+L2"))
    for r in results:
        r["fig"] = {k: r["window"][k] for k in ("l1MissesPer1000", "l2HitRate", "l2MissesPer1000", "readsPerWalk",
                                                "cyclesPerAccess", "adWrites", "pmlWritesPer1000", "exits")}
        for k in ("model_sharing_off", "model_sharing_on"):
            if k in r:
                r["fig"][f"{k}_l2MissesPer1000"] = r[k]["l2MissesPer1000"]
    fkeys = ["l1MissesPer1000", "l2HitRate", "l2MissesPer1000", "readsPerWalk", "cyclesPerAccess", "adWrites",
             "pmlWritesPer1000", "exits"]
    write_results(out, "mmu", results, ["config", "workload", "levels", "model_checked", "n_mismatches",
                                        "counters_agree"], fkeys,
                  ["model_walksPer1000_sharing_off", "model_walksPer1000_sharing_on"],
                  lambda r: [r["fig"].get("model_sharing_off_l2MissesPer1000"),
                             r["fig"].get("model_sharing_on_l2MissesPer1000")])
    wall = time.monotonic() - t_start
    lines = section(args, results, build_times, skipped, wall)
    return lines, section_verdict("XlatMmu", results, failures, skipped, wall)
