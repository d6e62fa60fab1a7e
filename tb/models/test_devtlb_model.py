"""Unit tests of the DevTlb reference model (pure Python).  Every expectation is worked out by
hand from a rule of ../shared/spec/devtlb.md or docs/devtlb.md, quoted in the docstring."""

import pytest

from models.devtlb import (AtsReq, DevTlbModel, DevTlbModelError, DevTlbParams, Response,
                           SRC_ATS, SRC_DEVTLB, SRC_PB)

FULL = dict(sets=8, ways=8, partitioned=True, sidBits=16, iovaBits=64, ppnBits=40, ptbEntries=32,
            pbEntries=8, histPages=2, histDistance=32, predictorEntries=1024,
            historyEntries=1024, tagBits=8)
BASE = {**FULL, "partitioned": False, "ptbEntries": 1, "pbEntries": 0}
FORMAL = dict(sets=2, ways=2, partitioned=True, sidBits=2, iovaBits=15, ppnBits=40, ptbEntries=2,
              pbEntries=2, histPages=2, histDistance=2, predictorEntries=4, historyEntries=4,
              tagBits=2)
NOPF = {**FULL, "pbEntries": 0}


def mk(base=NOPF, **over):
    return DevTlbModel({**base, **over})


def send_all(m):
    """Every ats_req waiting, demand queue first (the order docs "ATS" gives)."""
    for a in m.pending_ats():
        m.ats_sent(a.tag, a.sid, a.iova, a.prefetch)


def miss(m, tag, sid, page, write=0):
    """A request that must allocate a demand slot; its ats_req (and any other waiting) is sent."""
    o = m.request(tag, sid, page, write)
    assert o.kind == "alloc", o
    send_all(m)
    return o


def fill(m, tag, sid, page, ppn, size=0, r=1, w=1):
    """Miss, complete, drain: the translation is cached (demand slot)."""
    o = miss(m, tag, sid, page)
    c = m.completion(o.slot, ppn, r, w, size, 0)
    assert c.kind == "completed"
    assert m.drain_next().tag == tag
    return c


# ----------------------------------------------------------------------------- parameters
def test_params_defaults_and_derived():
    p = DevTlbParams.from_dict(FULL)
    assert (p.pfSlots, p.waitEntries, p.respQueue, p.invalPending, p.replacement) == \
        (8, 64, 4, 4, "plru")
    assert p.slots == 40 and p.atsTagBits == 6                  # log2Up(32 + 8)
    b = DevTlbParams.from_dict(BASE)
    assert b.pfSlots == 0 and b.slots == 1 and b.atsTagBits == 1   # log2Up(1) = 1 (Chisel)
    assert DevTlbParams.from_dict(FORMAL).atsTagBits == 2


@pytest.mark.parametrize("name,value", [("sets", 3), ("sets", 2048), ("ways", 0), ("ways", 17),
                                        ("ptbEntries", 0), ("ptbEntries", 65), ("pbEntries", 65),
                                        ("histPages", 5), ("histDistance", 0), ("iovaBits", 12),
                                        ("predictorEntries", 1000), ("tagBits", 17),
                                        ("waitEntries", 31), ("respQueue", 1), ("invalPending", 0),
                                        ("latency", 5), ("pfSlots", 0)])
def test_param_checks_name_the_parameter(name, value):
    with pytest.raises(ValueError, match=name):
        DevTlbParams.from_dict({**FULL, name: value})


# ----------------------------------------------------------------------------- DevTLB
def test_partition_claim():
    """docs "Where an entry lives": row = sid mod sets; a fill into a row whose PTag is another
    SID claims it (every way invalidated, perf_claims), a fill into an invalid-PTag row or its
    own row does not; a hit needs PTag == sid."""
    m = mk(sets=2, ways=2)
    c = fill(m, 0, sid=1, page=0x10, ppn=0x100)
    assert not c.claim and m.ptag == [None, 1]
    fill(m, 1, sid=1, page=0x11, ppn=0x101)
    assert m.request(2, 1, 0x10).kind == "hit" and m.pop_hit().ppn == 0x100
    c = fill(m, 3, sid=3, page=0x10, ppn=0x300)               # 3 mod 2 = row 1: claim
    assert c.claim and m.ptag == [None, 3] and m.counters["claims"] == 1
    assert [e.sid for e in m.rows[1] if e] == [3]              # sid 1's two entries gone
    miss(m, 4, 1, 0x11)                                        # sid 1 lost its row
    assert m.request(5, 3, 0x10).kind == "hit" and m.pop_hit().ppn == 0x300
    fill(m, 6, sid=2, page=0x10, ppn=0x200)                    # row 0, PTag invalid: no claim
    assert m.counters["claims"] == 1 and m.ptag[0] == 2


def test_invalidation_keeps_ptag():
    """docs: "An invalidation does not change a PTag: the row stays its tenant's, emptied"."""
    m = mk(sets=2, ways=2)
    fill(m, 0, 1, 0x10, 0x100)
    m.inval(0)
    assert m.ptag == [None, 1] and not list(m.entries())
    fill(m, 1, 3, 0x10, 0x300)
    assert m.counters["claims"] == 1


