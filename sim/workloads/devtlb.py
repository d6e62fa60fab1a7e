"""DevTlb workloads: hyper-tenant SR-IOV network traffic (deterministic by seed).

HyperSIO's setting (seed 002, spec "Evaluation"): N tenants, one virtual function (SID) each,
streaming packets through one 200 Gb/s device; every packet needs `reqs` (3) address
translations. Per-tenant streaming, iperf-like, in the layout a DPDK-style guest driver uses
(every tenant's rings and packet buffers in one 2 MiB hugepage, mapped as a 2 MiB page by the
IOMMU, at the same guest IOVA in every tenant: the guests run the same driver, which is the
"many tenants use the same IOVAs" case of the paper). Packet k of a tenant translates, in
this order:

1. its TX descriptor: page 0 of the hugepage (a ring of 256 x 16-byte descriptors), read;
2. its packet buffer: 2 KiB buffer k mod 1020 in pages 2..511 (sequential buffers, the 2 MiB
   page reused many times), read;
3. its completion (descriptor write-back): page 1 (the completion ring), written.

So a packet's three translations are three different 4 KiB pages of one 2 MiB translation.
Interleaving of the tenants' packets (HyperSIO's trace constructor): `rr` round robin (packet i
is tenant i mod N, the arbitration of a real NIC's queues) or `rand` (each packet's tenant
uniformly at random: tenants sending separate requests rather than a steady stream).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

INTERLEAVINGS = ("rr", "rand")
HUGE_IOVA_PAGE = 0x200         # the hugepage's first 4 KiB page (IOVA 2 MiB), same in every tenant
RING_DESC, RING_COMPL, BUF_FIRST_PAGE = 0, 1, 2
BUFFERS = (512 - BUF_FIRST_PAGE) * 2   # 2 KiB buffers in the rest of the hugepage
SID_BASE = 1                   # tenant t is SID t + 1 (SID 0: the physical function)


@dataclass
class DevTlbWorkload:
    name: str
    tenants: int
    interleave: str
    reqs: int                  # translations per packet
    req: dict                  # per request (packet-major): sid, iova (page), write, size (0 4K, 1 2M)
    facts: dict = field(default_factory=dict)

    @property
    def packets(self) -> int:
        return len(self.req["sid"]) // self.reqs


def default_packets(tenants: int, per_tenant: int = 24, minimum: int = 12288) -> int:
    """Enough packets that every tenant sends `per_tenant` of them on average (warm caches,
    predictor and history after the first round) and at least `minimum`."""
    return max(minimum, per_tenant * tenants)


def streaming(tenants: int, packets: int, seed: int = 1, interleave: str = "rr") -> DevTlbWorkload:
    if interleave not in INTERLEAVINGS:
        raise ValueError(f"interleave must be one of {INTERLEAVINGS}, got {interleave!r}")
    if not 1 <= tenants <= 65535:
        raise ValueError(f"tenants must be 1..65535, got {tenants}")
    rng = np.random.default_rng(seed)
    if interleave == "rr":
        who = np.arange(packets, dtype=np.int64) % tenants
    else:
        who = rng.integers(0, tenants, size=packets, dtype=np.int64)
    # k: the tenant's own packet number (its position in its own stream)
    k = np.zeros(packets, dtype=np.int64)
    counts = np.zeros(tenants, dtype=np.int64)
    order = np.argsort(who, kind="stable")
    sorted_who = who[order]
    starts = np.searchsorted(sorted_who, np.arange(tenants))
    k[order] = np.arange(packets) - starts[sorted_who]
    np.add.at(counts, who, 1)
    # a tenant starts at a random point of its rings (guests were not started together)
    start = rng.integers(0, BUFFERS, size=tenants, dtype=np.int64)
    kk = k + start[who]
    buf_page = HUGE_IOVA_PAGE + BUF_FIRST_PAGE + (kk % BUFFERS) // 2
    pages = np.stack([np.full(packets, HUGE_IOVA_PAGE + RING_DESC), buf_page,
                      np.full(packets, HUGE_IOVA_PAGE + RING_COMPL)], axis=1)
    writes = np.tile(np.array([0, 0, 1], dtype=np.uint8), (packets, 1))
    sid = np.repeat(who + SID_BASE, 3)
    req = dict(sid=sid.astype(np.uint32), iova=pages.reshape(-1).astype(np.uint64),
               write=writes.reshape(-1), size=np.ones(3 * packets, dtype=np.uint8))
    facts = dict(tenants=tenants, packets=packets, interleave=interleave, reqs_per_packet=3,
                 packets_per_tenant_min=int(counts.min()), packets_per_tenant_max=int(counts.max()),
                 distinct_pages_per_tenant=3, translations_per_tenant=1, hugepage_iova=HUGE_IOVA_PAGE << 12,
                 buffers=BUFFERS)
    return DevTlbWorkload(f"{interleave}_t{tenants}", tenants, interleave, 3, req, facts)
