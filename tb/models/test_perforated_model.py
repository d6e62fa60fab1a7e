"""Unit tests of models/perforated.py against explicit rules of docs/perforated-l2tlb.md and
the spec (../shared/spec/perforated-l2tlb.md), never against the model itself: expected
translations come from the builder's records (xlat_tb.perforated_tables.PerforatedMachine.
expect), expected reads from the entry addresses the builder wrote (entry_addr) and the
doc's read order.  Pure Python."""

import random
import re
from dataclasses import fields
from pathlib import Path

import pytest

from models.perforated import (NAMED_CONFIGS, F_BUS, F_NONE, F_PAGE, F_RSVD, INV_ALL, INV_ASID, INV_FRAME,
                               INV_PAGE, SRC_2M, SRC_4K, SRC_HOLE, SRC_PERF, SRC_WALK,
                               PerforatedModel, PerforatedModelError, PerforatedParams, Req,
                               Response, Walk)
from xlat_tb.perforated_tables import FragScenario, PerforatedMachine, hole_offsets

V2 = 0x240          # a 2 MiB virtual region number used by the directed tests
ASID = 1


def model_for(m: PerforatedMachine, **p) -> PerforatedModel:
    p.setdefault("paBits", m.pa_bits)
    return PerforatedModel(PerforatedParams(**p), mem=m.mem, bitmap_base=m.bitmap_base)


def req(m, vpn, asid=ASID, cmd=0, user=0, id=0):
    return Req(id=id, vpn=vpn, asid=asid, root=m.space(asid).root, cmd=cmd, user=user)


def check(m, r: Response, vpn, asid=ASID, cmd=0, user=0, perforation=True):
    """Every response field the builder's records decide."""
    e = m.expect(asid, vpn, cmd, user, perforation=perforation)
    got = {k: getattr(r, k) for k in e.fields()}
    assert got == e.fields(), (hex(vpn), e.reason, r.reason, got, e.fields())
    return e


def addrs(m, vpn, *kinds, asid=ASID):
    return [(k, m.entry_addr(asid, vpn, k)) for k in kinds]


def reads(r: Response):
    return [(x.kind, x.addr) for x in r.reads]


# ----------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("kw,msg", [
    (dict(sets4k=3), "sets4k must be a power of two in 1..1024, got 3"),
    (dict(ways2m=0), "ways2m must be 1..16, got 0"),
    (dict(bitmapEntries=65), "bitmapEntries must be 1..64, got 65"),
    (dict(walkers=9), "walkers must be 1..8, got 9"),
    (dict(storage="sram", latency=1), "latency must be one of 2, 3, 4 with storage = sram"),
    (dict(storage="regs"), "storage must be sram or flops"),
    (dict(paBits=53), "paBits must be 32..52, got 53"),
])
def test_parameter_checks_name_parameter_and_range(kw, msg):
    with pytest.raises(ValueError, match=msg):
        PerforatedParams(**kw)


# ----------------------------------------------------------------------------- flow 1, 2, 5
def test_4k_walk_reads_then_hit_then_pwc():
    m = PerforatedMachine(1)
    m.map_4k(ASID, (V2 << 9) | 5)
    m.map_4k(ASID, (V2 << 9) | 6)
    t = model_for(m)
    vpn = (V2 << 9) | 5
    r = t.translate(req(m, vpn))
    check(m, r, vpn)
    assert r.source == SRC_WALK and reads(r) == addrs(m, vpn, "pml4e", "pdpte", "pde", "pte")
    assert r.memReads == 4 and r.pageSize == 0
    r = t.translate(req(m, vpn))
    assert (r.source, r.memReads) == (SRC_4K, 0)
    check(m, r, vpn)
    # the PD pointer (PWC L1) is cached: one read for the neighbour page
    r = t.translate(req(m, vpn + 1))
    assert r.source == SRC_WALK and reads(r) == addrs(m, vpn + 1, "pte")
    check(m, r, vpn + 1)


def test_2m_walk_then_hit_and_pwc_l2():
    m = PerforatedMachine(2)
    m.map_2m(ASID, V2)
    m.map_2m(ASID, V2 + 1)
    t = model_for(m)
    vpn = (V2 << 9) | 77
    r = t.translate(req(m, vpn))
    check(m, r, vpn)
    assert r.source == SRC_WALK and r.pageSize == 1
    assert reads(r) == addrs(m, vpn, "pml4e", "pdpte", "pde")
    r = t.translate(req(m, vpn + 300))
    assert (r.source, r.memReads, r.pageSize) == (SRC_2M, 0, 1)
    check(m, r, vpn + 300)
    v = ((V2 + 1) << 9) | 3
    r = t.translate(req(m, v))
    assert r.source == SRC_WALK and reads(r) == addrs(m, v, "pde")     # PWC L2 (PDPTE) hit


