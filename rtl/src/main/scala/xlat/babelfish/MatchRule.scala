package xlat.babelfish

import chisel3._
import chisel3.util.UIntToOH
import xlat.common.PageSize

/** How a valid entry relates to a lookup, per priority class (at most one is true). */
class ClassMatch extends Bundle {
  val priv = Bool()
  val global = Bool()
  val shared = Bool()

  /** This match for an entry whose valid bit is `v`. */
  def onlyIf(v: Bool): ClassMatch = {
    val m = Wire(new ClassMatch)
    m.priv := priv && v
    m.global := global && v
    m.shared := shared && v
    m
  }
}

/** [[MatchRule.pcSelectOf]]: the requester's PC bit as a one-hot mask over `pcBits`. */
class PcSelect(p: BabelFishParams) extends Bundle {
  val sel = UInt(p.pcBits.W)
  val force = Bool()
}

/** The BabelFish rules as functions of one entry `e` whose `vpn` is the full VPN.
  *
  * This is the heart of the block and the only place that decides who may use an entry:
  * lookups, fills (key equality) and invalidations all call it. With a VMID tag (`vmidBits` >
  * 0) every one of them first requires the entry's VMID to be the operation's: a global entry
  * is global inside its VM, sharing by CCID happens inside one VM, a key is per VM, and
  * invalidations other than kind 0 act inside one VM.
  */
class MatchRule(p: BabelFishParams) {

  /** `b`, and the entry's VM `e` is the operation's `r` (without a VMID tag `b` alone: no node
    * is added, so those configurations' Verilog stays as it was).
    */
  def inVm(b: Bool, e: UInt, r: UInt): Bool = if (p.vmid) b && e === r else b

  /** A lookup's PrivateCopy bit, decoded one-hot in the stage before the match: each entry then
    * ANDs its `pc` with a registered mask instead of a 1-of-`pcBits` multiplexer on `pcIdx`.
    * An out-of-range index counts as set (`force`).
    */
  def pcSelectOf(r: LookupReq): PcSelect = {
    val outOfRange = if ((1 << p.pcIdxBits) > p.pcBits) r.pcIdx >= p.pcBits.U else false.B
    val s = Wire(new PcSelect(p))
    s.force := r.pcIdxValid && outOfRange
    s.sel := VecInit((0 until p.pcBits).map(i => r.pcIdxValid && r.pcIdx === i.U)).asUInt
    s
  }

  /** The requester's PC bit for this entry. */
  def pcBitSet(e: BabelFishEntry, s: PcSelect): Bool = s.force || (e.orpc.orR && (e.pc & s.sel).orR)

  def lookup(e: BabelFishEntry, valid: Bool, r: LookupReq, pcs: PcSelect): ClassMatch = {
    val m = Wire(new ClassMatch)
    val here = inVm(valid && PageSize.covers(e.vpn, e.pageSize, r.vpn), e.vmid, r.vmid)
    val sameCcid = e.ccid === r.ccid
    m.global := here && e.global
    if (p.sharing) {
      m.priv := here && !e.global && e.own && e.pcid === r.pcid && sameCcid
      m.shared := here && !e.global && !e.own && sameCcid && !pcBitSet(e, pcs)
    } else {
      m.priv := here && !e.global && e.pcid === r.pcid
      m.shared := false.B
    }
    m
  }

  /** Two entries have the same key: VM, class, page, size, and pcid (private) or ccid (shared). */
  def sameKey(e: BabelFishEntry, valid: Bool, n: BabelFishEntry): Bool = {
    val sameClass = e.global === n.global && (e.global || e.own === n.own)
    val samePage = e.pageSize === n.pageSize && PageSize.covers(e.vpn, e.pageSize, n.vpn)
    val sameOwner = e.global || Mux(e.own, e.pcid === n.pcid, e.ccid === n.ccid)
    inVm(valid && sameClass && samePage && sameOwner, e.vmid, n.vmid)
  }

  /** An invalidation's kind decoded one-hot (8 bits), in the stage before the removal mask is
    * computed, so that each entry's removal is an AND-OR of its comparisons with a registered
    * kind bit instead of a multiplexer on the kind fanned out to every entry.
    */
  def kindsOf(i: InvalReq): UInt = UIntToOH(i.kind, 1 << InvalKind.width)

  /** True when invalidation `i` (kind decoded by [[kindsOf]]) removes the valid entry `e`;
    * reserved kinds (6 and 7 without a VMID tag) act as kind 0.
    */
  def removes(e: BabelFishEntry, i: InvalReq, kinds: UInt): Bool =
    removesWhere(e, i, kinds, PageSize.covers(e.vpn, e.pageSize, i.vpn))

