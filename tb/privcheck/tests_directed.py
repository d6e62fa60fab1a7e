"""cocotb tests of xlat.common.PrivCheck through the test-only PrivCheckWrapper
(docs/privcheck.md, whose rule table names the test of every rule).

* test_exhaustive_against_the_model: every input of the wrapper (2**15: command, privilege,
  VS-stage, the 7 flags, R/W/X/U), each of the four stage verdicts against models/privcheck.py.
* One directed test per rule per architecture: concrete cases whose verdict the test states from
  the rule's ISA text (and checks that the model states the same).

The wrapper is combinational: a test drives the inputs, waits 1 ns and reads the verdicts.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import Timer

from models.privcheck import (EPT, FETCH, FLAGS, INPUT_BITS, INPUTS, READ, RESERVED, RV_GSTAGE,
                              RV_STAGE1, STAGES, WRITE, X86, Access, Perm, decode, verdicts)
from xlat_tb.cycle import TbError

# the wrapper's input of every field of (Access, Perm)
PORT = {"user": "user", "vs_stage": "vsStage", **{f: f"flags_{f}" for f in FLAGS},
        **{f: f"perm_{f}" for f in "rwxu"}}


def drive(dut, a: Access, p: Perm) -> None:
    dut.cmd.value = a.cmd
    for field, port in PORT.items():
        src = p if port.startswith("perm_") else a
        getattr(dut, port).value = int(getattr(src, field))


def read(dut) -> dict[str, bool]:
    return {s: bool(int(getattr(dut, f"deny_{s}").value)) for s in STAGES}


async def verdicts_of(dut, a: Access, p: Perm) -> dict[str, bool]:
    drive(dut, a, p)
    await Timer(1, "ns")
    return read(dut)


async def expect(dut, rule: str, a: Access, p: Perm, **deny: bool) -> None:
    """The rule's verdict (stage=True: denied, False: allowed) for stages named in ``deny``."""
    model = verdicts(a, p)
    wrong_model = {s: model[s] for s, d in deny.items() if model[s] != d}
    if wrong_model:
        raise TbError(f"{rule}: the model says {wrong_model} for {a} {p}, the rule {deny}")
    got = await verdicts_of(dut, a, p)
    wrong = {s: got[s] for s, d in deny.items() if got[s] != d}
    if wrong:
        raise TbError(f"{rule}: the RTL's deny {wrong} for {a} {p}, the rule says {deny}")


RWXU = Perm(r=True, w=True, x=True, u=True)
RWX_S = Perm(r=True, w=True, x=True, u=False)       # a supervisor page (U=0 / U/S=0)
X_ONLY_U = Perm(x=True, u=True)
RO_U = Perm(r=True, x=True, u=True)                 # read-only user page (x86: R/W=0)
RO_S = Perm(r=True, x=True, u=False)
CMDS = (READ, WRITE, FETCH)


# ---------------------------------------------------------------- every input
@cocotb.test()
async def test_exhaustive_against_the_model(dut):
    """Every input combination in Gray-code order (one input changes per step), all four
    verdicts compared with the model."""
    port_of_bit = ["cmd", "cmd"] + [PORT[n] for n in INPUTS[2:]]
    a, p = decode(0)
    drive(dut, a, p)
    mismatches = []
    for i in range(1 << INPUT_BITS):
        n = i ^ (i >> 1)
        if i:
            b = (i & -i).bit_length() - 1           # the bit that changed
            a, p = decode(n)
            port = port_of_bit[b]
            getattr(dut, port).value = a.cmd if port == "cmd" else (n >> b) & 1
        await Timer(1, "ns")
        got, want = read(dut), verdicts(a, p)
        if got != want:
            mismatches.append((a, p, got, want))
    if mismatches:
        a, p, got, want = mismatches[0]
        raise TbError(f"{len(mismatches)} of {1 << INPUT_BITS} inputs differ; first {a} {p}: "
                      f"RTL {got}, model {want}")
    dut._log.info("privcheck: %d inputs x %d stages agree with the model", 1 << INPUT_BITS,
                  len(STAGES))


# ---------------------------------------------------------------- RISC-V stage 1
@cocotb.test()
async def test_rv_user_access_needs_u(dut):
    """"U-mode software may only access the page when U=1"."""
    for cmd in CMDS:
        await expect(dut, "rv_user_needs_u", Access(cmd=cmd, user=True, sum=True), RWX_S,
                     rvStage1=True)
        await expect(dut, "rv_user_needs_u", Access(cmd=cmd, user=True), RWXU, rvStage1=False)