# ----------------------------------------------------------------------------- flow 3, 4
def test_perforated_filter0_bitmap_hole_sources_and_reads():
    m = PerforatedMachine(3)
    # holes at 70 and 71 (region 1) and 300 (region 4); large page read-only, holes writable
    m.map_perforated(ASID, V2, [70, 71, 300], w=0, hole_perm=dict(w=1))
    t = model_for(m)
    base = V2 << 9
    # cold, region 0 (filter 0): the walk ends at the PD leaf, no bitmap read
    r = t.translate(req(m, base + 5))
    e = check(m, r, base + 5)
    assert e.large and r.source == SRC_WALK and r.pageSize == 0
    assert reads(r) == addrs(m, base + 5, "pml4e", "pdpte", "pde")
    # 2M hit, filter 0
    r = t.translate(req(m, base + 511 - 64))           # region 6
    assert (r.source, r.memReads, r.pageSize) == (SRC_PERF, 0, 0)
    check(m, r, base + 511 - 64)
    # 2M hit, filter 1, bitmap word not cached: one read, bit clear -> the large page
    r = t.translate(req(m, base + 64))
    assert r.source == SRC_PERF and reads(r) == addrs(m, base + 64, "bitmap")
    assert check(m, r, base + 64).large
    # same word cached: no read
    r = t.translate(req(m, base + 100))
    assert (r.source, r.memReads) == (SRC_PERF, 0)
    # a hole: the shadow entry then the hole's PTE, its own permissions (writable)
    r = t.translate(req(m, base + 70, cmd=1))
    e = check(m, r, base + 70, cmd=1)
    assert e.hole and r.fault == F_NONE and r.perm_w == 1 and r.source == SRC_HOLE
    assert reads(r) == addrs(m, base + 70, "shadow", "hole")
    assert r.ppn != m.space(ASID).large[V2].ppn2m + 70
    # the hole is now a 4K entry
    r = t.translate(req(m, base + 70))
    assert (r.source, r.memReads) == (SRC_4K, 0)
    # a second hole of the page: the shadow entry is in the PWC
    r = t.translate(req(m, base + 71))
    assert r.source == SRC_HOLE and reads(r) == addrs(m, base + 71, "hole")
    check(m, r, base + 71)
    # a write to a non-hole page of the read-only large page faults
    r = t.translate(req(m, base + 5, cmd=1))
    assert r.fault == F_PAGE and r.ppn == 0
    # cold walk into a hole: PD leaf, bitmap word, shadow (PWC hit after the first), hole PTE
    t2 = model_for(m)
    r = t2.translate(req(m, base + 300))
    assert r.source == SRC_WALK and check(m, r, base + 300).hole
    assert reads(r) == addrs(m, base + 300, "pml4e", "pdpte", "pde", "bitmap", "shadow", "hole")


def test_source_values_table():
    """Spec: source 0 4K entry, 1 2M entry, 2 perforated non-hole, 3 hole, 4 walk."""
    m = PerforatedMachine(4)
    m.map_4k(ASID, 0x1000)
    m.map_2m(ASID, V2)
    m.map_perforated(ASID, V2 + 1, [9])
    t = model_for(m)
    hole = ((V2 + 1) << 9) | 9
    seq = [(0x1000, SRC_WALK), (0x1000, SRC_4K), (V2 << 9, SRC_WALK), ((V2 << 9) + 1, SRC_2M),
           (((V2 + 1) << 9) | 100, SRC_WALK), (((V2 + 1) << 9) | 101, SRC_PERF),
           (((V2 + 1) << 9) | 10, SRC_PERF), (hole, SRC_HOLE), (hole, SRC_4K)]
    for vpn, src in seq:
        r = t.translate(req(m, vpn))
        assert r.source == src, (hex(vpn), r.source, src, r.reason)
        check(m, r, vpn)


