package xlat.common

import chisel3._

/** The privilege flags a core sends with every request (docs/privcheck.md). Each is the value
  * of the core's control register field for this access; a core of the other architecture
  * drives them 0 (each architecture's check reads only its own).
  *
  * RISC-V: `sum` = sstatus.SUM (vsstatus.SUM when stage 1 is the VS-stage), `mxr` = the
  * HS-level MXR (mstatus.MXR / sstatus.MXR), `vmxr` = vsstatus.MXR.
  * x86: `wp` = CR0.WP, `smep` = CR4.SMEP, `nxe` = IA32_EFER.NXE, and `smap` = SMAP protection is
  * in force for this access: CR4.SMAP = 1 and (EFLAGS.AC = 0 or the access is implicit). The
  * core folds EFLAGS.AC into `smap` (**decided**, docs/privcheck.md): the flag is "CR4.SMAP and
  * not EFLAGS.AC", so the check needs no AC input and no notion of implicit accesses.
  */
class PrivFlags extends Bundle {
  val sum = Bool()
  val mxr = Bool()
  val vmxr = Bool()
  val wp = Bool()
  val smep = Bool()
  val smap = Bool()
  val nxe = Bool()
}

/** The architectures' permission checks of one translation stage, once for every block: the
  * walker's leaf check and the TLB-hit check of XlatMmu call the same functions.
  *
  * Each function is pure: (the access: command, privilege, flags) and (the stage's accumulated
  * permissions, a [[Perm]]) -> deny. The reserved command (3) is always denied: its defined
  * response is the stage's page fault, which the calling block counts with its faults.
  *
  * Permissions are the walker's accumulated ones ([[PtFormat.accumulate]]): RISC-V the leaf's
  * R/W/X/U; x86 W = AND of R/W, U = AND of U/S, `x` = NOT(OR of XD) (so NX is `!x`; x86 has no
  * read permission and `r` is ignored); EPT R/W/X ANDed, `u` ignored.
  *
  * Out of scope (docs/privcheck.md): HLVX (a load that needs X instead of R; a core that
  * issues it sends a fetch), implicit supervisor accesses of x86 (descriptor tables: the core
  * sends them as supervisor accesses with `smap` set), protection keys (PKU/PKS), CET shadow
  * stacks, mode-based execute control of EPT, and M-mode with MPRV (the core sends the
  * effective privilege). x86's XD bit set with NXE = 0 is a reserved-bit fault, which belongs to
  * the walker's decode of the entry, not here.
  */
object PrivCheck {
  private def isRead(cmd: UInt): Bool = cmd === AccessCmd.Read.U
  private def isWrite(cmd: UInt): Bool = cmd === AccessCmd.Write.U
  private def isFetch(cmd: UInt): Bool = cmd === AccessCmd.Exec.U
  private def isReserved(cmd: UInt): Bool = cmd === AccessCmd.Reserved.U

  /** R, W or X by the command; a read also passes on X when `mxr` (RISC-V's Make eXecutable
    * Readable).
    */
  private def typeDenies(cmd: UInt, perm: Perm, mxr: Bool): Bool =
    (isRead(cmd) && !(perm.r || (mxr && perm.x))) || (isWrite(cmd) && !perm.w) || (isFetch(cmd) && !perm.x) ||
      isReserved(cmd)

  /** RISC-V stage 1 (satp, or vsatp when `vsStage`: V = 1, or HLV/HSV). RISC-V Privileged
    * Architecture, "Memory Privilege in sstatus Register" (SUM, MXR) and the U bit in "Sv32:
    * Page-Based 32-bit Virtual-Memory Systems", "Addressing and Memory Protection" (Sv39/48 refer
    * to it):
    *  - "U-mode software may only access the page when U=1";
    *  - "If the SUM bit in the sstatus register is set, supervisor mode software may also access
    *    pages with U=1" (loads and stores), but "Irrespective of SUM, the supervisor may not
    *    execute code on pages with U=1"; a supervisor access to a U=0 page is allowed;
    *  - MXR: "loads from pages marked either readable or executable (R=1 or X=1) will succeed".
    * "Two-Stage Address Translation" (H extension): "The vsstatus field MXR ... only overrides
    * VS-stage page protection"; "Setting MXR at HS-level, however, overrides both VS-stage and
    * G-stage execute-only permissions": the effective MXR of the VS-stage is mxr OR vmxr.
    */
  def rvStage1(cmd: UInt, user: Bool, vsStage: Bool, f: PrivFlags, perm: Perm): Bool = {
    val mxr = f.mxr || (vsStage && f.vmxr)
    val privDenies = Mux(user, !perm.u, perm.u && (isFetch(cmd) || !f.sum))
    privDenies || typeDenies(cmd, perm, mxr)
  }

