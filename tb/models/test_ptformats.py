"""Unit tests of models/ptformats.py: every expectation is derived by hand from the rules of
docs/nested-walker.md ("Formats", "Reserved", "Other per-format rules"); the arithmetic is in
the comments.  Pure Python, no simulator."""

import pytest

from models.ptformats import FORMATS, GUEST_FORMATS, HOST_FORMATS, fmt, gpa_bits, perm_denies


# ----------------------------------------------------------------------------- geometry
def test_levels_input_bits_root_bits():
    # doc table: levels / input bits; x4 roots have 11 index bits
    exp = {"x86_64_4": (4, 48, 9), "x86_64_5": (5, 57, 9), "ept4": (4, 48, 9),
           "ept5": (5, 57, 9), "sv39": (3, 39, 9), "sv48": (4, 48, 9), "sv39x4": (3, 41, 11),
           "sv48x4": (4, 50, 11)}
    assert set(FORMATS) == set(exp)
    for name, (levels, inb, rootb) in exp.items():
        F = fmt(name)
        assert (F.levels, F.input_bits, F.root_bits) == (levels, inb, rootb), name
        # 12 offset bits + 9 per non-root level + root bits = input bits
        assert 12 + 9 * (levels - 1) + rootb == inb, name
    assert [gpa_bits(h) for h in HOST_FORMATS] == [48, 57, 41, 50]


def test_index_x86_64_4():
    # gva built from indices L3=0x1A5, L2=0x0F3, L1=0x111, L0=0x1FF, offset 0xABC
    gva = (0x1A5 << 39) | (0x0F3 << 30) | (0x111 << 21) | (0x1FF << 12) | 0xABC
    F = fmt("x86_64_4")
    assert [F.index(gva, lvl) for lvl in (3, 2, 1, 0)] == [0x1A5, 0x0F3, 0x111, 0x1FF]
    # entry address = table * 4096 + index * 8: 0x1234000 + 0x1A5 * 8 = 0x1234000 + 0xD28
    assert F.entry_addr(0x1234, gva, 3) == 0x1234D28
    # level 0: 0x1234000 + 0x1FF * 8 = 0x1234000 + 0xFF8
    assert F.entry_addr(0x1234, gva, 0) == 0x1234FF8


def test_index_x86_64_5_top_level():
    # level 4 index = gva[56:48]; bit 56 is part of it (and the sign bit)
    gva = (0x1FF << 48) | (0x3 << 39)
    F = fmt("x86_64_5")
    assert F.index(gva, 4) == 0x1FF and F.index(gva, 3) == 3


def test_index_x4_root_11_bits():
    F = fmt("sv39x4")
    # root (level 2) index = gpa[40:30] (11 bits): 0x7FF; address = root + 0x7FF * 8 = +0x3FF8
    gpa = (0x7FF << 30) | (0x5 << 21) | 0x123
    assert F.index(gpa, 2) == 0x7FF and F.index(gpa, 1) == 5 and F.index(gpa, 0) == 0
    assert F.entry_addr(0x100, gpa, 2) == 0x100000 + 0x3FF8
    G = fmt("sv48x4")
    # root (level 3) index = gpa[49:39]
    gpa = (0x400 << 39) | (0x1FF << 30)
    assert G.index(gpa, 3) == 0x400 and G.index(gpa, 2) == 0x1FF
    # the non-x4 sv48 root keeps 9 bits: gpa[47:39] of the same value = 0x400 & 0x1FF = 0
    assert fmt("sv48").index(gpa, 3) == 0