  /** [[removes]] for an entry outside the invalidated page's set: the page kinds cannot remove
    * it, so its VPN is not compared (a flop array needs this view of every entry, and a VPN
    * comparator per entry would be most of the invalidation's area and depth).
    */
  def removesOutsidePage(e: BabelFishEntry, i: InvalReq, kinds: UInt): Bool = removesWhere(e, i, kinds, false.B)

  private def removesWhere(e: BabelFishEntry, i: InvalReq, kinds: UInt, page: Bool): Bool =
    removesBy(removeTerms(e, i, page), kinds)

  /** The comparisons of invalidation `i` with entry `e` that [[removes]] combines with the kind:
    * a pipelined caller registers them (one stage compares, the next decides by kind), so that
    * neither the PCID / CCID comparators nor the kind's AND-OR sit behind the other.
    * `page`: the entry lies in the invalidated page ([[removes]]), or false.B
    * ([[removesOutsidePage]]).
    */
  def removeTerms(e: BabelFishEntry, i: InvalReq, page: Bool): RemoveTerms = {
    val t = Wire(new RemoveTerms(p))
    t.global := e.global
    t.priv := !e.global && e.own
    t.pcid := e.pcid === i.pcid
    t.ccid := !e.global && e.ccid === i.ccid
    t.page := page
    t.vmid := (if (p.vmid) (e.vmid === i.vmid).asUInt else 0.U(0.W))
    t
  }

  /** [[removes]] from its comparisons ([[removeTerms]]) and the one-hot kind ([[kindsOf]]).
    * With a VMID tag every kind but 0 needs the entry's VM, kind 6 removes the whole VM and
    * kind 7 its page whatever the owner; without one, 6 and 7 act as 0.
    */
  def removesBy(t: RemoveTerms, kinds: UInt): Bool = {
    val k = kinds.asBools
    if (p.vmid) {
      val owner = (k(InvalKind.NonGlobal) && !t.global) || (k(InvalKind.Pcid) && t.priv && t.pcid) ||
        (k(InvalKind.Ccid) && t.ccid) || (k(InvalKind.PagePcid) && t.priv && t.pcid && t.page) ||
        (k(InvalKind.PageCcid) && t.ccid && t.page) || k(InvalKind.Vmid) || (k(InvalKind.PageVmid) && t.page)
      k(InvalKind.All) || (t.vmid.asBool && owner)
    } else {
      val all = k(InvalKind.All) || (InvalKind.PageCcid + 1 until k.size).map(k(_)).reduce(_ || _)
      all || (k(InvalKind.NonGlobal) && !t.global) || (k(InvalKind.Pcid) && t.priv && t.pcid) ||
      (k(InvalKind.Ccid) && t.ccid) || (k(InvalKind.PagePcid) && t.priv && t.pcid && t.page) ||
      (k(InvalKind.PageCcid) && t.ccid && t.page)
    }
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
    e.vmid := f.vmid
    e.own := (if (p.sharing) f.own else f.own || !f.global)
    e.pc := (if (p.sharing) f.pc else 0.U(0.W))
    e.orpc := (if (p.sharing) f.pc.orR else 0.U(0.W))
    e
  }

  /** [[entryOf]] with the fill's VPN as given, not aligned: for [[sameKey]] only, which compares
    * the VPNs above the stored entry's page offset and requires equal sizes, so the fill's
    * offset bits never matter (the alignment's mask then stays out of the comparators' path).
    */
  def keyOf(f: FillReq): BabelFishEntry = {
    val e = entryOf(f)
    val k = Wire(new BabelFishEntry(p, p.vpnBits))
    k := e
    k.vpn := f.vpn
    k
  }

  /** A fill that is not installed (reserved size) or whose superpage PPN is misaligned. */
  def badFill(f: FillReq): Bool =
    f.pageSize === PageSize.Reserved.U || PageSize.misaligned(f.ppn, f.pageSize)
}

/** An invalidation's comparisons with one entry ([[MatchRule.removeTerms]]). */
class RemoveTerms(p: BabelFishParams) extends Bundle {
  val global = Bool()
  /** A private entry (not global, own). */
  val priv = Bool()
  /** PCID equal. */
  val pcid = Bool()
  /** Not global and CCID equal. */
  val ccid = Bool()
  /** In the invalidated page. */
  val page = Bool()
  /** VMID equal (1 bit with a VMID tag, else none). */
  val vmid = UInt(p.vmidBits.min(1).W)
}