  /** RISC-V G-stage (hgatp). "Two-Stage Address Translation", "Guest Physical Address
    * Translation": "For G-stage address translation, all memory accesses (including those made
    * to access data structures for VS-stage address translation) are considered to be user-level
    * accesses, as though executed in U-mode. Access type permissions ... are checked during
    * G-stage translation the same as for VS-stage translation": U = 1 always needed; only the
    * HS-level `mxr` makes an execute-only page readable (vsstatus.MXR does not reach the G-stage).
    */
  def rvGStage(cmd: UInt, f: PrivFlags, perm: Perm): Bool =
    !perm.u || typeDenies(cmd, perm, f.mxr)

  /** x86 4-level / 5-level paging. Intel SDM Vol. 3A, 4.6 "Access Rights", 4.6.1 "Determination
    * of Access Rights" (a user-mode address: U/S = 1 in every entry, the accumulated `u`):
    *  - user-mode accesses: "Data may not be read from any supervisor-mode address", nor written,
    *    and "Instructions may not be fetched from any supervisor-mode address"; "Data may be
    *    written to any user-mode address with a translation for which the R/W flag is 1 in every
    *    paging-structure entry" (CR0.WP does not matter);
    *  - supervisor-mode data writes: "If CR0.WP = 1, data may be written to any supervisor-mode
    *    address with ... R/W flag is 1 in every paging-structure entry" (also to a user-mode
    *    address, SMAP aside); with CR0.WP = 0 any address is writable;
    *  - supervisor-mode data accesses to user-mode addresses with CR4.SMAP = 1: "If EFLAGS.AC = 0
    *    or the access is implicit, data may not be read from any user-mode address" (nor
    *    written): `smap`;
    *  - supervisor fetches from user-mode addresses: "If CR4.SMEP = 1, instructions may not be
    *    fetched from any user-mode address";
    *  - every fetch "if IA32_EFER.NXE = 1 ... may not be fetched from any ... address with a
    *    translation for which the XD flag is 1 in any paging-structure entry"; with NXE = 0 XD is
    *    not a permission.
    */
  def x86(cmd: UInt, user: Bool, f: PrivFlags, perm: Perm): Bool = {
    val nx = f.nxe && !perm.x
    val data = isRead(cmd) || isWrite(cmd)
    val userDenies = !perm.u || (isWrite(cmd) && !perm.w)
    val supDenies = (isWrite(cmd) && f.wp && !perm.w) || (data && perm.u && f.smap) || (isFetch(cmd) && perm.u && f.smep)
    Mux(user, userDenies, supDenies) || (isFetch(cmd) && nx) || isReserved(cmd)
  }

  /** EPT (x86 stage 2). Intel SDM Vol. 3C, "EPT Violations": an EPT violation occurs when "the
    * access is a data read and, for any byte to be read, bit 0 (read access) was clear in any of
    * the EPT paging-structure entries used to translate", likewise a data write and bit 1, an
    * instruction fetch and bit 2 (execute access; mode-based execute control off). No user bit.
    */
  def ept(cmd: UInt, perm: Perm): Bool =
    (isRead(cmd) && !perm.r) || (isWrite(cmd) && !perm.w) || (isFetch(cmd) && !perm.x) || isReserved(cmd)

  /** The stage-1 check of a guest format family (a walker's `guest`): RISC-V or x86. */
  def stage1(family: PtFamily, cmd: UInt, user: Bool, vsStage: Bool, f: PrivFlags, perm: Perm): Bool = family match {
    case PtFamily.RiscV => rvStage1(cmd, user, vsStage, f, perm)
    case PtFamily.X86   => x86(cmd, user, f, perm)
    case PtFamily.Ept   => throw new IllegalArgumentException("PrivCheck.stage1: EPT is a stage-2 format")
  }

  /** The stage-2 check of a host format family (a walker's `host`): the G-stage or EPT. */
  def stage2(family: PtFamily, cmd: UInt, f: PrivFlags, perm: Perm): Bool = family match {
    case PtFamily.RiscV => rvGStage(cmd, f, perm)
    case PtFamily.Ept   => ept(cmd, perm)
    case PtFamily.X86   => throw new IllegalArgumentException("PrivCheck.stage2: x86 paging is a stage-1 format")
  }
}
