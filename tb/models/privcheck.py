"""Reference model of the architectures' permission checks of one translation stage
(docs/privcheck.md), written from the ISA text, one function per rule:

* RISC-V: The RISC-V Instruction Set Manual, Volume II: Privileged Architecture: "Memory
  Privilege in sstatus Register" (SUM, MXR), Sv32 "Addressing and Memory Protection" (the U bit),
  "Two-Stage Address Translation" (vsstatus.MXR, the G-stage's user rule).
* x86: Intel SDM Vol. 3A, 4.6 "Access Rights" (4.6.1 "Determination of Access Rights"); EPT:
  Vol. 3C, "EPT Violations".

A stage's verdict is "denied" when any of its rules denies. Every rule is a function
``(Access, Perm) -> bool`` (True: this rule denies the access); ``denying_rules`` names the rules
that deny, ``denies`` is the verdict. The reserved command (3) is denied by every stage (the
library's defined response to it).

Permissions are a stage's accumulated ones as the walker keeps them: RISC-V the leaf's R/W/X/U;
x86 ``w`` = R/W of every level, ``u`` = U/S of every level, ``x`` = no level has XD (x86 has no
read permission: ``r`` is not looked at); EPT R/W/X of every level (no user bit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

READ, WRITE, FETCH, RESERVED = 0, 1, 2, 3
DATA = (READ, WRITE)

# the stages, by the wrapper's output names (deny_<stage>)
RV_STAGE1, RV_GSTAGE, X86, EPT = "rvStage1", "rvGStage", "x86", "ept"
STAGES = (RV_STAGE1, RV_GSTAGE, X86, EPT)

# the request's flags (PrivFlags)
FLAGS = ("sum", "mxr", "vmxr", "wp", "smep", "smap", "nxe")
RV_FLAGS = ("sum", "mxr", "vmxr")
X86_FLAGS = ("wp", "smep", "smap", "nxe")


@dataclass(frozen=True)
class Access:
    """One access as the core sends it: command, privilege (user or supervisor), whether stage 1
    is RISC-V's VS-stage (V = 1, or HLV/HSV), and the flags."""
    cmd: int
    user: bool
    vs_stage: bool = False
    sum: bool = False     # sstatus.SUM (vsstatus.SUM for the VS-stage)
    mxr: bool = False     # HS-level MXR (mstatus/sstatus.MXR)
    vmxr: bool = False    # vsstatus.MXR
    wp: bool = False      # CR0.WP
    smep: bool = False    # CR4.SMEP
    smap: bool = False    # CR4.SMAP in force: CR4.SMAP = 1 and (EFLAGS.AC = 0 or implicit)
    nxe: bool = False     # IA32_EFER.NXE


@dataclass(frozen=True)
class Perm:
    r: bool = False
    w: bool = False
    x: bool = False
    u: bool = False


# ---------------------------------------------------------------- every stage
def reserved_command(a: Access, p: Perm) -> bool:
    """The library's command encoding has no command 3: always denied (a page fault of the
    stage that checks it)."""
    return a.cmd == RESERVED


# ---------------------------------------------------------------- RISC-V stage 1
def rv_user_needs_u(a: Access, p: Perm) -> bool:
    """Sv32 "Addressing and Memory Protection": "U-mode software may only access the page when
    U=1"."""
    return a.user and not p.u


def rv_supervisor_data_on_user_page_needs_sum(a: Access, p: Perm) -> bool:
    """"If the SUM bit in the sstatus register is set, supervisor mode software may also access
    pages with U=1" (SUM modifies S-mode loads and stores): without SUM they fault."""
    return not a.user and p.u and a.cmd in DATA and not a.sum


def rv_supervisor_never_fetches_user_page(a: Access, p: Perm) -> bool:
    """"Irrespective of SUM, the supervisor may not execute code on pages with U=1"."""
    return not a.user and p.u and a.cmd == FETCH


