"""Unit tests of models/walker.py on hand-built page tables (raw entry values written here,
not by the builder), with every expected value derived by hand from docs/nested-walker.md.

Layout used by most tests ("4/4": x86_64_4 over ept4; the 5/5, sv39/sv39x4 and sv48/sv48x4
layouts follow the same plan):

* host root at HPA 0x100000 (hRoot 0x100), then one host table per level at 0x101000,
  0x102000, ... ; every GPA used lies in 0x200000..0x3FFFFF, so all host walks share the
  upper entries (index 0 at levels >= 2, index 1 at level 1: GPA bit 21) and differ only in the
  level-0 index N = GPA[20:12];
* host level-0 entry N maps GPA page 0x200+N to HPA page 0x500+N (4 KiB);
* guest tables at GPA 0x200000 (root), 0x201000, 0x202000, ...; the data page at the next
  GPA page; each guest entry points at the next table.
"""

import pytest

from models.ptformats import MODE_BARE, MODE_BOTH, MODE_S1, MODE_S2, fmt, page_bytes
from models.walker import (SparseMemory, WalkRequest, WalkerConfig, cold_reads, max_reads,
                           max_writes, walk)

# x86 bits
P, RW, US, XA, XD, PS, NX = 1, 2, 4, 0x20, 0x40, 0x80, 1 << 63
# EPT bits: R W X, memory type WB (6 << 3), A (bit 8), D (bit 9)
ER, EW, EX, WB, EA, ED = 1, 2, 4, 6 << 3, 0x100, 0x200
# RISC-V bits
V, R, W, X, U, G, A, D = 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80

HROOT = 0x100


def rv(pa, flags):
    """RISC-V entry: PPN (pa >> 12) at bit 10."""
    return ((pa >> 12) << 10) | flags


# ----------------------------------------------------------------------------- layouts
def layout_x86_ept(levels=4):
    """x86_64_{4,5} over ept{4,5}; gva indices (from the root down) 1, 2, 3, 4[, 5].
    Returns (mem, gva, gRoot)."""
    m = SparseMemory()
    # host tables: root 0x100000, level L at 0x100000 + (levels-1-L)*0x1000
    for i in range(levels - 1):
        lvl = levels - 1 - i
        table = 0x100000 + i * 0x1000
        idx = 1 if lvl == 1 else 0                       # GPA 0x2xxxxx: bit 21 -> L1 index 1
        m.write(table + idx * 8, (table + 0x1000) | ER | EW | EX)
    l0 = 0x100000 + (levels - 1) * 0x1000
    for n in range(8):                                   # GPA 0x200+n -> HPA 0x500+n
        m.write(l0 + n * 8, (0x500000 + n * 0x1000) | ER | EW | EX | WB | EA | ED)
    # guest: indices 1, 2, 3, ... from the root; table k at GPA 0x200000 + k*0x1000,
    # whose HPA is 0x500000 + k*0x1000
    idxs = list(range(1, levels + 1))
    gva = 0
    for k, idx in enumerate(idxs):
        lvl = levels - 1 - k
        gva |= idx << (12 + 9 * lvl)
        hpa_entry = 0x500000 + k * 0x1000 + idx * 8
        nxt = 0x200000 + (k + 1) * 0x1000
        m.write(hpa_entry, nxt | P | RW | US | (XA | XD if lvl == 0 else 0))
    return m, gva | 0x567, 0x200


def cfg(g="x86_64_4", h="ept4", ad="hardware", pa=52):
    return WalkerConfig(g, h, ad, pa)


def req(gva, gRoot=0x200, cmd=0, user=0, **kw):
    # SUM = 1 unless a test says otherwise: a supervisor access may use a U page (RISC-V), as
    # in the scenarios of xlat_tb.pagetables (the layouts here give every leaf U = 1)
    return WalkRequest(id=kw.pop("id", 3), gva=gva, asid=kw.pop("asid", 7),
                       vmid=kw.pop("vmid", 5), gRoot=gRoot, hRoot=kw.pop("hRoot", HROOT),
                       cmd=cmd, user=user, mode=kw.pop("mode", MODE_BOTH),
                       flags_sum=kw.pop("flags_sum", 1), **kw)


def addrs(res):
    return [(a.kind, a.addr) for a in res.accesses]


# ----------------------------------------------------------------------------- cold walks
def test_cold_4_over_4_exact_sequence():
    m, gva, groot = layout_x86_ept(4)
    # gva = 1<<39 | 2<<30 | 3<<21 | 4<<12 | 0x567 = 0x80_0000_0000 + 0x8000_0000 + 0x60_0000
    #       + 0x4000 + 0x567
    assert gva == 0x0000_0080_8060_4567
    res = walk(m, cfg(), req(gva))
    host = lambda n: [0x100000, 0x101000, 0x102008, 0x103000 + 8 * n]  # noqa: E731
    # guest entry k at GPA 0x20k000 + idx*8 -> HPA 0x50k000 + idx*8 (idx = k+1)
    exp = (host(0) + [0x500008] + host(1) + [0x501010] + host(2) + [0x502018]
           + host(3) + [0x503020] + host(4))
    assert [a for k, a in addrs(res)] == exp
    assert all(k == "read" for k, _ in addrs(res))
    r = res.resp
    # 4 guest levels x (4 host + 1) + 4 host reads for the data = 24
    assert r["memReads"] == 24 == cold_reads(4, 4) and r["memWrites"] == 0
    # data GPA 0x204567 -> host N = 4 -> HPA 0x504567
    assert (r["fault"], r["ppn"], r["pageSize"], r["guestPageSize"], r["hostPageSize"]) == \
        (0, 0x504, 0, 0, 0)
    assert (r["perm_r"], r["perm_w"], r["perm_x"], r["perm_u"]) == (1, 1, 1, 1)
    assert (r["faultLevel"], r["faultStage"], r["faultGpa"]) == (0, 0, 0)
    assert r["id"] == 3 and res.dirty == []


