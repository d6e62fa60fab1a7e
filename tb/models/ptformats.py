"""The eight page-table formats of docs/nested-walker.md, transcribed independently in Python.

Why this file exists: the NestedWalker's formats are data in the RTL (``xlat.common.PtFormat``);
the testbench needs a second, independent description of the same architecture rules, written
from the doc (never from the RTL), so that the reference model and the page-table builder can
disagree with the hardware.  Everything here is a pure function of (format, entry, level).

Conventions (docs/nested-walker.md, "Levels and page sizes" and "Formats"):

* levels are numbered from the leaf: level 0 maps 4 KiB, the root is ``levels - 1``;
* a leaf at level ``l`` maps a page of size code ``l`` (0 4K, 1 2M, 2 1G, 3 512G);
* entry address at level ``l`` for input address ``a``: ``table * 4096 + index_l(a) * 8`` with
  ``index_l(a) = a[12 + 9l + w_l - 1 : 12 + 9l]``; ``w_l`` = 9, 11 at the root of an x4 format;
* families: ``x86`` (guest x86_64_4/5), ``ept`` (host ept4/5), ``rv`` (guest sv39/sv48, host
  sv39x4/sv48x4).  Only the doc's legal parameter values are described: x86 and sv39/sv48 are
  guest formats, EPT and the x4 formats host formats.

Permissions are 4-tuples ``(r, w, x, u)`` of 0/1.
"""

from __future__ import annotations

from dataclasses import dataclass

PAGE_4K, PAGE_2M, PAGE_1G, PAGE_512G = 0, 1, 2, 3
PAGE_NAMES = {0: "4K", 1: "2M", 2: "1G", 3: "512G"}

CMD_READ, CMD_WRITE, CMD_EXEC, CMD_RESERVED = 0, 1, 2, 3
# translation modes of a request (xlat.common.TransMode): bare (handled above the walker; a
# walker request in it is bad input), stage 1 only, stage 2 only, both stages
MODE_BARE, MODE_S1, MODE_S2, MODE_BOTH = 0, 1, 2, 3

M64 = (1 << 64) - 1


def bits(v: int, hi: int, lo: int) -> int:
    """v[hi:lo] (inclusive)."""
    return (v >> lo) & ((1 << (hi - lo + 1)) - 1)


def mask(hi: int, lo: int) -> int:
    """A mask with bits hi..lo set (empty when hi < lo)."""
    if hi < lo:
        return 0
    return ((1 << (hi - lo + 1)) - 1) << lo


def page_bytes(level: int) -> int:
    return 1 << (12 + 9 * level)


# ----------------------------------------------------------------------------- bit positions
# x86-64 (SDM vol. 3, 4-level / 5-level paging)
X86_P, X86_RW, X86_US, X86_A, X86_D, X86_PS, X86_NX = 0, 1, 2, 5, 6, 7, 63
# Intel EPT
EPT_R, EPT_W, EPT_X, EPT_PS, EPT_A, EPT_D = 0, 1, 2, 7, 8, 9
EPT_MT_LO, EPT_MT_HI = 3, 5
EPT_MT_WB = 6
# RISC-V Sv39/Sv48 and the G-stage x4 formats
RV_V, RV_R, RV_W, RV_X, RV_U, RV_G, RV_A, RV_D = 0, 1, 2, 3, 4, 5, 6, 7


