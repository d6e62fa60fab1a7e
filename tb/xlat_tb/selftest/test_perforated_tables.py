"""Self-test of xlat_tb/perforated_tables.py: the memory it writes is decoded here by hand
(bit positions of the spec's "Page-table extension"), independently of models.perforated."""

import random

import pytest

from models.perforated import F_PAGE, F_RSVD, INV_FRAME, INV_PAGE
from xlat_tb.perforated_tables import (FragScenario, PerforatedMachine, filter_of,
                                       hole_offsets)

A = 3


def word(m, addr):
    return m.mem.read(addr)


def test_perforated_leaf_shadow_holes_and_bitmap_layout():
    m = PerforatedMachine(1)
    rec = m.map_perforated(A, 0x300, [1, 2, 200], w=0, hole_perm=dict(w=1))
    sp = m.space(A)
    vpn = (0x300 << 9) | 2
    pd = m.entry_addr(A, vpn, "pde")
    leaf = word(m, pd)
    assert leaf & 1 and (leaf >> 7) & 1 and (leaf >> 52) & 1          # P, PS, perforated
    assert (leaf >> 13) & 0xFF == 0b0000_1001                          # regions 0 and 3
    assert (leaf & ((1 << 52) - 1)) >> 21 == rec.ppn2m >> 9 and not (leaf >> 1) & 1
    # the shadow page follows the PD page; its entry at the same index points at the holes
    assert m.entry_addr(A, vpn, "shadow") == pd + 4096
    sh = word(m, pd + 4096)
    assert sh & 1 and not (sh >> 7) & 1 and (sh & ((1 << 52) - 1)) >> 12 == sp.holept[0x300]
    for i in range(512):
        pte = word(m, sp.holept[0x300] * 4096 + i * 8)
        if i in rec.holes:
            assert pte & 1 and (pte >> 1) & 1 and (pte >> 12) & ((1 << 40) - 1) == rec.holes[i].ppn
        else:
            assert pte == 0
        f = rec.ppn2m + i
        bit = (word(m, m.bitmap_base + 8 * (f // 64)) >> (f % 64)) & 1
        assert bit == (i in rec.holes)


def test_modes_give_the_same_translations():
    kw = dict(regions=10, frac=0.5, holes=20, layout="clustered", allocated=True)
    p = FragScenario.build(5, mode="perforated", **kw)
    s = FragScenario.build(5, mode="splintered", **kw)
    assert p.fragmented == s.fragmented
    rng = random.Random(0)
    for vpn in p.random_vpns(rng, 500) + p.hole_vpns():
        ep, es = p.machine.expect(1, vpn), s.machine.expect(1, vpn)
        assert (ep.fault, ep.ppn, ep.perm, ep.hole) == (es.fault, es.ppn, es.perm, es.hole)
    # the splintered layout: a PT of 512 PTEs, no perforated leaf, no bitmap words
    v2 = s.fragmented[0]
    sp = s.machine.space(1)
    pde = word(s.machine, s.machine.entry_addr(1, v2 << 9, "pde"))
    assert pde & 1 and not (pde >> 7) & 1 and not (pde >> 52) & 1
    rec = sp.large[v2]
    for i in range(512):
        pte = word(s.machine, sp.pt[v2] * 4096 + i * 8)
        assert (pte >> 12) & ((1 << 40) - 1) == (rec.holes[i].ppn if i in rec.holes
                                                 else rec.ppn2m + i)
    assert not any(a >= s.machine.bitmap_base for a in s.machine.mem.words)


def test_clustered_and_dispersed_filters():
    rng = random.Random(2)
    for n in (1, 5, 30, 64):
        c = hole_offsets(rng, n, "clustered")
        d = hole_offsets(rng, n, "dispersed")
        assert len(c) == n and len(set(d)) == n
        assert bin(filter_of(c)).count("1") <= 1 + (n + 62) // 64
        assert bin(filter_of(d)).count("1") == min(8, n)


def test_unallocated_holes_and_lying_filters():
    m = PerforatedMachine(3)
    m.map_perforated(A, 0x10, [7], allocated=False)
    assert m.expect(A, (0x10 << 9) | 7).fault == F_PAGE
    assert word(m, m.entry_addr(A, (0x10 << 9) | 7, "hole")) == 0
    # filter 0 over a hole (software error): the builder writes it; expect trusts the filter
    rec = m.map_perforated(A, 0x11, [7], filter=0)
    assert (word(m, m.entry_addr(A, 0x11 << 9, "pde")) >> 13) & 0xFF == 0
    e = m.expect(A, (0x11 << 9) | 7)
    assert e.large and e.ppn == rec.ppn2m + 7
    # filter 1 where no hole is (safe): the large page
    m.map_perforated(A, 0x12, [], filter=0xFF)
    assert m.expect(A, (0x12 << 9) | 7).large


def test_phase_changes_update_bitmap_filter_and_return_invals():
    m = PerforatedMachine(4)
    rec = m.map_perforated(A, 0x20, [3])
    vpn = (0x20 << 9) | 400
    inv = m.punch_hole(A, 0x20, 400)
    assert inv == [dict(inval=INV_FRAME, frame=rec.ppn2m >> 9),
                   dict(inval=INV_PAGE, asid=A, vpn=vpn)]
    leaf = word(m, m.entry_addr(A, vpn, "pde"))
    assert (leaf >> 13) & 0xFF == 0b0100_0001
    f = rec.ppn2m + 400
    assert (word(m, m.bitmap_addr(f)) >> (f % 64)) & 1 and m.expect(A, vpn).hole
    m.patch_hole(A, 0x20, 400)
    assert not (word(m, m.bitmap_addr(f)) >> (f % 64)) & 1 and m.expect(A, vpn).large
    assert (word(m, m.entry_addr(A, vpn, "pde")) >> 13) & 0xFF == 0b0000_0001
    # an ordinary 2 MiB page can be perforated by a punch
    r2 = m.map_2m(A, 0x21)
    m.punch_hole(A, 0x21, 0)
    assert (word(m, m.entry_addr(A, 0x21 << 9, "pde")) >> 52) & 1 and r2.perforated


@pytest.mark.parametrize("what,code", [("pdpte_ps", F_RSVD), ("shadow_pa", F_RSVD),
                                       ("shadow_missing", F_PAGE), ("hole_a0", F_PAGE)])
def test_corrupt_marks_expectations(what, code):
    m = PerforatedMachine(5, pa_bits=40)
    m.map_perforated(A, 0x30, [9])
    vpn = (0x30 << 9) | 9
    before = word(m, m.entry_addr(A, vpn, what.split("_")[0]))
    m.corrupt(A, vpn, what)
    assert word(m, m.entry_addr(A, vpn, what.split("_")[0])) != before
    assert m.expect(A, vpn).fault == code
    # pages that are not holes never read the shadow / hole entries
    if what.startswith(("shadow", "hole")):
        assert m.expect(A, (0x30 << 9) | 10).large


def test_tables_data_and_bitmap_do_not_overlap():
    sc = FragScenario.build(6, regions=40, frac=0.5, holes=8, pa_bits=32)
    m = sc.machine
    tables = {a >> 12 for a in m.mem.words if a < (1 << 29)}
    assert all((1 << 20) >> 12 <= t < (1 << 29) >> 12 for t in tables)
    for v2 in sc.regions:
        rec = m.space(1).large[v2]
        assert (1 << 29) >> 12 <= rec.ppn2m and (rec.ppn2m + 512) << 12 <= m.bitmap_base