@cocotb.test()
async def test_rv_supervisor_access_to_supervisor_page_allowed(dut):
    """A U=0 page is the supervisor's: every access type it permits, SUM or not."""
    for cmd in CMDS:
        for s in (False, True):
            await expect(dut, "rv S-mode on a U=0 page", Access(cmd=cmd, user=False, sum=s),
                         RWX_S, rvStage1=False)


@cocotb.test()
async def test_rv_sum_allows_supervisor_load_of_user_page(dut):
    """"If the SUM bit in the sstatus register is set, supervisor mode software may also access
    pages with U=1": S-mode loads and stores of a U page fault without SUM, pass with it."""
    for cmd in (READ, WRITE):
        await expect(dut, "rv_supervisor_data_on_user_page_needs_sum",
                     Access(cmd=cmd, user=False), RWXU, rvStage1=True)
        await expect(dut, "rv_supervisor_data_on_user_page_needs_sum",
                     Access(cmd=cmd, user=False, sum=True), RWXU, rvStage1=False)
        await expect(dut, "rv_supervisor_data_on_user_page_needs_sum (VS-stage: vsstatus.SUM)",
                     Access(cmd=cmd, user=False, vs_stage=True, sum=True), RWXU, rvStage1=False)


@cocotb.test()
async def test_rv_supervisor_fetch_from_user_page_faults_even_with_sum(dut):
    """"Irrespective of SUM, the supervisor may not execute code on pages with U=1"."""
    for s in (False, True):
        await expect(dut, "rv_supervisor_never_fetches_user_page",
                     Access(cmd=FETCH, user=False, sum=s, mxr=True), RWXU, rvStage1=True)
    await expect(dut, "rv_supervisor_never_fetches_user_page (U=0 page: allowed)",
                 Access(cmd=FETCH, user=False, sum=True), RWX_S, rvStage1=False)


@cocotb.test()
async def test_rv_access_type_needs_rwx(dut):
    """A load needs R, a store W, a fetch X (on both RISC-V stages)."""
    ro, rw, xo = Perm(r=True, u=True), Perm(r=True, w=True, u=True), X_ONLY_U
    for stage in (RV_STAGE1, RV_GSTAGE):
        await expect(dut, "read needs R", Access(cmd=READ, user=True), ro, **{stage: False})
        await expect(dut, "read needs R", Access(cmd=READ, user=True), xo, **{stage: True})
        await expect(dut, "write needs W", Access(cmd=WRITE, user=True), ro, **{stage: True})
        await expect(dut, "write needs W", Access(cmd=WRITE, user=True), rw, **{stage: False})
        await expect(dut, "fetch needs X", Access(cmd=FETCH, user=True), rw, **{stage: True})
        await expect(dut, "fetch needs X", Access(cmd=FETCH, user=True), xo, **{stage: False})


@cocotb.test()
async def test_rv_mxr_makes_execute_only_page_readable(dut):
    """HS-level MXR: "loads from pages marked either readable or executable (R=1 or X=1) will
    succeed", on the VS-stage and the G-stage alike; stores and pages without X gain nothing."""
    load = Access(cmd=READ, user=True, mxr=True)
    await expect(dut, "MXR", Access(cmd=READ, user=True), X_ONLY_U, rvStage1=True, rvGStage=True)
    await expect(dut, "MXR", load, X_ONLY_U, rvStage1=False, rvGStage=False)
    await expect(dut, "MXR (VS-stage)", Access(cmd=READ, user=True, vs_stage=True, mxr=True),
                 X_ONLY_U, rvStage1=False, rvGStage=False)
    await expect(dut, "MXR does not make a page writable", Access(cmd=WRITE, user=True, mxr=True),
                 X_ONLY_U, rvStage1=True, rvGStage=True)
    await expect(dut, "MXR needs X", load, Perm(u=True), rvStage1=True, rvGStage=True)