def test_base_set_from_2mib_region():
    """docs: Base set = (iova >> 9) mod sets; two tenants with the same IOVA meet in one set."""
    m = mk(BASE, sets=4, ways=1)
    page = 5 * 512 + 7                                         # region 5 -> set 1
    fill(m, 0, sid=1, page=page, ppn=0x70)
    assert [(r, e.sid) for r, _, e in m.entries()] == [(1, 1)]
    fill(m, 1, sid=2, page=page, ppn=0x80)                     # same set, one way: evicts sid 1
    assert [(r, e.sid) for r, _, e in m.entries()] == [(1, 2)]
    fill(m, 2, sid=1, page=9 * 512, ppn=0x90)                  # region 9 -> set 1 too
    fill(m, 3, sid=1, page=6 * 512, ppn=0x60)                  # region 6 -> set 2
    assert sorted(r for r, _, _ in m.entries()) == [1, 2]
    assert m.counters["claims"] == 0


def test_2mib_entry_answers_its_pages():
    """spec Units: page iova maps to ppn + (iova mod size)."""
    m = mk(BASE, ptbEntries=4)
    fill(m, 0, 1, 0x403, 0x1000, size=1)                       # 2 MiB at page 0x400
    assert [(e.page, e.size, e.ppn) for _, _, e in m.entries()] == [(0x400, 1, 0x1000)]
    assert m.request(1, 1, 0x5FF).kind == "hit" and m.pop_hit().ppn == 0x11FF
    assert m.request(2, 1, 0x400).kind == "hit" and m.pop_hit().ppn == 0x1000
    assert m.request(3, 1, 0x600).kind == "alloc"              # next region
    assert m.request(4, 2, 0x401).kind == "alloc"              # another SID never hits


def test_1gib_cached_as_2mib_piece():
    """docs "page-size rule": a 1 GiB completion is cached as the 2 MiB piece holding the page,
    ppn + the piece's offset; other pieces of the 1 GiB page miss."""
    m = mk()
    o = miss(m, 0, sid=4, page=0x12345)
    c = m.completion(o.slot, 0x80000, 1, 1, 2, 0)
    assert c.translation.ppn == 0x80000 + 0x12345
    assert m.drain_next() == Response(0, 0x92345, 1, 1, 0, SRC_ATS)
    assert [(e.page, e.size, e.ppn) for _, _, e in m.entries()] == [(0x12200, 1, 0x92200)]
    assert m.request(1, 4, 0x12300).kind == "hit" and m.pop_hit().ppn == 0x92300
    assert m.request(2, 4, 0x12400).kind == "alloc"


def test_fill_overwrite_invalid_victim():
    """docs: a fill with the same {SID, size, page} overwrites; else first invalid way; else
    the replacement victim (plru: after filling ways 0,1 and hitting 0, the victim is 1).
    Two slots of one 2 MiB page (pages 0x10 and 0x11 do not merge) both complete as 2 MiB:
    the second overwrites the first's entry."""
    m = mk(sets=1, ways=2)
    a = miss(m, 0, 0, 0x10)
    b = miss(m, 1, 0, 0x11)
    m.completion(a.slot, 0x200, 1, 1, 1)
    m.completion(b.slot, 0x400, 1, 1, 1)
    assert [(w, e.page, e.ppn) for _, w, e in m.entries()] == [(0, 0, 0x400)]
    m.drain_next(), m.drain_next()
    m.inval(0)
    m.inval_done()
    fill(m, 0, 0, 0x10, 0x100)
    fill(m, 2, 0, 0x20, 0x200)
    assert m.request(3, 0, 0x10).kind == "hit"
    m.pop_hit()
    c = fill(m, 4, 0, 0x30, 0x300)
    assert c.evicted.page == 0x20
    assert sorted((w, e.page) for _, w, e in m.entries()) == [(0, 0x10), (1, 0x30)]


def test_second_slot_while_stale_slot_drains():
    """docs same-cycle table: after a stale (uncached) completion, a request for the page
    allocates a new slot while the completed slot still drains (two slots, one outstanding)."""
    m = mk(sets=1, ways=2)
    o = miss(m, 0, 0, 0x10)
    m.inval(1, sid=0)
    m.completion(o.slot, 0x100, 1, 1, 0, 0)                    # stale: not cached
    assert not list(m.entries())
    assert m.request(1, 0, 0x10).kind == "alloc"               # new slot while 0 drains
    assert m.drain_next().tag == 0


# ------------------------------------------------------------------------ PTB
def test_merge_allocate_full():
    """docs steps 3-4: same {SID, page} merges (no ATS request), another page of the same
    2 MiB page allocates; lowest free demand slot; a full PTB blocks every request."""
    m = mk(ptbEntries=2, waitEntries=4)
    a = m.request(0, 1, 0x200)
    b = m.request(1, 1, 0x200, write=1)
    c = m.request(2, 1, 0x201)
    assert (a.kind, a.slot, a.waiter, a.ats) == ("alloc", 0, 0, [AtsReq(0, 1, 0x200, 0)])
    assert (b.kind, b.slot, b.waiter, b.ats) == ("merge", 0, 1, [])
    assert (c.kind, c.slot, c.waiter) == ("alloc", 1, 2)
    assert m.counters["merged"] == 1 and m.counters["misses"] == 3
    assert m.request_blockers() == ["slot"]
    with pytest.raises(DevTlbModelError, match="slot"):
        m.request(3, 1, 0x200)                                 # even a would-be merge
    assert m.pending_ats() == [AtsReq(0, 1, 0x200, 0), AtsReq(1, 1, 0x201, 0)]
    m.ats_sent(0, 1, 0x200, 0)
    m.completion(0, 0x55, 1, 0, 0, 0)
    assert [(i, r) for i, r in m.answerable()] == [
        (0, Response(0, 0x55, 1, 0, 0, SRC_ATS)), (1, Response(1, 0x55, 1, 0, 1, SRC_ATS))]
    assert m.request_blockers() == ["slot"]                    # freed only after the drain
    m.drain_next()
    m.drain_next()
    assert m.request_blockers() == [] and m.free_demand_slots() == 1
    assert m.counters["faults"] == 1


