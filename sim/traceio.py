"""Trace I/O: the external trace format (NumPy .npz or plain text) and the harness's binary input.

A trace is a dict of NumPy arrays (see sim/README.md for the full description):

  accesses   pid (int), group (int, container-group id), vpn (int, 4 KiB page number),
             type (0 read, 1 write, 2 execute)
  page map   map_pid, map_vpn (first 4 KiB page of the mapping), map_ppn (first 4 KiB frame),
             map_perm (bits: 1 r, 2 w, 4 x, 8 u, 16 dirty, 32 copy-on-write),
             map_size (0 4 KiB, 1 2 MiB, 2 1 GiB), map_shared (1: same VPN->PPN/perm for the
             whole group; the TLB may share it)

Text form: sections `[map]` (pid vpn ppn perm size shared) and `[trace]` (pid group vpn type);
numbers in decimal or 0x hex; perm as letters from "rwxudc" ('-' ignored) or an integer; size as
0/1/2 or 4K/2M/1G; type as R/W/X or 0/1/2; '#' starts a comment.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

PR, PW, PX, PU, PD, PCOW = 1, 2, 4, 8, 16, 32
PERM_LETTERS = {"r": PR, "w": PW, "x": PX, "u": PU, "d": PD, "c": PCOW}
SIZES = {"4k": 0, "2m": 1, "1g": 2, "0": 0, "1": 1, "2": 2}
TYPES = {"r": 0, "w": 1, "x": 2, "0": 0, "1": 1, "2": 2}
ACCESS_KEYS = ("pid", "group", "vpn", "type")
MAP_KEYS = ("map_pid", "map_vpn", "map_ppn", "map_perm", "map_size", "map_shared")
MAGIC = b"XLATBF01"


class TraceError(ValueError):
    pass


def _perm(tok: str) -> int:
    if tok.isdigit() or tok.lower().startswith("0x"):
        return int(tok, 0)
    v = 0
    for ch in tok.lower():
        if ch == "-":
            continue
        if ch not in PERM_LETTERS:
            raise TraceError(f"bad permission letter {ch!r} in {tok!r}")
        v |= PERM_LETTERS[ch]
    return v


def perm_str(v: int) -> str:
    return "".join(ch if v & b else "-" for ch, b in PERM_LETTERS.items())


def load_text(path: Path) -> dict:
    acc, mp, section = [], [], None
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
            if section not in ("map", "trace"):
                raise TraceError(f"{path}:{n}: unknown section {line}")
            continue
        f = line.split()
        try:
            if section == "map":
                if len(f) != 6:
                    raise TraceError("map rows are: pid vpn ppn perm size shared")
                mp.append((int(f[0], 0), int(f[1], 0), int(f[2], 0), _perm(f[3]),
                           SIZES[f[4].lower()], int(f[5], 0)))
            elif section == "trace":
                if len(f) != 4:
                    raise TraceError("trace rows are: pid group vpn type")
                acc.append((int(f[0], 0), int(f[1], 0), int(f[2], 0), TYPES[f[3].lower()]))
            else:
                raise TraceError("data before a [map] or [trace] section")
        except (KeyError, ValueError) as e:
            raise TraceError(f"{path}:{n}: {e}") from None
    a = np.array(acc, dtype=np.int64).reshape(-1, 4)
    m = np.array(mp, dtype=np.int64).reshape(-1, 6)
    d = {k: a[:, i] for i, k in enumerate(ACCESS_KEYS)}
    d.update({k: m[:, i] for i, k in enumerate(MAP_KEYS)})
    return d


def save_text(trace: dict, path: Path) -> None:
    with open(path, "w") as f:
        f.write("# xlat BabelFish trace (sim/README.md)\n[map]\n# pid vpn ppn perm size shared\n")
        for row in zip(*(trace[k] for k in MAP_KEYS)):
            pid, vpn, ppn, perm, size, sh = (int(x) for x in row)
            f.write(f"{pid} {vpn:#x} {ppn:#x} {perm_str(perm)} {['4K', '2M', '1G'][size]} {sh}\n")
        f.write("[trace]\n# pid group vpn type\n")
        for row in zip(*(trace[k] for k in ACCESS_KEYS)):
            pid, grp, vpn, typ = (int(x) for x in row)
            f.write(f"{pid} {grp} {vpn:#x} {'RWX'[typ]}\n")


def load(path) -> dict:
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path) as z:
            missing = [k for k in ACCESS_KEYS + MAP_KEYS if k not in z]
            if missing:
                raise TraceError(f"{path}: missing arrays {missing}")
            d = {k: np.asarray(z[k]) for k in ACCESS_KEYS + MAP_KEYS}
        if d["type"].dtype.kind in "US":
            d["type"] = np.array([TYPES[str(t).lower()] for t in d["type"]], dtype=np.int64)
        return d
    return load_text(path)


def save_npz(trace: dict, path) -> None:
    np.savez_compressed(path, **{k: np.asarray(trace[k]) for k in ACCESS_KEYS + MAP_KEYS})


def validate(trace: dict) -> dict:
    """Check the trace and return facts about it (processes, groups, sharing)."""
    n = len(trace["pid"])
    if any(len(trace[k]) != n for k in ACCESS_KEYS):
        raise TraceError("access arrays differ in length")
    nm = len(trace["map_pid"])
    if any(len(trace[k]) != nm for k in MAP_KEYS):
        raise TraceError("page-map arrays differ in length")
    if n == 0:
        raise TraceError("the trace has no accesses")
    if np.any((trace["type"] < 0) | (trace["type"] > 2)):
        raise TraceError("access type must be 0 (read), 1 (write) or 2 (execute)")
    size = trace["map_size"]
    if np.any((size < 0) | (size > 2)):
        raise TraceError("map_size must be 0, 1 or 2")
    # one group per pid
    pids, first = np.unique(trace["pid"], return_index=True)
    grp_of = dict(zip(pids.tolist(), trace["group"][first].tolist()))
    bad = trace["group"] != np.array([grp_of[p] for p in pids.tolist()])[np.searchsorted(pids, trace["pid"])]
    if np.any(bad):
        raise TraceError(f"pid {int(trace['pid'][np.argmax(bad)])} appears in two groups")
    if np.any(trace["map_perm"] & PCOW & (size != 0) * PCOW):
        raise TraceError("copy-on-write pages must be 4 KiB")
    # shared mappings: same ppn/perm/size for every process of the group holding the vpn
    mg = np.array([grp_of.get(int(p), -1) for p in trace["map_pid"]], dtype=np.int64)
    sh = (trace["map_shared"] != 0) & (mg >= 0)  # rows of processes that never run are ignored
    seen: dict = {}
    for g, v, ppn, perm, s in zip(mg[sh].tolist(), trace["map_vpn"][sh].tolist(),
                                  trace["map_ppn"][sh].tolist(), trace["map_perm"][sh].tolist(),
                                  size[sh].tolist()):
        k = (g, v)
        if k in seen and seen[k] != (ppn, perm, s):
            raise TraceError(f"shared page vpn {v:#x} of group {g} maps differently in two processes")
        seen[k] = (ppn, perm, s)
    return {"accesses": n, "processes": len(pids), "groups": len(set(grp_of.values())),
            "map_rows": nm, "shared_rows": int(sh.sum())}


def write_harness_input(trace: dict, path) -> dict:
    """Write the binary the C++ harness reads; processes are renumbered 0.. in order of first
    access, groups 0.. in order of first appearance."""
    facts = validate(trace)
    pid = np.asarray(trace["pid"], dtype=np.int64)
    upids, first = np.unique(pid, return_index=True)
    order = np.argsort(first, kind="stable")
    pid_sorted = upids[order]
    proc_index = {int(p): i for i, p in enumerate(pid_sorted)}
    grp_raw = np.asarray(trace["group"], dtype=np.int64)[first[order]]
    ugroups = list(dict.fromkeys(grp_raw.tolist()))
    gidx = {g: i for i, g in enumerate(ugroups)}
    proc_group = np.array([gidx[g] for g in grp_raw.tolist()], dtype=np.uint32)
    lut_keys = pid_sorted
    lut_vals = np.arange(len(pid_sorted), dtype=np.uint32)
    srt = np.argsort(lut_keys)
    acc_proc = lut_vals[srt][np.searchsorted(lut_keys[srt], pid)]
    mpid = np.asarray(trace["map_pid"], dtype=np.int64)
    keep = np.isin(mpid, lut_keys)  # mappings of processes that never run are dropped
    m_proc = lut_vals[srt][np.searchsorted(lut_keys[srt], mpid[keep])]
    with open(path, "wb") as f:
        f.write(MAGIC)
        np.array([len(proc_group), int(keep.sum()), len(pid)], dtype="<u8").tofile(f)
        proc_group.astype("<u4").tofile(f)
        m_proc.astype("<u4").tofile(f)
        np.asarray(trace["map_vpn"])[keep].astype("<u8").tofile(f)
        np.asarray(trace["map_ppn"])[keep].astype("<u8").tofile(f)
        np.asarray(trace["map_perm"])[keep].astype("u1").tofile(f)
        np.asarray(trace["map_size"])[keep].astype("u1").tofile(f)
        (np.asarray(trace["map_shared"])[keep] != 0).astype("u1").tofile(f)
        acc_proc.astype("<u4").tofile(f)
        np.asarray(trace["vpn"]).astype("<u8").tofile(f)
        np.asarray(trace["type"]).astype("u1").tofile(f)
    facts["proc_index"] = proc_index
    return facts
