"""The walker's reference model in the three RISC-V translation modes, and its results in the
ISA's terms (trap cause, tval, tval2 = htval / mtval2), for the QEMU cross-check
(docs/qemu-crosscheck.md).

The mode is the request's (``WalkRequest.mode``, docs/nested-walker.md "Modes"):
``translate`` is ``models.walker.walk`` of the request with the case's mode, so the model and
the RTL walk each mode the same way (stage1: satp, the guest format over host-physical tables;
stage2: the host walk of GPA = VA; both: VS-stage over G-stage).

``outcome`` turns a model (or RTL) response into what a RISC-V hart reports: a load's value
(the word the translation points at), a store's physical address, or a trap.
"""

from __future__ import annotations

from dataclasses import replace

from models.ptformats import CMD_READ, CMD_WRITE, MODE_BOTH, MODE_S1, MODE_S2
from models import privcheck
from models.walker import (F_ADDR, F_BUS, F_GUEST, F_HOST, F_RSVD, STAGE_GUEST, WalkRequest,
                           WalkResult, _Fault, _Walk, host_denies, walk)

MODES = ("stage1", "stage2", "both")

# RISC-V exception causes (privileged spec, mcause)
LOAD_ACCESS, STORE_ACCESS = 5, 7
LOAD_PAGE, STORE_PAGE = 13, 15
LOAD_GUEST_PAGE, STORE_GUEST_PAGE = 21, 23
ECALLS = (8, 9, 10, 11)


# the request's mode of each cross-check mode (models.ptformats.MODE_*, the RTL's req.mode)
MODE_CODES = {"stage1": MODE_S1, "stage2": MODE_S2, "both": MODE_BOTH}


def translate(mem, cfg, mode: str, req: WalkRequest) -> WalkResult:
    """One cache-less walk of ``req`` in ``mode`` (model semantics, docs/nested-walker.md)."""
    if mode not in MODE_CODES:
        raise ValueError(f"mode {mode!r}; known: {MODES}")
    return walk(mem, cfg, replace(req, mode=MODE_CODES[mode]))


def trap_of(resp: dict, cmd: int, va: int) -> tuple:
    """A fault response -> ("trap", cause, tval, tval2).

    Stage 0 (VS-stage / satp) faults of every kind but a bus error are page faults; stage 1
    (G-stage) ones guest-page faults with tval2 = GPA >> 2 (the GPA of the guest PTE when the
    host fault happened on an implicit page-table access: the model's faultGpa); a bus error
    is an access fault.  tval is always the access's virtual address."""
    store = cmd == CMD_WRITE
    f = resp["fault"]
    if f == F_BUS:
        return ("trap", STORE_ACCESS if store else LOAD_ACCESS, va, 0)
    if f not in (F_GUEST, F_HOST, F_RSVD, F_ADDR):
        raise ValueError(f"fault {f} has no RISC-V meaning here")
    if resp["faultStage"] == STAGE_GUEST:
        return ("trap", STORE_PAGE if store else LOAD_PAGE, va, 0)
    return ("trap", STORE_GUEST_PAGE if store else LOAD_GUEST_PAGE, va, resp["faultGpa"] >> 2)


def outcome(resp: dict, cmd: int, va: int, read_word, in_ram) -> tuple:
    """What a hart reports for an access whose walk answered ``resp``:
    ("load", value at the PA) / ("store", PA) / ("trap", cause, tval, tval2).
    ``read_word(pa)`` reads the memory image; ``in_ram(pa)``: the PA is memory (else the access
    itself is an access fault, after a successful translation)."""
    if resp["fault"]:
        return trap_of(resp, cmd, va)
    pa = (resp["ppn"] << 12) | (va & 0xFFF)
    if not in_ram(pa):
        return ("trap", STORE_ACCESS if cmd == CMD_WRITE else LOAD_ACCESS, va, 0)
    if cmd == CMD_READ:
        return ("load", read_word(pa & ~7))
    return ("store", pa)


def qemu_outcome(cmd: int, probe: int, value: int, rec: dict) -> tuple:
    """QEMU's result line -> the same form.  A store is reported at the model's PA (``probe``)
    when the word there holds the stored value afterwards, else as stored elsewhere."""
    cause = rec["cause"]
    if cause not in ECALLS:
        return ("trap", cause, rec["tval"], rec["tval2"])
    if cmd == CMD_READ:
        return ("load", rec["value"])
    return ("store", probe if probe and rec["after"] == value else "elsewhere")




# ---------------------------------------------------------------------- QEMU 7.2's deviations
# docs/qemu-crosscheck.md, "Deviations": where QEMU 7.2 does not do what the ISA says, the
# comparison expects QEMU's documented behaviour, computed from the ISA outcome by these rules
# (each counted), so that any other difference is a mismatch.
DEVIATIONS = {
    "D1": "G-stage: a GPA with bit gpaBits-1 set is a guest-page fault (QEMU checks bits "
          "63:gpaBits-1 like a sign extension)",
    "D2": "a PTE read from a physical address without memory is a page fault / guest-page "
          "fault (ISA: access fault)",
    "D3": "a G-stage fault of an implicit VS-stage page-table access is a load guest-page "
          "fault whatever the access (ISA: the original access type)",
    "D4": "HLV / HSV: a VS-stage fault is an access fault when the HS satp is Bare "
          "(ISA: page fault)",
    "D5": "MXR: the G-stage takes vsstatus.MXR (ISA: the HS-level MXR), also for the implicit "
          "read of a guest table (ISA: explicit loads only); the VS-stage takes vsstatus.MXR "
          "when V = 1, mstatus.MXR for HLV (ISA: either)",
}