def test_filter0_is_trusted_and_safe_lies_cost_a_read():
    m = PerforatedMachine(5)
    # a hole at 130 (region 2) under a filter that says region 2 has none (software error):
    # the hardware translates it through the large page (docs: the filter is trusted)
    m.map_perforated(ASID, V2, [130], filter=0b0000_0000)
    # safe lie: the filter says region 5 has holes, the bitmap has none there
    m.map_perforated(ASID, V2 + 1, [], filter=0b0010_0000)
    t = model_for(m)
    b0, b1 = V2 << 9, (V2 + 1) << 9
    r = t.translate(req(m, b0 + 130))
    e = check(m, r, b0 + 130)
    assert e.large and r.ppn == m.space(ASID).large[V2].ppn2m + 130
    assert [x.kind for x in r.reads] == ["pml4e", "pdpte", "pde"]      # no bitmap read
    r = t.translate(req(m, b1 + 5 * 64 + 1))
    assert check(m, r, b1 + 5 * 64 + 1).large
    assert [x.kind for x in r.reads] == ["pde", "bitmap"]              # PWC L2, then the word
    r = t.translate(req(m, b1 + 64))                                    # region 1: filter 0
    assert (r.source, r.memReads) == (SRC_PERF, 0)


def test_filter0_trusted_only_for_its_64_pages():
    """A set bitmap bit in region k with filter bit k set is always a hole, whatever the other
    filter bits say; pages of regions with filter 0 never read the bitmap."""
    m = PerforatedMachine(6)
    m.map_perforated(ASID, V2, [64 * 3 + 7])
    t = model_for(m)
    base = V2 << 9
    t.translate(req(m, base))
    for k in range(8):
        for off in (0, 7, 63):
            vpn = base + 64 * k + off
            r = t.translate(req(m, vpn))
            e = check(m, r, vpn)
            if k != 3:
                assert r.memReads == 0 and r.source == SRC_PERF
            elif off == 7:
                assert e.hole and r.source in (SRC_HOLE, SRC_4K)
    assert t.ctr["filterSkips"] == 7 * 3 + 1


# ----------------------------------------------------------------------------- invalidation
def test_inval_kind3_drops_bitmap_words_and_2m_entries_of_the_frame():
    m = PerforatedMachine(7)
    rec = m.map_perforated(ASID, V2, [10])
    other = m.map_perforated(ASID, V2 + 1, [10])
    # a second address space maps the same physical 2 MiB frame
    m.map_perforated(2, V2 + 5, [10], ppn2m=rec.ppn2m)
    t = model_for(m)
    b, b1, b2 = V2 << 9, (V2 + 1) << 9, (V2 + 5) << 9
    for v, a in ((b + 20, ASID), (b1 + 20, ASID), (b2 + 20, 2)):
        t.translate(req(m, v, asid=a))                  # 2M entries + bitmap words cached
    t.translate(req(m, b + 10))                         # the hole -> a 4K entry
    # punch a hole at 20 in memory only: the cached word still says "no hole"
    m.punch_hole(ASID, V2, 20)
    r = t.translate(req(m, b + 20))
    assert r.source == SRC_PERF and r.memReads == 0 and r.ppn == rec.ppn2m + 20   # stale
    t.run([dict(inval=INV_FRAME, frame=rec.ppn2m >> 9)])
    assert not [e for e in t.entries2m() if e.ppn >> 9 == rec.ppn2m >> 9]
    assert not [w for w in t.bitmap_words() if w.index >> 3 == rec.ppn2m >> 9]
    assert [w for w in t.bitmap_words() if w.index >> 3 == other.ppn2m >> 9]
    assert any(e.vpn == b + 10 for e in t.entries4k())           # 4K entries stay
    r = t.translate(req(m, b + 20))
    e = check(m, r, b + 20)
    assert e.hole and r.source == SRC_WALK and r.ppn != rec.ppn2m + 20
    r = t.translate(req(m, b1 + 30))                    # the other frame's word is still cached
    assert (r.source, r.memReads) == (SRC_PERF, 0)
    r = t.translate(req(m, b2 + 30, asid=2))            # asid 2's 2M entry of the frame: gone
    assert r.source == SRC_WALK


