"""Pure-Python replay of a trace with the same OS/walker semantics as sim/harness/harness.cpp,
on the cocotb reference model (tb/models/babelfish.py) instead of the RTL. Slow (Python): for
tests on small traces. It gives the per-access flags (the harness's --log encoding) and the
counters, which must equal the harness's.

Flags per access: 1 hit, 2 shared, 4 crossHit, 8 permFault, 16 walked + filled, 32 CoW fault,
0x80 unmapped.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tb") not in sys.path:
    sys.path.insert(0, str(ROOT / "tb"))

from models.babelfish import BabelFishModel  # noqa: E402

PR, PW, PX, PU, PD, PCOW = 1, 2, 4, 8, 16, 32
ALIGN = {0: 0, 1: 0x1FF, 2: 0x3FFFF}


def replay(trace: dict, manifest: dict) -> tuple[np.ndarray, dict]:
    par = manifest["params"]
    model = BabelFishModel(dict(par))
    ppn_bits, pc_bits = par["ppnBits"], par["pcBits"]
    sharing = bool(par["sharing"])
    pid = np.asarray(trace["pid"]).tolist()
    grp = np.asarray(trace["group"]).tolist()
    # processes / groups numbered in order of first appearance (as traceio does)
    pidx, gidx = {}, {}
    for p, g in zip(pid, grp):
        if p not in pidx:
            pidx[p] = len(pidx)
            gidx.setdefault(g, len(gidx))
    pmap = {}
    for p, v, ppn, perm, size, sh in zip(*(np.asarray(trace[k]).tolist() for k in (
            "map_pid", "map_vpn", "map_ppn", "map_perm", "map_size", "map_shared"))):
        if p in pidx:
            pmap[(pidx[p], v & ~ALIGN[size])] = (ppn & ~ALIGN[size], perm, size, bool(sh))
    last = {}
    for i, p in enumerate(pid):
        last[pidx[p]] = i
    pcid_of, pcidx_of, haspriv = {}, {}, set()
    next_pcid, free = 1, []
    group_next = {}
    pcmask, priv, dirty = {}, {}, set()
    fresh = ((1 << ppn_bits) - 1 >> 1) + 1
    flags = np.zeros(len(pid), dtype=np.uint8)
    c = dict(lookups=0, hits=0, misses=0, sharedHits=0, crossHits=0, permFaults=0, walks=0,
             cowFaults=0, fills=0, invals=0)
    max_pcid = (1 << par["pcidBits"]) - 1
    for i, (p_raw, v, t) in enumerate(zip(pid, np.asarray(trace["vpn"]).tolist(),
                                          np.asarray(trace["type"]).tolist())):
        p = pidx[p_raw]
        g = gidx[grp[i]]
        if p not in pcid_of:
            if next_pcid <= max_pcid:
                pcid_of[p] = next_pcid
                next_pcid += 1
            else:
                pcid_of[p] = free.pop(0)
                model.inval(2, pcid=pcid_of[p])
                c["invals"] += 1
        pcid, ccid = pcid_of[p], g + 1
        idx = pcidx_of.get(p, -1)
        idx_max = (1 << manifest["derived"]["pcIdxBits"]) - 1
        r = model.lookup(v, pcid, ccid, pcIdx=min(max(idx, 0), idx_max), pcIdxValid=int(p in haspriv),
                         cmd=t, user=1).resp
        c["lookups"] += 1
        f = 0
        if r["hit"]:
            c["hits"] += 1
            f |= 1
            if r["shared"]:
                c["sharedHits"] += 1
                f |= 2
            if r["crossHit"]:
                c["crossHits"] += 1
                f |= 4
            if r["permFault"]:
                c["permFaults"] += 1
                f |= 8
        else:
            c["misses"] += 1
        if not r["hit"] or r["permFault"]:
            m, is_priv = None, False
            if (p, v) in priv:
                m, is_priv = priv[(p, v)], True
            else:
                for s in (0, 1, 2):
                    e = pmap.get((p, v & ~ALIGN[s]))
                    if e is not None and e[2] == s:
                        m = e
                        break
            if m is None:
                flags[i] = f | 0x80
                continue
            ppn, perm, size, sh = m
            base = v & ~ALIGN[size]
            shared_map = sh and not is_priv
            dkey = ("g", g, base) if shared_map else ("p", p, base)
            d = bool(perm & PD) or dkey in dirty
            c["walks"] += 1
            f |= 16
            if t == 1 and shared_map and perm & PCOW and size == 0:
                c["cowFaults"] += 1
                f |= 32
                if p not in pcidx_of:
                    pcidx_of[p] = group_next.get(g, 0)
                    group_next[g] = pcidx_of[p] + 1
                haspriv.add(p)
                if pcidx_of[p] < pc_bits:
                    pcmask[(g, base)] = pcmask.get((g, base), 0) | (1 << pcidx_of[p])
                cp = (fresh & ((1 << ppn_bits) - 1), (perm & (PR | PX | PU)) | PW | PD, 0, False)
                fresh += 1
                priv[(p, base)] = cp
                if sharing:
                    model.inval(5, vpn=base, ccid=ccid)
                else:
                    model.inval(4, vpn=base, pcid=pcid)
                c["invals"] += 1
                model.fill(v, cp[0], 0, perm_r=1, perm_w=1, perm_x=int(bool(cp[1] & PX)),
                           perm_u=int(bool(cp[1] & PU)), dirty=1, pcid=pcid, ccid=ccid, own=1, pc=0)
                c["fills"] += 1
            else:
                allowed = (t == 0 and perm & PR) or (t == 1 and perm & PW) or (t == 2 and perm & PX)
                if t == 1 and allowed and not d:
                    dirty.add(dkey)
                    d = True
                pcm = pcmask.get((g, base), 0) if shared_map else 0
                model.fill(v, ppn, size, perm_r=int(bool(perm & PR)), perm_w=int(bool(perm & PW)),
                           perm_x=int(bool(perm & PX)), perm_u=int(bool(perm & PU)), dirty=int(d),
                           pcid=pcid, ccid=ccid, own=int(not shared_map), pc=pcm)
                c["fills"] += 1
        flags[i] = f
        if last[p] == i:
            free.append(pcid)
    c["model_counters"] = dict(model.counters) if hasattr(model, "counters") else {}
    return flags, c