# ----------------------------------------------------------------------------- address check
@pytest.mark.parametrize("name,ok,bad", [
    # x86_64_4: bits 63..47 equal
    ("x86_64_4", [0, (1 << 47) - 1, 0xFFFF_8000_0000_0000, 0xFFFF_FFFF_FFFF_F000],
     [1 << 47, 1 << 48, 0x8000_0000_0000_0000, 0xFFFF_7FFF_FFFF_FFFF]),
    # x86_64_5: bits 63..56 equal
    ("x86_64_5", [(1 << 56) - 1, 0xFF00_0000_0000_0000],
     [1 << 56, 0xFE00_0000_0000_0000]),
    # sv39: bits 63..38 equal
    ("sv39", [(1 << 38) - 1, 0xFFFF_FFC0_0000_0000], [1 << 38, 1 << 39, 0xFFFF_FF80_0000_0000]),
    # sv48: bits 63..47 equal
    ("sv48", [(1 << 47) - 1, 0xFFFF_8000_0000_0000], [1 << 47]),
    # hosts: GPA < 2^input bits
    ("ept4", [(1 << 48) - 1], [1 << 48]),
    ("ept5", [(1 << 57) - 1], [1 << 57]),
    ("sv39x4", [(1 << 41) - 1], [1 << 41]),
    ("sv48x4", [(1 << 50) - 1], [1 << 50]),
])
def test_address_check(name, ok, bad):
    F = fmt(name)
    for a in ok:
        assert F.address_ok(a), (name, hex(a))
    for a in bad:
        assert not F.address_ok(a), (name, hex(a))


# ----------------------------------------------------------------------------- valid / leaf
def test_valid_rules():
    x, e, r = fmt("x86_64_4"), fmt("ept4"), fmt("sv39")
    assert x.valid(1) and not x.valid(0xFFE)               # P = bit 0
    assert e.valid(1) and e.valid(2) and e.valid(4)        # R or W or X (W-only: valid, rsvd)
    assert not e.valid(0xFFFF_FFFF_FFF8)                   # bits 2:0 clear
    assert r.valid(1) and not r.valid(0xFE)                # V = bit 0


def test_leaf_rules():
    x, e, r = fmt("x86_64_4"), fmt("ept4"), fmt("sv48x4")
    ps = 1 << 7
    assert x.is_leaf(1, 0) and x.is_leaf(1 | ps, 1) and x.is_leaf(1 | ps, 2)
    assert not x.is_leaf(1, 1) and not x.is_leaf(1, 2)
    assert e.is_leaf(7, 0) and e.is_leaf(7 | ps, 2) and not e.is_leaf(7, 1)
    # RISC-V: leaf when R (bit 1) or X (bit 3), at any level
    assert r.is_leaf(0b11, 3) and r.is_leaf(0b1001, 0) and not r.is_leaf(0b1, 2)
    assert r.nonleaf_at_level0(0b1, 0) and not r.nonleaf_at_level0(0b1, 1)
    assert not x.nonleaf_at_level0(1, 0)                   # x86 level 0 is always a leaf


def test_ppn_extraction():
    x, r = fmt("x86_64_4"), fmt("sv39")
    # x86/EPT: address bits 51:12 of the entry; bits 63 (NX), 62:52, 11:0 are not address
    assert x.addr_of(0xFFF0_0123_4567_8FFF) == 0x0000_0123_4567_8000
    # RISC-V: PPN = bits 53:10; (0xABCDE << 10) | 0xCF -> address 0xABCDE << 12
    assert r.addr_of((0xABCDE << 10) | 0xCF) == 0xABCDE000
    # 44-bit PPN: all ones -> 56-bit address 0xFF_FFFF_FFFF_F000
    assert r.addr_of(((1 << 44) - 1) << 10) == (1 << 56) - 4096
    # x86 2M leaf with PAT (bit 12) set: base keeps bits 51:21 -> 0x40000000 + 0x200000
    assert x.leaf_base(0x4020_1000 | 0x81, 1) == 0x4020_0000


def test_misaligned_superpage_rv():
    r = fmt("sv39")
    # level 1 leaf: PPN low 9 bits must be 0.  PPN 0x200 (= 2M aligned) ok, 0x201 not
    assert not r.misaligned((0x200 << 10) | 0xF, 1)
    assert r.misaligned((0x201 << 10) | 0xF, 1)
    # level 2: low 18 bits; PPN 0x40000 ok, 0x40200 (bit 9 set) not
    assert not r.misaligned((0x40000 << 10) | 0xF, 2)
    assert r.misaligned((0x40200 << 10) | 0xF, 2)
    assert not r.misaligned((0x201 << 10) | 0xF, 0)


