"""The DevTlb model in a closed loop with the ATS responder core (xlat_tb.ats), checked by an
oracle written only from the spec's rules, not from the model:

* every accepted request gets exactly one response, for its own tag;
* a response for (sid, page, write) carries a translation the table gave that page: the current
  one, or an older one only while the invalidation issued with the change that replaced it
  has not pulsed invalDone ("after invalDone no resp carries a translation from before the
  invalidation that it covers"); permission and fault rules as the spec/docs say;
* the model never reports a blocked resource as accepted (strict mode).

The operating system is disciplined: every table change is followed by an invalidation of the
changed range (4 KiB, 2 MiB, 1 GiB or the whole SID).  Changes include 4 KiB mappings put over
a 2 MiB one (most specific wins in the table), the case where covering only a slot's 4 KiB page
would let a 2 MiB completion in flight be cached over the changed page (Q1 of the model).
"""

import random

import pytest

from models.devtlb import DevTlbModel, SRC_ATS
from xlat_tb.ats import PS_1G, PS_2M, PS_4K, AtsCore, AtsTable

CFGS = {
    "formalish": dict(sets=2, ways=2, partitioned=True, sidBits=2, iovaBits=32, ppnBits=30,
                      ptbEntries=2, pbEntries=2, histPages=2, histDistance=2,
                      predictorEntries=4, historyEntries=4, tagBits=6),
    "base": dict(sets=2, ways=2, partitioned=False, sidBits=2, iovaBits=32, ppnBits=30,
                 ptbEntries=1, pbEntries=0, histPages=2, histDistance=2, predictorEntries=4,
                 historyEntries=4, tagBits=6),
    "full": dict(sets=4, ways=2, partitioned=True, sidBits=3, iovaBits=32, ppnBits=30,
                 ptbEntries=4, pbEntries=3, histPages=2, histDistance=3, predictorEntries=8,
                 historyEntries=8, tagBits=6, replacement="random"),
}
PAGES = [0x0, 0x1, 0x2, 0x200, 0x201, 0x40000]      # two 2 MiB regions of one 1 GiB page + one


def answer_resp(a, page, write):
    """Spec: fault -> fault; write without perm_w, read without perm_r -> fault; ppn/perm
    given when the translation is not a fault."""
    if a.fault:
        return (0, 0, 0, 1)
    f = int((write and not a.perm_w) or (not write and not a.perm_r))
    return (a.ppn_for(page), a.perm_r, a.perm_w, f)


class Oracle:
    def __init__(self, table, sids):
        self.table = table
        self.hist = {}                  # (sid, page) -> [(resp_tuple_fn answer, superseded_by)]
        for s in sids:
            for p in PAGES:
                self.hist[(s, p)] = [[table.translate(s, p), None]]
        self.done = set()

    def changed(self, inval_id, keys):
        for k in keys:
            new = self.table.translate(*k)
            cur = self.hist[k][-1]
            if new != cur[0]:
                cur[1] = inval_id
                self.hist[k].append([new, None])

    def allowed(self, sid, page, write):
        return {answer_resp(a, page, write) for a, sup in self.hist[(sid, page)]
                if sup is None or sup not in self.done}