def test_waiter_and_hitq_blockers():
    """docs "Acceptance": a free waiter and a hit-queue place are needed too."""
    m = mk(ptbEntries=2, waitEntries=2, respQueue=2)
    m.request(0, 1, 5)
    m.request(1, 1, 5)
    assert m.request_blockers() == ["waiter"]
    m2 = mk(respQueue=2)
    fill(m2, 0, 1, 5, 0x50)
    m2.request(1, 1, 5)
    m2.request(2, 1, 5)
    assert m2.request_blockers() == ["hitq"]
    assert m2.pop_hit().tag == 1 and m2.request_blockers() == []


def test_drain_lowest_waiter_and_response_by_tag():
    """docs: the drain answers the lowest-numbered waiter whose slot is completed; waiters are
    taken lowest free first; completions in any order."""
    m = mk()
    for t, pg in ((10, 1), (11, 2), (12, 3)):
        miss(m, t, 0, pg)
    m.completion(2, 0x30)
    m.completion(1, 0x20)
    assert [i for i, _ in m.answerable()] == [1, 2]
    assert m.drain_next().tag == 11
    m.request(13, 0, 9)                                        # takes waiter 1 again
    assert m.waiters[1].tag == 13
    with pytest.raises(DevTlbModelError):
        m.expect_response(10, SRC_ATS)                         # slot 0 not completed
    assert m.expect_response(12, SRC_ATS) == Response(12, 0x30, 1, 1, 0, SRC_ATS)
    m.completion(0, 0x10)
    with pytest.raises(DevTlbModelError):
        m.expect_response(10, SRC_DEVTLB)                      # a waiter is never source 0
    assert m.expect_response(10, SRC_ATS).ppn == 0x10


def test_no_merge_after_completion():
    """docs same-cycle table: merges stop at the slot's completion; the request hits what the
    completion cached."""
    m = mk()
    o = miss(m, 0, 1, 7)
    m.completion(o.slot, 0x70)
    r = m.request(1, 1, 7)
    assert r.kind == "hit" and r.response.ppn == 0x70
    o2 = miss(m, 2, 1, 8)
    m.completion(o2.slot, 0, fault=1)
    assert m.request(3, 1, 8).kind == "alloc"                  # fault: nothing cached
    assert m.request(4, 1, 8).kind == "merge"


def test_fault_never_cached():
    """spec: a fault is returned to every merged request and never cached."""
    m = mk()
    o = miss(m, 0, 2, 0x40)
    m.request(1, 2, 0x40, write=1)
    c = m.completion(o.slot, 0x1234, 1, 1, 1, fault=1)
    assert c.cached is None and not list(m.entries())
    assert [r for _, r in c.answerable] == [Response(0, 0, 0, 0, 1, SRC_ATS),
                                            Response(1, 0, 0, 0, 1, SRC_ATS)]
    m.drain_next()
    m.drain_next()
    assert m.counters["faults"] == 2
    assert m.request(2, 2, 0x40).kind == "alloc"


def test_write_without_perm_w_faults():
    """spec: a write to a page without perm_w gets fault; docs: a read without perm_r too;
    ppn/perms still given (Q9)."""
    m = mk()
    o = miss(m, 0, 1, 3)
    m.request(1, 1, 3, write=1)
    m.completion(o.slot, 0x30, 1, 0)
    assert m.drain_next() == Response(0, 0x30, 1, 0, 0, SRC_ATS)
    assert m.drain_next() == Response(1, 0x30, 1, 0, 1, SRC_ATS)
    assert m.request(2, 1, 3, write=1).response == Response(2, 0x30, 1, 0, 1, SRC_DEVTLB)
    assert m.request(3, 1, 3).response.fault == 0
    o = miss(m, 4, 1, 4)
    m.completion(o.slot, 0x40, 0, 0)                           # R = W = 0: cached, no access
    assert m.drain_next().fault == 1
    assert m.request(5, 1, 4).response == Response(5, 0x40, 0, 0, 1, SRC_DEVTLB)


# ---------------------------------------------------------------- completions
def test_bad_tags_ignored_and_counted():
    """spec/docs: a completion whose tag is not outstanding (out of range, free slot, already
    completed, not yet sent (Q2)) is consumed without effect, perf_badCompletions."""
    m = mk(ptbEntries=2, pbEntries=0)
    o = m.request(0, 1, 5)                                     # allocated, not sent
    assert m.completion(o.slot, 0x50).reason == "unsent"
    assert m.completion(1, 0x50).reason == "free"
    assert m.completion(2, 0x50).reason == "range"             # >= ptbEntries + pfSlots
    m.ats_sent(0, 1, 5, 0)
    assert m.outstanding_tags() == [0]
    assert m.completion(0, 0x50).kind == "completed"
    assert m.completion(0, 0x60).reason == "completed"         # waiter still draining
    assert m.counters["badCompletions"] == 4
    assert m.drain_next() == Response(0, 0x50, 1, 1, 0, SRC_ATS)
    assert m.request(1, 1, 5).response.ppn == 0x50