def rv_stage1_mxr(a: Access) -> bool:
    """MXR in effect for stage 1: the HS-level MXR always; vsstatus.MXR only when stage 1 is the
    VS-stage ("The vsstatus field MXR ... only overrides VS-stage page protection")."""
    return a.mxr or (a.vs_stage and a.vmxr)


def rv_read_needs_r_or_mxr_x(a: Access, p: Perm) -> bool:
    """"When MXR=0, only loads from pages marked readable (R=1) will succeed. When MXR=1, loads
    from pages marked either readable or executable (R=1 or X=1) will succeed"."""
    return a.cmd == READ and not (p.r or (rv_stage1_mxr(a) and p.x))


def rv_write_needs_w(a: Access, p: Perm) -> bool:
    """A store needs W (the leaf's R/W/X "indicate whether the page is readable, writable, and
    executable")."""
    return a.cmd == WRITE and not p.w


def rv_fetch_needs_x(a: Access, p: Perm) -> bool:
    """An instruction fetch needs X."""
    return a.cmd == FETCH and not p.x


# ---------------------------------------------------------------- RISC-V G-stage
def rv_gstage_every_access_is_user(a: Access, p: Perm) -> bool:
    """"For G-stage address translation, all memory accesses ... are considered to be user-level
    accesses, as though executed in U-mode": U=1 needed whatever the privilege (and SUM, a
    supervisor's bit, has no say)."""
    return not p.u


def rv_gstage_read_needs_r_or_hs_mxr_x(a: Access, p: Perm) -> bool:
    """Access types are "checked during G-stage translation the same as for VS-stage
    translation", but "Setting MXR at VS-level does not override guest-physical page
    protections. Setting MXR at HS-level, however, overrides both VS-stage and G-stage
    execute-only permissions": only the HS-level MXR."""
    return a.cmd == READ and not (p.r or (a.mxr and p.x))


def rv_gstage_write_needs_w(a: Access, p: Perm) -> bool:
    return a.cmd == WRITE and not p.w


def rv_gstage_fetch_needs_x(a: Access, p: Perm) -> bool:
    return a.cmd == FETCH and not p.x


# ---------------------------------------------------------------- x86 paging
def x86_user_needs_u(a: Access, p: Perm) -> bool:
    """4.6.1, user-mode accesses: "Data may not be read from any supervisor-mode address", not
    written, and "Instructions may not be fetched from any supervisor-mode address"."""
    return a.user and not p.u


def x86_user_write_needs_w(a: Access, p: Perm) -> bool:
    """4.6.1, user-mode data writes: "Data may be written to any user-mode address with a
    translation for which the R/W flag is 1 in every paging-structure entry" (CR0.WP is not
    consulted for user-mode accesses)."""
    return a.user and a.cmd == WRITE and not p.w


def x86_supervisor_write_needs_w_with_wp(a: Access, p: Perm) -> bool:
    """4.6.1, supervisor-mode data writes: "If CR0.WP = 0, data may be written to any
    supervisor-mode address"; "If CR0.WP = 1, data may be written to any supervisor-mode
    address with a translation for which the R/W flag is 1 in every paging-structure entry"
    (the same for user-mode addresses, SMAP aside)."""
    return not a.user and a.cmd == WRITE and a.wp and not p.w


def x86_smap_blocks_supervisor_data_on_user_page(a: Access, p: Perm) -> bool:
    """4.6.1, supervisor-mode data accesses to user-mode addresses, CR4.SMAP = 1: "If EFLAGS.AC
    = 0 or the access is implicit, data may not be read from any user-mode address" (nor
    written); the request's ``smap`` is that condition."""
    return not a.user and a.cmd in DATA and p.u and a.smap


def x86_smep_blocks_supervisor_fetch_from_user_page(a: Access, p: Perm) -> bool:
    """4.6.1, supervisor-mode instruction fetches: "If CR4.SMEP = 1, instructions may not be
    fetched from any user-mode address"."""
    return not a.user and a.cmd == FETCH and p.u and a.smep