# ----------------------------------------------------------------------------- reserved
def test_reserved_x86():
    x, x5 = fmt("x86_64_4"), fmt("x86_64_5")
    ps = 1 << 7
    assert x.reserved(1 | ps, 3, 52) == "ps_at_level>=3"
    assert x5.reserved(1 | ps, 4, 40) == "ps_at_level>=3"
    assert x.reserved(1 | ps, 2, 52) is None                      # a 1G leaf
    # 2M leaf: bits 20:13 reserved, bit 12 (PAT) is not
    assert x.reserved(1 | ps | (1 << 12), 1, 52) is None
    assert x.reserved(1 | ps | (1 << 13), 1, 52) == "large_leaf_low_bits"
    assert x.reserved(1 | ps | (1 << 20), 1, 52) == "large_leaf_low_bits"
    assert x.reserved(1 | ps | (1 << 21), 1, 52) is None
    # 1G leaf: bits 29:13
    assert x.reserved(1 | ps | (1 << 29), 2, 52) == "large_leaf_low_bits"
    assert x.reserved(1 | ps | (1 << 30), 2, 52) is None
    # guest: PPN bits >= paBits are NOT reserved (out-of-range GPA is fault 5 later)
    assert x.reserved(1 | (1 << 51), 0, 32) is None
    # bits 62:52 ignored, 63 is NX
    assert x.reserved(1 | (0x7FF << 52) | (1 << 63), 0, 52) is None


def test_reserved_ept():
    e = fmt("ept4")
    wb = 6 << 3
    assert e.reserved(0b010 | wb, 0, 52) == "w_without_r"          # W only
    assert e.reserved(0b110 | wb, 0, 52) == "w_without_r"          # W + X
    assert e.reserved(0b100 | wb, 0, 52) is None                   # X only: allowed
    # non-leaf level >= 3: bits 7:3 reserved
    assert e.reserved(0b111 | (1 << 3), 3, 52) == "nonleaf_bits_7_3"
    assert e.reserved(0b111 | (1 << 7), 3, 52) == "ps_at_level>=3"
    assert e.reserved(0b111 | (1 << 8), 3, 52) is None              # A bit of a pointer
    # levels 1, 2 with PS clear: bits 6:3
    assert e.reserved(0b111 | (1 << 6), 2, 52) == "nonleaf_bits_6_3"
    assert e.reserved(0b111 | (1 << 6), 1, 52) == "nonleaf_bits_6_3"
    # leaf memory type 2, 3, 7 reserved (0, 1, 4, 5, 6 fine)
    for mt in range(8):
        r = e.reserved(0b111 | (mt << 3), 0, 52)
        assert (r == "memtype") == (mt in (2, 3, 7)), mt
    # 2M leaf: bits 20:12; 1G leaf: 29:12 (bit 12 IS reserved for EPT)
    ps = 1 << 7
    assert e.reserved(0b111 | wb | ps | (1 << 12), 1, 52) == "large_leaf_low_bits"
    assert e.reserved(0b111 | wb | ps | (1 << 21), 1, 52) is None
    assert e.reserved(0b111 | wb | ps | (1 << 29), 2, 52) == "large_leaf_low_bits"
    # PPN bits >= paBits: paBits 40 -> bit 40 set reserved, bit 39 fine
    assert e.reserved(0b111 | wb | (1 << 40), 0, 40) == "ppn>=paBits"
    assert e.reserved(0b111 | wb | (1 << 39), 0, 40) is None
    assert e.reserved(0b111 | (1 << 45), 2, 40) == "ppn>=paBits"      # pointer too


def test_reserved_rv():
    r, h = fmt("sv39"), fmt("sv39x4")
    leaf = 0b1111 | (1 << 4) | (3 << 6)       # V R W X U A D
    assert r.reserved(leaf, 0, 56) is None
    assert r.reserved(leaf | (1 << 54), 0, 56) == "bits_63_54"
    assert r.reserved(leaf | (1 << 63), 0, 56) == "bits_63_54"
    assert r.reserved(0b0101, 0, 56) == "w_without_r"         # V W
    assert r.reserved(0b1101, 0, 56) == "w_without_r"         # V W X
    # pointer (R = X = 0) with A, D or U set
    assert r.reserved(0b1 | (1 << 6), 2, 56) == "nonleaf_a_d_u"
    assert r.reserved(0b1 | (1 << 7), 2, 56) == "nonleaf_a_d_u"
    assert r.reserved(0b1 | (1 << 4), 1, 56) == "nonleaf_a_d_u"
    assert r.reserved(0b1 | (1 << 5), 1, 56) is None          # G on a pointer: fine
    # host: PPN bits >= paBits.  paBits 40: PA bit 40 = PPN bit 28 = PTE bit 38
    assert h.reserved(leaf | (1 << 38), 0, 40) == "ppn>=paBits"
    assert h.reserved(leaf | (1 << 37), 0, 40) is None
    # guest: never (fault 5 through the GPA range instead)
    assert r.reserved(leaf | (1 << 53), 0, 40) is None