def test_pagesize3_is_a_fault():
    """docs: pageSize 3 is a fault for the waiters, not cached, perf_badCompletions; with
    fault = 1 it is a plain fault (Q5)."""
    m = mk()
    o = miss(m, 0, 1, 5)
    c = m.completion(o.slot, 0x50, 1, 1, 3, 0)
    assert c.bad_size and c.cached is None and m.counters["badCompletions"] == 1
    assert m.drain_next() == Response(0, 0, 0, 0, 1, SRC_ATS)
    o = miss(m, 1, 1, 5)
    c = m.completion(o.slot, 0x50, 1, 1, 3, 1)
    assert not c.bad_size and m.counters["badCompletions"] == 1


def test_unaligned_ppn():
    """docs: low ppn bits of a 2 MiB / 1 GiB page are ignored, perf_badAlign."""
    m = mk()
    o = miss(m, 0, 1, 0x405)
    c = m.completion(o.slot, 0x1234, 1, 1, 1, 0)               # 0x1234 & 0x1FF = 0x34
    assert c.bad_align and c.translation.ppn == 0x1200 + 5
    o = miss(m, 1, 1, 0x40005)
    c = m.completion(o.slot, 0x80100, 1, 1, 2, 0)              # 1 GiB: low 18 bits
    assert c.bad_align and c.translation.ppn == 0x80005
    o = miss(m, 2, 1, 0x7)
    c = m.completion(o.slot, 0x1234, 1, 1, 0, 0)               # 4 KiB: nothing to ignore
    assert not c.bad_align and c.translation.ppn == 0x1234
    assert m.counters["badAlign"] == 2


# ------------------------------------------------------------- invalidation
def test_stale_slot_delivers_not_cached():
    """spec: a completion for a request issued before a covering invalidation is delivered to
    its waiters but neither the DevTLB nor the PB keeps it; docs: a stale slot still takes
    merges until its completion; invalDone waits for the stale slot to be freed."""
    m = mk()
    o = miss(m, 0, 1, 5)
    inv = m.inval(1, sid=1)
    assert inv.stale_slots == [o.slot]
    assert m.request(1, 1, 5).kind == "merge"
    assert not m.inval_done_allowed(inv.id)
    c = m.completion(o.slot, 0x50)
    assert c.stale and c.cached is None and not list(m.entries())
    assert m.counters["staleCompletions"] == 1
    assert m.drain_next().ppn == 0x50
    assert not m.inval_done_allowed(inv.id)                    # waiter 1 still waits
    assert m.drain_next().ppn == 0x50
    assert m.inval_done_allowed(inv.id) and m.inval_done() == inv.id
    assert m.request(2, 1, 5).kind == "alloc"


def test_inval_kinds_and_range():
    """docs table: kind 1 one SID, kind 2 entries whose page or piece overlaps the range."""
    m = mk(sets=1, ways=8)
    fill(m, 0, 1, 0x10, 0x100)
    fill(m, 1, 1, 0x11, 0x110)
    fill(m, 2, 1, 0x403, 0x2000, size=1)                       # piece 0x400..0x5FF
    m2 = mk(sets=1, ways=8)
    r = m.inval(2, sid=1, iova=0x11, sizeLog2=12)
    assert r.removed_devtlb == 1 and sorted(e.page for _, _, e in m.entries()) == [0x10, 0x400]
    r = m.inval(2, sid=1, iova=0x5F0, sizeLog2=16)             # 16 pages 0x5F0..0x5FF
    assert r.removed_devtlb == 1 and [e.page for _, _, e in m.entries()] == [0x10]
    r = m.inval(2, sid=2, iova=0, sizeLog2=63)                 # other SID
    assert r.removed_devtlb == 0
    assert m.counters["badInvals"] == 0 and m.counters["invalidations"] == 3
    del m2


def test_reserved_inval_and_bad_fields():
    """docs: kind 3 acts as 0; sizeLog2 < 12 as 12; an unaligned iova aligned down; each
    invalidation with an oddity counted once in perf_badInvals (Q6)."""
    m = mk(sets=1, ways=8, partitioned=False)
    for t, (s, pg) in enumerate(((1, 0x10), (2, 0x20), (1, 0x21), (1, 0x24))):
        fill(m, t, s, pg, 0x100 + t)
    r = m.inval(2, sid=1, iova=0x21, sizeLog2=13)              # 2 pages, aligned to 0x20
    assert (r.bad, r.iova, r.removed_devtlb) == (True, 0x20, 1)
    r = m.inval(2, sid=1, iova=0x25, sizeLog2=3)               # both oddities: one count
    assert (r.bad, r.iova, r.sizeLog2, r.removed_devtlb) == (True, 0x25, 12, 0)
    assert m.counters["badInvals"] == 2
    r = m.inval(3, sid=1)
    assert (r.kind, r.bad, r.removed_devtlb) == (0, True, 3)
    assert m.counters["badInvals"] == 3
    m.inval(1, sid=0, iova=0x3, sizeLog2=0)                    # unused fields: not bad
    assert m.counters["badInvals"] == 3


def test_inval_slot_coverage_is_2mib_region():
    """Q1: a slot (size unknown) is covered when its 2 MiB region overlaps the range."""
    m = mk()
    o = miss(m, 0, 1, 0x405)
    assert m.inval(2, sid=1, iova=0x5FF, sizeLog2=12).stale_slots == [o.slot]
    o2 = miss(m, 1, 1, 0x605)
    assert m.inval(2, sid=1, iova=0x5FF, sizeLog2=12).stale_slots == [o.slot]
    c = m.completion(o.slot, 0x2000, 1, 1, 1, 0)
    assert c.cached is None and m.completion(o2.slot, 0x3000, 1, 1, 1, 0).cached == "devtlb"