@dataclass(frozen=True)
class PtFormat:
    name: str
    family: str          # "x86" | "ept" | "rv"
    stage: str           # "guest" | "host"
    levels: int
    root_bits: int       # index bits at the root (9, or 11 for the x4 formats)
    input_bits: int      # bits of the address this format translates
    canon_top: int       # guest: bits 63..canon_top must be equal; host: unused
    a_bit: int
    d_bit: int

    # ------------------------------------------------------------------ geometry
    @property
    def root_level(self) -> int:
        return self.levels - 1

    @property
    def x4(self) -> bool:
        return self.root_bits == 11

    def index_width(self, level: int) -> int:
        return self.root_bits if level == self.root_level else 9

    def index(self, a: int, level: int) -> int:
        lo = 12 + 9 * level
        return (a >> lo) & ((1 << self.index_width(level)) - 1)

    def entry_addr(self, table_page: int, a: int, level: int) -> int:
        """Byte address of the level-``level`` entry for ``a`` in the table at page
        ``table_page`` (a page number)."""
        return table_page * 4096 + self.index(a, level) * 8

    def max_leaf_level(self) -> int:
        """Highest level that may hold a leaf: x86/EPT level 2 (PS at >= 3 is reserved);
        RISC-V any level (the root of sv48/sv48x4 maps 512 GiB)."""
        return 2 if self.family in ("x86", "ept") else self.root_level

    def leaf_levels(self) -> list[int]:
        return list(range(self.max_leaf_level() + 1))

    @property
    def ad_byte(self) -> int:
        """Index of the byte that holds both A and D (0 for x86 and RISC-V, 1 for EPT)."""
        assert self.a_bit // 8 == self.d_bit // 8
        return self.a_bit // 8

    @property
    def ad_wmask(self) -> int:
        return 1 << self.ad_byte

    @property
    def a_mask(self) -> int:
        return 1 << self.a_bit

    @property
    def d_mask(self) -> int:
        return 1 << self.d_bit

    # ------------------------------------------------------------------ address check
    def address_ok(self, a: int) -> bool:
        """Guest: canonical / upper-bits rule on the 64-bit gva; host: GPA < 2^input_bits."""
        if self.stage == "host":
            return 0 <= a < (1 << self.input_bits)
        top = a >> self.canon_top           # bits 63..canon_top
        return top == 0 or top == (1 << (64 - self.canon_top)) - 1

    # ------------------------------------------------------------------ entry decoding
    def valid(self, pte: int) -> bool:
        if self.family == "ept":
            return (pte & 0b111) != 0        # R or W or X
        return (pte & 1) == 1                # P / V

    def is_leaf(self, pte: int, level: int) -> bool:
        """Leaf rule for a valid, non-reserved entry."""
        if self.family in ("x86", "ept"):
            return level == 0 or (level in (1, 2) and (pte >> 7) & 1 == 1)
        return (pte >> RV_R) & 1 == 1 or (pte >> RV_X) & 1 == 1

    def addr_of(self, pte: int) -> int:
        """The byte address the entry's PPN field points at (next table or leaf frame)."""
        if self.family == "rv":
            return bits(pte, 53, 10) << 12
        return pte & mask(51, 12)

    def leaf_base(self, pte: int, level: int) -> int:
        """Base byte address of the page a leaf at ``level`` maps (low bits of the page
        offset cleared: x86's PAT bit 12 of a large leaf is not an address bit)."""
        return self.addr_of(pte) & ~(page_bytes(level) - 1)

    def misaligned(self, pte: int, level: int) -> bool:
        """RISC-V: a superpage leaf whose PPN has any of its low 9*level bits set."""
        if self.family != "rv" or level == 0:
            return False
        return bits(pte, 53, 10) & ((1 << (9 * level)) - 1) != 0

    def nonleaf_at_level0(self, pte: int, level: int) -> bool:
        """RISC-V: a valid pointer entry at level 0 is a page fault (x86/EPT level 0 is a leaf)."""
        return self.family == "rv" and level == 0 and not self.is_leaf(pte, 0)

    def reserved(self, pte: int, level: int, pa_bits: int) -> str | None:
        """The reserved-bit / misconfiguration rule a *valid* entry breaks (fault 4), or None.

        ``pa_bits``: host physical address bits; PPN bits at or above it are reserved for the
        host formats only (a guest's out-of-range GPA is fault 5 when the host translates it)."""
        f = self.family
        limit = pa_bits if self.stage == "host" else None
        if f == "x86":
            ps = (pte >> X86_PS) & 1
            if level >= 3 and ps:
                return "ps_at_level>=3"
            if limit is not None and limit < 52 and pte & mask(51, limit):
                return "ppn>=paBits"
            if level == 1 and ps and pte & mask(20, 13):
                return "large_leaf_low_bits"
            if level == 2 and ps and pte & mask(29, 13):
                return "large_leaf_low_bits"
            return None
        if f == "ept":
            r, w = pte & 1, (pte >> 1) & 1
            if w and not r:
                return "w_without_r"
            ps = (pte >> EPT_PS) & 1
            if level >= 3:
                if pte & mask(7, 3):
                    return "ps_at_level>=3" if ps else "nonleaf_bits_7_3"
            elif level in (1, 2) and not ps:
                if pte & mask(6, 3):
                    return "nonleaf_bits_6_3"
            else:                                 # leaf: level 0, or PS at level 1/2
                if bits(pte, EPT_MT_HI, EPT_MT_LO) in (2, 3, 7):
                    return "memtype"
                if level == 1 and pte & mask(20, 12):
                    return "large_leaf_low_bits"
                if level == 2 and pte & mask(29, 12):
                    return "large_leaf_low_bits"
            if limit is not None and limit < 52 and pte & mask(51, limit):
                return "ppn>=paBits"
            return None
        # RISC-V
        if pte & mask(63, 54):
            return "bits_63_54"
        r, w, x = (pte >> RV_R) & 1, (pte >> RV_W) & 1, (pte >> RV_X) & 1
        if w and not r:
            return "w_without_r"
        if not r and not x and pte & ((1 << RV_A) | (1 << RV_D) | (1 << RV_U)):
            return "nonleaf_a_d_u"
        if limit is not None and limit < 56 and bits(pte, 53, 10) >> (limit - 12):
            return "ppn>=paBits"
        return None

    # ------------------------------------------------------------------ permissions
    def perm_init(self) -> tuple:
        return (1, 1, 1, 1)

    def perm_step(self, perm: tuple, pte: int, leaf: bool) -> tuple:
        """Accumulate one entry (non-leaf or leaf) into the walk's permission."""
        r, w, x, u = perm
        f = self.family
        if f == "x86":      # R = 1, W = AND W, U = AND U, X = AND !NX
            return (1, w & (pte >> X86_RW) & 1, x & (1 - ((pte >> X86_NX) & 1)),
                    u & (pte >> X86_US) & 1)
        if f == "ept":      # R, W, X ANDed over levels, U = 1
            return (r & (pte >> EPT_R) & 1, w & (pte >> EPT_W) & 1, x & (pte >> EPT_X) & 1, 1)
        # RISC-V: the leaf's bits only
        if not leaf:
            return perm
        return ((pte >> RV_R) & 1, (pte >> RV_W) & 1, (pte >> RV_X) & 1, (pte >> RV_U) & 1)

    # ------------------------------------------------------------------ encoding (builder)
    def encode_table(self, next_addr: int, *, r=1, w=1, x=1, u=1, a=0, extra=0) -> int:
        """A valid non-leaf entry pointing at the table at byte address ``next_addr``.
        r/w/x/u only mean something where the format accumulates them over levels (x86 W/U/X,
        EPT R/W/X); RISC-V pointers carry no permission bits (A/D/U there are reserved)."""
        assert next_addr % 4096 == 0
        f = self.family
        if f == "x86":
            v = next_addr | 1 | (w << X86_RW) | (u << X86_US) | (a << X86_A)
            if not x:
                v |= 1 << X86_NX
        elif f == "ept":
            v = next_addr | r | (w << EPT_W) | (x << EPT_X)
            if not (r or w or x):
                raise ValueError("an EPT entry with R=W=X=0 is not present")
        else:
            v = ((next_addr >> 12) << 10) | 1
        return (v | extra) & M64

    def encode_leaf(self, base: int, level: int, *, r=1, w=1, x=1, u=1, a=1, d=1,
                    extra=0) -> int:
        """A valid leaf at ``level`` mapping the page at byte address ``base``."""
        assert base % page_bytes(level) == 0 or self.family == "rv", "misaligned base"
        f = self.family
        if f == "x86":
            v = base | 1 | (w << X86_RW) | (u << X86_US) | (a << X86_A) | (d << X86_D)
            if level > 0:
                v |= 1 << X86_PS
            if not x:
                v |= 1 << X86_NX
        elif f == "ept":
            v = (base | r | (w << EPT_W) | (x << EPT_X) | (EPT_MT_WB << EPT_MT_LO)
                 | (a << EPT_A) | (d << EPT_D))
            if level > 0:
                v |= 1 << EPT_PS
        else:
            if not (r or x):
                raise ValueError("a RISC-V leaf needs R or X")
            v = (((base >> 12) << 10) | 1 | (r << RV_R) | (w << RV_W) | (x << RV_X)
                 | (u << RV_U) | (a << RV_A) | (d << RV_D))
        return (v | extra) & M64