def x86_nx_blocks_fetch_with_nxe(a: Access, p: Perm) -> bool:
    """4.6.1, instruction fetches (user or supervisor): "if IA32_EFER.NXE = 0, instructions may
    be fetched from any" (allowed) address; with NXE = 1 not from an address "with a translation
    for which the XD flag is 1 in any paging-structure entry". (XD set with NXE = 0 is a
    reserved-bit fault of the entry's decode, not an access right.)"""
    return a.cmd == FETCH and a.nxe and not p.x


# ---------------------------------------------------------------- EPT
def ept_read_needs_r(a: Access, p: Perm) -> bool:
    """Vol. 3C "EPT Violations": "The access is a data read and ... bit 0 (read access) was
    clear in any of the EPT paging-structure entries used to translate"."""
    return a.cmd == READ and not p.r


def ept_write_needs_w(a: Access, p: Perm) -> bool:
    """... "a data write and ... bit 1 (write access) was clear"."""
    return a.cmd == WRITE and not p.w


def ept_fetch_needs_x(a: Access, p: Perm) -> bool:
    """... "an instruction fetch and bit 2 (execute access) was clear" (mode-based execute
    control off: out of scope)."""
    return a.cmd == FETCH and not p.x


Rule = Callable[[Access, Perm], bool]

RULES: dict[str, tuple[Rule, ...]] = {
    RV_STAGE1: (rv_user_needs_u, rv_supervisor_data_on_user_page_needs_sum,
                rv_supervisor_never_fetches_user_page, rv_read_needs_r_or_mxr_x,
                rv_write_needs_w, rv_fetch_needs_x, reserved_command),
    RV_GSTAGE: (rv_gstage_every_access_is_user, rv_gstage_read_needs_r_or_hs_mxr_x,
                rv_gstage_write_needs_w, rv_gstage_fetch_needs_x, reserved_command),
    X86: (x86_user_needs_u, x86_user_write_needs_w, x86_supervisor_write_needs_w_with_wp,
          x86_smap_blocks_supervisor_data_on_user_page,
          x86_smep_blocks_supervisor_fetch_from_user_page, x86_nx_blocks_fetch_with_nxe,
          reserved_command),
    EPT: (ept_read_needs_r, ept_write_needs_w, ept_fetch_needs_x, reserved_command),
}


def denying_rules(stage: str, a: Access, p: Perm) -> list[str]:
    """The names of the rules of ``stage`` that deny the access."""
    return [r.__name__ for r in RULES[stage] if r(a, p)]


def denies(stage: str, a: Access, p: Perm) -> bool:
    return any(r(a, p) for r in RULES[stage])


def verdicts(a: Access, p: Perm) -> dict[str, bool]:
    """Every stage's verdict on one (access, permissions), as the wrapper's deny outputs."""
    return {s: denies(s, a, p) for s in STAGES}


# ---------------------------------------------------------------- the input space
# every input of the wrapper, in the order of the bits of an input index
INPUTS = ("cmd0", "cmd1", "user", "vs_stage") + FLAGS + ("r", "w", "x", "u")
INPUT_BITS = len(INPUTS)


def decode(n: int) -> tuple[Access, Perm]:
    """The (access, permissions) of input index ``n`` (bit i is INPUTS[i])."""
    b = {name: bool((n >> i) & 1) for i, name in enumerate(INPUTS)}
    a = Access(cmd=int(b["cmd0"]) | (int(b["cmd1"]) << 1), user=b["user"],
               vs_stage=b["vs_stage"], **{f: b[f] for f in FLAGS})
    return a, Perm(r=b["r"], w=b["w"], x=b["x"], u=b["u"])


def every_input():
    """Every (access, permissions) the check can be asked about: 2**15."""
    for n in range(1 << INPUT_BITS):
        yield decode(n)
