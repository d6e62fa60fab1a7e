"""Constrained-random test of DevTlb: hyper-tenant traffic.

XLAT_DEVTLB_REQS requests (xlat_tb.regression: short in make test, 100,000 in make soak) from
up to 1024 tenants (SIDs within sidBits), in phases of round-robin and random interleaving;
each tenant streams through its own IOVA space page by page over 2 MiB regions (so the
history/predictor and the 2 MiB entries matter), with re-reads of recent pages (hits) and
random jumps.  The IOMMU table (xlat_tb.ats.AtsTable) is filled lazily per region: a 2 MiB
page, 4 KiB pages (some read-only), a 1 GiB page, or faults.  While traffic runs, the "OS"
changes mappings and invalidates them (4 KiB / 2 MiB / 1 GiB ranges, whole SID, all, reserved
kind, sizeLog2 < 12, unaligned iova), racing the completions in flight; the IOMMU answers with
random latency out of order, injects faults, pageSize 3, unaligned ppn and bogus tags;
back-pressure on resp and ats_req and gaps on every input.  The scoreboard (dt_env.py) checks
every response, ATS request, invalDone and ready against the model; counters at checkpoints
(quiet) and at the end.
"""

from __future__ import annotations

import cocotb

from xlat_tb.ats import PS_1G, PS_2M, PS_4K
from xlat_tb.backpressure import RandomGaps, random_pattern
from xlat_tb.regression import run_length
from xlat_tb.seed import current_seed, rng as seeded_rng

from .dt_env import DtEnv


class Traffic:
    def __init__(self, env: DtEnv, rng, n: int):
        self.env, self.rng, self.n = env, rng, n
        p = env.p
        self.p = p
        nsid = min(1024, 1 << p.sidBits)
        if nsid == 1 << p.sidBits:
            self.sids = list(range(nsid))
        else:
            self.sids = rng.sample(range(1 << p.sidBits), nsid)
        rng.shuffle(self.sids)
        self.pmask = (1 << p.pageBits) - 1
        self.pos = {}                    # sid -> next page of its stream
        self.recent = {}                 # sid -> recent pages
        self.regions = set()             # (sid, region) mapped
        self.issued = 0
        self.paused = False
        self.active = self.sids[:8]
        self.mode = "rr"
        self.rr = 0
        self.rate = 1.0

    def new_phase(self):
        r = self.rng
        k = r.choice((2, 4, 8, 32, 128, len(self.sids)))
        self.active = r.sample(self.sids, min(k, len(self.sids)))
        self.mode = r.choice(("rr", "random", "burst"))
        self.rate = r.choice((1.0, 1.0, 0.7, 0.3))

    def ensure_mapped(self, sid, page):
        t, r, p = self.env.table, self.rng, self.p
        reg = page >> 9
        if (sid, reg) in self.regions:
            if t.find(sid, page) is None and r.random() < 0.9:
                t.map_random(r, sid, page, PS_4K, p.ppnBits, p_readonly=0.2, p_noaccess=0.05)
            return
        self.regions.add((sid, reg))
        u = r.random()
        if u < 0.45:
            t.map_random(r, sid, page, PS_2M, p.ppnBits, p_readonly=0.1)
        elif u < 0.55 and p.ppnBits >= 19:
            t.map_random(r, sid, page, PS_1G, p.ppnBits)
        elif u < 0.95:
            t.map_random(r, sid, page, PS_4K, p.ppnBits, p_readonly=0.2, p_noaccess=0.05)
        # else: unmapped region (faults), 4 KiB pages added lazily above

    def pick_sid(self):
        r = self.rng
        if self.mode == "rr":
            self.rr = (self.rr + 1) % len(self.active)
            return self.active[self.rr]
        if self.mode == "burst" and self.rng.random() < 0.8 and hasattr(self, "last"):
            return self.last
        return r.choice(self.active)

    def gen(self, cycle):
        if self.paused or self.issued >= self.n:
            return None
        r = self.rng
        if self.rate < 1.0 and r.random() > self.rate:
            return None
        if not self.env.free_tags:
            return None
        sid = self.pick_sid()
        self.last = sid
        u = r.random()
        rec = self.recent.setdefault(sid, [])
        if u < 0.55 or not rec:
            pg = self.pos.get(sid)
            if pg is None:
                pg = r.getrandbits(self.p.pageBits) & ~0x1FF if r.random() < 0.7 else \
                    r.getrandbits(min(self.p.pageBits, 12))
            page = pg & self.pmask
            self.pos[sid] = (page + 1) & self.pmask
        elif u < 0.9:
            page = r.choice(rec)
        else:
            page = r.getrandbits(self.p.pageBits)
        rec.append(page)
        if len(rec) > 16:
            rec.pop(0)
        self.ensure_mapped(sid, page)
        self.issued += 1
        return self.env.make_req(sid, page, int(r.random() < 0.3))

    def os_change(self):
        """Change a mapping and invalidate it (or a plain invalidation)."""
        env, r, t, p = self.env, self.rng, self.env.table, self.p
        sid = r.choice(self.active)
        page = r.choice(self.recent.get(sid) or [0])
        u = r.random()
        if u < 0.35:
            if r.random() < 0.2:
                t.set_fault(sid, page)
            else:
                t.set_fault(sid, page, on=False)
                t.unmap(sid, page, PS_4K)
                t.map_random(r, sid, page, PS_4K, p.ppnBits, p_readonly=0.3, p_noaccess=0.05)
            env.send_inval(2, sid, page, 12)
        elif u < 0.6:
            base = page & ~0x1FF & self.pmask
            for sz in (PS_4K, PS_2M):
                t.unmap(sid, page, sz)
            t.map_random(r, sid, base, PS_2M, p.ppnBits, p_readonly=0.1)
            env.send_inval(2, sid, base, 21)
        elif u < 0.7:
            t.map_random(r, sid, page & ~0x3FFFF & self.pmask, PS_1G, p.ppnBits)
            env.send_inval(2, sid, page & ~0x3FFFF & self.pmask, 30)
        elif u < 0.8:
            env.send_inval(1, sid)
        elif u < 0.85:
            env.send_inval(r.choice((0, 3)), sid)
        elif u < 0.95:            # odd range: sizeLog2 < 12 or unaligned iova (over-invalidates)
            env.send_inval(2, sid, page, r.choice((0, 5, 11, 13, 16)))
        else:                     # a range nothing uses
            env.send_inval(2, sid, r.getrandbits(p.pageBits), r.choice((12, 21)))