def test_cold_5_over_5_is_35():
    m, gva, _ = layout_x86_ept(5)
    res = walk(m, cfg("x86_64_5", "ept5"), req(gva))
    # (5+1)(5+1)-1 = 35; data GPA 0x205567 -> HPA 0x505567
    assert res.resp["memReads"] == 35 and res.resp["fault"] == 0 and res.resp["ppn"] == 0x505
    # the first host walk: root 0x100000 idx 0, 0x101000, 0x102000, L1 0x103008, L0 0x104000
    assert [a.addr for a in res.accesses[:6]] == [0x100000, 0x101000, 0x102000, 0x103008,
                                                 0x104000, 0x500008]


def layout_rv(glevels=3, host="sv39x4", host_l1_leaf=False, host_ad=A | D):
    """sv39/sv48 over sv39x4/sv48x4, same plan.  ``host_l1_leaf``: the host maps the whole
    0x200000 2 MiB GPA block with one level-1 leaf to HPA 0x600000 instead of 4 KiB pages."""
    hlevels = 3 if host == "sv39x4" else 4
    m = SparseMemory()
    for i in range(hlevels - 1):
        lvl = hlevels - 1 - i
        table = 0x100000 + i * 0x1000
        idx = 1 if lvl == 1 else 0
        if lvl == 1 and host_l1_leaf:
            m.write(table + idx * 8, rv(0x600000, V | R | W | X | U | host_ad))
            break
        m.write(table + idx * 8, rv(table + 0x1000, V))
    l0 = 0x100000 + (hlevels - 1) * 0x1000
    base = 0x600000 if host_l1_leaf else 0x500000
    if not host_l1_leaf:
        for n in range(8):
            m.write(l0 + n * 8, rv(0x500000 + n * 0x1000, V | R | W | X | U | host_ad))
    gva = 0
    for k in range(glevels):
        lvl = glevels - 1 - k
        idx = k + 1
        gva |= idx << (12 + 9 * lvl)
        nxt = 0x200000 + (k + 1) * 0x1000
        flags = V | R | W | X | A | D if lvl == 0 else V
        m.write(base + k * 0x1000 + idx * 8, rv(nxt, flags))
    return m, gva | 0x567


def test_cold_sv39_over_sv39x4_exact_sequence():
    m, gva = layout_rv(3, "sv39x4")
    # gva = 1<<30 | 2<<21 | 3<<12 | 0x567 = 0x4000_0000 + 0x40_0000 + 0x3000 + 0x567
    assert gva == 0x4040_3567
    res = walk(m, cfg("sv39", "sv39x4", pa=56), req(gva))
    host = lambda n: [0x100000, 0x101008, 0x102000 + 8 * n]  # noqa: E731
    exp = host(0) + [0x500008] + host(1) + [0x501010] + host(2) + [0x502018] + host(3)
    assert [a.addr for a in res.accesses] == exp
    # (3+1)(3+1)-1 = 15
    assert res.resp["memReads"] == 15 and res.resp["fault"] == 0
    # data GPA 0x203567 -> HPA 0x503567; RISC-V guest perm = the leaf's R W X, U = 0
    r = res.resp
    assert (r["ppn"], r["perm_r"], r["perm_w"], r["perm_x"], r["perm_u"]) == (0x503, 1, 1, 1, 0)


def test_cold_sv48_over_sv48x4_is_24():
    m, gva = layout_rv(4, "sv48x4")
    res = walk(m, cfg("sv48", "sv48x4", pa=56), req(gva))
    assert res.resp["memReads"] == 24 and res.resp["fault"] == 0 and res.resp["ppn"] == 0x504


def test_x4_hroot_low_bits_ignored():
    m, gva = layout_rv(3, "sv39x4")
    # hRoot 0x103 -> & ~3 = 0x100: the same walk
    res = walk(m, cfg("sv39", "sv39x4", pa=56), req(gva, hRoot=0x103))
    assert res.resp["fault"] == 0 and res.accesses[0].addr == 0x100000


def test_x4_root_index_uses_11_bits():
    # GPA 0x200000 + (0x400 << 30): sv39x4 root index = gpa[40:30] = 0x400 -> entry at
    # 0x100000 + 0x400*8 = 0x102000 (the second 4 KiB page of the 16 KiB root)
    m, gva = layout_rv(3, "sv39x4")
    m.write(0x100000 + 0x400 * 8, m.read(0x100000))
    # guest root at GPA 0x200000 | 0x400<<30: gRoot page number
    groot = (0x200000 | (0x400 << 30)) >> 12
    res = walk(m, cfg("sv39", "sv39x4", pa=56), req(gva, gRoot=groot))
    assert res.accesses[0].addr == 0x102000
    # the second host read uses the same level-1 table (0x101000, index 1)
    assert res.accesses[1].addr == 0x101008