def test_set_associative_bitmap_cache_va_index_alias_and_kind3():
    """bitmapSets > 1 (docs "The bitmap word cache's size", 2026-11-30): the set of a word is
    the request's 64-page VA chunk, (vpn >> 6) mod bitmapSets, the tag its frame-word index; two
    VAs over one frame cache its word twice (one per set, harmless); kind 3 clears every word
    (a VA-indexed cache cannot find a frame's words), kinds 1 and 2 keep them."""
    m = PerforatedMachine(8)
    rec = m.map_perforated(ASID, V2, list(range(0, 512, 64)))   # every filter bit set
    m.map_perforated(2, V2 + 3, list(range(0, 512, 64)), ppn2m=rec.ppn2m)   # an alias
    other = m.map_perforated(ASID, V2 + 1, list(range(0, 512, 64)))
    t = model_for(m, bitmapEntries=64, bitmapSets=16)
    assert t.p.bitmapWays == 4
    b, ba, b1 = V2 << 9, (V2 + 3) << 9, (V2 + 1) << 9
    r = t.translate(req(m, b + 65))                     # walk, PD leaf, word 1 read
    assert [q.kind for q in r.reads][-1] == "bitmap"
    s = ((b + 65) >> 6) % 16
    assert [(e.index, si) for si, row in enumerate(t.bitmap.rows) for e in row if e] == \
        [(((rec.ppn2m + 64) >> 6), s)]
    r = t.translate(req(m, b + 66))                     # the same word: a hit in that set
    assert (r.source, r.memReads) == (SRC_PERF, 0)
    r = t.translate(req(m, ba + 66, asid=2))            # alias: another set, its own read
    assert [q.kind for q in r.reads][-1] == "bitmap"
    sets = sorted(si for si, row in enumerate(t.bitmap.rows) for e in row if e)
    assert sets == sorted([s, ((ba + 66) >> 6) % 16]) and len(t.bitmap_words()) == 2
    assert len({w.index for w in t.bitmap_words()}) == 1
    t.translate(req(m, b1 + 70))
    t.run([dict(inval=INV_ASID, asid=ASID), dict(inval=INV_PAGE, asid=ASID, vpn=b + 65)])
    assert len(t.bitmap_words()) == 3                   # physical: kinds 1 and 2 keep them
    t.run([dict(inval=INV_FRAME, frame=other.ppn2m >> 9)])
    assert t.bitmap_words() == []                       # every word, not only the frame's
    with pytest.raises(ValueError, match="bitmapSets > 1 needs latency = 4 and storage = sram"):
        PerforatedParams(bitmapEntries=64, bitmapSets=16, storage="flops")
    # (the formal configuration of the set-associative cache: flops with formalPorts)
    PerforatedParams(bitmapEntries=2, bitmapSets=2, storage="flops", formalPorts=True)
    with pytest.raises(ValueError, match="ways"):
        PerforatedParams(bitmapEntries=64, bitmapSets=2)


def test_inval_kinds_0_1_2():
    m = PerforatedMachine(8)
    for a in (1, 2):
        m.map_4k(a, 0x1000)
        m.map_perforated(a, V2, [1])
    t = model_for(m)
    for a in (1, 2):
        t.translate(req(m, 0x1000, asid=a))
        t.translate(req(m, (V2 << 9) | 1, asid=a))
        t.translate(req(m, (V2 << 9) | 2, asid=a))
    t.run([dict(inval=INV_PAGE, asid=1, vpn=0x1000)])
    assert t.translate(req(m, 0x1000, asid=1)).source == SRC_WALK
    assert t.translate(req(m, 0x1000, asid=2)).source == SRC_4K
    assert t.translate(req(m, (V2 << 9) | 3, asid=1)).source == SRC_PERF   # bitmap kept
    t.run([dict(inval=INV_ASID, asid=2)])
    assert not [e for e in t.entries4k() + t.entries2m() + t.pwc_entries() if e.asid == 2]
    assert t.bitmap_words()
    t.run([dict(inval=INV_ALL)])
    assert not (t.entries4k() or t.entries2m() or t.pwc_entries() or t.bitmap_words())


def test_walk_in_flight_at_inval_fills_nothing_and_delays_invaldone():
    m = PerforatedMachine(9)
    m.map_perforated(ASID, V2, [3])
    t = model_for(m)
    w = t.request(req(m, (V2 << 9) | 3, id=5))
    assert isinstance(w, Walk) and w.slot == 0
    t.inval(INV_FRAME, frame=m.space(ASID).large[V2].ppn2m >> 9)
    assert not t.inval_done_allowed()
    while isinstance(w, Walk):
        t.mem_request(w.slot, w.addr)
        w = t.mem_response(w.slot, m.mem.read(w.addr))
    assert w.source == SRC_WALK and w.fault == F_NONE
    assert not (t.entries2m() or t.bitmap_words() or t.pwc_entries() or t.entries4k())
    assert not t.inval_done_allowed()
    assert t.pop_response() is w
    assert t.inval_done_allowed()
    t.inval_done()
    with pytest.raises(PerforatedModelError):
        t.inval_done()


