"""Unit tests of xlat_tb/pagetables.py (builder, allocator, random scenario), and a
cross-check of models.walker against the builder's own records on every format pair: the
builder knows where it put each page (ppn, sizes, permissions) and which entry it broke (fault,
stage, level, faultGpa); the walker model must agree on all of it.  Pure Python."""

import random

import pytest

from models.ptformats import GUEST_FORMATS, HOST_FORMATS, fmt, page_bytes
from models.walker import (WalkerConfig, cold_reads, max_reads, max_writes, walk)
from xlat_tb.pagetables import FrameAllocator, MapConflict, PageTableBuilder, Scenario, \
    sign_extend

PAIRS = [(g, h) for g in GUEST_FORMATS for h in HOST_FORMATS]


def pa_for(h):
    return 52 if h.startswith("ept") else 56


def test_allocator_no_overlap_and_alignment():
    a = FrameAllocator(random.Random(1), 0, 1 << 32)
    big = a.alloc(2)                  # 1 of the 4 GiB-sized blocks, before anything fills them
    small = {a.alloc(0) for _ in range(200)}
    mids = [a.alloc(1) for _ in range(20)]
    root = a.alloc(0, count=4, align=4)
    assert root % 0x4000 == 0
    assert all(m % (1 << 21) == 0 for m in mids) and big % (1 << 30) == 0
    blocks = [(s, 4096) for s in small] + [(m, 1 << 21) for m in mids] + [(big, 1 << 30),
                                                                         (root, 0x4000)]
    blocks.sort()
    for (b0, s0), (b1, _) in zip(blocks, blocks[1:]):
        assert b0 + s0 <= b1, (hex(b0), hex(b1))
    # deterministic by seed
    b = FrameAllocator(random.Random(1), 0, 1 << 32)
    b.alloc(2)
    assert {b.alloc(0) for _ in range(200)} == small


def test_sign_extend():
    assert sign_extend(1 << 47, 48) == 0xFFFF_8000_0000_0000
    assert sign_extend((1 << 47) - 1, 48) == (1 << 47) - 1


def test_builder_map_lookup_conflict():
    from models.walker import SparseMemory
    m = SparseMemory()
    alloc = FrameAllocator(random.Random(2), 1 << 20, 1 << 30)
    F = fmt("ept4")
    b = PageTableBuilder(F, new_table=lambda x4=False: alloc.alloc(0), write_word=m.write)
    addr = b.map(0x4020_0000, 0x8000_0000, 1)           # a 2M host page
    assert m.read(addr) == b.entry(0x4020_0000, 1)
    pa, lvl, pte, perm = b.lookup(0x4021_2345)
    # 0x8000_0000 + (0x4021_2345 mod 2M = 0x1_2345)
    assert (pa, lvl) == (0x8001_2345, 1)
    with pytest.raises(MapConflict):
        b.map(0x4021_0000, 0x9000_0000, 0)               # inside the 2M leaf
    b.map(0x4020_0000, 0x8000_0000, 1)                   # same mapping again: no-op


def test_x4_root_is_16k_and_4_pages():
    s = Scenario(WalkerConfig("sv39", "sv39x4", "hardware", 56), 3)
    for v in range(5):
        vm = s.add_vm(v)
        assert (vm.hRoot << 12) % 0x4000 == 0
    # the 4 frames are taken: a 4K allocation never lands inside a root
    roots = {vm.hRoot >> 2 for vm in s.vms.values()}
    for _ in range(2000):
        assert (s.hpa.alloc(0) >> 14) not in roots


@pytest.mark.parametrize("g,h", PAIRS)
@pytest.mark.parametrize("ad", ["hardware", "fault"])
def test_model_agrees_with_builder(g, h, ad):
    cfg = WalkerConfig(g, h, ad, pa_for(h))
    # A/D all set so that fault mode agrees with the builder's 'ok' expectations
    s = Scenario.random(cfg, seed=11, ad_clear_p=0.0, regions=25)
    kinds = set()
    for t in s.targets + s.bad:
        res = walk(s.mem.copy(), cfg, s.request(t))
        r, e = res.resp, t.expect
        kinds.add(t.kind)
        if t.kind == "ok":
            got = (r["fault"], r["ppn"], r["guestPageSize"], r["hostPageSize"], r["pageSize"],
                   (r["perm_r"], r["perm_w"], r["perm_x"], r["perm_u"]))
            exp = (0, e["ppn"], e["guestPageSize"], e["hostPageSize"], e["pageSize"], e["perm"])
            assert got == exp, (t, r)
            assert res.huge_aligned == (e["guestPageSize"] > 0 and
                                        e["hostPageSize"] >= e["guestPageSize"])
        elif t.kind == "noperm":
            continue
        else:
            got = (r["fault"], r["faultStage"], r["faultLevel"])
            assert got == (e["fault"], e["stage"], e["level"]), (t, r, res.fault_reason)
            assert r["faultGpa"] == e["faultGpa"], (t, r)
    assert "ok" in kinds and {"invalid", "reserved", "noncanonical"} <= kinds