def test_inval_done_conditions_and_order():
    """docs conditions 2 and 3 and acceptance order; inval_ready low at invalPending."""
    m = mk(invalPending=2)
    fill(m, 0, 1, 5, 0x50)
    m.request(1, 1, 5)                                         # hit queued before inval A
    a = m.inval(2, sid=9, iova=0, sizeLog2=12)                 # covers nothing
    assert m.inval_conditions(a.id) == ["1 earlier hit response(s) not sent"]
    o = miss(m, 2, 2, 6)
    b = m.inval(1, sid=2)
    assert not m.can_accept_inval()
    with pytest.raises(DevTlbModelError, match="inval_ready"):
        m.inval(0)
    assert m.inval_conditions(b.id) == [f"earlier invalidation {a.id} not done",
                                        "1 stale slot(s) not freed",
                                        "1 earlier hit response(s) not sent"]
    with pytest.raises(DevTlbModelError, match="too early"):
        m.inval_done()
    m.request(3, 1, 5)                                         # a hit after A: not waited for
    assert m.pop_hit().tag == 1
    assert m.inval_done_allowed(a.id) and m.inval_done() == a.id
    m.completion(o.slot, 0x60)
    assert not m.inval_done_allowed(b.id)
    assert m.drain_next().tag == 2
    assert m.inval_done() == b.id
    with pytest.raises(DevTlbModelError, match="no invalidation"):
        m.inval_done()


def test_freed_slot_reused_is_not_waited_for():
    """A slot freed and re-allocated is a new instance: the pending invalidation does not
    wait for the new one (docs: the slot's bit is cleared when it is freed)."""
    m = mk(ptbEntries=1, waitEntries=1)
    o = miss(m, 0, 1, 5)
    inv = m.inval(0)
    m.completion(o.slot, 0x50)
    m.drain_next()
    o2 = miss(m, 1, 1, 5)
    assert o2.slot == o.slot and m.inval_done_allowed(inv.id)


# ------------------------------------------------------------------- prefetch
def test_predictor_at_distance():
    """docs: request n reads pred[s_n], then writes pred[s_{n-D}] := s_n; the read does not
    see its own write."""
    m = mk(FULL, histDistance=2)
    seq = [1, 2, 3, 1, 4, 2]
    succ = [m.request(t, s, 0x100 + t).successor for t, s in enumerate(seq)]
    # writes: n=2 pred[1]=3; n=3 pred[2]=1; n=4 pred[3]=4; n=5 pred[1]=2
    assert succ == [None, None, None, 3, None, 1]
    assert m.pred[1] == 2 and m.pred[2] == 1 and m.pred[3] == 4
    m1 = mk(FULL, histDistance=1)
    assert [m1.request(t, 7, 0x100 + t).successor for t in range(3)] == [None, None, 7]


def test_predictor_index_aliases():
    """pred[x mod predictorEntries], no SID tag: SIDs 1 and 5 share an entry of 4."""
    m = mk(FORMAL, sidBits=4, histDistance=1, ptbEntries=8)
    m.request(0, 1, 1)
    m.request(1, 2, 2)                                         # pred[1] := 2
    assert m.request(2, 5, 3).successor == 2


def test_history_of_allocating_misses_only():
    """docs: history written when a request allocates a demand slot (not hits, merges, PB
    hits), round-robin over histPages."""
    m = mk(FULL, histPages=2)
    o = miss(m, 0, 3, 0x10)
    m.request(1, 3, 0x10)                                      # merge: no write
    assert m.hist_pages[3] == [0x10, None]
    m.completion(o.slot, 0x100)
    m.drain_next(), m.drain_next()
    m.request(2, 3, 0x10)                                      # hit: no write
    miss(m, 3, 3, 0x11)
    miss(m, 4, 3, 0x12)                                        # wraps to slot 0
    assert m.hist_pages[3] == [0x12, 0x11] and m.hist_ptr[3] == 1


def _warm(m, t_sid, pages, trigger_sid, D):
    """Give t_sid a history of `pages` (allocating misses) and make pred[trigger_sid] = t_sid."""
    tag = 0
    for pg in pages:
        miss(m, tag, t_sid, pg)
        tag += 1
    # D requests after one of trigger_sid, the next request of t_sid writes pred[trigger] = t
    m.request(tag, trigger_sid, 0x9000)                        # alloc, history of trigger_sid
    tag += 1
    for k in range(D - 1):
        m.request(tag, 50 + k, 0x9000 + k)
        tag += 1
    m.request(tag, t_sid, pages[-1])                           # merge; writes pred[trigger]
    assert m.pred[trigger_sid] == t_sid
    return tag + 1


