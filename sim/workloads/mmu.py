"""XlatMmu workloads: container groups inside VMs on one core, real page tables at both stages
(the testbenches' builder, tb/xlat_tb/pagetables.py), deterministic by seed.

The machine (``containers``): ``vms`` VMs (vmid 1..vms), each running one container group of
``procs`` processes (asid 1..procs, ccid = vmid, ``pcIdxValid`` 0) that map the group's image
alike: every process's root points at the same lower tables (``Scenario.add_space(...,
share_with=1)``), as the OS of a ccid group does (docs/xlat-mmu.md M5). The image, per VM:

| region | pages | guest leaves | access |
|---|---|---|---|
| text | 1200 | 4 KiB, r-x | fetch |
| libs | 1600 | 2 MiB with probability ``g2m`` per 2 MiB block, else 4 KiB; r-x | fetch 50 %, read |
| data | 3000 | 4 KiB, r-- | read |
| heap | 600 per process | 4 KiB, rw-, D clear | read 50 %, write 50 % |

Each process touches the shared regions and its own slice of the heap (mapped in every
process of the group, touched by one: private data). Guest frames come from 2 MiB GPA chunks;
the host maps each chunk with one 2 MiB leaf with probability ``h2m`` (else 4 KiB leaves).
Host leaves of data have D clear (dirty logging armed: the first write to a host page sets D,
a dirty event, one PmlLogger log entry); guest and host table pages have A/D set.

The access stream: round-robin time slices over every process of every VM (``slice``
accesses, +-25 %); inside a slice an access re-touches one of the last 8 pages with
probability ``reuse``, otherwise draws a region by weight (text 0.35, libs 0.25, data 0.25,
heap 0.15) and a page by Zipf popularity (the same ranking in every process of a VM).
Accesses are user accesses (``priv`` 1), ``mode`` both stages.
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[2] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from models.ptformats import CMD_EXEC, CMD_READ, CMD_WRITE, MODE_BOTH  # noqa: E402
from models.xlat_mmu import CONFIGS  # noqa: E402
from xlat_tb.pagetables import Scenario  # noqa: E402

FLAGS = ("sum", "mxr", "vmxr", "wp", "smep", "smap", "nxe")   # the req_bits_flags_* order
REGIONS = {  # name -> (pages, weight, guest perm, commands)
    "text": (1200, 0.35, dict(r=1, w=0, x=1), (CMD_EXEC,)),
    "libs": (1600, 0.25, dict(r=1, w=0, x=1), (CMD_EXEC, CMD_READ)),
    "data": (3000, 0.25, dict(r=1, w=0, x=0), (CMD_READ,)),
    "heap": (600, 0.15, dict(r=1, w=1, x=0), (CMD_READ, CMD_WRITE)),
}
CHUNK = 512        # 4 KiB pages per 2 MiB


@dataclass
class MmuWorkload:
    name: str
    config: str
    words: dict                      # the memory image {byte address: word}
    req: dict                        # column arrays (write_trace's fields)
    pml_base: int                    # a free 2 MiB HPA block: the PML buffers
    vms: list
    params: object = None            # models.xlat_mmu.XlatMmuParams (sharing off: the RTL's)
    meta: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.req["va"])


def _zipf_weights(n: int, s: float = 1.0) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** s
    return w / w.sum()


def _map_region(s: Scenario, vm, pages: int, perm: dict, *, g2m: float, h2m: float,
                dirty: int) -> list[int]:
    """Map ``pages`` 4 KiB pages (whole 2 MiB blocks, the last one partly) at a fresh VA of
    asid 1's space; returns their VAs."""
    r = s.rng
    space = vm.spaces[1]
    vas = []
    for c in range((pages + CHUNK - 1) // CHUNK):
        n = min(CHUNK, pages - c * CHUNK)
        va = s.random_va_block(vm, 1, 1)
        gpa = vm.gpa_alloc.alloc(1)
        host_lvl = 1 if r.random() < h2m else 0
        s.ad_clear_p = 1.0          # host leaves of data: D clear (half also A clear)
        if host_lvl:
            s.host_map_data(vm, gpa, 1)
        kw = dict(perm, u=1, a=1, d=dirty)
        if n == CHUNK and r.random() < g2m:
            s.ad_clear_p = 0.0
            space.map(va, gpa, 1, **kw)
            if not host_lvl:
                for k in range(n):
                    s.ad_clear_p = 1.0
                    s.host_map_data(vm, gpa + 4096 * k, 0)
        else:
            for k in range(n):
                s.ad_clear_p = 0.0
                space.map(va + 4096 * k, gpa + 4096 * k, 0, **kw)
                if not host_lvl:
                    s.ad_clear_p = 1.0
                    s.host_map_data(vm, gpa + 4096 * k, 0)
        s.ad_clear_p = 0.0
        vas += [va + 4096 * k for k in range(n)]
    return vas


def containers(config: str, vms: int, procs: int, accesses: int, seed: int = 1, *,
               slice_len: int = 1000, reuse: float = 0.9, g2m: float = 0.25, h2m: float = 0.5,
               name: str | None = None) -> MmuWorkload:
    """The machine and the access stream of the module doc."""
    params = CONFIGS[config](sharing=False)
    family = params.walker.G.family
    s = Scenario(params.walker, seed)
    r = random.Random(f"mmu-workload:{seed}:{config}:{vms}:{procs}")
    np_rng = np.random.default_rng(r.randrange(1 << 32))
    pml_base = s.hpa.alloc(1)
    space_of = []          # per process: (vmid, asid, s1Root, s2Root, {region: [va]})
    for v in range(1, vms + 1):
        vm = s.add_vm(v)
        s.add_space(vm, 1)
        img = {}
        for reg, (pages, _, perm, _) in REGIONS.items():
            n = pages * procs if reg == "heap" else pages
            img[reg] = _map_region(s, vm, n, perm, g2m=g2m if reg == "libs" else 0.0, h2m=h2m,
                                   dirty=0 if reg == "heap" else 1)
            if reg != "heap":
                r.shuffle(img[reg])        # Zipf rank != address order
        for a in range(2, procs + 1):
            s.add_space(vm, a, share_with=1)
        for a in range(1, procs + 1):
            own = dict(img)
            heap = img["heap"][(a - 1) * REGIONS["heap"][0]:a * REGIONS["heap"][0]]
            own["heap"] = r.sample(heap, len(heap))
            space_of.append((v, a, vm.spaces[a].root >> 12, vm.hRoot, own))
    names = list(REGIONS)
    weights = np.array([REGIONS[k][1] for k in names])
    zipf = {k: _zipf_weights(len(space_of[0][4][k])) for k in names}
    cols = {k: [] for k in ("va", "cmd", "vmid", "asid", "ccid", "s1Root", "s2Root")}
    p = 0
    while len(cols["va"]) < accesses:
        vmid, asid, s1, s2, img = space_of[p % len(space_of)]
        p += 1
        n = min(accesses - len(cols["va"]), max(1, int(slice_len * r.uniform(0.75, 1.25))))
        recent: list = []
        regs = np_rng.choice(len(names), size=n, p=weights)
        for k in range(n):
            if recent and r.random() < reuse:
                va, reg = r.choice(recent)
            else:
                reg = names[regs[k]]
                va = img[reg][int(np_rng.choice(len(img[reg]), p=zipf[reg]))]
                recent = (recent + [(va, reg)])[-8:]
            cmd = r.choice(REGIONS[reg][3])
            cols["va"].append(va + r.randrange(512) * 8)
            cols["cmd"].append(cmd)
            cols["vmid"].append(vmid)
            cols["asid"].append(asid)
            cols["ccid"].append(vmid)
            cols["s1Root"].append(s1)
            cols["s2Root"].append(s2)
    n = len(cols["va"])
    req = {k: np.array(v, dtype=np.uint64) for k, v in cols.items()}
    req["priv"] = np.ones(n, dtype=np.uint8)
    req["mode"] = np.full(n, MODE_BOTH, dtype=np.uint8)
    req["pcIdx"] = np.zeros(n, dtype=np.uint8)
    req["pcIdxValid"] = np.zeros(n, dtype=np.uint8)
    # RISC-V: SUM 0 (user accesses need none); x86: NXE 1 (execute-disable honoured)
    req["flags"] = np.full(n, 0 if family == "rv" else 1 << FLAGS.index("nxe"), dtype=np.uint8)
    return MmuWorkload(name or f"vm{vms}_c{procs}", config, dict(s.mem.words), req, pml_base,
                       list(range(1, vms + 1)), params,
                       dict(vms=vms, procs=procs, slice=slice_len, reuse=reuse, g2m=g2m, h2m=h2m,
                            seed=seed, pages=sum(len(x) for x in space_of[0][4].values())))


# built-in workloads: name -> (vms, processes per VM)
BUILTIN = {"vm1_c8": (1, 8), "vm2_c4": (2, 4), "vm4_c2": (4, 2), "vm8_c1": (8, 1)}


def from_trace(config: str, trace: dict, seed: int = 1, name: str = "trace") -> MmuWorkload:
    """An external trace in BabelFishTlb's format (sim/README.md "External traces") on the
    composed MMU: one VM (vmid 1), each process its own guest space (asid = its rank of first
    access + 1), its group's ccid (rank + 1); each page-map row of a process that runs a guest
    leaf (the map's PPN the GPA frame, size, r/w/x/u, D as given, A set; a copy-on-write page
    read-only: no OS here, a write to it is answered with a page fault), each GPA block mapped
    by the host at its size at a random frame with D clear (dirty logging). Accesses are user
    accesses with the trace's type; ids in the widths of the configuration (an error if not)."""
    import traceio
    from xlat_tb.pagetables import MapConflict

    facts = traceio.validate(trace)
    params = CONFIGS[config](sharing=False)
    s = Scenario(params.walker, seed)
    pml_base = s.hpa.alloc(1)
    vm = s.add_vm(1)
    pids = list(dict.fromkeys(int(p) for p in trace["pid"]))
    groups = list(dict.fromkeys(int(g) for g in trace["group"]))
    if len(pids) >= 1 << params.asidBits or len(groups) >= 1 << params.ccidBits:
        raise traceio.TraceError(f"{len(pids)} processes / {len(groups)} groups: more than {config}'s "
                                 f"asidBits {params.asidBits} / ccidBits {params.ccidBits} hold")
    asid = {p: k + 1 for k, p in enumerate(pids)}
    for p in pids:
        s.add_space(vm, asid[p])
    va_bits = params.walker.G.input_bits
    for pid, vpn, ppn, perm, size in zip(*(trace[k].tolist() for k in
                                           ("map_pid", "map_vpn", "map_ppn", "map_perm", "map_size"))):
        if pid not in asid:
            continue                      # a process that never runs
        cow = bool(perm & traceio.PCOW)
        kw = dict(r=perm & 1, w=(perm >> 1 & 1) and not cow, x=perm >> 2 & 1, u=perm >> 3 & 1, a=1,
                  d=perm >> 4 & 1)
        kw = {k: int(bool(v)) for k, v in kw.items()}
        va = vpn << 12
        if va >> (va_bits - 1):
            raise traceio.TraceError(f"vpn {vpn:#x} is beyond {config}'s {va_bits - 1}-bit user VA range")
        try:
            vm.spaces[asid[pid]].map(va, ppn << 12, size, **kw)
            s.ad_clear_p = 1.0
            s.host_map_data(vm, ppn << 12, size)
            s.ad_clear_p = 0.0
        except MapConflict as e:
            raise traceio.TraceError(f"pid {pid} vpn {vpn:#x}: {e}") from e
    n = len(trace["pid"])
    a = np.array([asid[int(p)] for p in trace["pid"]], dtype=np.uint64)
    roots = {k: vm.spaces[k].root >> 12 for k in asid.values()}
    req = dict(va=np.asarray(trace["vpn"], dtype=np.uint64) << np.uint64(12), cmd=np.asarray(trace["type"], dtype=np.uint8),
               vmid=np.ones(n, dtype=np.uint64), asid=a,
               ccid=np.array([groups.index(int(g)) + 1 for g in trace["group"]], dtype=np.uint64),
               s1Root=np.array([roots[int(k)] for k in a], dtype=np.uint64),
               s2Root=np.full(n, vm.hRoot, dtype=np.uint64), priv=np.ones(n, dtype=np.uint8),
               mode=np.full(n, MODE_BOTH, dtype=np.uint8), pcIdx=np.zeros(n, dtype=np.uint8),
               pcIdxValid=np.zeros(n, dtype=np.uint8),
               flags=np.full(n, 0 if params.walker.G.family == "rv" else 1 << FLAGS.index("nxe"), dtype=np.uint8))
    return MmuWorkload(name, config, dict(s.mem.words), req, pml_base, [1], params,
                       dict(facts, seed=seed, pages=len(trace["map_pid"])))