@pytest.mark.parametrize("g,h", PAIRS)
def test_random_walks_within_bounds(g, h):
    """10,000 random walks per pair on a scenario with clean A/D bits: every walk stays
    within the documented bounds; plain reads never exceed (g+1)(h+1)-1."""
    cfg = WalkerConfig(g, h, "hardware", pa_for(h))
    s = Scenario.random(cfg, seed=5)
    rng = random.Random(5)
    pool = s.targets + s.bad
    G, H = fmt(g).levels, fmt(h).levels
    n_dirty = 0
    for i in range(10000):
        t = rng.choice(pool)
        res = walk(s.mem, cfg, s.request(t, cmd=rng.choice([0, 0, 1, 2, 3][:5 if i % 50 else 4]),
                                         user=rng.randrange(2)))
        r = res.resp
        plain = sum(1 for a in res.accesses if a.kind == "read")
        assert plain <= cold_reads(G, H)
        assert r["memReads"] <= max_reads(G, H) and r["memWrites"] <= max_writes(G, H)
        assert r["memReads"] == len(res.reads) and r["memWrites"] == len(res.writes)
        # every write is preceded by its locked read and touches only the A/D byte
        for k, a in enumerate(res.accesses):
            if a.kind == "write":
                prev = res.accesses[k - 1]
                assert prev.kind == "locked_read" and prev.addr == a.addr
                F = fmt(g) if a.stage == 0 else fmt(h)
                assert a.wmask == F.ad_wmask and a.wdata == prev.rdata | a.set_bits
        n_dirty += len(res.dirty)
        if r["fault"]:
            assert r["ppn"] == 0 and r["pageSize"] == 0 and r["perm_r"] == 0
    assert n_dirty > 0


def test_scenario_is_deterministic():
    cfg = WalkerConfig("x86_64_4", "ept4", "hardware", 52)
    a, b = Scenario.random(cfg, 77), Scenario.random(cfg, 77)
    assert a.mem.words == b.mem.words
    assert [(t.gva, t.kind) for t in a.targets + a.bad] == [(t.gva, t.kind) for t in
                                                              b.targets + b.bad]
    c = Scenario.random(cfg, 78)
    assert c.mem.words != a.mem.words


def test_scenario_has_every_guest_size_and_splinters():
    for g, h in (("x86_64_4", "ept4"), ("sv48", "sv48x4"), ("sv39", "sv39x4")):
        cfg = WalkerConfig(g, h, "hardware", pa_for(h))
        s = Scenario.random(cfg, 9, regions=60)
        ok = [t for t in s.targets if t.kind == "ok"]
        sizes = {t.expect["guestPageSize"] for t in ok}
        assert {0, 1, 2} <= sizes, (g, sizes)
        assert any(t.expect["guestPageSize"] > t.expect["hostPageSize"] for t in ok)
        assert any(0 < t.expect["guestPageSize"] <= t.expect["hostPageSize"] for t in ok)


def test_guest_tables_shared_between_asids():
    cfg = WalkerConfig("x86_64_4", "ept4", "hardware", 52)
    s = Scenario.random(cfg, 4, share_p=1.0, regions=10)
    vm = s.vms[1]
    a1, a2 = vm.spaces[1], vm.spaces[2]
    assert a1.root != a2.root and a1.tables is a2.tables
    # a target of asid 1 under a shared root entry also translates in asid 2
    shared = [t for t in s.targets if t.asid == 1 and t.kind == "ok"
              and a1.F.index(t.gva, 3) in a2.tables[a2.root]]
    assert shared
    t = shared[0]
    r1 = walk(s.mem.copy(), cfg, s.request(t)).resp
    other = type(t)(t.vmid, 2, t.gva, t.kind, t.expect, t.cmd, t.user)
    r2 = walk(s.mem.copy(), cfg, s.request(other)).resp
    assert r1["ppn"] == r2["ppn"] and r1["fault"] == r2["fault"] == 0
