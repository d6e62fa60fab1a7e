package xlat.babelfish

import chisel3._
import chisel3.util.MuxLookup
import xlat.common.PageSize

/** How a valid entry relates to a lookup, per priority class (at most one is true). */
class ClassMatch extends Bundle {
  val priv = Bool()
  val global = Bool()
  val shared = Bool()
}

/** The BabelFish rules as functions of one entry `e` whose `vpn` is the full VPN.
  *
  * This is the heart of the block and the only place that decides who may use an entry:
  * lookups, fills (key equality) and invalidations all call it.
  */
class MatchRule(p: BabelFishParams) {

  /** The requester's PC bit for this entry, with an out-of-range index counting as set. */
  def pcBitSet(e: BabelFishEntry, r: LookupReq): Bool = {
    val outOfRange = if ((1 << p.pcIdxBits) > p.pcBits) r.pcIdx >= p.pcBits.U else false.B
    val bits = VecInit(e.pc.asBools.padTo(1 << p.pcIdxBits, false.B))
    r.pcIdxValid && (outOfRange || (e.orpc.orR && bits(r.pcIdx)))
  }

  def lookup(e: BabelFishEntry, valid: Bool, r: LookupReq): ClassMatch = {
    val m = Wire(new ClassMatch)
    val here = valid && PageSize.covers(e.vpn, e.pageSize, r.vpn)
    val sameCcid = e.ccid === r.ccid
    m.global := here && e.global
    if (p.sharing) {
      m.priv := here && !e.global && e.own && e.pcid === r.pcid && sameCcid
      m.shared := here && !e.global && !e.own && sameCcid && !pcBitSet(e, r)
    } else {
      m.priv := here && !e.global && e.pcid === r.pcid
      m.shared := false.B
    }
    m
  }

  /** Two entries have the same key: class, page, size, and pcid (private) or ccid (shared). */
  def sameKey(e: BabelFishEntry, valid: Bool, n: BabelFishEntry): Bool = {
    val sameClass = e.global === n.global && (e.global || e.own === n.own)
    val samePage = e.pageSize === n.pageSize && PageSize.covers(e.vpn, e.pageSize, n.vpn)
    val sameOwner = e.global || Mux(e.own, e.pcid === n.pcid, e.ccid === n.ccid)
    valid && sameClass && samePage && sameOwner
  }

  /** True when invalidation `i` removes the valid entry `e` (reserved kinds act as kind 0). */
  def removes(e: BabelFishEntry, i: InvalReq): Bool = {
    val priv = !e.global && e.own
    val page = PageSize.covers(e.vpn, e.pageSize, i.vpn)
    val pcid = e.pcid === i.pcid
    val ccid = !e.global && e.ccid === i.ccid
    MuxLookup(i.kind, true.B)(
      Seq(
        InvalKind.NonGlobal.U -> !e.global,
        InvalKind.Pcid.U -> (priv && pcid),
        InvalKind.Ccid.U -> ccid,
        InvalKind.PagePcid.U -> (priv && pcid && page),
        InvalKind.PageCcid.U -> (ccid && page)
      )
    )
  }

  /** The entry a fill writes: superpage VPN/PPN aligned, own forced for sharing off. */
  def entryOf(f: FillReq): BabelFishEntry = {
    val e = Wire(new BabelFishEntry(p, p.vpnBits))
    e.vpn := PageSize.align(f.vpn, f.pageSize)
    e.ppn := PageSize.align(f.ppn, f.pageSize)
    e.pageSize := f.pageSize
    e.perm := f.perm
    e.dirty := f.dirty
    e.global := f.global
    e.pcid := f.pcid
    e.ccid := f.ccid
    e.own := (if (p.sharing) f.own else f.own || !f.global)
    e.pc := (if (p.sharing) f.pc else 0.U(0.W))
    e.orpc := (if (p.sharing) f.pc.orR else 0.U(0.W))
    e
  }

  /** A fill that is not installed (reserved size) or whose superpage PPN is misaligned. */
  def badFill(f: FillReq): Bool =
    f.pageSize === PageSize.Reserved.U || PageSize.misaligned(f.ppn, f.pageSize)
}
