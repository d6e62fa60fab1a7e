package xlat.babelfish

import chisel3._
import xlat.common.{AccessCmd, PageSize, Perm}

class LookupReq(p: BabelFishParams) extends Bundle {
  val vpn = UInt(p.vpnBits.W)
  val pcid = UInt(p.pcidBits.W)
  val ccid = UInt(p.ccidBits.W)
  /** The requester's VM (zero width, no port, with `vmidBits` = 0). */
  val vmid = UInt(p.vmidBits.W)
  val pcIdx = UInt(p.pcIdxBits.W)
  val pcIdxValid = Bool()
  val cmd = UInt(AccessCmd.width.W)
  val user = Bool()
}

class LookupResp(p: BabelFishParams) extends Bundle {
  val hit = Bool()
  val ppn = UInt(p.ppnBits.W)
  val pageSize = UInt(PageSize.width.W)
  val perm = new Perm
  val dirty = Bool()
  val shared = Bool()
  val crossHit = Bool()
  val permFault = Bool()
}

class FillReq(p: BabelFishParams) extends Bundle {
  val vpn = UInt(p.vpnBits.W)
  val ppn = UInt(p.ppnBits.W)
  val pageSize = UInt(PageSize.width.W)
  val perm = new Perm
  val dirty = Bool()
  val global = Bool()
  val pcid = UInt(p.pcidBits.W)
  val ccid = UInt(p.ccidBits.W)
  val vmid = UInt(p.vmidBits.W)
  val own = Bool()
  val pc = UInt(p.pcBits.W)
}

/** Invalidation kinds (docs/babelfish-tlb.md, Invalidation). With a VMID tag kinds 1 to 5 act
  * inside `inval.vmid` only, and 6 (`Vmid`) and 7 (`PageVmid`) are defined; without one, 6 and
  * 7 are reserved and act as kind 0.
  */
object InvalKind {
  val width = 3
  val All = 0
  val NonGlobal = 1
  val Pcid = 2
  val Ccid = 3
  val PagePcid = 4
  val PageCcid = 5
  val Vmid = 6
  val PageVmid = 7
  def reserved(kind: UInt, p: BabelFishParams): Bool = if (p.vmid) false.B else kind > PageCcid.U
}

class InvalReq(p: BabelFishParams) extends Bundle {
  val kind = UInt(InvalKind.width.W)
  val vpn = UInt(p.vpnBits.W)
  val pcid = UInt(p.pcidBits.W)
  val ccid = UInt(p.ccidBits.W)
  val vmid = UInt(p.vmidBits.W)
}

/** One TLB entry. `vpn` holds `vpnBits` in the superpage array and only the tag above the set
  * index in the 4 KiB array. `orpc` is the OR of `pc`, as in the paper's O-PC field; with sharing
  * off neither is stored (zero width), since no request can consult them.
  */
class BabelFishEntry(p: BabelFishParams, vpnWidth: Int) extends Bundle {
  val vpn = UInt(vpnWidth.W)
  val ppn = UInt(p.ppnBits.W)
  val pageSize = UInt(PageSize.width.W)
  val perm = new Perm
  val dirty = Bool()
  val global = Bool()
  val pcid = UInt(p.pcidBits.W)
  val ccid = UInt(p.ccidBits.W)
  val vmid = UInt(p.vmidBits.W)
  val own = Bool()
  val pc = UInt(p.storedPcBits.W)
  val orpc = UInt(p.storedPcBits.min(1).W)

  /** This entry with its `vpn` field replaced by `newVpn` (of another width). */
  def withVpn(newVpn: UInt): BabelFishEntry = {
    val e = Wire(new BabelFishEntry(p, newVpn.getWidth))
    e.vpn := newVpn
    e.ppn := ppn; e.pageSize := pageSize; e.perm := perm; e.dirty := dirty; e.global := global
    e.pcid := pcid; e.ccid := ccid; e.vmid := vmid; e.own := own; e.pc := pc; e.orpc := orpc
    e
  }
}

object BabelFishPerf {
  val names: Seq[String] = Seq(
    "lookups", "hits", "sharedHits", "crossHits", "permFaults", "fills", "evictions", "invals", "badFills",
    "badPcIdx", "badCmds", "badInvals"
  )
}

/** Formal-only view of every entry, packed: entry i occupies bits [i*W +: W] of each field. */
class BabelFishDbg(p: BabelFishParams) extends Bundle {
  val valid = UInt(p.entries.W)
  val vpn = UInt((p.entries * p.vpnBits).W)
  val ppn = UInt((p.entries * p.ppnBits).W)
  val pageSize = UInt((p.entries * PageSize.width).W)
  val global = UInt(p.entries.W)
  val own = UInt(p.entries.W)
  val pcid = UInt((p.entries * p.pcidBits).W)
  val ccid = UInt((p.entries * p.ccidBits).W)
  val vmid = UInt((p.entries * p.vmidBits).W)
  val pc = UInt((p.entries * p.pcBits).W)
  val orpc = UInt(p.entries.W)
}