def test_trigger_issues_prefetches_for_successor_history():
    """docs Trigger: a DevTLB+PB miss with pred[s] valid issues prefetches of hist[t]'s pages
    in history-slot order, into the lowest free prefetch slots (ats tag = slot number)."""
    m = mk(FULL, histDistance=2, ptbEntries=8, pbEntries=4)
    tag = _warm(m, t_sid=7, pages=[0x70, 0x71], trigger_sid=1, D=2)
    # free the two slots of sid 7 so the candidates are not "in a slot"
    m.completion(0, 0, fault=1)
    m.completion(1, 0, fault=1)
    while m.drain_next():
        pass
    o = m.request(tag, 1, 0x1234)
    assert o.successor == 7 and o.kind == "alloc"
    assert o.candidates == [(7, 0x70), (7, 0x71)]
    assert o.ats == [AtsReq(o.slot, 1, 0x1234, 0), AtsReq(8, 7, 0x70, 1), AtsReq(9, 7, 0x71, 1)]
    assert m.pending_ats()[-2:] == [AtsReq(8, 7, 0x70, 1), AtsReq(9, 7, 0x71, 1)]
    with pytest.raises(DevTlbModelError):
        m.ats_sent(8, 7, 0x70, 1)                              # Q26: the demand slot goes first
    while m.demand_q:                                          # every demand slot, o.slot's too
        d = m.demand_q[0]
        m.ats_sent(d.idx, d.sid, d.page, 0)
    with pytest.raises(DevTlbModelError):
        m.ats_sent(9, 7, 0x71, 1)                              # prefetch queue is FIFO
    m.ats_sent(8, 7, 0x70, 1)
    assert m.counters["prefetches"] == 1


def test_trigger_only_on_miss_and_drops():
    """docs Trigger: only DevTLB+PB misses trigger; a candidate is dropped when the PB covers
    it, when an outstanding slot holds it, or when no prefetch slot is free (only the last
    counted in perf_prefetchDropped, Q3)."""
    m = mk(FULL, histDistance=2, ptbEntries=8, pbEntries=4, pfSlots=1, histPages=2)
    tag = _warm(m, t_sid=7, pages=[0x70, 0x71], trigger_sid=1, D=2)
    # slots 0, 1 hold (7, 0x70), (7, 0x71): both candidates are "in a slot"
    o = m.request(tag, 1, 0x2000)
    assert o.prefetch_drops == [(7, 0x70, "slot"), (7, 0x71, "slot")] and len(o.ats) == 1
    m.completion(0, 0, fault=1)
    m.completion(1, 0, fault=1)
    while m.drain_next():
        pass
    o = m.request(tag + 1, 1, 0x2001)                          # one prefetch slot only
    assert [a.iova for a in o.ats] == [0x2001, 0x70]
    assert o.prefetch_drops == [(7, 0x71, "full")] and m.counters["prefetchDropped"] == 1
    send_all(m)
    c = m.completion(8, 0x700)                                 # no waiter: freed at completion
    assert c.cached == "pb" and c.freed and m.slots[8] is None
    assert not list(m.entries())                               # PB only, not the DevTLB
    o = m.request(tag + 2, 1, 0x2002)
    assert o.prefetch_drops[0] == (7, 0x70, "pb") and [a.iova for a in o.ats] == [0x2002, 0x71]
    # a hit does not trigger
    send_all(m)
    m.completion(o.ats[0].tag, 0x2002)
    m.drain_next()
    h = m.request(tag + 3, 1, 0x2002)
    # pred[1] was rewritten by request n7 (1, 0x2002): pred[s_5 = 1] := 1; a valid successor
    assert h.kind == "hit" and h.successor == 1 and h.candidates == [] and h.ats == []


def test_pb_hit_source_1_and_lru():
    """docs: PB hit = source 1, PB LRU touched, no promotion; PB fill takes the LRU victim;
    perf_prefetchUnused counts entries evicted or invalidated never hit."""
    m = mk(FULL, pbEntries=2, pfSlots=2, ptbEntries=4)
    pages = {}
    for k, pg in enumerate((0x30, 0x31, 0x32)):
        s = m._alloc_slot(5, pg, prefetch=True)               # prefetch slots, as a trigger makes
        m.ats_sent(s.idx, 5, pg, 1)
        pages[pg] = s.idx
        m.completion(s.idx, 0x300 + k * 0x10)
        if k == 1:
            r = m.request(10, 5, 0x30)                         # touch entry 0 (0x30)
            assert r.response == Response(10, 0x300, 1, 1, 0, SRC_PB) and r.way == 0
            m.pop_hit()
    # PB after: [0x30 (hit), 0x32 replaced 0x31 (LRU, never hit)]
    assert [(e.page, e.used) for _, e in m.pb_entries()] == [(0x30, True), (0x32, False)]
    assert m.counters["prefetchUnused"] == 1 and m.counters["pbHits"] == 1
    assert not list(m.entries())
    m.inval(1, sid=5)
    assert m.counters["prefetchUnused"] == 2


def test_demand_merged_into_prefetch_slot_fills_pb():
    """Q12: a demand request joins an outstanding prefetch slot (step 3), is answered with
    source 2, and the completion fills the PB."""
    m = mk(FULL, pbEntries=2)
    s = m._alloc_slot(5, 0x30, prefetch=True)
    r = m.request(0, 5, 0x30, write=1)
    assert (r.kind, r.slot) == ("merge", s.idx)
    m.ats_sent(s.idx, 5, 0x30, 1)
    c = m.completion(s.idx, 0x300, 1, 1, 0)
    assert c.cached == "pb" and not c.freed
    assert m.drain_next() == Response(0, 0x300, 1, 1, 0, SRC_ATS) and m.slots[s.idx] is None
    assert m.request(1, 5, 0x30).response.source == SRC_PB