# ----------------------------------------------------------------------------- early faults
def test_cmd3_and_noncanonical():
    m, gva, _ = layout_x86_ept(4)
    r = walk(m, cfg(), req(gva, cmd=3)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (4, 0, 0, 0, 0)
    r = walk(m, cfg(), req(1 << 47)).resp             # bit 47 set, 63..48 clear
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (5, 0, 3, 0, 0)
    r = walk(m, cfg("x86_64_5", "ept5"), req(1 << 56)).resp
    assert (r["fault"], r["faultLevel"]) == (5, 4)
    r = walk(m, cfg("sv39", "sv39x4", pa=56), req(1 << 38)).resp
    assert (r["fault"], r["faultLevel"]) == (5, 2)
    # a fault response carries no translation
    assert (r["ppn"], r["pageSize"], r["perm_r"], r["perm_u"]) == (0, 0, 0, 0)


# ----------------------------------------------------------------------------- guest faults
def test_guest_not_present_level2():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x501010, 0x202000 | RW | US)            # guest L2 entry with P = 0
    r = walk(m, cfg(), req(gva)).resp
    # L3: 4 host + 1 guest, L2: 4 host + 1 guest = 10 reads; faultGpa = GPA of the L2 entry
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (1, 0, 2, 0x201010, 10)


def test_guest_reserved_ps_at_root():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x500008, 0x201000 | P | RW | US | PS)
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (4, 0, 3, 0x200008, 5)


def test_guest_2m_leaf_reserved_low_bits():
    m, gva, _ = layout_x86_ept(4)
    # L1 entry (GPA 0x202018, HPA 0x502018) as a 2M leaf with bit 13 set
    m.write(0x502018, 0x400000 | (1 << 13) | P | RW | US | PS | XA | XD)
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultLevel"], r["faultGpa"], r["memReads"]) == (4, 1, 0x202018, 15)


def test_guest_permission_faults():
    m, gva, _ = layout_x86_ept(4)
    leaf = 0x204000 | P | US | XA | XD                 # W = 0
    m.write(0x503020, leaf)
    r = walk(m, cfg(), req(gva, cmd=1, flags_wp=1)).resp
    # checked at the leaf (level 0, GPA 0x203020) after 4 x 5 = 20 reads (CR0.WP = 1)
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (1, 0, 0, 0x203020, 20)
    # CR0.WP = 0: the supervisor writes a read-only page (docs/privcheck.md rule 11); a user not
    assert walk(m, cfg(), req(gva, cmd=1)).resp["fault"] == 0
    assert walk(m, cfg(), req(gva, cmd=1, user=1)).resp["fault"] == 1
    assert walk(m, cfg(), req(gva, cmd=0)).resp["fault"] == 0
    # U cleared in the L2 pointer: the AND over levels denies a user access (at the leaf)
    m2, gva, _ = layout_x86_ept(4)
    m2.write(0x501010, 0x202000 | P | RW)
    r = walk(m2, cfg(), req(gva, user=1)).resp
    assert (r["fault"], r["faultLevel"], r["faultGpa"]) == (1, 0, 0x203020)
    # a supervisor access to the same page is allowed; perm_u = 0 in the answer
    r = walk(m2, cfg(), req(gva, user=0)).resp
    assert r["fault"] == 0 and r["perm_u"] == 0 and r["perm_w"] == 1
    # NX in the root entry: execute denied, read allowed with perm_x 0
    m3, gva, _ = layout_x86_ept(4)
    m3.write(0x500008, 0x201000 | P | RW | US | NX)
    assert walk(m3, cfg(), req(gva, cmd=2, flags_nxe=1)).resp["fault"] == 1
    # without EFER.NXE, XD is no permission (rule 14)
    assert walk(m3, cfg(), req(gva, cmd=2)).resp["fault"] == 0
    r = walk(m3, cfg(), req(gva, cmd=0)).resp
    assert r["fault"] == 0 and r["perm_x"] == 0


def test_rv_guest_faults():
    c = cfg("sv39", "sv39x4", pa=56)
    # misaligned superpage: level 1 entry (GPA 0x201010 -> HPA 0x501010) as a leaf, PPN 0x401
    m, gva = layout_rv(3)
    m.write(0x501010, rv(0x401000, V | R | W | A | D))
    r = walk(m, c, req(gva)).resp
    # 2 x (3 host + 1 guest) = 8 reads
    assert (r["fault"], r["faultLevel"], r["faultGpa"], r["memReads"]) == (1, 1, 0x201010, 8)
    # non-leaf at level 0: fault 1 at level 0 after 12 reads
    m, gva = layout_rv(3)
    m.write(0x502018, rv(0x203000, V))
    r = walk(m, c, req(gva)).resp
    assert (r["fault"], r["faultLevel"], r["faultGpa"], r["memReads"]) == (1, 0, 0x202018, 12)
    # W without R: reserved (fault 4)
    m, gva = layout_rv(3)
    m.write(0x502018, rv(0x203000, V | W | X | A | D))
    assert walk(m, c, req(gva)).resp["fault"] == 4
    # pointer with U set: reserved
    m, gva = layout_rv(3)
    m.write(0x500008, rv(0x201000, V | U))
    r = walk(m, c, req(gva)).resp
    assert (r["fault"], r["faultLevel"]) == (4, 2)
    # bit 54 in the leaf
    m, gva = layout_rv(3)
    m.write(0x502018, rv(0x203000, V | R | A | D) | (1 << 54))
    assert walk(m, c, req(gva)).resp["fault"] == 4
    # invalid root entry
    m, gva = layout_rv(3)
    m.write(0x500008, 0)
    r = walk(m, c, req(gva)).resp
    assert (r["fault"], r["faultLevel"], r["faultGpa"], r["memReads"]) == (1, 2, 0x200008, 4)
    # execute-only guest leaf: read denied (no MXR), execute ok
    m, gva = layout_rv(3)
    m.write(0x502018, rv(0x203000, V | X | A | D))
    assert walk(m, c, req(gva, cmd=0)).resp["fault"] == 1
    r = walk(m, c, req(gva, cmd=2)).resp
    assert r["fault"] == 0 and (r["perm_r"], r["perm_w"], r["perm_x"]) == (0, 0, 1)


