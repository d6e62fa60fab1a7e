"""BabelFish workloads: containers of one application coscheduled on one core, a data-serving
mix and a FaaS mix. Deterministic by seed (numpy Generator(PCG64)).

Address-space model of one container of an application (4 KiB pages, same VPN layout in every
container of the image, as BabelFish assumes):

  text   shared, r-x, same PPN in the group          (the binary)
  libs   shared, r-x / r--                           (shared libraries)
  mmap   shared, r--                                 (mmapped data files: DB files, models)
  cow    shared, r-- + copy-on-write                 (pre-initialized data of the image);
         a few "writer" containers write some of these pages and privatize them
  heap   private, rw, dirty
  stack  private, rw, dirty

An access stream is a sequence of time slices (the quantum: context switches between the
containers, round-robin with jitter). Inside a slice each access re-touches one of the last few
pages with probability `repeat` (page-level temporal locality), otherwise draws a region by
weight and a page by a Zipf popularity that is the same in every container of the application
(same code, same hot data): that is what makes translations replicated across containers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

R, W, X = 0, 1, 2
PR, PW, PX, PU, PD, PCOW = 1, 2, 4, 8, 16, 32


@dataclass
class Region:
    name: str
    pages: int
    weight: float
    shared: bool
    perm: int
    write_frac: float = 0.0   # fraction of accesses that are writes (private regions / cow writers)
    exec_frac: float = 0.0    # fraction of accesses that are instruction fetches
    zipf: float = 1.0


@dataclass
class App:
    name: str
    regions: list
    quantum: int = 4000        # accesses per time slice (mean)
    repeat: float = 0.97       # probability of re-touching one of the last `window` pages
    window: int = 8
    writer_frac: float = 0.25  # containers that privatize CoW pages
    cow_write: float = 0.3     # P(write) of a writer container's access to the cow region


def data_serving(name="dataserving", scale=1.0) -> App:
    s = lambda n: max(4, int(n * scale))
    return App(name, [
        Region("text", s(1200), 0.30, True, PR | PX | PU, exec_frac=1.0, zipf=1.1),
        Region("libs", s(1600), 0.14, True, PR | PX | PU, exec_frac=0.6, zipf=1.1),
        Region("mmap", s(6000), 0.20, True, PR | PU, zipf=0.9),
        Region("cow", s(400), 0.06, True, PR | PU | PCOW, zipf=1.0),
        Region("heap", s(3000), 0.27, False, PR | PW | PU | PD, write_frac=0.3, zipf=0.9),
        Region("stack", 16, 0.03, False, PR | PW | PU | PD, write_frac=0.5, zipf=1.2),
    ], quantum=20000)


def web_serving(name="httpd") -> App:
    return App(name, [
        Region("text", 500, 0.35, True, PR | PX | PU, exec_frac=1.0, zipf=1.1),
        Region("libs", 1400, 0.20, True, PR | PX | PU, exec_frac=0.6, zipf=1.1),
        Region("mmap", 2500, 0.15, True, PR | PU, zipf=1.0),
        Region("cow", 200, 0.05, True, PR | PU | PCOW, zipf=1.0),
        Region("heap", 1500, 0.22, False, PR | PW | PU | PD, write_frac=0.3, zipf=1.0),
        Region("stack", 16, 0.03, False, PR | PW | PU | PD, write_frac=0.5, zipf=1.2),
    ], quantum=15000)


def kv_store(name="kvstore") -> App:
    return App(name, [
        Region("text", 700, 0.25, True, PR | PX | PU, exec_frac=1.0, zipf=1.1),
        Region("libs", 1000, 0.10, True, PR | PX | PU, exec_frac=0.6, zipf=1.1),
        Region("mmap", 8000, 0.25, True, PR | PU, zipf=0.8),
        Region("cow", 300, 0.05, True, PR | PU | PCOW, zipf=1.0),
        Region("heap", 5000, 0.32, False, PR | PW | PU | PD, write_frac=0.35, zipf=0.8),
        Region("stack", 16, 0.03, False, PR | PW | PU | PD, write_frac=0.5, zipf=1.2),
    ], quantum=18000)


def faas_function(name, scale=1.0) -> App:
    s = lambda n: max(4, int(n * scale))
    return App(name, [
        Region("text", s(1500), 0.40, True, PR | PX | PU, exec_frac=1.0, zipf=1.1),   # runtime
        Region("libs", s(1200), 0.25, True, PR | PX | PU, exec_frac=0.6, zipf=1.1),
        Region("mmap", s(300), 0.15, True, PR | PU, zipf=1.0),                         # function code/data
        Region("cow", s(200), 0.05, True, PR | PU | PCOW, zipf=1.0),
        Region("heap", s(120), 0.12, False, PR | PW | PU | PD, write_frac=0.4, zipf=1.0),
        Region("stack", 8, 0.03, False, PR | PW | PU | PD, write_frac=0.5, zipf=1.2),
    ], quantum=5000, writer_frac=0.1)


class _Layout:
    """VPN/PPN layout of one application image (one container group)."""

    def __init__(self, app: App, group: int, rng: np.random.Generator, ppn_base: int):
        self.app = app
        self.group = group
        self.vbase = {}
        self.pbase = {}
        self.perm_order = {}
        self.cdf = {}
        vpn = 0x400 + int(rng.integers(0, 64)) * 0x1000  # image base (same for the group)
        ppn = ppn_base
        for r in app.regions:
            self.vbase[r.name] = vpn
            vpn += r.pages + 0x2000  # gaps between regions, as in a real address space
            if r.shared:
                self.pbase[r.name] = ppn
                ppn += r.pages
            ranks = np.arange(1, r.pages + 1, dtype=np.float64)
            p = ranks ** (-r.zipf)
            self.cdf[r.name] = np.cumsum(p) / p.sum()
            self.perm_order[r.name] = rng.permutation(r.pages)  # popularity -> page
        self.ppn_end = ppn
        w = np.array([r.weight for r in app.regions])
        self.region_cdf = np.cumsum(w) / w.sum()


class _Builder:
    def __init__(self, seed: int):
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.next_ppn = 0x10000
        self.next_pid = 100
        self.map_rows = []      # arrays per process
        self.slices = []        # (pid, group, vpn array, type array)

    def layout(self, app: App, group: int) -> _Layout:
        lay = _Layout(app, group, self.rng, self.next_ppn)
        self.next_ppn = lay.ppn_end + 0x100
        return lay

    def process(self, lay: _Layout, writer: bool) -> dict:
        pid = self.next_pid
        self.next_pid += 1
        pids, vpns, ppns, perms, shared = [], [], [], [], []
        for r in lay.app.regions:
            v = lay.vbase[r.name] + np.arange(r.pages, dtype=np.int64)
            if r.shared:
                p = lay.pbase[r.name] + np.arange(r.pages, dtype=np.int64)
            else:
                p = self.next_ppn + np.arange(r.pages, dtype=np.int64)
                self.next_ppn += r.pages
            vpns.append(v)
            ppns.append(p)
            perms.append(np.full(r.pages, r.perm, dtype=np.int64))
            shared.append(np.full(r.pages, 1 if r.shared else 0, dtype=np.int64))
        v = np.concatenate(vpns)
        self.map_rows.append((np.full(len(v), pid, dtype=np.int64), v, np.concatenate(ppns),
                              np.concatenate(perms), np.zeros(len(v), dtype=np.int64),
                              np.concatenate(shared)))
        return {"pid": pid, "lay": lay, "writer": writer}

    def slice(self, proc: dict, n: int) -> None:
        lay, app, rng = proc["lay"], proc["lay"].app, self.rng
        fresh = rng.random(n) >= app.repeat
        fresh[0] = True
        k = int(fresh.sum())
        reg = np.searchsorted(lay.region_cdf, rng.random(k), side="right")
        reg = np.minimum(reg, len(app.regions) - 1)
        vpn = np.empty(k, dtype=np.int64)
        typ = np.zeros(k, dtype=np.int64)
        u = rng.random(k)
        u2 = rng.random(k)
        for ri, r in enumerate(app.regions):
            sel = np.nonzero(reg == ri)[0]
            if not len(sel):
                continue
            rank = np.minimum(np.searchsorted(lay.cdf[r.name], u[sel]), r.pages - 1)
            vpn[sel] = lay.vbase[r.name] + lay.perm_order[r.name][rank]
            t = np.where(u2[sel] < r.exec_frac, X, R)
            if r.write_frac:
                t = np.where(rng.random(len(sel)) < r.write_frac, W, t)
            if r.perm & PCOW and proc["writer"]:
                t = np.where(rng.random(len(sel)) < app.cow_write, W, t)
            typ[sel] = t
        # repeats: one of the last `window` fresh draws of this slice
        last = np.cumsum(fresh) - 1
        back = rng.integers(0, app.window, n)
        src = np.where(fresh, last, np.maximum(last - back, 0))
        v = vpn[src]
        t = typ[src]
        self.slices.append((proc["pid"], proc["lay"].group, v, t))

    def trace(self) -> dict:
        pid = np.concatenate([np.full(len(s[2]), s[0], dtype=np.int64) for s in self.slices])
        grp = np.concatenate([np.full(len(s[2]), s[1], dtype=np.int64) for s in self.slices])
        vpn = np.concatenate([s[2] for s in self.slices])
        typ = np.concatenate([s[3] for s in self.slices])
        cols = list(zip(*self.map_rows))
        m = [np.concatenate(c) for c in cols]
        return {"pid": pid, "group": grp, "vpn": vpn, "type": typ,
                "map_pid": m[0], "map_vpn": m[1], "map_ppn": m[2], "map_perm": m[3],
                "map_size": m[4], "map_shared": m[5]}

    def quantum(self, app: App) -> int:
        return max(50, int(self.rng.normal(app.quantum, app.quantum * 0.25)))


def containers(n: int, accesses: int = 1_000_000, seed: int = 1, app: App | None = None) -> dict:
    """n containers of one application on one core, round-robin time slices."""
    app = app or data_serving()
    b = _Builder(seed * 1000 + n)
    lay = b.layout(app, group=1)
    nwriters = int(round(n * app.writer_frac)) if n > 1 else 0
    procs = [b.process(lay, writer=i < nwriters) for i in range(n)]
    total, i = 0, 0
    while total < accesses:
        q = min(b.quantum(app), accesses - total)
        b.slice(procs[i % n], q)
        total += q
        i += 1
    return b.trace()


def data_serving_mix(accesses: int = 1_000_000, seed: int = 1, per_app: int = 4) -> dict:
    """Three data-serving applications (document DB, key-value store, web server), per_app
    containers each, one CCID group per application, all coscheduled on one core; the scheduler
    picks the next container at random."""
    b = _Builder(seed * 1000 + 77)
    procs = []
    for g, app in enumerate([data_serving("docdb"), kv_store(), web_serving()], start=1):
        lay = b.layout(app, group=g)
        nw = max(1, int(round(per_app * app.writer_frac)))
        procs += [b.process(lay, writer=i < nw) for i in range(per_app)]
    total = 0
    while total < accesses:
        pr = procs[int(b.rng.integers(0, len(procs)))]
        q = min(b.quantum(pr["lay"].app), accesses - total)
        b.slice(pr, q)
        total += q
    return b.trace()


def faas_mix(accesses: int = 1_000_000, seed: int = 1, functions: int = 4, concurrent: int = 8,
             life: int = 30000) -> dict:
    """FaaS: `functions` function images (one CCID group each); short-lived invocations (a new
    process each, ~`life` accesses), `concurrent` alive at once, ~5000-access slices. Most pages
    are the language runtime and the function's code: shared."""
    b = _Builder(seed * 1000 + 99)
    lays = [b.layout(faas_function(f"fn{g}", scale=0.6 + 0.3 * g), group=g)
            for g in range(1, functions + 1)]
    alive = []

    def spawn():
        lay = lays[int(b.rng.integers(0, len(lays)))]
        p = b.process(lay, writer=b.rng.random() < lay.app.writer_frac)
        p["left"] = max(500, int(b.rng.normal(life, life * 0.3)))
        return p

    alive = [spawn() for _ in range(concurrent)]
    total = 0
    while total < accesses:
        j = int(b.rng.integers(0, len(alive)))
        pr = alive[j]
        q = min(b.quantum(pr["lay"].app), pr["left"], accesses - total)
        b.slice(pr, q)
        pr["left"] -= q
        total += q
        if pr["left"] <= 0:
            alive[j] = spawn()
    return b.trace()