def test_ats_demand_fifo_and_counters():
    """ats_req: demand queue FIFO; perf_atsRequests counts demand handshakes."""
    m = mk()
    m.request(0, 1, 1)
    m.request(1, 1, 2)
    with pytest.raises(DevTlbModelError):
        m.ats_sent(1, 1, 2, 0)
    with pytest.raises(DevTlbModelError):
        m.ats_sent(0, 1, 2, 0)                                 # wrong page
    m.ats_sent(0, 1, 1, 0)
    m.ats_sent(1, 1, 2, 0)
    with pytest.raises(DevTlbModelError, match="no prefetch"):
        m.ats_sent(2, 1, 3, 1)
    assert m.counters["atsRequests"] == 2 and m.counters["prefetches"] == 0


def test_tick_counters_and_saturation():
    m = mk(ptbEntries=1, waitEntries=1)
    m.tick(req_valid=True)
    m.request(0, 1, 1)
    m.tick(req_valid=True, resp_stall=True, ats_stall=True)
    m.tick(req_valid=False)
    assert (m.counters["ptbFullCycles"], m.counters["respStallCycles"],
            m.counters["atsStallCycles"]) == (1, 1, 1)
    m.counters["requests"] = (1 << 32) - 1
    m.ats_sent(0, 1, 1, 0)
    m.completion(0, 5)
    m.drain_next()
    m.request(1, 1, 1)
    assert m.counters["requests"] == (1 << 32) - 1


def test_counter_identity_random_smoke():
    """requests = hits + pbHits + misses over a random run on the formal configuration, and
    the model never leaves a slot or waiter behind once everything is answered."""
    import random
    rng = random.Random(3)
    m = mk(FORMAL)
    tag = 0
    for _ in range(3000):
        op = rng.random()
        if op < 0.5 and m.can_accept_request():
            m.request(tag & 3, rng.randrange(4), rng.randrange(8), rng.randrange(2))
            tag += 1
        elif op < 0.65 and m.pending_ats():
            # a prefetch only when no demand slot allocated before it waits (Q26)
            a = rng.choice([q for q in (m.demand_q, m.prefetch_q) if q])[0]
            if a.prefetch and m.demand_q and m.demand_q[0].serial < a.serial:
                a = m.demand_q[0]
            m.ats_sent(a.idx, a.sid, a.page, int(a.prefetch))
        elif op < 0.8:
            m.completion(rng.randrange(4), rng.randrange(1 << 12), rng.randrange(2),
                         rng.randrange(2), rng.randrange(4), int(rng.random() < 0.1))
        elif op < 0.85 and m.can_accept_inval():
            m.inval(rng.randrange(4), rng.randrange(4), rng.randrange(8), rng.randrange(10, 16))
        elif op < 0.9 and m.invals and m.inval_done_allowed():
            m.inval_done()
        else:
            m.pop_hit() if m.hitq and rng.random() < 0.5 else m.drain_next()
    c = m.counters
    assert c["requests"] == c["hits"] + c["pbHits"] + c["misses"]
    # finish: send and complete everything, drain, done every invalidation
    while not m.idle:
        while m.pending_ats():
            a = (m.demand_q or m.prefetch_q)[0]
            m.ats_sent(a.idx, a.sid, a.page, int(a.prefetch))
        for t in m.outstanding_tags():
            m.completion(t, 0x40)
        while m.drain_next() or m.pop_hit():
            pass
        while m.invals and m.inval_done_allowed():
            m.inval_done()
    assert all(w is None for w in m.waiters) and all(s is None for s in m.slots)
    for inv_row, ptag in enumerate(m.ptag):
        assert all(e.sid == ptag for e in m.rows[inv_row] if e is not None)


def test_claim_of_an_emptied_row_is_counted():
    """Q20: PTag valid and another SID's: a claim even when the row is empty."""
    m = mk(sets=2, ways=2)
    fill(m, 0, 1, 0x10, 0x100)
    m.inval(1, sid=1)
    c = fill(m, 1, 3, 0x10, 0x300)
    assert c.claim and c.evicted is None and m.counters["claims"] == 1


def test_duplicate_request_tags():
    """Q18: two outstanding requests with one tag: hits FIFO, waiters lowest number first."""
    m = mk()
    miss(m, 5, 1, 0x10)
    miss(m, 5, 1, 0x20)
    m.completion(1, 0x200)
    m.completion(0, 0x100)
    assert m.expect_response(5, SRC_ATS).ppn == 0x100           # waiter 0 first
    assert m.expect_response(5, SRC_ATS).ppn == 0x200


def test_merge_into_unsent_prefetch_slot_keeps_its_queue():
    """Q22: a demand request merged into an unsent prefetch slot leaves it in the prefetch
    queue, after every demand send."""
    m = mk(FULL, pbEntries=2)
    s = m._alloc_slot(5, 0x30, prefetch=True)
    m.request(0, 5, 0x30)
    m.request(1, 6, 0x40)
    assert [(a.tag, a.prefetch) for a in m.pending_ats()] == [(0, 0), (s.idx, 1)]