# ----------------------------------------------------------------------------- host faults
def test_host_not_present_for_guest_table():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x103008, 0)                    # host L0 entry N=1: GPA page 0x201 (guest L2 table)
    r = walk(m, cfg(), req(gva)).resp
    # 5 reads for L3, then 4 host reads for GPA 0x201010 -> fault 2 at host level 0
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (2, 1, 0, 0x201010, 9)


def test_host_reserved_nonleaf_bits():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x102008, 0x103000 | ER | EW | EX | (1 << 4))    # level-1 pointer, bit 4 (6:3)
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (4, 1, 1, 0x200008, 3)


def test_host_memtype_and_w_without_r_and_pa_bits():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x103020, 0x504000 | ER | EW | EX | (2 << 3) | EA | ED)   # data page, memtype 2
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (4, 1, 0, 0x204567, 24)
    m.write(0x103020, 0x504000 | EW | EX | WB | EA | ED)              # W without R
    assert walk(m, cfg(), req(gva)).resp["fault"] == 4
    # paBits 40: host leaf with PA bit 40 -> reserved
    m.write(0x103020, 0x504000 | (1 << 40) | ER | EW | EX | WB | EA | ED)
    assert walk(m, cfg(pa=40), req(gva)).resp["fault"] == 4
    assert walk(m, cfg(pa=52), req(gva)).resp["fault"] == 0


