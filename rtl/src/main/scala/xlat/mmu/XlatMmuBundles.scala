package xlat.mmu

import chisel3._
import chisel3.util.log2Ceil
import xlat.common.{AccessCmd, PageSize, PrivFlags, TransMode}

/** A translation request of the core (spec xlat-mmu.md, Ports). */
class MmuReq(p: XlatMmuParams) extends Bundle {
  val id = UInt(p.idBits.W)
  /** The virtual address (a GPA in stage-2-only mode, the PA in bare mode), bytes. */
  val va = UInt(64.W)
  val cmd = UInt(AccessCmd.width.W)
  /** 1 user (U-mode / CPL 3), 0 supervisor. */
  val priv = Bool()
  /** [[xlat.common.TransMode]]: 0 bare, 1 stage 1 only, 2 stage 2 only, 3 both. */
  val mode = UInt(TransMode.width.W)
  val asid = UInt(p.asidBits.W)
  val vmid = UInt(p.vmidBits.W)
  val ccid = UInt(p.ccidBits.W)
  val pcIdx = UInt(log2Ceil(p.pcBits).max(1).W)
  val pcIdxValid = Bool()
  /** Stage-1 root page number: guest-physical with mode 3, host-physical with mode 1. */
  val s1Root = UInt(p.s1RootBits.W)
  /** Stage-2 root page number (host-physical). */
  val s2Root = UInt(p.s2RootBits.W)
  val flags = new PrivFlags
}

/** Fault kinds of a response (spec: none, page fault, guest-page fault, access fault, reserved). */
object MmuFault {
  val width = 3
  val None = 0
  /** Stage-1 fault: RISC-V page fault (12/13/15), x86 #PF. */
  val Page = 1
  /** Stage-2 fault: RISC-V guest-page fault (20/21/23), x86 EPT violation. */
  val GuestPage = 2
  /** Bus error of a walk, or a bare-mode address beyond `paBits`. */
  val Access = 3
  /** Reserved bit / misconfiguration in a table, or the reserved command. */
  val Reserved = 4
}

/** Which level answered (**decided**: bare and immediate faults answer as L1). */
object MmuSource {
  val width = 2
  val L1 = 0
  val L2 = 1
  val Walk = 2
}

class MmuResp(p: XlatMmuParams) extends Bundle {
  val id = UInt(p.idBits.W)
  /** Physical frame of the 4 KiB page holding `va`. */
  val pa = UInt((p.paBits - 12).W)
  val pageSize = UInt(PageSize.width.W)
  val fault = UInt(MmuFault.width.W)
  /** 0 stage 1 (guest), 1 stage 2 (host). */
  val faultStage = UInt(1.W)
  /** For htval / the EPT violation's qualification: the walker's `faultGpa`. */
  val faultGpa = UInt(64.W)
  val source = UInt(MmuSource.width.W)
}

class MmuFence(p: XlatMmuParams) extends Bundle {
  /** [[FenceKind]]. */
  val kind = UInt(FenceKind.width.W)
  /** The page of the va / gpa kinds: `va >> 12`, the TLBs' `vpnBits` low bits of it (no
    * unused port bits: a page offset or bits the TLBs do not tag would be ignored anyway). */
  val vpn = UInt(p.vpnBits.W)
  val asid = UInt(p.asidBits.W)
  val vmid = UInt(p.vmidBits.W)
  val ccid = UInt(p.ccidBits.W)
}

object MmuPerf {
  val names: Seq[String] = Seq(
    "requests", "bare", "l1Hits", "l2Hits", "walks", "permMisses", "dirtyMisses", "rangeWalks",
    "pageFaults", "guestPageFaults", "accessFaults", "reservedFaults", "fences", "badFences", "badCmds",
    "badMemResps", "badCsrs", "busyCycles"
  )
}