WORKLOADS = {
    "containers": containers,
    "dataserving_mix": data_serving_mix,
    "faas_mix": faas_mix,
    "stress": None,  # set below
}


def stress(accesses: int = 3000, seed: int = 1) -> dict:
    """A tiny adversarial trace for tests: two groups of three processes, a small page pool
    (many evictions in a 64-entry TLB), random switches every few accesses, shared read-only,
    shared writable-but-clean, copy-on-write, private clean and a 2 MiB superpage mapping."""
    rng = np.random.Generator(np.random.PCG64(seed))
    pids = [10, 11, 12, 20, 21, 22]
    group = {10: 1, 11: 1, 12: 1, 20: 2, 21: 2, 22: 2}
    rows = []
    nxt = 0x90000
    for g, base_ppn in ((1, 0x1000), (2, 0x3000)):
        members = [p for p in pids if group[p] == g]
        for p in members:
            for i in range(40):                       # shared r-x text
                rows.append((p, 0x400 + i, base_ppn + i, PR | PX | PU, 0, 1))
            for i in range(30):                       # shared rw file, clean
                rows.append((p, 0x800 + i, base_ppn + 0x100 + i, PR | PW | PU, 0, 1))
            for i in range(30):                       # copy-on-write
                rows.append((p, 0xC00 + i, base_ppn + 0x200 + i, PR | PU | PCOW, 0, 1))
            for i in range(40):                       # private heap, clean
                rows.append((p, 0x2000 + i, nxt, PR | PW | PU, 0, 0))
                nxt += 1
            # one 2 MiB page (private), aligned
            rows.append((p, 0x40000, 0x200000 + 0x200 * (p % 8), PR | PW | PU | PD, 1, 0))
    m = np.array(rows, dtype=np.int64)
    pid_l, vpn_l, typ_l = [], [], []
    i = 0
    while i < accesses:
        p = pids[int(rng.integers(0, len(pids)))]
        q = int(rng.integers(1, 40))
        for _ in range(min(q, accesses - i)):
            reg = int(rng.integers(0, 5))
            if reg == 0:
                v, t = 0x400 + int(rng.integers(0, 40)), X
            elif reg == 1:
                v, t = 0x800 + int(rng.integers(0, 30)), int(rng.random() < 0.3)
            elif reg == 2:
                v, t = 0xC00 + int(rng.integers(0, 30)), int(rng.random() < 0.15)
            elif reg == 3:
                v, t = 0x2000 + int(rng.integers(0, 40)), int(rng.random() < 0.4)
            else:
                v, t = 0x40000 + int(rng.integers(0, 512)), int(rng.random() < 0.5)
            pid_l.append(p)
            vpn_l.append(v)
            typ_l.append(t)
            i += 1
    pid = np.array(pid_l, dtype=np.int64)
    return {"pid": pid, "group": np.array([group[p] for p in pid_l], dtype=np.int64),
            "vpn": np.array(vpn_l, dtype=np.int64), "type": np.array(typ_l, dtype=np.int64),
            "map_pid": m[:, 0], "map_vpn": m[:, 1], "map_ppn": m[:, 2], "map_perm": m[:, 3],
            "map_size": m[:, 4], "map_shared": m[:, 5]}


WORKLOADS["stress"] = stress