class _Qemu72MxrWalk(_Walk):
    """A load's walk with QEMU 7.2's MXR (deviation D5): ``vs_mxr`` is the MXR of the VS-stage
    (satp's stage too), ``g_mxr`` the G-stage's, which QEMU also applies to the implicit read of
    a guest table (checked as a load: QEMU reads it as one, see M1)."""

    def __init__(self, mem, cfg, req, *, vs_mxr: bool, g_mxr: bool):
        super().__init__(mem, cfg, req, None)
        self.vs_mxr, self.g_mxr = vs_mxr, g_mxr

    def host_check(self, perm, cmd, pagetable):
        return host_denies(self.H.family, perm, CMD_READ if pagetable else cmd, mxr=self.g_mxr)

    def guest_check(self, perm):
        r = self.req
        a = privcheck.Access(cmd=r.cmd, user=bool(r.user), sum=bool(r.flags_sum),
                             mxr=self.vs_mxr)
        return privcheck.denies(privcheck.RV_STAGE1, a, privcheck.Perm(*map(bool, perm)))


def scratch(mem):
    """A view of ``mem`` whose writes stay in the view (``.local``: {address: word})."""
    view = mem.view_at(getattr(mem, "seq", 0))
    view.error_fn = mem.error_fn
    return view


def qemu72_mxr_walk(mem, cfg, mode: str, req: WalkRequest, op: str) -> WalkResult | None:
    """D5: QEMU 7.2's walk (on ``mem``) of a load with an MXR bit set or of any access with
    vsstatus.MXR (the G-stage's MXR for QEMU, which reaches the implicit read of a guest table
    whatever the access); None for any other case.  QEMU 7.2 (target/riscv, get_physical_address)
    takes the VS-stage's MXR from the mstatus it runs with -- vsstatus.MXR when V = 1 (the
    HS-level one is then in mstatus_hs), mstatus.MXR for HLV -- and the G-stage's from
    vsstatus."""
    if not (req.flags_vmxr or (req.cmd == CMD_READ and req.flags_mxr)):
        return None
    virt = op == "ld" and mode != "stage1"
    vs_mxr = bool(req.flags_vmxr if virt else req.flags_mxr)
    w = _Qemu72MxrWalk(mem, cfg, replace(req, mode=MODE_CODES[mode]), vs_mxr=vs_mxr,
                       g_mxr=bool(req.flags_vmxr))
    w.guest_leaf_level, w.gpa = None, None
    try:
        return w.run()
    except _Fault as f:
        return WalkResult(w._resp(f.code, f.stage, f.level, f.gpa), w.acc, w.dirty,
                          w.guest_leaf_level, None, f.reason, w.gpa)


def qemu72(c, res, isa: tuple, gpa_bits: int, mxr=None) -> tuple:
    """(what QEMU 7.2 reports, [rules applied]) for case ``c`` whose model walk is ``res`` and
    whose ISA outcome is ``isa``; ``mxr``: (outcome, walk) of ``qemu72_mxr_walk`` (D5) or
    None."""
    rules, out = [], isa
    store = c.cmd == CMD_WRITE
    if d1(c, gpa_bits):
        rules.append("D1")
        out = ("trap", STORE_GUEST_PAGE if store else LOAD_GUEST_PAGE, c.va, c.va >> 2)
    elif mxr is not None and mxr[0] != isa:
        rules.append("D5")
        out, res = mxr
    if isa[0] == "trap" and res.fault == F_BUS and res.accesses:
        a = res.accesses[-1]
        rules.append("D2")
        if a.stage == STAGE_GUEST:
            out = ("trap", STORE_PAGE if store else LOAD_PAGE, c.va, 0)
        else:
            out = ("trap", STORE_GUEST_PAGE if store else LOAD_GUEST_PAGE, c.va, a.gpa >> 2)
    if out[0] == "trap" and out[1] in (LOAD_GUEST_PAGE, STORE_GUEST_PAGE) and \
            _implicit(res, out[3] << 2) and out[1] != LOAD_GUEST_PAGE:
        rules.append("D3")
        out = ("trap", LOAD_GUEST_PAGE) + out[2:]
    if c.op in ("hlv", "hsv") and c.satp == 0 and out[0] == "trap" and \
            out[1] in (LOAD_PAGE, STORE_PAGE):
        rules.append("D4")
        out = ("trap", STORE_ACCESS if store else LOAD_ACCESS, c.va, 0)
    return out, rules


def d1(c, gpa_bits: int) -> bool:
    """Deviation D1 applies: QEMU 7.2 refuses this stage-2 GPA before walking (so it sets no
    A/D bit either)."""
    return c.mode == "stage2" and c.va >> (gpa_bits - 1) == 1


def _implicit(res, gpa: int) -> bool:
    """The G-stage fault at ``gpa`` happened on an implicit access (a VS-stage PTE's GPA), not
    on the access's own GPA."""
    return res.gpa is None or (gpa & ~3) != (res.gpa & ~3)
