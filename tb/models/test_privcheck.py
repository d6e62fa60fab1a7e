"""Unit tests of models/privcheck.py (pure Python, no simulator).

The model states each architecture's checks as rules that deny; these tests state them a
second way, as the ISA texts list what is *allowed* (Intel SDM Vol. 3A 4.6.1 case by case:
privilege x access type x kind of address; RISC-V: privilege allowed and access type allowed),
and compare the two over every input. The rest are properties the texts imply (which inputs a
stage ignores, monotonicity in R/W/X) and concrete cases taken from the texts."""

from dataclasses import replace

import pytest

from models.privcheck import (DATA, EPT, FETCH, FLAGS, INPUTS as INPUT_NAMES, READ,
                              RESERVED, RULES, RV_FLAGS, RV_GSTAGE, RV_STAGE1, STAGES, WRITE, X86,
                              X86_FLAGS, Access, Perm, denies, denying_rules, every_input)

INPUTS = list(every_input())
# every stage's verdict by input index (bit i of the index: INPUT_NAMES[i])
VERDICT = {s: [denies(s, a, p) for a, p in INPUTS] for s in STAGES}


def bit(name: str) -> int:
    return 1 << INPUT_NAMES.index(name)


# ---------------------------------------------------------------- the ISA texts, as "allowed"
def rv_stage1_allowed(a: Access, p: Perm) -> bool:
    if a.cmd == RESERVED:
        return False
    if a.user:
        priv_ok = p.u                                    # U-mode: only U=1 pages
    elif p.u:
        priv_ok = a.sum and a.cmd != FETCH               # S-mode on a U page: SUM, never fetch
    else:
        priv_ok = True                                   # S-mode on an S page
    mxr = a.mxr or (a.vmxr and a.vs_stage)
    return priv_ok and {READ: p.r or (mxr and p.x), WRITE: p.w, FETCH: p.x}[a.cmd]


def rv_gstage_allowed(a: Access, p: Perm) -> bool:
    if a.cmd == RESERVED:
        return False
    return p.u and {READ: p.r or (a.mxr and p.x), WRITE: p.w, FETCH: p.x}[a.cmd]


def sdm_allowed(a: Access, p: Perm) -> bool:
    """Intel SDM Vol. 3A 4.6.1 "Determination of Access Rights", its list in its order
    (4-level / 5-level paging; protection keys out of scope)."""
    if a.cmd == RESERVED:
        return False
    user_address = p.u
    fetch_ok_by_xd = (not a.nxe) or p.x        # "if IA32_EFER.NXE = 0 ... any ... address"
    if not a.user:                             # supervisor-mode access
        if a.cmd == READ:
            return not user_address or not a.smap
        if a.cmd == WRITE:
            if not user_address:
                return (not a.wp) or p.w
            if a.smap:
                return False
            return (not a.wp) or p.w
        # fetch
        if user_address:
            return (not a.smep) and fetch_ok_by_xd
        return fetch_ok_by_xd
    # user-mode access
    if not user_address:
        return False
    if a.cmd == READ:
        return True
    if a.cmd == WRITE:
        return p.w
    return fetch_ok_by_xd


def ept_allowed(a: Access, p: Perm) -> bool:
    return {READ: p.r, WRITE: p.w, FETCH: p.x, RESERVED: False}[a.cmd]


ALLOWED = {RV_STAGE1: rv_stage1_allowed, RV_GSTAGE: rv_gstage_allowed, X86: sdm_allowed,
           EPT: ept_allowed}


@pytest.mark.parametrize("stage", STAGES)
def test_rules_equal_the_allowed_cases_over_every_input(stage):
    assert len(INPUTS) == 2 ** 15
    bad = [(a, p) for (a, p), d in zip(INPUTS, VERDICT[stage]) if d == ALLOWED[stage](a, p)]
    assert not bad, f"{stage}: {len(bad)} inputs differ, first {bad[0]}"


@pytest.mark.parametrize("stage", STAGES)
def test_every_rule_is_needed(stage):
    """Each rule is the only one that denies some input: none is implied by the others."""
    sole = {rs[0] for rs in (denying_rules(stage, a, p) for (a, p), d in zip(INPUTS, VERDICT[stage])
                             if d) if len(rs) == 1}
    for rule in RULES[stage]:
        assert rule.__name__ in sole, f"{stage}: {rule.__name__} never denies alone"


# ---------------------------------------------------------------- what each stage ignores
IGNORED = {
    # RISC-V reads no x86 flag; the G-stage neither the privilege nor SUM, vsstatus.MXR or V
    RV_STAGE1: X86_FLAGS,
    RV_GSTAGE: X86_FLAGS + ("user", "sum", "vmxr", "vs_stage"),
    # x86 reads no RISC-V flag, not V, and has no read permission
    X86: RV_FLAGS + ("vs_stage", "r"),
    # EPT: access type against R/W/X only
    EPT: FLAGS + ("user", "vs_stage", "u"),
}