@cocotb.test()
async def test_random(dut):
    """Hyper-tenant traffic with invalidations racing completions, faults and back-pressure
    everywhere (module docstring)."""
    name = "random"
    rng = seeded_rng(name)
    n = run_length("devtlb")
    env = DtEnv(dut, rng=rng, name=name, req_gaps=random_pattern(rng, "light"),
                inval_gaps=RandomGaps(rng, 0.3), resp_ready=random_pattern(rng, "mixed"),
                ats_req_ready=random_pattern(rng, "mixed"), ats_resp_gaps=random_pattern(rng, "light"),
                latency=(1, 40), fault_p=0.02, pagesize3_p=0.01, unaligned_p=0.03, bogus_p=0.002)
    env.keep_responses = False
    await env.start()
    env.log.info(f"{name}: seed {current_seed()}, {n} requests, {env.p}")
    tr = Traffic(env, rng, n)
    env.req.generator = tr.gen
    checkpoints = 4
    per = max(1, n // checkpoints)
    next_cp = per
    last, still = (-1, -1), 0
    while tr.issued < n:
        await env.loop.cycles(16)
        now = (env.stats["req"], env.stats["resp"])
        still = still + 16 if now == last else 0
        last = now
        if still > 20000:               # liveness: nothing accepted or answered for long
            await env.drain(timeout=1)
        if rng.random() < 0.01:
            tr.new_phase()
        if rng.random() < 0.04 and len(env.inval.queue) < 2:
            tr.os_change()
        if tr.issued >= next_cp:
            tr.paused = True
            await env.drain(timeout=50000)
            env.check_counters(f"checkpoint {next_cp}")
            tr.paused = False
            next_cp += per
    await env.finish(timeout=50000)
    s = env.stats
    assert s["req"] == n and s["resp"] == n, s
