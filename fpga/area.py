#!/usr/bin/env python3
"""Where the LUT4 of a configuration go: every LUT4, PFUMX, L6MUX21 and CCU2C of the synth_ecp5
netlist that `fpga/levels.py` wrote is attributed to the registers whose input cones hold it,
grouped by name with the indices folded (`slot_12_page` -> `slot_N_page`); a cell in the cones of
several groups is split evenly among them. Distributed-RAM write ports and the block's outputs
are groups of their own.

    .venv/bin/python fpga/levels.py devtlb_full      # writes build/fpga/levels/devtlb_full.json
    .venv/bin/python fpga/area.py devtlb_full [--top 40]

A flattened block has no submodules to `stat`, so this is the per-structure view; the groups'
names are the Verilog register names of the generated RTL.
"""
import argparse
import json
import os
import re
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEQ = "TRELLIS_FF"
LUTRAM = "TRELLIS_DPR16X4"
COMB = ("LUT4", "PFUMX", "L6MUX21", "CCU2C")


def group(name):
    name = re.sub(r"\[.*?\]", "", name)
    return re.sub(r"(_\d+)+(?=_|$)", "_N", name)


def attribute(netlist_path):
    mods = json.load(open(netlist_path))["modules"]
    mod = next(m for m in mods.values() if m.get("attributes", {}).get("top"))
    cells = mod["cells"]
    names = {}
    for n, net in mod["netnames"].items():
        if n.startswith("$"):
            continue
        for b in net["bits"]:
            if isinstance(b, int) and (b not in names or len(n) < len(names[b])):
                names[b] = n
    drivers = {}
    for cn, c in cells.items():
        for port, bits in c["connections"].items():
            if c["port_directions"].get(port) == "output":
                for b in bits:
                    if isinstance(b, int):
                        drivers[b] = cn
    ends, ffs = defaultdict(list), defaultdict(int)
    for cn, c in cells.items():
        if c["type"] == SEQ:
            g = group(names.get(c["connections"]["Q"][0], cn))
            ffs[g] += 1
            for port in ("DI", "CE", "LSR"):
                ends[g] += [b for b in c["connections"].get(port, []) if isinstance(b, int)]
        elif c["type"] == LUTRAM:
            g = "RAM write: " + group(names.get(c["connections"]["DO"][0], cn))
            for port, bits in c["connections"].items():
                if port.startswith(("DI", "WAD", "WRE")):
                    ends[g] += [b for b in bits if isinstance(b, int)]
    for pn, pt in mod["ports"].items():
        if pt["direction"] == "output":
            ends["output: " + pn] += [b for b in pt["bits"] if isinstance(b, int)]
    reach = defaultdict(set)
    for g, bits in ends.items():
        seen, stack = set(), list(bits)
        while stack:
            cn = drivers.get(stack.pop())
            if cn is None or cn in seen or cells[cn]["type"] in (SEQ, "DP16KD"):
                continue
            seen.add(cn)
            c = cells[cn]
            if c["type"] == LUTRAM:
                ports = [p for p in c["connections"] if p.startswith("RAD")]  # the read is combinational
            else:
                reach[cn].add(g)
                ports = [p for p in c["connections"] if c["port_directions"].get(p) == "input"]
            for port in ports:
                stack += [b for b in c["connections"][port] if isinstance(b, int)]
    total = defaultdict(lambda: defaultdict(float))
    counts = defaultdict(int)
    for cn, c in cells.items():
        counts[c["type"]] += 1
        if c["type"] in COMB:
            gs = reach.get(cn) or {"(no register)"}
            for g in gs:
                total[g][c["type"]] += 1.0 / len(gs)
    return total, ffs, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--netlist", help="a synth_ecp5 JSON netlist (default: fpga/levels.py's)")
    a = ap.parse_args()
    nl = a.netlist or os.path.join(ROOT, "build", "fpga", "levels", f"{a.config}.json")
    total, ffs, counts = attribute(nl)
    print(f"{a.config}: " + ", ".join(f"{n} {t}" for t, n in sorted(counts.items()) if not t.startswith("$")))
    print(f"{'LUT4':>8} {'CCU2C':>6} {'MUX':>6} {'FF':>6}  registers")
    for g, d in sorted(total.items(), key=lambda kv: -kv[1].get("LUT4", 0))[:a.top]:
        mux = d.get("PFUMX", 0) + d.get("L6MUX21", 0)
        print(f"{d.get('LUT4', 0):8.0f} {d.get('CCU2C', 0):6.0f} {mux:6.0f} {ffs.get(g, 0):6d}  {g}")


if __name__ == "__main__":
    main()