@pytest.mark.parametrize("stage", STAGES)
def test_stage_ignores_what_its_architecture_does_not_define(stage):
    v = VERDICT[stage]
    for f in IGNORED[stage]:
        b = bit(f)
        bad = [n for n in range(len(v)) if v[n] != v[n ^ b]]
        assert not bad, f"{stage} reads {f}: {INPUTS[bad[0]]}"
    # and every input it does not ignore matters somewhere
    for f in INPUT_NAMES:
        if f not in IGNORED[stage] and not f.startswith("cmd"):
            assert any(v[n] != v[n ^ bit(f)] for n in range(len(v))), f"{stage} ignores {f}"


def test_vmxr_matters_only_for_the_vs_stage():
    v, b = VERDICT[RV_STAGE1], bit("vmxr")
    assert all(v[n] == v[n ^ b] for n in range(len(v)) if not n & bit("vs_stage"))


@pytest.mark.parametrize("stage", STAGES)
def test_more_rwx_never_denies_more(stage):
    """Granting R, W or X never turns an allowed access into a denied one (U is different:
    below)."""
    v = VERDICT[stage]
    for f in ("r", "w", "x"):
        b = bit(f)
        bad = [n for n in range(len(v)) if not n & b and not v[n] and v[n | b]]
        assert not bad, f"{stage}: granting {f} denies {INPUTS[bad[0]]}"


def test_u_bit_is_not_monotonic_for_the_supervisor():
    """A U=1 page is closed to the supervisor where a U=0 page is open: RISC-V without SUM,
    x86 with SMAP / SMEP."""
    p0, p1 = Perm(r=True, w=True, x=True, u=False), Perm(r=True, w=True, x=True, u=True)
    s_read = Access(cmd=READ, user=False)
    assert not denies(RV_STAGE1, s_read, p0) and denies(RV_STAGE1, s_read, p1)
    assert not denies(X86, replace(s_read, smap=True), p0)
    assert denies(X86, replace(s_read, smap=True), p1)
    s_fetch = Access(cmd=FETCH, user=False, smep=True)
    assert not denies(X86, s_fetch, p0) and denies(X86, s_fetch, p1)


def test_reserved_command_denied_everywhere():
    for n, (a, p) in enumerate(INPUTS):
        if a.cmd == RESERVED:
            assert all(VERDICT[s][n] for s in STAGES)
            assert all("reserved_command" in denying_rules(s, a, p) for s in STAGES)


# ---------------------------------------------------------------- concrete cases from the texts
RWXU = Perm(r=True, w=True, x=True, u=True)
X_ONLY_U = Perm(x=True, u=True)


def test_rv_examples():
    # "Irrespective of SUM, the supervisor may not execute code on pages with U=1"
    assert denying_rules(RV_STAGE1, Access(cmd=FETCH, user=False, sum=True), RWXU) == \
        ["rv_supervisor_never_fetches_user_page"]
    # SUM opens U pages to S-mode loads and stores
    for cmd in DATA:
        assert denies(RV_STAGE1, Access(cmd=cmd, user=False), RWXU)
        assert not denies(RV_STAGE1, Access(cmd=cmd, user=False, sum=True), RWXU)
    # vsstatus.MXR: VS-stage only; HS MXR: both stages
    vload = Access(cmd=READ, user=True, vs_stage=True, vmxr=True)
    assert not denies(RV_STAGE1, vload, X_ONLY_U) and denies(RV_GSTAGE, vload, X_ONLY_U)
    hsload = Access(cmd=READ, user=True, mxr=True)
    assert not denies(RV_STAGE1, hsload, X_ONLY_U) and not denies(RV_GSTAGE, hsload, X_ONLY_U)
    # G-stage: a supervisor access to a U=0 guest-physical page faults
    assert denying_rules(RV_GSTAGE, Access(cmd=READ, user=False, sum=True),
                         replace(RWXU, u=False)) == ["rv_gstage_every_access_is_user"]


def test_x86_examples():
    ro_user = Perm(r=True, w=False, x=True, u=True)
    ro_sup = replace(ro_user, u=False)
    # CR0.WP: the supervisor writes read-only pages only with WP=0; a user never
    assert not denies(X86, Access(cmd=WRITE, user=False), ro_sup)
    assert denies(X86, Access(cmd=WRITE, user=False, wp=True), ro_sup)
    assert denies(X86, Access(cmd=WRITE, user=True), ro_user)
    # SMAP: supervisor data accesses to user pages; SMEP: supervisor fetches from them
    assert denying_rules(X86, Access(cmd=READ, user=False, smap=True), ro_user) == \
        ["x86_smap_blocks_supervisor_data_on_user_page"]
    assert denying_rules(X86, Access(cmd=FETCH, user=False, smep=True), ro_user) == \
        ["x86_smep_blocks_supervisor_fetch_from_user_page"]
    # NX counts only with NXE
    nx = replace(ro_user, x=False)
    assert not denies(X86, Access(cmd=FETCH, user=True), nx)
    assert denies(X86, Access(cmd=FETCH, user=True, nxe=True), nx)


def test_ept_examples():
    assert denying_rules(EPT, Access(cmd=FETCH, user=True), Perm(r=True, w=True, u=True)) == \
        ["ept_fetch_needs_x"]
    assert not denies(EPT, Access(cmd=WRITE, user=True), Perm(r=True, w=True))
