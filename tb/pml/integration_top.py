"""NestedWalker + PmlLogger in one simulation: generates the SystemVerilog top module that
connects the walker's ``dirty`` channel to the logger's, from the two manifests.

Top ports:
* every walker port except ``dirty_ready`` under its own name (so tb/walker's WalkerEnv drives
  and checks the walker unchanged); ``dirty_valid`` / ``dirty_bits_*`` are outputs (observed),
  ``dirty_ready`` is an output = the logger's ready AND ``dirty_gate``;
* ``dirty_gate`` (input): the testbench's back-pressure on the link (WalkerEnv's dirty
  ReadyDriver is pointed at it);
* every logger port except ``dirty_*`` with the prefix ``pml_``; ``pml_dirty_valid``,
  ``pml_dirty_ready`` and ``pml_dirty_bits_*`` are outputs showing the logger's side of the
  link (the PmlEnv scoreboard observes it).

The walker's GPA page (gpaBits - 12) must equal the logger's (paBits - 12); the GVA page (52
bits) is truncated to the logger's vaBits - 12 (docs/pml-logger.md).

Module names: both configurations' files are compiled together; a module name defined by both
with different text is renamed in a copy of the logger's files (prefix ``PmlTop_``), and the
renaming is reported; identical modules are compiled once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from xlat_tb.manifest import Manifest

TOP = "PmlWalkerTop"
_MOD = re.compile(r"^\s*module\s+(\w+)", re.M)


def _modules(path: Path) -> list[str]:
    return _MOD.findall(path.read_text())


def resolve_sources(wman: Manifest, pman: Manifest, out: Path) -> tuple[list[Path], list[str]]:
    """Walker and logger sources with colliding module names resolved; returns (sources,
    notes)."""
    out.mkdir(parents=True, exist_ok=True)
    notes = []
    wmods = {}
    for f in wman.sources:
        for m in _modules(f):
            wmods[m] = f
    pmods = {}
    for f in pman.sources:
        for m in _modules(f):
            pmods[m] = f
    clash = sorted(set(wmods) & set(pmods))
    same, rename = [], []
    for m in clash:
        wt = _module_text(wmods[m], m)
        pt = _module_text(pmods[m], m)
        (same if wt == pt else rename).append(m)
    sources = list(wman.sources)
    skip_files = set()
    if same:
        notes.append(f"modules defined identically by both configurations, compiled once: "
                     f"{same}")
        for m in same:
            f = pmods[m]
            if set(_modules(f)) <= set(same):
                skip_files.add(f)
    if rename:
        notes.append(f"module name collision between the walker and the logger "
                     f"configurations: {rename}; the logger's copies are renamed PmlTop_<name> "
                     f"in {out}")
    pat = re.compile(r"\b(" + "|".join(map(re.escape, rename)) + r")\b") if rename else None
    for f in pman.sources:
        if f in skip_files:
            continue
        if pat is None:
            sources.append(f)
            continue
        text = pat.sub(lambda mm: "PmlTop_" + mm.group(1), f.read_text())
        g = out / f.name
        g.write_text(text)
        sources.append(g)
    return sources, notes


def _module_text(path: Path, name: str) -> str:
    t = path.read_text()
    i = t.find(f"module {name}")
    j = t.find("endmodule", i)
    return t[i:j]


def _decl(direction: str, width: int, name: str) -> str:
    w = f"[{width - 1}:0] " if width > 1 else ""
    return f"  {direction} {w}{name}"


def generate(wman: Manifest, pman: Manifest, out: Path) -> tuple[Path, Path, list[Path], list[str]]:
    """Write the top module and the logger-side manifest (prefixed ports); returns (top.sv,
    manifest_pml.json, sources, notes)."""
    g_w = wman.width("dirty_bits_gpa")
    g_p = pman.width("dirty_bits_gpa")
    if g_w != g_p:
        raise ValueError(f"walker GPA page {g_w} bits != logger GPA page {g_p} bits "
                         f"(gpaBits - 12 must equal paBits - 12)")
    v_w, v_p = wman.width("dirty_bits_gva"), pman.width("dirty_bits_gva")
    if v_p > v_w:
        raise ValueError(f"logger GVA page {v_p} bits > walker's {v_w}")
    for f in ("vmid", "asid"):
        if wman.width(f"dirty_bits_{f}") != pman.width(f"dirty_bits_{f}"):
            raise ValueError(f"dirty {f} widths differ")
    sources, notes = resolve_sources(wman, pman, out / "rtl")
    pname = pman.module
    if any("PmlTop_" + pname == Path(s).name[:-3] for s in sources):
        pname = "PmlTop_" + pname
    wports, pports = wman.ports, pman.ports
    decls, wconn, pconn, assigns = [], [], [], []
    top_ports = []
    for n, p in wports.items():
        if n.startswith("dirty_"):
            wconn.append(f"    .{n}(w_{n})")
            continue
        decls.append(_decl(p.direction, p.width, n))
        top_ports.append((n, p.direction, p.width))
        wconn.append(f"    .{n}({n})")
    dirty_fields = [n[len("dirty_bits_"):] for n in pports if n.startswith("dirty_bits_")]
    for n, p in pports.items():
        if n in ("clock", "reset"):
            pconn.append(f"    .{n}({n})")
            continue
        if n.startswith("dirty_"):
            pconn.append(f"    .{n}(p_{n})")
            continue
        decls.append(_decl(p.direction, p.width, "pml_" + n))
        top_ports.append(("pml_" + n, p.direction, p.width))
        pconn.append(f"    .{n}(pml_{n})")
    # observation ports of the link
    wires = []
    for n, p in wports.items():
        if n.startswith("dirty_"):
            wires.append(f"  wire {'[%d:0] ' % (p.width - 1) if p.width > 1 else ''}w_{n};")
            if n != "dirty_ready":
                decls.append(_decl("output", p.width, n))
                top_ports.append((n, "output", p.width))
                assigns.append(f"  assign {n} = w_{n};")
    decls.append(_decl("output", 1, "dirty_ready"))
    top_ports.append(("dirty_ready", "output", 1))
    decls.append(_decl("input", 1, "dirty_gate"))
    top_ports.append(("dirty_gate", "input", 1))
    for n, p in pports.items():
        if n.startswith("dirty_"):
            wires.append(f"  wire {'[%d:0] ' % (p.width - 1) if p.width > 1 else ''}p_{n};")
            decls.append(_decl("output", p.width, "pml_" + n))
            top_ports.append(("pml_" + n, "output", p.width))
            assigns.append(f"  assign pml_{n} = p_{n};")
    assigns.append("  assign p_dirty_valid = w_dirty_valid & dirty_gate;")
    assigns.append("  assign w_dirty_ready = p_dirty_ready & dirty_gate;")
    assigns.append("  assign dirty_ready = w_dirty_ready;")
    for f in dirty_fields:
        w = pports["dirty_bits_" + f].width
        assigns.append(f"  assign p_dirty_bits_{f} = w_dirty_bits_{f}[{w - 1}:0];")
    text = [f"// generated by tb/pml/integration_top.py: {wman.config} + {pman.config}",
            f"module {TOP}(", ",\n".join(decls), ");", *wires,
            f"  {wman.module} walker(", ",\n".join(wconn), "  );",
            f"  {pname} logger(", ",\n".join(pconn), "  );", *assigns, "endmodule", ""]
    out.mkdir(parents=True, exist_ok=True)
    top = out / f"{TOP}.sv"
    top.write_text("\n".join(text))
    # the logger-side manifest (ports with the pml_ prefix)
    raw = dict(pman.raw)
    raw["ports"] = [{"name": n, "direction": d, "width": w} for n, d, w in top_ports
                    if n.startswith("pml_")]
    raw["config"] = pman.config
    pm = out / "manifest_pml.json"
    pm.write_text(json.dumps(raw, indent=1))
    return top, pm, sources + [top], notes