@cocotb.test()
async def test_rv_vmxr_applies_to_stage1_only(dut):
    """"The vsstatus field MXR ... only overrides VS-stage page protection. Setting MXR at
    VS-level does not override guest-physical page protections"; and vsstatus.MXR is not in
    force when stage 1 is not the VS-stage (V=0, satp)."""
    v = Access(cmd=READ, user=True, vs_stage=True, vmxr=True)
    await expect(dut, "vsstatus.MXR on the VS-stage", v, X_ONLY_U, rvStage1=False, rvGStage=True)
    await expect(dut, "vsstatus.MXR on the VS-stage (supervisor, SUM)",
                 Access(cmd=READ, user=False, vs_stage=True, vmxr=True, sum=True), X_ONLY_U,
                 rvStage1=False, rvGStage=True)
    await expect(dut, "vsstatus.MXR without V", Access(cmd=READ, user=True, vmxr=True), X_ONLY_U,
                 rvStage1=True)


# ---------------------------------------------------------------- RISC-V G-stage
@cocotb.test()
async def test_rv_gstage_requires_u(dut):
    """"For G-stage address translation, all memory accesses ... are considered to be
    user-level accesses": a U=0 guest-physical page faults for every access, supervisor or
    not, SUM or not; a U=1 page serves the supervisor too."""
    for cmd in CMDS:
        for user in (False, True):
            await expect(dut, "rv_gstage_every_access_is_user",
                         Access(cmd=cmd, user=user, vs_stage=True, sum=True, mxr=True), RWX_S,
                         rvGStage=True)
            await expect(dut, "rv_gstage_every_access_is_user", Access(cmd=cmd, user=user),
                         RWXU, rvGStage=False)


# ---------------------------------------------------------------- x86
@cocotb.test()
async def test_x86_user_access_needs_u(dut):
    """SDM 4.6.1: user-mode accesses may not read, write or fetch a supervisor-mode address."""
    for cmd in CMDS:
        await expect(dut, "x86_user_needs_u", Access(cmd=cmd, user=True), RWX_S, x86=True)
        await expect(dut, "x86_user_needs_u", Access(cmd=cmd, user=True), RWXU, x86=False)


@cocotb.test()
async def test_x86_user_write_needs_w_whatever_wp(dut):
    """A user-mode write needs R/W = 1 in every entry; CR0.WP does not matter for it."""
    for wp in (False, True):
        await expect(dut, "x86_user_write_needs_w", Access(cmd=WRITE, user=True, wp=wp), RO_U,
                     x86=True)
        await expect(dut, "x86_user_write_needs_w", Access(cmd=WRITE, user=True, wp=wp), RWXU,
                     x86=False)


@cocotb.test()
async def test_x86_wp_makes_supervisor_honor_read_only(dut):
    """"If CR0.WP = 0, data may be written to any supervisor-mode address"; with WP = 1 only
    with R/W = 1 in every entry; the same for a user-mode address when SMAP is not in force."""
    for page in (RO_S, RO_U):
        await expect(dut, "x86_supervisor_write_needs_w_with_wp", Access(cmd=WRITE, user=False),
                     page, x86=False)
        await expect(dut, "x86_supervisor_write_needs_w_with_wp",
                     Access(cmd=WRITE, user=False, wp=True), page, x86=True)
    await expect(dut, "x86_supervisor_write_needs_w_with_wp", Access(cmd=WRITE, user=False, wp=True),
                 RWX_S, x86=False)


@cocotb.test()
async def test_x86_smap_blocks_supervisor_data_access_to_user_page(dut):
    """CR4.SMAP with EFLAGS.AC = 0 (the request's `smap`): supervisor-mode data may not be read
    from or written to any user-mode address. Not supervisor pages, not fetches, not user-mode
    accesses."""
    for cmd in (READ, WRITE):
        await expect(dut, "x86_smap", Access(cmd=cmd, user=False), RWXU, x86=False)
        await expect(dut, "x86_smap", Access(cmd=cmd, user=False, smap=True), RWXU, x86=True)
        await expect(dut, "x86_smap (supervisor page)", Access(cmd=cmd, user=False, smap=True),
                     RWX_S, x86=False)
        await expect(dut, "x86_smap (user-mode access)", Access(cmd=cmd, user=True, smap=True),
                     RWXU, x86=False)
    await expect(dut, "x86_smap (fetch: SMEP's business)", Access(cmd=FETCH, user=False, smap=True),
                 RWXU, x86=False)