# ----------------------------------------------------------------------------- permissions
def test_perm_accumulation():
    x = fmt("x86_64_4")
    p = x.perm_init()
    p = x.perm_step(p, 0b111, False)                   # P RW US
    p = x.perm_step(p, 0b101, False)                   # P US (W = 0)
    p = x.perm_step(p, 0b111 | (1 << 63), True)        # NX leaf
    assert p == (1, 0, 0, 1)                           # R=1, W=0 (AND), X=0 (NX), U=1
    e = fmt("ept5")
    p = e.perm_init()
    p = e.perm_step(p, 0b101, False)                   # R X
    p = e.perm_step(p, 0b111, True)
    assert p == (1, 0, 1, 1)                           # W ANDed out, U = 1
    r = fmt("sv48")
    p = r.perm_step(r.perm_init(), 0b1, False)         # pointer: no effect
    p = r.perm_step(p, 0b1 | (1 << 3), True)           # X-only leaf, U = 0
    assert p == (0, 0, 1, 0)


def test_perm_denies():
    # guest: user and !U denies; supervisor on a user page allowed
    assert perm_denies((1, 1, 1, 0), 0, 1, check_user=True)
    assert not perm_denies((1, 1, 1, 1), 0, 0, check_user=True)
    assert not perm_denies((1, 1, 1, 0), 0, 1, check_user=False)
    assert perm_denies((1, 0, 1, 1), 1, 0, check_user=True)     # write, !W
    assert perm_denies((1, 1, 0, 1), 2, 0, check_user=True)     # exec, !X
    assert perm_denies((0, 1, 1, 1), 0, 0, check_user=False)    # read, !R (no MXR)
    assert not perm_denies((0, 0, 1, 1), 2, 0, check_user=False)


# ----------------------------------------------------------------------------- A/D, encoding
def test_ad_positions_and_byte():
    # doc table: x86 5/6, EPT 8/9, RISC-V 6/7; the byte holding both: 0, 1, 0
    for n in GUEST_FORMATS + HOST_FORMATS:
        F = fmt(n)
        exp = {"x86": (5, 6, 0, 0x01), "ept": (8, 9, 1, 0x02), "rv": (6, 7, 0, 0x01)}[F.family]
        assert (F.a_bit, F.d_bit, F.ad_byte, F.ad_wmask) == exp, n


def test_encoding_by_hand():
    x, e, r = fmt("x86_64_4"), fmt("ept4"), fmt("sv39x4")
    # x86 4K leaf to 0x5000, rw, user, A, D, X allowed: 0x5000 | P 1 | RW 2 | US 4 | A 0x20 | D 0x40
    assert x.encode_leaf(0x5000, 0, w=1, u=1, a=1, d=1) == 0x5067
    # x86 2M leaf not executable: + PS 0x80 + NX bit 63
    assert x.encode_leaf(0x200000, 1, x=0) == 0x200000 | 0xE7 | (1 << 63)
    # EPT 4K leaf RWX, memtype WB (6 << 3 = 0x30), A 0x100, D 0x200
    assert e.encode_leaf(0x7000, 0) == 0x7000 | 0x337
    assert e.encode_table(0x9000) == 0x9007
    # RISC-V leaf to 0x12345000: PPN 0x12345 << 10 = 0x48D1400, V R W X U A D = 0xDF
    assert r.encode_leaf(0x12345000, 0) == 0x48D1400 | 0xDF
    assert r.encode_table(0x3000) == (3 << 10) | 1
    for F in (x, e, r):
        pte = F.encode_leaf(0x40000000, 2)
        assert F.valid(pte) and F.is_leaf(pte, 2) and F.reserved(pte, 2, 52) is None
        assert F.leaf_base(pte, 2) == 0x40000000
        t = F.encode_table(0x8000)
        assert F.valid(t) and not F.is_leaf(t, 1) and F.reserved(t, 1, 52) is None
