package xlat.perforated

import chisel3.util.log2Ceil
import xlat.common.{LookupTiming, ParamCheck, StorageKind}

/** Parameters of [[PerforatedL2Tlb]]; docs/perforated-l2tlb.md ("Parameters") gives their
  * meaning and the named configurations. The reference model's `PerforatedParams`
  * (tb/models/perforated.py) checks the same ranges with the same messages.
  *
  * Every check names the parameter and its legal range, so that an illegal configuration stops
  * the generator with one readable line.
  */
case class PerforatedParams(
    sets4k: Int = 128,
    ways4k: Int = 8,
    sets2m: Int = 32,
    ways2m: Int = 4,
    bitmapEntries: Int = 32,
    pwcEntries: Int = 16,
    walkers: Int = 2,
    perforation: Boolean = true,
    storage: String = "sram",
    asidBits: Int = 12,
    idBits: Int = 4,
    paBits: Int = 52,
    latency: Int = 4,
    respQueue: Int = 8,
    invalPending: Int = 2,
    formalPorts: Boolean = false,
    bitmapSets: Int = 1
) {
  import ParamCheck._

  pow2("sets4k", sets4k, 1, 1024)
  range("ways4k", ways4k, 1, 16)
  pow2("sets2m", sets2m, 1, 256)
  range("ways2m", ways2m, 1, 16)
  pow2("bitmapSets", bitmapSets, 1, 1024)
  if (bitmapSets == 1) range("bitmapEntries", bitmapEntries, 1, 64)
  else {
    pow2("bitmapEntries", bitmapEntries, 2, 8192)
    require(bitmapEntries % bitmapSets == 0 && bitmapEntries / bitmapSets >= 1 && bitmapEntries / bitmapSets <= 16,
      s"bitmapEntries / bitmapSets (the bitmap cache's ways) must be 1..16, got $bitmapEntries / $bitmapSets")
  }
  range("pwcEntries", pwcEntries, 0, 64)
  range("walkers", walkers, 1, 8)
  range("asidBits", asidBits, 1, 16)
  range("idBits", idBits, 1, 8)
  range("paBits", paBits, 32, 52)
  range("respQueue", respQueue, 2, 16)
  range("invalPending", invalPending, 1, 8)
  require(StorageKind.names.contains(storage), s"storage must be one of ${StorageKind.names.mkString(", ")}, got '$storage'")
  // (with `formalPorts` also storage = flops: the formal configuration of the set-associative
  // cache, **decided** 2026-11-30, docs "The bitmap word cache's size"; its cache is the same
  // block-RAM storage)
  require(bitmapSets == 1 || (latency == 4 && (storage == "sram" || formalPorts)),
    "bitmapSets > 1 needs latency = 4 and storage = sram (or formalPorts)")

  val sram: Boolean = storage == "sram"
  /** Stage registers of the lookup pipeline (docs "Timing"). */
  val timing: LookupTiming = LookupTiming(latency, sram)
  /** With `storage = sram` and latency 4 the rows read from the arrays are registered a second
    * time before match (`LookupTiming`'s `rowReg`; **decided** 2026-11-28, docs "Timing"): the
    * block RAM's clock-to-out and the compares do not fit one cycle. One stage more from
    * acceptance to response, and one cycle more of write shadow. Since 2026-11-29 (session 22)
    * also with `storage = flops` and latency 4 but in the formal configurations (their proofs
    * read the stage registers): the distributed RAMs' row from its address registers into the
    * 2 MiB hit and the bitmap key was `perforated_flops`' routed critical path (74.10 MHz).
    */
  val rowReg: Boolean = latency == 4 && (sram || !formalPorts)
  /** With `rowReg` the accepted operation is registered once more before the arrays' read
    * (`LookupTiming`'s `opReg`; **decided** 2026-11-29, session 22, docs "Timing"): the 4 KiB
    * array's block RAMs take their read address from a register instead of the acceptance's set
    * multiplexer, whose nets reached the 24 block RAMs across the die (every routed critical
    * path of session 21). One stage more from acceptance to response; the write shadow keeps
    * its length (a later operation also reads a cycle after its acceptance).
    */
  val opReg: Boolean = rowReg && sram
  /** With `rowReg` (the configurations whose decide stage is the routed critical path:
    * `perforated_default`, `perforated_off`), decide's operands start from registers of pick
    * (docs "Timing", "Decide's operands from pick", 2026-11-28 session 18, and 2026-11-29
    * session 19; no cycle change): the large page of the perforated decision selected in pick
    * (decide adds its shadow node's frame, `pdPpn + 1`, from that register), decide's data
    * multiplexers selected by the operation's kind without the stage's valid bit (respond uses
    * the decision only with its own valid bit), the bitmap key in four copies, the bitmap words
    * in flops with the page's bit of every word selected in match (the carried word's in pick),
    * so that decide's word bit is an AND-OR of registers. Off in the flops configurations, whose
    * Verilog (and the formal configuration's proofs) it leaves unchanged.
    */
  val preDecide: Boolean = rowReg
  /** Cycles after an array write is issued in which nothing is accepted (docs "Timing"). */
  val writeShadow: Int = timing.writeShadow + (if (timing.selReg) 0 else 1) + (if (rowReg) 1 else 0)
  /** The miss queue's places (**decided** 2026-11-28, docs "Acceptance"): one per stage register
    * from acceptance to respond, i.e. per request the pipeline can hold.
    */
  val missQueue: Int = Seq(opReg, rowReg, timing.readReg, timing.hitReg, timing.selReg).count(identity) + 1

  /** x86-64 4-level: VA 47:12. */
  val vpnBits: Int = 36
  val ppnBits: Int = paBits - 12
  /** The bitmap word cache set-associative in block RAM (`bitmapSets` > 1; **decided**
    * 2026-11-30, docs "The bitmap word cache's size"): virtually indexed by the request's
    * 64-page VA chunk, physically tagged; else the fully associative flop array.
    */
  val bmSA: Boolean = bitmapSets > 1
  val bitmapWays: Int = bitmapEntries / bitmapSets
  /** The bitmap tags compared per lookup: a set's ways, or every entry of the flop array. */
  val bmCmp: Int = if (bmSA) bitmapWays else bitmapEntries
  val bmSetBits: Int = log2Ceil(bitmapSets)
  /** The page's bit of every cached bitmap word selected in match and carried to decide: with
    * `preDecide`, and with the set-associative cache (whose words are read only with the set's
    * row, in match) in the formal configuration too.
    */
  val bmBitsEarly: Boolean = preDecide || bmSA
  /** A bitmap word's tag: the 4 KiB frame number >> 6. */
  val bmIndexBits: Int = paBits - 18
  /** A 2 MiB physical frame number (PA >> 21). */
  val frameBits: Int = paBits - 21
  val setBits4k: Int = log2Ceil(sets4k)
  val setBits2m: Int = log2Ceil(sets2m)
  val slotBits: Int = log2Ceil(walkers).max(1)
  /** Sets an invalidation of kind 1 or 3 sweeps (one a cycle): the larger array's. */
  val sweepSets: Int = sets4k.max(sets2m)

  /** Values a user does not set but testbenches and scripts need (written to the manifest). */
  def derived: Seq[(String, Any)] = Seq(
    "readReg" -> timing.readReg,
    "hitReg" -> timing.hitReg,
    "selReg" -> timing.selReg,
    "rowReg" -> rowReg,
    "opReg" -> opReg,
    "writeShadow" -> writeShadow,
    "missQueue" -> missQueue,
    "vpnBits" -> vpnBits,
    "ppnBits" -> ppnBits,
    "memIdBits" -> slotBits,
    "sweepSets" -> sweepSets,
    "bitmapWays" -> bitmapWays,
    "entries" -> (sets4k * ways4k + sets2m * ways2m)
  )
}