def run(cfg, seed, steps=4000):
    rng = random.Random(seed)
    m = DevTlbModel(cfg)
    nsid = 1 << cfg["sidBits"]
    sids = list(range(nsid))
    t = AtsTable()
    for s in sids:                       # start: a 1 GiB page for sid 0, 2 MiB + 4 KiB others
        if s == 0:
            t.map_random(rng, s, 0, PS_1G, cfg["ppnBits"])
        else:
            t.map_random(rng, s, 0x0, PS_2M, cfg["ppnBits"])
            t.map_random(rng, s, 0x201, PS_4K, cfg["ppnBits"], p_readonly=0.5)
    core = AtsCore(t, random.Random(seed + 1), tag_bits=m.p.atsTagBits, ppn_bits=cfg["ppnBits"],
                   latency=(1, 25), fault_p=0.03, pagesize3_p=0.02, unaligned_p=0.05)
    orc = Oracle(t, sids)
    inflight = {}                        # request tag -> (sid, page, write)
    free_tags = list(range(1 << cfg["tagBits"]))
    answered = accepted = 0
    fault_ok = set()                     # request tags answered by an injected fault

    def complete(rec):
        f = rec.resp
        c = m.completion(f["tag"], f["ppn"], f["perm_r"], f["perm_w"], f["pageSize"], f["fault"])
        if {"fault", "pagesize3"} & set(rec.injected):
            fault_ok.update(r.tag for _, r in c.answerable)

    def check(r, step):
        s, p, w = inflight.pop(r.tag)
        free_tags.append(r.tag)
        got = (r.ppn, r.perm_r, r.perm_w, r.fault)
        ok = orc.allowed(s, p, w)
        if r.source == SRC_ATS and r.tag in fault_ok:
            ok.add((0, 0, 0, 1))
        fault_ok.discard(r.tag)
        assert got in ok, (f"step {step}: resp tag {r.tag} sid {s} page {p:#x} w {w} "
                           f"source {r.source}: {got} not in {ok}")
    for step in range(steps):
        u = rng.random()
        # --- the OS changes a mapping and invalidates it
        if u < 0.03 and m.can_accept_inval():
            s = rng.choice(sids)
            what = rng.random()
            if what < 0.4:               # one 4 KiB page (maybe over a 2 MiB mapping)
                p = rng.choice(PAGES)
                if rng.random() < 0.2:
                    t.set_fault(s, p)
                else:
                    t.set_fault(s, p, on=False)
                    t.map_random(rng, s, p, PS_4K, cfg["ppnBits"], p_readonly=0.3, p_noaccess=0.1)
                kind, iova, size = 2, p, 12
                keys = [(s, p)]
            elif what < 0.7:             # a 2 MiB page
                p = rng.choice((0x0, 0x200))
                t.unmap(s, p, PS_4K) if rng.random() < 0.5 else None
                t.map_random(rng, s, p, PS_2M, cfg["ppnBits"], p_readonly=0.3)
                kind, iova, size = 2, p & ~0x1FF, 21
                keys = [(s, q) for q in PAGES if q >> 9 == p >> 9]
            elif what < 0.85:            # a 1 GiB page
                t.map_random(rng, s, 0, PS_1G, cfg["ppnBits"])
                kind, iova, size = 2, 0, 30
                keys = [(s, q) for q in PAGES if q >> 18 == 0]
            else:                        # everything of the SID
                for q in PAGES:
                    t.unmap(s, q)
                t.map_random(rng, s, 0x200, PS_2M, cfg["ppnBits"])
                kind, iova, size = rng.choice((1, 3)), 0, 12
                keys = [(s, q) for q in PAGES]
            inv = m.inval(kind, s, iova, size)
            orc.changed(inv.id, keys)
            continue
        # --- completion on ats_resp (the DUT takes it)
        if core.cur is None:
            core.next_response(step)
        if core.cur is not None and rng.random() < 0.7:
            complete(core.responded(step))
            continue
        # --- invalDone when allowed (after some delay)
        if m.invals and m.inval_done_allowed() and rng.random() < 0.3:
            orc.done.add(m.inval_done())
        # --- a response leaves on resp (hit queue or drain)
        if rng.random() < 0.5:
            r = m.pop_hit() if (m.hitq and rng.random() < 0.5) else m.drain_next()
            if r is None:
                r = m.pop_hit()
            if r is not None:
                check(r, step)
                answered += 1
        # --- ats_req: demand first
        pend = m.pending_ats()
        if pend and rng.random() < 0.6 and core.req_ready(step):
            a = pend[0]
            m.ats_sent(a.tag, a.sid, a.iova, a.prefetch)
            core.accept(dict(tag=a.tag, sid=a.sid, iova=a.iova, prefetch=a.prefetch), step)
        # --- a request
        if free_tags and m.can_accept_request() and rng.random() < 0.5:
            tag = free_tags.pop(rng.randrange(len(free_tags)))
            s, p, w = rng.choice(sids[:3] if rng.random() < 0.7 else sids), rng.choice(PAGES), \
                rng.randrange(2)
            m.request(tag, s, p, w)
            inflight[tag] = (s, p, w)
            accepted += 1
    # quiesce: send, complete, answer, done
    for _ in range(10000):
        if not inflight and m.idle and core.idle:
            break
        for a in m.pending_ats():
            m.ats_sent(a.tag, a.sid, a.iova, a.prefetch)
            core.accept(dict(tag=a.tag, sid=a.sid, iova=a.iova, prefetch=a.prefetch), 10 ** 6)
        if core.cur is None:
            core.next_response(10 ** 7)
        if core.cur is not None:
            complete(core.responded(10 ** 7))
        r = m.drain_next() or m.pop_hit()
        if r is not None:
            check(r, -1)
            answered += 1
        while m.invals and m.inval_done_allowed():
            orc.done.add(m.inval_done())
    assert not inflight and answered == accepted and m.idle
    c = m.counters
    assert c["requests"] == accepted == c["hits"] + c["pbHits"] + c["misses"]
    return c


@pytest.mark.parametrize("cfg", sorted(CFGS))
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_closed_loop(cfg, seed):
    c = run(CFGS[cfg], seed)
    assert c["misses"] > 0 and c["invalidations"] > 0 and c["staleCompletions"] > 0
    assert c["hits"] > 0
    if CFGS[cfg]["ptbEntries"] > 1:       # ptbEntries 1: no request is accepted while the slot waits
        assert c["merged"] > 0
    if CFGS[cfg]["pbEntries"]:
        assert c["prefetches"] > 0