# ----------------------------------------------------------------------------- perforation off
def test_perforation_off_and_the_splintered_baseline():
    scen = dict(regions=8, frac=0.5, holes=10, layout="dispersed")
    mp = FragScenario.build(11, mode="perforated", **scen)
    ms = FragScenario.build(11, mode="splintered", **scen)
    rng = random.Random(1)
    off = model_for(mp.machine, perforation=False)
    base = model_for(ms.machine, perforation=False)
    on = model_for(mp.machine)
    for vpn in mp.random_vpns(rng, 400):
        ro, rb, rn = (x.translate(req(y.machine, vpn)) for x, y in
                      ((off, mp), (base, ms), (on, mp)))
        check(mp.machine, rn, vpn)
        check(ms.machine, rb, vpn)
        # the same translation for every page in both table layouts (sizes aside)
        assert (rb.fault, rb.ppn, rb.perm_w) == (rn.fault, rn.ppn, rn.perm_w)
        if vpn >> 9 in mp.fragmented:
            assert ro.fault == F_PAGE and ro.source == SRC_WALK and ro.reads[-1].kind == "pde"
            assert rb.pageSize == 0 and rb.source in (SRC_4K, SRC_WALK)
        else:
            assert ro.fault == F_NONE and ro.ppn == rn.ppn
    assert not [e for e in off.entries2m() if e.perforated]
    assert off.ctr["bitmapReads"] == 0 == base.ctr["bitmapReads"]


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("kind", ["pml4e", "pdpte", "pde", "bitmap", "shadow", "hole", "pte"])
def test_bus_error_on_each_kind_of_read(kind):
    m = PerforatedMachine(12)
    m.map_perforated(ASID, V2, [40])
    m.map_4k(ASID, (V2 + 1) << 9)
    vpn = (V2 + 1) << 9 if kind == "pte" else (V2 << 9) | 40
    t = model_for(m)
    bad = m.entry_addr(ASID, vpn, kind)
    m.mem.errors.add(bad)
    r = t.translate(req(m, vpn))
    assert r.fault == F_BUS and r.ppn == 0 and r.reads[-1].addr == bad and r.reads[-1].error
    assert r.memReads == len(r.reads)
    # nothing read with an error is cached; what was read before it stays
    if kind == "bitmap":
        assert t.entries2m() and not t.bitmap_words()
    if kind in ("shadow", "hole"):
        assert t.bitmap_words() and not t.entries4k()
    m.mem.errors.clear()
    r = t.translate(req(m, vpn))
    check(m, r, vpn)


@pytest.mark.parametrize("what,kind,code", [
    ("pml4e_ps", "pml4e", F_RSVD), ("pdpte_ps", "pdpte", F_RSVD),
    ("leaf2m_rsvd", "pde", F_RSVD), ("pml4e_pa", "pml4e", F_RSVD), ("pdpte_pa", "pdpte", F_RSVD),
    ("pde_pa", "pde", F_RSVD), ("pte_pa", "pte", F_RSVD), ("shadow_pa", "shadow", F_RSVD),
    ("hole_pa", "hole", F_RSVD), ("shadow_ps", "shadow", F_RSVD),
    ("shadow_missing", "shadow", F_PAGE), ("leaf2m_a0", "pde", F_PAGE),
    ("hole_a0", "hole", F_PAGE), ("pte_a0", "pte", F_PAGE),
])
def test_reserved_bits_and_not_present(what, kind, code):
    m = PerforatedMachine(13, pa_bits=40)
    if what == "leaf2m_rsvd":
        m.map_2m(ASID, V2)
        vpn = (V2 << 9) | 4
    elif kind == "pte":
        m.map_4k(ASID, (V2 << 9) | 4)
        vpn = (V2 << 9) | 4
    else:
        m.map_perforated(ASID, V2, [4])
        vpn = (V2 << 9) | 4
    m.corrupt(ASID, vpn, what)
    t = model_for(m)
    r = t.translate(req(m, vpn))
    assert r.fault == code and r.reads[-1].kind == kind, (r.reason, r.reads)
    check(m, r, vpn)
    # a faulting leaf is not cached: the same request walks again
    assert t.translate(req(m, vpn)).source in (SRC_WALK, SRC_HOLE)


def test_filter_bits_are_not_reserved_only_in_a_perforated_leaf():
    m = PerforatedMachine(14)
    m.map_perforated(ASID, V2, [], filter=0xFF)        # every filter bit set, no hole at all
    t = model_for(m)
    r = t.translate(req(m, V2 << 9))
    assert r.fault == F_NONE and [x.kind for x in r.reads][-1] == "bitmap"
    t = model_for(m, perforation=False)
    assert t.translate(req(m, V2 << 9)).fault == F_PAGE