FORMATS: dict[str, PtFormat] = {
    # name         family stage levels root input canon  A  D
    "x86_64_4": PtFormat("x86_64_4", "x86", "guest", 4, 9, 48, 47, X86_A, X86_D),
    "x86_64_5": PtFormat("x86_64_5", "x86", "guest", 5, 9, 57, 56, X86_A, X86_D),
    "ept4": PtFormat("ept4", "ept", "host", 4, 9, 48, 0, EPT_A, EPT_D),
    "ept5": PtFormat("ept5", "ept", "host", 5, 9, 57, 0, EPT_A, EPT_D),
    "sv39": PtFormat("sv39", "rv", "guest", 3, 9, 39, 38, RV_A, RV_D),
    "sv48": PtFormat("sv48", "rv", "guest", 4, 9, 48, 47, RV_A, RV_D),
    "sv39x4": PtFormat("sv39x4", "rv", "host", 3, 11, 41, 0, RV_A, RV_D),
    "sv48x4": PtFormat("sv48x4", "rv", "host", 4, 11, 50, 0, RV_A, RV_D),
}
GUEST_FORMATS = ("x86_64_4", "x86_64_5", "sv39", "sv48")
HOST_FORMATS = ("ept4", "ept5", "sv39x4", "sv48x4")


def fmt(name: str) -> PtFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise KeyError(f"unknown page-table format {name!r}; known: {list(FORMATS)}") from None


def gpa_bits(host: str) -> int:
    """Guest-physical address width = the host format's input width."""
    return fmt(host).input_bits


def perm_denies(perm: tuple, cmd: int, user: int, *, check_user: bool) -> bool:
    """True if the access (cmd, user) is not allowed by ``perm``.  Guest checks include
    ``user and !U`` (a supervisor access to a user page is allowed); host checks do not."""
    r, w, x, u = perm
    if check_user and user and not u:
        return True
    return (cmd == CMD_READ and not r) or (cmd == CMD_WRITE and not w) or \
           (cmd == CMD_EXEC and not x)