def test_host_permissions():
    m, gva, _ = layout_x86_ept(4)
    # data page read + execute only
    m.write(0x103020, 0x504000 | ER | EX | WB | EA | ED)
    r = walk(m, cfg(), req(gva, cmd=1)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"]) == (2, 1, 0, 0x204567)
    r = walk(m, cfg(), req(gva, cmd=0)).resp
    assert r["fault"] == 0 and (r["perm_r"], r["perm_w"], r["perm_x"], r["perm_u"]) == (1, 0, 1, 1)
    # execute-only EPT page: allowed; perm_r = guest 1 AND host 0 = 0
    m.write(0x103020, 0x504000 | EX | WB | EA | ED)
    r = walk(m, cfg(), req(gva, cmd=2)).resp
    assert r["fault"] == 0 and (r["perm_r"], r["perm_x"]) == (0, 1)
    assert walk(m, cfg(), req(gva, cmd=0)).resp["fault"] == 2
    # W cleared in the host level-2 pointer: ANDed into every host translation
    m2, gva, _ = layout_x86_ept(4)
    m2.write(0x101000, 0x102000 | ER | EX)
    # hardware A/D: a guest page-table access is a write -> fault 2 on the first one, at
    # the host leaf (level 0), after 4 reads
    r = walk(m2, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (2, 1, 0, 0x200008, 4)
    # adUpdate = fault: page-table accesses are reads -> the read succeeds, perm_w = 0
    r = walk(m2, cfg(ad="fault"), req(gva)).resp
    assert r["fault"] == 0 and r["perm_w"] == 0


def test_rv_host_user_bit_and_nonleaf0():
    c = cfg("sv39", "sv39x4", pa=56)
    m, gva = layout_rv(3)
    m.write(0x102018, rv(0x503000, V | R | W | X | A | D))   # data host leaf with U = 0
    r = walk(m, c, req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"]) == (2, 1, 0, 0x203567)
    m, gva = layout_rv(3)
    m.write(0x102000, rv(0x500000, V))                        # pointer at host level 0
    r = walk(m, c, req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (2, 1, 0, 0x200008, 3)


def test_gpa_out_of_range():
    m, gva, _ = layout_x86_ept(4)
    # guest leaf to GPA 0x1_0000_0020_4000 (bit 48): final GPA >= 2^48
    m.write(0x503020, (1 << 48) | 0x204000 | P | RW | US | XA | XD)
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (5, 1, 3, (1 << 48) | 0x204567, 20)
    # the same GPA is fine for ept5 (57 bits) as far as the range goes: host walk then reads
    # host root index gpa[56:48] = 1 -> entry 0x100008, which is empty -> fault 2
    m5, gva5, _ = layout_x86_ept(5)
    m5.write(0x504028, (1 << 48) | 0x205000 | P | RW | US | XA | XD)
    r = walk(m5, cfg("x86_64_5", "ept5"), req(gva5)).resp
    assert (r["fault"], r["faultLevel"], r["faultGpa"]) == (2, 4, (1 << 48) | 0x205567)
    # a guest pointer out of range: the next entry's GPA is out of range
    m, gva, _ = layout_x86_ept(4)
    m.write(0x501010, (1 << 48) | 0x202000 | P | RW | US)
    r = walk(m, cfg(), req(gva)).resp
    # next GPA = 2^48 + 0x202000 + 3*8; reads: 2 x 5 = 10
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (5, 1, 3, (1 << 48) | 0x202018, 10)


# ----------------------------------------------------------------------------- huge pages
def test_splintered_and_aligned():
    # guest 2M leaf at L1 (GPA 0x202018 entry -> HPA 0x502018) mapping GPA 0x200000.
    # gva offset inside the 2M page = gva[20:0] = 4<<12 | 0x567 = 0x4567 -> GPA 0x204567
    m, gva, _ = layout_x86_ept(4)
    m.write(0x502018, 0x200000 | P | RW | US | PS | XA | XD)
    r = walk(m, cfg(), req(gva)).resp
    # host maps it by 4K (N=4 -> HPA 0x504567): splintered, pageSize = min(1, 0) = 0
    # reads: 3 guest levels x 5 + 4 = 19
    assert (r["fault"], r["ppn"], r["guestPageSize"], r["hostPageSize"], r["pageSize"],
            r["memReads"]) == (0, 0x504, 1, 0, 0, 19)
    res = walk(m, cfg(), req(gva))
    assert res.huge_guest and res.splintered and not res.huge_aligned
    # host L1 entry (0x102008) as a 2M leaf to HPA 0x800000: aligned, pageSize 1; every host
    # walk is now 3 reads and the guest tables sit at 0x800000 + k*0x1000
    m2, gva, _ = layout_x86_ept(4)
    m2.write(0x102008, 0x800000 | ER | EW | EX | WB | PS | EA | ED)
    for k, idx in ((0, 1), (1, 2), (2, 3)):
        m2.write(0x800000 + k * 0x1000 + idx * 8, m2.read(0x500000 + k * 0x1000 + idx * 8))
    m2.write(0x802018, 0x200000 | P | RW | US | PS | XA | XD)
    res = walk(m2, cfg(), req(gva))
    r = res.resp
    # reads: 3 x (3 + 1) + 3 = 15; HPA 0x800000 + 0x4567
    assert (r["fault"], r["ppn"], r["guestPageSize"], r["hostPageSize"], r["pageSize"],
            r["memReads"]) == (0, 0x804, 1, 1, 1, 15)
    assert res.huge_aligned and not res.splintered


def test_rv_host_512g_page_size_3():
    # sv48x4 root (level 3) leaf maps 512 GiB: GPA 0x203567 -> HPA 0 + 0x203567
    m, gva = layout_rv(4, "sv48x4")
    m.write(0x100000, rv(0, V | R | W | X | U | A | D))
    for k, idx in ((0, 1), (1, 2), (2, 3), (3, 4)):
        m.write(0x200000 + k * 0x1000 + idx * 8, m.read(0x500000 + k * 0x1000 + idx * 8))
    r = walk(m, cfg("sv48", "sv48x4", pa=56), req(gva)).resp
    # 4 guest levels x (1 + 1) + 1 = 9 reads; data GPA 0x204567 -> ppn 0x204
    assert (r["fault"], r["hostPageSize"], r["pageSize"], r["ppn"], r["memReads"]) == \
        (0, 3, 0, 0x204, 9)


# ----------------------------------------------------------------------------- A/D
def test_guest_leaf_a_update_hardware():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x503020, 0x204000 | P | RW | US)        # A = D = 0
    res = walk(m, cfg(), req(gva, cmd=0))
    acc = res.accesses
    # read #20 is the leaf (0x503020), then the locked read of it and the write of byte 0
    assert [(a.kind, a.addr) for a in acc[19:22]] == [("read", 0x503020),
                                                      ("locked_read", 0x503020),
                                                      ("write", 0x503020)]
    w = acc[21]
    assert (w.wdata, w.wmask) == (0x204000 | P | RW | US | XA, 0x01)   # A only (a read)
    assert res.resp["memReads"] == 25 and res.resp["memWrites"] == 1
    assert m.read(0x503020) == 0x204027 and res.dirty == []          # guest: no dirty event
    # a write access: D too
    res = walk(m, cfg(), req(gva, cmd=1))
    w = res.writes[0]
    assert (w.addr, w.wdata, w.wmask) == (0x503020, 0x204067, 0x01)
    # now nothing to do
    res = walk(m, cfg(), req(gva, cmd=1))
    assert res.resp["memWrites"] == 0 and res.resp["memReads"] == 24


def test_host_leaf_d_update_and_dirty_event():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x103020, 0x504000 | ER | EW | EX | WB | EA)        # data host leaf, D = 0
    res = walk(m, cfg(), req(gva, cmd=1, vmid=5, asid=7))
    acc = res.accesses
    # the data host walk ends at read #24 (0x103020); then locked read + write of byte 1
    assert [(a.kind, a.addr) for a in acc[23:]] == [("read", 0x103020),
                                                    ("locked_read", 0x103020),
                                                    ("write", 0x103020)]
    assert (acc[25].wdata, acc[25].wmask) == (0x504000 | 0x337, 0x02)
    # one dirty event: GPA page 0x204, gva page 0x80806 04 (gva >> 12), not a page table
    assert [d.fields() for d in res.dirty] == [dict(gpa=0x204, gva=0x8080604, vmid=5, asid=7,
                                                    pageTable=0)]
    # exactly once: the D bit is now set
    res2 = walk(m, cfg(), req(gva, cmd=1))
    assert res2.dirty == [] and res2.resp["memWrites"] == 0
    # a read of a page with A clear sets A only and sends no event
    m.write(0x103020, 0x504000 | ER | EW | EX | WB)
    res3 = walk(m, cfg(), req(gva, cmd=0))
    assert res3.writes[0].wdata == 0x504000 | 0x137 and res3.dirty == []


def test_host_pt_page_is_a_write_in_hardware_mode():
    m, gva, _ = layout_x86_ept(4)
    m.write(0x103008, 0x501000 | ER | EW | EX | WB)    # host leaf of the guest L2 table: A=D=0
    res = walk(m, cfg(), req(gva, cmd=0, vmid=2, asid=9))
    # guest L2 entry GPA 0x201010: host read #9 is 0x103008, then locked read + A|D write
    assert [(a.kind, a.addr) for a in res.accesses[8:11]] == [
        ("read", 0x103008), ("locked_read", 0x103008), ("write", 0x103008)]
    assert res.accesses[10].wdata == 0x501000 | 0x337
    assert [d.fields() for d in res.dirty] == [dict(gpa=0x201, gva=0x8080604, vmid=2, asid=9,
                                                    pageTable=1)]
    assert res.resp["fault"] == 0 and res.resp["memReads"] == 25


def test_one_host_leaf_for_all_guest_tables_dirty_once():
    # sv39 over sv39x4, host level-1 leaf (2M) with D = 0 maps every guest table and the data
    m, gva = layout_rv(3, "sv39x4", host_l1_leaf=True, host_ad=A)
    res = walk(m, cfg("sv39", "sv39x4", pa=56), req(gva))
    # host walks: 2 reads (root 0x100000, L1 leaf 0x101008); first PT access adds a locked
    # read + write (D); later ones see D set. reads = 3 x (2 + 1) + 2 + 1 locked = 12
    assert res.resp["memReads"] == 12 and res.resp["memWrites"] == 1
    assert len(res.dirty) == 1 and res.dirty[0].gpa == 0x200 and res.dirty[0].pageTable == 1
    assert (res.resp["ppn"], res.resp["hostPageSize"], res.resp["pageSize"]) == (0x603, 1, 0)
    # the write hit byte 0 and set D (bit 7): 0x5F | 0x80
    assert res.writes[0].wmask == 0x01 and res.writes[0].wdata & 0xFF == 0xDF


def test_locked_reread_decides_the_write():
    # between the first read and the locked read another agent set A: no write
    m, gva, _ = layout_x86_ept(4)
    m.write(0x503020, 0x204000 | P | RW | US)

    class Racy(SparseMemory):
        def read(self, addr):
            v = super().read(addr)
            if addr == 0x503020:
                self.words[addr] = v | XA           # set A right after the first read
            return v
    rm = Racy(m.words)
    res = walk(rm, cfg(), req(gva, cmd=0))
    kinds = [a.kind for a in res.accesses]
    assert kinds.count("locked_read") == 1 and kinds.count("write") == 0
    assert res.resp["memReads"] == 25 and res.resp["fault"] == 0


def test_ad_fault_mode():
    c = cfg(ad="fault")
    m, gva, _ = layout_x86_ept(4)
    m.write(0x503020, 0x204000 | P | RW | US | XA)              # guest leaf D = 0
    assert walk(m, c, req(gva, cmd=0)).resp["fault"] == 0
    r = walk(m, c, req(gva, cmd=1)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memWrites"]) == \
        (1, 0, 0, 0x203020, 0)
    # host leaf of a guest table with A clear: fault 2; with only D clear: fine (a read)
    m, gva, _ = layout_x86_ept(4)
    m.write(0x103000, 0x500000 | ER | EW | EX | WB)
    r = walk(m, c, req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (2, 1, 0, 0x200008, 4)
    m.write(0x103000, 0x500000 | ER | EW | EX | WB | EA)
    assert walk(m, c, req(gva)).resp["fault"] == 0
    # the permission check comes first: a denied write to a clean page is a permission fault
    m.write(0x503020, 0x204000 | P | US)
    r = walk(m, c, req(gva, cmd=1)).resp
    assert r["fault"] == 1


# ----------------------------------------------------------------------------- bus errors
def test_bus_errors_each_kind():
    m, gva, _ = layout_x86_ept(4)
    m.errors = {0x501010}                     # the guest L2 entry read (read #10)
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (3, 0, 2, 0x201010, 10)
    m.errors = {0x102008}                     # host level 1, first walk (read #3)
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (3, 1, 1, 0x200008, 3)
    # locked read of the guest leaf (A clear)
    m, gva, _ = layout_x86_ept(4)
    m.write(0x503020, 0x204000 | P | RW | US)
    m.errors = {(0x503020, "locked_read")}
    r = walk(m, cfg(), req(gva)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"],
            r["memWrites"]) == (3, 0, 0, 0x203020, 21, 0)
    # the write of a host leaf: counted, memory unchanged, no dirty event
    m, gva, _ = layout_x86_ept(4)
    m.write(0x103020, 0x504000 | ER | EW | EX | WB)
    m.errors = {(0x103020, "write")}
    res = walk(m, cfg(), req(gva, cmd=1))
    r = res.resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"],
            r["memWrites"]) == (3, 1, 0, 0x204567, 25, 1)
    assert m.read(0x103020) == 0x504000 | ER | EW | EX | WB and res.dirty == []


def test_fail_predicate_by_index():
    m, gva, _ = layout_x86_ept(4)
    # access #0 (the first host read of the first walk): stage 1, level 3
    r = walk(m, cfg(), req(gva), fail=lambda i, a: i == 0).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (3, 1, 3, 0x200008, 1)
    # the last (#23): host level 0 of the data GPA
    r = walk(m, cfg(), req(gva), fail=lambda i, a: i == 23).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"]) == (3, 1, 0, 0x204567)


# ----------------------------------------------------------------------------- bounds
@pytest.mark.parametrize("g,h,exp", [(4, 4, 24), (5, 5, 35), (3, 3, 15), (4, 3, 19), (3, 5, 23)])
def test_bound_formula(g, h, exp):
    # (g+1)(h+1)-1 plain, + g+1 + 1 locked; writes g+2
    assert cold_reads(g, h) == exp
    assert max_reads(g, h) == exp + g + 2 and max_writes(g, h) == g + 2


def test_worst_case_reaches_the_bound():
    # every leaf clean, a write: 24 plain + 4 host-leaf PT pages + 1 data host leaf + 1 guest
    # leaf locked reads = 30 = max_reads(4, 4); 6 writes = max_writes(4, 4)
    m, gva, _ = layout_x86_ept(4)
    for n in range(5):
        m.write(0x103000 + 8 * n, (0x500000 + n * 0x1000) | ER | EW | EX | WB)
    m.write(0x503020, 0x204000 | P | RW | US)
    res = walk(m, cfg(), req(gva, cmd=1))
    assert res.resp["memReads"] == 30 == max_reads(4, 4)
    assert res.resp["memWrites"] == 6 == max_writes(4, 4)
    # dirty events: 4 page-table pages + the data page
    assert [(d.gpa, d.pageTable) for d in res.dirty] == [(0x200, 1), (0x201, 1), (0x202, 1),
                                                        (0x203, 1), (0x204, 0)]


def test_memory_view_snapshot():
    m = SparseMemory({0x10: 1})
    m.journal = True
    seq = m.seq
    m.write(0x10, 2)
    m.write(0x18, 5)
    v = m.view_at(seq)
    assert v.read(0x10) == 1 and v.read(0x18) == 0 and m.read(0x10) == 2
    v.write(0x10, 0xAB00, 0x02)            # byte 1 only
    assert v.read(0x10) == 0xAB01 and m.read(0x10) == 2


# ----------------------------------------------------------------------------- modes
# (docs/nested-walker.md, "Modes": 1 stage 1 only, 2 stage 2 only; 0 bare is bad input)
GUEST_PAIRS = [("x86_64_4", "ept4"), ("x86_64_5", "ept5"), ("sv39", "sv39x4"), ("sv48", "sv48x4")]
HOST_LAYOUTS = {"ept4": lambda: layout_x86_ept(4)[0], "ept5": lambda: layout_x86_ept(5)[0],
                "sv39x4": lambda: layout_rv(3, "sv39x4")[0],
                "sv48x4": lambda: layout_rv(4, "sv48x4")[0]}


def layout_s1(gname, leaf_level=0, leaf_ad=True):
    """A stage-1-only chain in host-physical memory: table k (from the root) at HPA
    0x300000 + k*0x1000, index k+1 at each level, the leaf at ``leaf_level`` mapping HPA
    0x40000000 (aligned to every page size used). Returns (mem, gva, gRoot, entry addresses)."""
    F = fmt(gname)
    m = SparseMemory()
    gva, addrs_ = 0, []
    for k, lvl in enumerate(range(F.root_level, leaf_level - 1, -1)):
        gva |= (k + 1) << (12 + 9 * lvl)
        a = 0x300000 + k * 0x1000 + (k + 1) * 8
        addrs_.append(a)
        if lvl == leaf_level:
            m.write(a, F.encode_leaf(0x40000000, lvl, a=int(leaf_ad), d=int(leaf_ad)))
        else:
            m.write(a, F.encode_table(0x300000 + (k + 1) * 0x1000))
    return m, gva | 0x567, 0x300, addrs_


@pytest.mark.parametrize("g,h", GUEST_PAIRS)
def test_s1_cold_reads_are_the_guest_levels(g, h):
    m, gva, groot, chain = layout_s1(g)
    res = walk(m, cfg(g, h), req(gva, gRoot=groot, mode=MODE_S1))
    r = res.resp
    # no host walk: the guest entries are read at their (host-physical) addresses
    assert [a.addr for a in res.accesses] == chain
    assert r["memReads"] == fmt(g).levels == cold_reads(fmt(g).levels, fmt(h).levels, MODE_S1)
    assert (r["fault"], r["ppn"], r["memWrites"]) == (0, 0x40000, 0)
    # a single-stage walk: the absent stage maps the page whole
    assert (r["pageSize"], r["guestPageSize"], r["hostPageSize"]) == (0, 0, 0)
    assert all(a.stage == 0 for a in res.accesses) and res.dirty == []


@pytest.mark.parametrize("h", ["ept4", "ept5", "sv39x4", "sv48x4"])
def test_s2_cold_reads_are_the_host_levels(h):
    m = HOST_LAYOUTS[h]()
    g = "sv39" if h.startswith("sv") else ("x86_64_5" if h == "ept5" else "x86_64_4")
    # GPA 0x203567: host level-0 entry 3 -> HPA page 0x503 (the layouts' plan)
    res = walk(m, cfg(g, h), req(0x203567, mode=MODE_S2))
    r = res.resp
    H = fmt(h)
    assert r["memReads"] == H.levels == cold_reads(fmt(g).levels, H.levels, MODE_S2)
    assert [a.addr for a in res.accesses][-1] == 0x100000 + (H.levels - 1) * 0x1000 + 3 * 8
    assert (r["fault"], r["ppn"], r["pageSize"], r["guestPageSize"], r["hostPageSize"]) == \
        (0, 0x503, 0, 0, 0)
    assert (r["perm_r"], r["perm_w"], r["perm_x"], r["perm_u"]) == (1, 1, 1, 1)
    assert all(a.stage == 1 and a.role == "host_data" for a in res.accesses)


def test_s1_superpage_offset_and_sizes():
    m, gva, groot, chain = layout_s1("x86_64_4", leaf_level=1)
    res = walk(m, cfg(), req(gva, gRoot=groot, mode=MODE_S1))
    r = res.resp
    off = gva & (page_bytes(1) - 1)
    assert r["ppn"] == (0x40000000 + off) >> 12 and r["memReads"] == len(chain) == 3
    assert (r["pageSize"], r["guestPageSize"], r["hostPageSize"]) == (1, 1, 1)


def test_s1_faults_are_guest_faults():
    m, gva, groot, chain = layout_s1("sv39")
    m.write(chain[1], 0)                                   # level-1 entry not valid
    r = walk(m, cfg("sv39", "sv39x4"), req(gva, gRoot=groot, mode=MODE_S1)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (1, 0, 1, chain[1], 2)


def test_s1_address_beyond_pabits_is_fault_5_of_the_guest_access():
    F = fmt("sv39")
    m, gva, groot, chain = layout_s1("sv39")
    far = 1 << 40                                          # paBits 40: the next table is out
    m.write(chain[0], F.encode_table(far))
    r = walk(m, cfg("sv39", "sv39x4", pa=40), req(gva, gRoot=groot, mode=MODE_S1)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (5, 0, 1, far + 2 * 8, 1)
    # the same from the leaf: the final address
    m, gva, groot, chain = layout_s1("sv39")
    m.write(chain[-1], F.encode_leaf(far, 0))
    r = walk(m, cfg("sv39", "sv39x4", pa=40), req(gva, gRoot=groot, mode=MODE_S1)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"]) == \
        (5, 0, 0, far + (gva & 0xFFF))


def test_s1_guest_ad_update_without_dirty_event():
    m, gva, groot, chain = layout_s1("x86_64_4", leaf_ad=False)
    res = walk(m, cfg(), req(gva, gRoot=groot, cmd=1, mode=MODE_S1))
    F = fmt("x86_64_4")
    assert [a.kind for a in res.accesses] == ["read"] * 4 + ["locked_read", "write"]
    assert res.accesses[-1].addr == chain[-1] and res.accesses[-1].set_bits == F.a_mask | F.d_mask
    assert res.dirty == [] and res.resp["fault"] == 0
    # adUpdate = fault: a guest fault at the leaf
    m, gva, groot, chain = layout_s1("x86_64_4", leaf_ad=False)
    r = walk(m, cfg(ad="fault"), req(gva, gRoot=groot, mode=MODE_S1)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"]) == (1, 0, 0)


def test_s2_host_faults_and_range():
    m, _, _ = layout_x86_ept(4)
    m.write(0x103000 + 3 * 8, 0)                           # GPA page 0x203 not mapped
    r = walk(m, cfg(), req(0x203567, mode=MODE_S2)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (2, 1, 0, 0x203567, 4)
    gpa = 1 << 48                                          # beyond ept4's 48 GPA bits
    r = walk(m, cfg(), req(gpa | 0x123, mode=MODE_S2)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (5, 1, 3, gpa | 0x123, 0)
    # a top bit far above the target width is reported whole
    r = walk(m, cfg(), req(1 << 63, mode=MODE_S2)).resp
    assert (r["fault"], r["faultGpa"]) == (5, 1 << 63)


def test_s2_dirty_event_is_a_data_page():
    m, _, _ = layout_x86_ept(4)
    m.write(0x103000 + 2 * 8, 0x502000 | ER | EW | EX | WB | EA)   # D clear
    res = walk(m, cfg(), req(0x202abc, cmd=1, mode=MODE_S2, vmid=5, asid=7))
    assert [(d.gpa, d.gva, d.vmid, d.asid, d.pageTable) for d in res.dirty] == \
        [(0x202, 0x202, 5, 7, 0)]
    assert res.resp["memWrites"] == 1 and res.resp["ppn"] == 0x502


@pytest.mark.parametrize("cmd", [0, 3])
def test_bare_mode_is_bad_input(cmd):
    m, gva, _ = layout_x86_ept(4)
    r = walk(m, cfg(), req(gva, cmd=cmd, mode=MODE_BARE)).resp
    assert (r["fault"], r["faultStage"], r["faultLevel"], r["faultGpa"], r["memReads"]) == \
        (4, 0, 0, 0, 0)