def test_prefetch_issue_stage_order():
    """Q27 (docs "Prefetch Unit", decided 2026-11-29, session 21): with prefetchDelay 1 and
    cycles given, a trigger's prefetches act in the next cycle, after the request responding
    then (whose miss of a candidate's page allocates a demand slot and drops the candidate) and
    before a completion responding then; without cycles they act at once."""
    m = mk(FULL, histDistance=2, ptbEntries=8, pbEntries=4, prefetchDelay=1)
    tag = _warm(m, t_sid=7, pages=[0x70, 0x71], trigger_sid=1, D=2)
    m.completion(0, 0, fault=1)
    m.completion(1, 0, fault=1)
    while m.drain_next():
        pass
    o = m.request(tag, 1, 0x1234, cycle=100)                   # trigger responding in 100
    assert o.candidates == [] and m.pending_trigger is o and not m.idle
    r = m.request(tag + 1, 7, 0x70, cycle=101)                 # the request first: it allocates
    assert r.kind == "alloc" and r.slot < 8 and m.pending_trigger is r      # its own trigger waits
    assert o.candidates == [(7, 0x70), (7, 0x71)] and o.prefetch_drops == [(7, 0x70, "slot")]
    assert [a.iova for a in o.ats if a.prefetch] == [0x71]
    # a completion responding in the cycle after a trigger acts after its prefetches
    o2 = m.request(tag + 2, 1, 0x1235, cycle=110)
    send_all(m)
    m.completion(r.slot, 0x900, cycle=111)
    assert m.pending_trigger is None and o2.candidates
    # the testbench's end-of-cycle call issues a trigger with no operation behind it
    o3 = m.request(tag + 3, 1, 0x1236, cycle=120)
    m.flush_prefetch(120)
    assert m.pending_trigger is o3
    m.flush_prefetch(121)
    assert m.pending_trigger is None and o3.candidates


def test_prefetch_issue_stage_order_delay2():
    """Q27 with prefetchDelay 2 (devtlb_full since 2026-11-30, session 25): a trigger's
    prefetches act two cycles after its respond, after the requests responding in the two
    cycles between (each miss of a candidate's page allocates a demand slot and drops the
    candidate) and before a completion responding in either."""
    m = mk(FULL, histDistance=2, ptbEntries=8, pbEntries=4, prefetchDelay=2)
    tag = _warm(m, t_sid=7, pages=[0x70, 0x71], trigger_sid=1, D=2)
    m.completion(0, 0, fault=1)
    m.completion(1, 0, fault=1)
    while m.drain_next():
        pass
    o = m.request(tag, 1, 0x1234, cycle=100)                   # trigger responding in 100
    assert o.candidates == [] and m.pending_trigger is o
    r1 = m.request(tag + 1, 7, 0x71, cycle=101)                # both requests first
    assert r1.kind == "alloc" and m.pending_trigger is o and o.candidates == []
    r2 = m.request(tag + 2, 7, 0x70, cycle=102)
    assert r2.kind == "alloc" and r2.slot < 8
    assert o.candidates == [(7, 0x70), (7, 0x71)]
    assert o.prefetch_drops == [(7, 0x70, "slot"), (7, 0x71, "slot")] and not [a for a in o.ats if a.prefetch]
    m.flush_prefetch(None)
    # a completion responding in the cycle after a trigger acts after its prefetches
    o2 = m.request(tag + 3, 1, 0x1235, cycle=110)
    send_all(m)
    m.completion(r2.slot, 0x900, cycle=111)
    assert m.pending_trigger is None and o2.candidates
    # the testbench's end-of-cycle call issues a trigger with no operation behind it
    o3 = m.request(tag + 4, 1, 0x1236, cycle=120)
    m.flush_prefetch(121)
    assert m.pending_trigger is o3
    m.flush_prefetch(122)
    assert m.pending_trigger is None and o3.candidates


def test_drain_skid_delays():
    """Q24 / Q25 with the drain's skid (docs "When each change becomes visible", decided
    2026-11-30, session 29; manifest drainDelay 4, allocDelay 3): a completion responding in t
    has its waiters on resp from t + 4; a demand slot freed by a resp handshake in c is taken
    by a miss responding from c + 3, not by one responding in c + 1 or c + 2."""
    d = DevTlbParams.from_manifest({**NOPF}, {"allocDelay": 3, "drainDelay": 4})
    assert (d.drain_delay, d.allocDelay) == (4, 3)
    assert DevTlbParams.from_manifest({**NOPF}, {"allocDelay": 2}).drain_delay == 3   # the rule
    for late, want_freed in ((1, False), (2, False), (3, True)):
        m = DevTlbModel(d)
        o = m.request(10, 0, 0x10, cycle=50)
        send_all(m)
        m.completion(o.slot, 0x100, cycle=60)
        with pytest.raises(DevTlbModelError):
            m.expect_response(10, SRC_ATS, cycle=63)            # t + 3: still in the skid's way
        assert m.expect_response(10, SRC_ATS, cycle=64).ppn == 0x100
        o2 = m.request(11, 0, 0x20, cycle=64 + late)
        assert o2.kind == "alloc" and (o2.slot == o.slot) == want_freed, (late, o2)


def test_drain_skid_prefetch_slot_release():
    """Q27 with the drain's skid (session 29): the release is a cycle after the resp handshake,
    so a prefetch slot freed by a handshake in c is free to the issue stage from c + 2 (the issue
    in cycle I sees the handshakes up to I - 2); without the skid from c + 1. The handshake's
    cycle is set directly (``_freed_at``, what ``expect_response(cycle=)`` records)."""
    for drain, first in ((4, 102), (0, 101)):
        m = mk(FULL, pfSlots=4, allocDelay=3 if drain else 2, prefetchDelay=2, drainDelay=drain)
        lo = m.p.ptbEntries                                     # the first prefetch slot
        m._freed_at[lo] = 100
        for issue in (101, 102):
            s = m._alloc_slot(1, 0x50 + issue, prefetch=True, cycle=issue)
            assert (s.idx == lo) == (issue >= first), (drain, issue, s.idx)
            m._free_slot(s)