def test_ad_policy_and_cmd3():
    m = PerforatedMachine(15)
    m.map_4k(ASID, 0x10, d=0)
    t = model_for(m)
    r = t.translate(req(m, 0x10, cmd=1))
    assert r.fault == F_PAGE and r.source == SRC_WALK        # clean page: the OS sets D
    r = t.translate(req(m, 0x10))
    assert (r.fault, r.source) == (F_NONE, SRC_4K)           # cached with D = 0
    r = t.translate(req(m, 0x10, cmd=3))
    assert (r.fault, r.memReads, r.source) == (F_RSVD, 0, SRC_WALK)
    assert t.ctr["badCmds"] == 1
    assert t.translate(req(m, 0x10, user=1)).fault == F_NONE  # u = 1 by default


# ----------------------------------------------------------------------------- properties
@pytest.mark.parametrize("layout", ["clustered", "dispersed"])
@pytest.mark.parametrize("allocated", [True, False])
def test_random_stream_holes_never_through_the_large_page(layout, allocated):
    """Against the builder's records on every request (every field), with small caches (so
    entries are evicted), invalidations, and phases whose hole sets change (kind 3 + kind 2
    after each change, as the OS does)."""
    sc = FragScenario.build(21, regions=24, frac=0.5, holes=12, layout=layout,
                            allocated=allocated)
    m = sc.machine
    rng = random.Random(f"{layout}{allocated}")
    t = model_for(m, sets4k=4, ways4k=2, sets2m=2, ways2m=2, bitmapEntries=4, pwcEntries=4)
    n_holes = 0
    for phase in range(4):
        hot = sc.random_vpns(rng, 30) + rng.sample(sc.hole_vpns(), 10)
        for _ in range(600):
            vpn = rng.choice(hot) if rng.random() < 0.7 else sc.random_vpns(rng, 1)[0]
            cmd = rng.choice([0, 0, 1, 2])
            r = t.translate(req(m, vpn, cmd=cmd))
            e = check(m, r, vpn, cmd=cmd)
            rec = m.space(ASID).large[vpn >> 9]
            if e.hole:
                n_holes += 1
                assert r.source in (SRC_4K, SRC_HOLE, SRC_WALK)
                assert r.fault or r.ppn != rec.ppn2m + (vpn & 511)
            # reads follow the source's rule
            kinds = [x.kind for x in r.reads]
            if r.source in (SRC_4K, SRC_2M):
                assert kinds == []
            elif r.source == SRC_PERF:
                assert kinds in ([], ["bitmap"])
            elif r.source == SRC_HOLE:
                assert kinds in (["hole"], ["shadow", "hole"], ["bitmap", "hole"],
                                 ["bitmap", "shadow", "hole"])
            if rng.random() < 0.01:
                t.run([dict(inval=rng.choice([INV_ALL, INV_ASID, INV_PAGE]), asid=ASID,
                            vpn=vpn)])
        # the OS changes holes: punch some, patch some, and invalidates as documented
        t.run(sc.change(rng, 3, allocated=allocated))
    assert n_holes > 200


def test_interleaved_walks_match_serial_results():
    """Walks in flight interleave (event API, random order of memory responses); without
    invalidations every result equals the builder's, and slots are the lowest free ones."""
    sc = FragScenario.build(31, regions=12, frac=0.5, holes=16, layout="dispersed")
    m = sc.machine
    rng = random.Random(3)
    t = model_for(m, walkers=3, sets2m=2, ways2m=1, bitmapEntries=2, pwcEntries=2)
    inflight, done, n = {}, 0, 0
    vpns = sc.random_vpns(rng, 500)
    while done < len(vpns):
        if n < len(vpns) and t.free_slots() and (not inflight or rng.random() < 0.5):
            free = min(i for i in range(3) if t.walk(i) is None)
            vpn = vpns[n]
            r = t.request(req(m, vpn, id=n))
            n += 1
            if isinstance(r, Walk):
                assert r.slot == free
                inflight[r.slot] = vpn
        else:
            if not inflight:
                continue
            slot = rng.choice(sorted(inflight))
            w = t.walk(slot)
            if not w.sent:
                t.mem_request(slot, w.addr)
                continue
            r = t.mem_response(slot, m.mem.read(w.addr))
            if isinstance(r, Response):
                del inflight[slot]
        while t.out:
            r = t.pop_response()
            check(m, r, vpns[r.id])
            done += 1
    assert t.mem_response(0, 0) is None and t.ctr["badMemResps"] == 1
    # a response for a read not yet sent is dropped too; a wrong address is an error
    w = t.request(req(m, vpns[0] ^ (1 << 20)))
    if isinstance(w, Walk):
        assert t.mem_response(w.slot, 0) is None and t.ctr["badMemResps"] == 2
        with pytest.raises(PerforatedModelError):
            t.mem_request(w.slot, w.addr + 8)
        t.mem_request(w.slot, w.addr)
        with pytest.raises(PerforatedModelError):
            t.mem_request(w.slot, w.addr)