@cocotb.test()
async def test_x86_smep_blocks_supervisor_fetch_from_user_page(dut):
    """"If CR4.SMEP = 1, instructions may not be fetched from any user-mode address" (in
    supervisor mode); supervisor pages, data accesses and user-mode fetches are not affected."""
    await expect(dut, "x86_smep", Access(cmd=FETCH, user=False), RWXU, x86=False)
    await expect(dut, "x86_smep", Access(cmd=FETCH, user=False, smep=True), RWXU, x86=True)
    await expect(dut, "x86_smep (supervisor page)", Access(cmd=FETCH, user=False, smep=True),
                 RWX_S, x86=False)
    await expect(dut, "x86_smep (user-mode fetch)", Access(cmd=FETCH, user=True, smep=True),
                 RWXU, x86=False)
    await expect(dut, "x86_smep (data)", Access(cmd=READ, user=False, smep=True), RWXU, x86=False)


@cocotb.test()
async def test_x86_nx_ignored_without_nxe(dut):
    """"If IA32_EFER.NXE = 0, instructions may be fetched from any" (user-mode by a user,
    supervisor-mode by the supervisor) address: XD is no permission then."""
    nx_u, nx_s = Perm(r=True, w=True, u=True), Perm(r=True, w=True)
    await expect(dut, "x86 NX without NXE", Access(cmd=FETCH, user=True), nx_u, x86=False)
    await expect(dut, "x86 NX without NXE", Access(cmd=FETCH, user=False), nx_s, x86=False)
    await expect(dut, "x86 NX without NXE", Access(cmd=FETCH, user=False), nx_u, x86=False)


@cocotb.test()
async def test_x86_nx_blocks_fetch_with_nxe(dut):
    """With NXE = 1 no fetch from an address with XD = 1 in any entry (either privilege); data
    accesses to it are not affected."""
    nx_u = Perm(r=True, w=True, u=True)
    for user in (False, True):
        await expect(dut, "x86_nx_blocks_fetch_with_nxe", Access(cmd=FETCH, user=user, nxe=True),
                     nx_u, x86=True)
        await expect(dut, "x86_nx_blocks_fetch_with_nxe", Access(cmd=FETCH, user=user, nxe=True),
                     RWXU, x86=False)
    await expect(dut, "x86_nx (data)", Access(cmd=READ, user=True, nxe=True), nx_u, x86=False)


@cocotb.test()
async def test_x86_has_no_read_permission(dut):
    """x86 paging has no read bit: every present page is readable (R is not looked at)."""
    for user in (False, True):
        await expect(dut, "x86 read", Access(cmd=READ, user=user), Perm(u=user), x86=False)


# ---------------------------------------------------------------- EPT
@cocotb.test()
async def test_ept_access_type_needs_rwx(dut):
    """SDM Vol. 3C "EPT Violations": a read needs bit 0 (R), a write bit 1 (W), a fetch bit 2
    (X) in every EPT entry."""
    for cmd, need in ((READ, "r"), (WRITE, "w"), (FETCH, "x")):
        for have in "rwx":
            p = Perm(**{have: True}, u=True)
            await expect(dut, "ept", Access(cmd=cmd, user=True), p, ept=have != need)


@cocotb.test()
async def test_ept_has_no_user_bit(dut):
    """EPT entries have no user bit, and no guest control register reaches EPT: privilege, U
    and every flag leave its verdict alone."""
    rw = Perm(r=True, w=True)
    for user in (False, True):
        await expect(dut, "ept", Access(cmd=WRITE, user=user), rw, ept=False)
        await expect(dut, "ept", Access(cmd=WRITE, user=user, **{f: True for f in FLAGS}), rw,
                     ept=False)
        await expect(dut, "ept", Access(cmd=FETCH, user=user, mxr=True, vmxr=True, nxe=True), rw,
                     ept=True)


# ---------------------------------------------------------------- bad input
@cocotb.test()
async def test_reserved_command_denied_by_every_stage(dut):
    """Command 3 is reserved: every stage denies it, whatever the permissions and flags (the
    block that uses the check reports the stage's fault and counts it)."""
    for user in (False, True):
        await expect(dut, "reserved_command", Access(cmd=RESERVED, user=user, sum=True, mxr=True),
                     RWXU, **{s: True for s in STAGES})
        await expect(dut, "reserved_command", Access(cmd=RESERVED, user=user), RWX_S,
                     **{s: True for s in STAGES})