def test_replacement_plru_in_4k_set():
    """4 ways in one set: fills take ways 0..3, the PLRU victim after touching 0,1,2,3 in
    order is way 0 (docs: tree-PLRU of docs/babelfish-tlb.md)."""
    m = PerforatedMachine(16)
    vpns = [(V2 << 9) + 8 * k for k in range(6)]          # sets4k = 8: all in set 0
    for v in vpns:
        m.map_4k(ASID, v)
    t = model_for(m, sets4k=8, ways4k=4)
    for v in vpns[:4]:
        t.translate(req(m, v))
    t.translate(req(m, vpns[4]))                           # evicts vpns[0]
    assert t.translate(req(m, vpns[1])).source == SRC_4K
    assert t.translate(req(m, vpns[0])).source == SRC_WALK
    assert t.ctr["evictions4k"] == 2


def test_counters_follow_their_definitions():
    m = PerforatedMachine(17)
    m.map_perforated(ASID, V2, [65])
    t = model_for(m)
    b = V2 << 9
    rs = [t.translate(req(m, v)) for v in (b, b + 1, b + 64, b + 66, b + 65, b + 65)]
    c = t.ctr
    assert c["requests"] == 6
    assert c["hits4k"] == sum(r.source == SRC_4K for r in rs) == 1
    assert c["hits2m"] == 4 and c["walks"] == 1
    assert c["filterSkips"] == 2 and c["bitmapReads"] == 1 and c["bitmapHits"] == 2
    assert c["holes"] == 1
    assert c["memReads"] == sum(r.memReads for r in rs) == 3 + 1 + 2
    assert c["requests"] == c["hits4k"] + c["hits2m"] + c["walks"] + c["badCmds"]
    t.translate(req(m, b, cmd=3))
    assert c["requests"] == c["hits4k"] + c["hits2m"] + c["walks"] + c["badCmds"] == 7


def test_hole_offsets_layouts():
    rng = random.Random(0)
    c = hole_offsets(rng, 20, "clustered")
    assert c == list(range(c[0], c[0] + 20))
    d = hole_offsets(rng, 16, "dispersed")
    assert len(d) == 16 and len({i // 64 for i in d}) == 8


def test_hit_under_miss_order_and_invaldone_waits_for_queued_hits():
    """Responses leave in the order of the operations that finish them: a hit accepted after a
    miss leaves first.  invalDone waits for every earlier request's response, hits included."""
    m = PerforatedMachine(18)
    m.map_2m(ASID, V2)
    m.map_4k(ASID, 0x77)
    t = model_for(m)
    t.translate(req(m, V2 << 9))                       # 2 MiB entry cached
    w = t.request(req(m, 0x77, id=1))                  # a walk
    assert isinstance(w, Walk)
    h = t.request(req(m, (V2 << 9) + 9, id=2))         # a hit, behind the miss
    assert isinstance(h, Response) and h.source == SRC_2M
    t.inval(INV_PAGE, asid=9, vpn=0)                   # covers nothing, still waits
    while isinstance(w, Walk):
        t.mem_request(w.slot, w.addr)
        w = t.mem_response(w.slot, m.mem.read(w.addr))
    assert [r.id for r in t.out] == [2, 1]
    assert t.pop_response().id == 2 and not t.inval_done_allowed()
    assert t.pop_response().id == 1 and t.inval_done_allowed()


def test_fill_is_seen_by_the_next_request():
    """Sequential in handshake order: a walk step that installs the 2 MiB entry is seen by the
    request accepted right after it (no second walk), and a request accepted before the last
    step walks on its own (no merging)."""
    m = PerforatedMachine(19)
    m.map_perforated(ASID, V2, [5])
    t = model_for(m, walkers=2)
    a = t.request(req(m, (V2 << 9) | 100, id=1))
    b = t.request(req(m, (V2 << 9) | 200, id=2))       # also misses: a second walk
    assert isinstance(a, Walk) and isinstance(b, Walk) and (a.slot, b.slot) == (0, 1)
    while isinstance(a, Walk):
        t.mem_request(a.slot, a.addr)
        a = t.mem_response(a.slot, m.mem.read(a.addr))
    c = t.request(req(m, (V2 << 9) | 300, id=3))
    assert isinstance(c, Response) and c.source == SRC_PERF and c.memReads == 0
    while isinstance(b, Walk):
        t.mem_request(b.slot, b.addr)
        b = t.mem_response(b.slot, m.mem.read(b.addr))
    assert b.source == SRC_WALK and b.memReads == 3    # its start was decided at its lookup
    assert len([e for e in t.entries2m()]) == 1           # the second fill rewrote the entry
    for r in (a, c, b):
        check(m, r, (V2 << 9) | {1: 100, 2: 200, 3: 300}[r.id])


DOC = Path(__file__).resolve().parents[2] / "docs" / "perforated-l2tlb.md"


def test_doc_parameters_and_named_configs_are_the_models():
    """docs/perforated-l2tlb.md's Parameters table (defaults, decided rows included) is
    PerforatedParams' defaults, and its named configurations table is NAMED_CONFIGS; every
    named configuration is legal."""
    text = DOC.read_text()
    sec = text.split("\n## Parameters", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)`(?: \*\*decided\*\*)? \| ([\w.]+) \|", sec, re.M)
    typed = {"true": True, "false": False}
    doc = {k: typed.get(v, int(v) if v.isdigit() else v) for k, v in rows
           if not k.startswith("perforated_")}
    model = {f.name: f.default for f in fields(PerforatedParams)}
    assert doc == model
    named = {}
    for name, changes in re.findall(r"^\| `(perforated_\w+)` \| ([^|]*) \|", sec, re.M):
        d = {}
        for k, v in re.findall(r"`(\w+) = (\w+)`", changes):
            d[k] = typed.get(v, int(v) if v.isdigit() else v)
        if changes.strip().startswith("flops"):
            d["storage"] = "flops"
        named[name] = d
    assert named == NAMED_CONFIGS
    for changes in NAMED_CONFIGS.values():
        PerforatedParams(**changes)


def test_miss_queue_order_room_and_inval():
    """Docs "Acceptance" (2026-11-28): with every walk slot busy a request that needs memory waits
    in the miss queue (missQueue places: the pipeline's stage registers, 6 with sram latency 4
    (the operation register before the read, session 22), 5 with flops latency 4 (the row
    register, session 22), 4 in the formal configurations), its first read decided; the head takes the slot of the walk that
    ends; a request with no slot and no place, and an invalidation with a queued request, are
    errors (req_ready / inval_ready must be low)."""
    assert PerforatedParams().missQueue == 6
    assert PerforatedParams(storage="flops").missQueue == 5
    assert PerforatedParams(storage="flops", formalPorts=True).missQueue == 4
    assert PerforatedParams(storage="sram", latency=2).missQueue == 2
    assert PerforatedParams(storage="flops", latency=1).missQueue == 1
    m = PerforatedMachine(12)
    vpns = [((V2 + 8 * i) << 9) | i for i in range(7)]
    for v in vpns:
        m.map_4k(ASID, v)
    t = model_for(m, storage="flops", walkers=2, formalPorts=True)    # 4 places
    ws = [t.request(req(m, v, id=i)) for i, v in enumerate(vpns[:6])]
    assert [w.slot for w in ws] == [0, 1, None, None, None, None]
    assert [w.kind for w in ws] == ["pml4e"] * 6 and not t.idle()
    assert len(t.missq) == 4 and set(t.pending_reads()) == {0, 1}
    with pytest.raises(PerforatedModelError):
        t.request(req(m, vpns[6], id=6))
    with pytest.raises(PerforatedModelError):
        t.inval(INV_ALL)
    # walk 1 ends first: its slot goes to the head (request 2), whose read is then sendable
    w = ws[1]
    while not isinstance(w, Response):
        t.mem_request(w.slot, w.addr)
        w = t.mem_response(1, m.mem.read(w.addr))
    check(m, w, vpns[1])
    assert t.walk(1) is ws[2] and ws[2].slot == 1 and not ws[2].sent and len(t.missq) == 3
    # run everything to the end: the queued walks take the slots in acceptance order
    order = []
    while not t.idle():
        for s in (0, 1):
            w = t.walk(s)
            if w is None:
                continue
            if not w.sent:
                t.mem_request(s, w.addr)
            r = t.mem_response(s, m.mem.read(w.addr))
            if isinstance(r, Response):
                order.append(r.id)
                check(m, r, vpns[r.id])
                nxt = t.walk(s)
                assert nxt is None or nxt.slot == s
    assert sorted(order) == [0, 2, 3, 4, 5]
    t.inval(INV_ALL)
