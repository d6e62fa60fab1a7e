package xlat.devtlb

import chisel3.util.log2Ceil
import xlat.common.{LookupTiming, ParamCheck, ReplacementKind}

/** Parameters of [[DevTlb]]; docs/devtlb.md gives their meaning and the named configurations.
  *
  * Every check names the parameter and its legal range, so that an illegal configuration stops
  * the generator with one readable line.
  */
case class DevTlbParams(
    sets: Int = 8,
    ways: Int = 8,
    partitioned: Boolean = true,
    sidBits: Int = 16,
    iovaBits: Int = 64,
    ppnBits: Int = 40,
    ptbEntries: Int = 32,
    pbEntries: Int = 8,
    histPages: Int = 2,
    histDistance: Int = 32,
    predictorEntries: Int = 1024,
    historyEntries: Int = 1024,
    tagBits: Int = 8,
    /** Prefetches in flight; 0 = `pbEntries`. */
    pfSlots: Int = 0,
    /** Requests waiting for a completion; 0 = 2 x `ptbEntries`. */
    waitEntries: Int = 0,
    respQueue: Int = 4,
    invalPending: Int = 4,
    replacement: String = "plru",
    latency: Int = 4,
    formalPorts: Boolean = false
) {
  import ParamCheck._

  pow2("sets", sets, 1, 1024)
  range("ways", ways, 1, 16)
  range("sidBits", sidBits, 1, 16)
  range("iovaBits", iovaBits, 22, 64)  // a 2 MiB piece and at least one bit above it
  range("ppnBits", ppnBits, 19, 52)  // the offset of a 2 MiB piece in a 1 GiB page
  range("ptbEntries", ptbEntries, 1, 64)
  range("pbEntries", pbEntries, 0, 64)
  range("histPages", histPages, 1, 4)
  range("histDistance", histDistance, 1, 256)
  pow2("predictorEntries", predictorEntries, 1, 4096)
  pow2("historyEntries", historyEntries, 1, 4096)
  range("tagBits", tagBits, 1, 16)
  range("pfSlots", pfSlots, 0, 64)
  require(waitEntries == 0 || (waitEntries >= ptbEntries && waitEntries <= 256),
    s"waitEntries must be 0 (= 2 x ptbEntries) or in ptbEntries..256 = $ptbEntries..256, got $waitEntries")
  range("respQueue", respQueue, 2, 16)
  range("invalPending", invalPending, 1, 16)
  require(ReplacementKind.names.contains(replacement),
    s"replacement must be one of ${ReplacementKind.names.mkString(", ")}, got '$replacement'")
  require(LookupTiming.legal(sram = false).contains(latency),
    s"latency must be one of ${LookupTiming.legal(sram = false).mkString(", ")}, got $latency")

  /** The Prefetch Unit exists only with a prefetch buffer. */
  val prefetch: Boolean = pbEntries > 0
  val prefetchSlots: Int = if (!prefetch) 0 else if (pfSlots == 0) pbEntries else pfSlots
  val slots: Int = ptbEntries + prefetchSlots
  val waiters: Int = if (waitEntries == 0) (2 * ptbEntries).min(256) else waitEntries
  /** `iova` fields are 4 KiB page numbers. */
  val pageBits: Int = iovaBits - 12
  val setBits: Int = log2Ceil(sets)
  val atsTagBits: Int = log2Ceil(slots).max(1)
  val timing: LookupTiming = LookupTiming(latency, sram = false)

  /** The respond stage's choices of a free demand slot and a free waiter are registered
    * ([[SlotTable]] `fast`): with several slots, distributed-RAM rows (not `formalPorts`) and
    * every stage registered. A demand slot freed by a `resp` handshake in cycle c is then
    * allocated from respond cycle c + 2 (`allocDelay`; docs/devtlb.md "Slots", **decided**).
    * The same configurations also (docs/devtlb.md, **decided** 2026-11-29, session 20): queue
    * an allocation for `ats_req` a cycle after respond; let a completion whose tag is not
    * outstanding down the pipeline as an operation that does nothing (its check made in match);
    * keep the hit queue's valid / ready flags in registers.
    */
  val registeredChoice: Boolean = !formalPorts && sets > 1 && timing.readReg && timing.selReg && slots > 1
  /** The drain's skid (`devtlb_full`, docs/devtlb.md "Timing", **decided** 2026-11-30, session
    * 29): the response register moves into a 2-entry queue in front of `resp` when the queue has
    * room, and the waiter (and its slot) is freed in the cycle after its `resp` handshake. A
    * completion's first waiter is on `resp` a cycle later (`drainDelay` 4) and a freed demand
    * slot is allocated a cycle later (`allocDelay` 3).
    */
  val drainSkid: Boolean = registeredChoice && prefetch
  val allocDelay: Int = if (drainSkid) 3 else if (registeredChoice) 2 else 1
  /** Cycles from a completion's respond cycle to the first cycle its first waiter may be on
    * `resp` (docs/devtlb.md "When each change becomes visible").
    */
  val drainDelay: Int = if (slots == 1) 2 else if (drainSkid) 4 else 3
  /** Cycles between a trigger's respond and the allocation of its prefetch slots: 2 with
    * `registeredChoice` (the issue stage, docs/devtlb.md "Prefetch Unit", **decided** 2026-11-29,
    * session 21, at 1; 2 since 2026-11-30, session 25: the filter compares the candidates from the
    * fabric registers behind the history's block RAM), else 0. In the manifest of the
    * `registeredChoice` configurations only.
    */
  val prefetchDelay: Int = if (registeredChoice && prefetch) 2 else 0
  /** The prefetch send skid (`devtlb_full`, docs/devtlb.md "Timing", **decided** 2026-11-30,
    * session 31): a 2-entry queue between the prefetch queue's head and the ATS output register,
    * loaded from registers only, so the output's choice (demand first) no longer pops the
    * prefetch queue. A prefetch is on `ats_req` a cycle later (from t + `prefetchDelay` + 4);
    * demand sends, and their order before prefetches, are unchanged.
    */
  val pfSendSkid: Boolean = drainSkid
  /** Cycles from a slot's allocation (a prefetch's: its issue cycle) to the first cycle it may
    * be on `ats_req` with nothing ahead of it (docs/devtlb.md "When each change becomes
    * visible"): 2, 3 with `registeredChoice` (the queues take it a cycle late), 4 for a
    * prefetch behind the send skid. In the manifest with the skid only.
    */
  val pfSendDelay: Int = if (pfSendSkid) 4 else if (registeredChoice) 3 else 2

  def derived: Seq[(String, Any)] = Seq(
    "allocDelay" -> allocDelay,
    "slots" -> slots,
    "prefetchSlots" -> prefetchSlots,
    "waiters" -> waiters,
    "pageBits" -> pageBits,
    "atsTagBits" -> atsTagBits,
    "writeShadow" -> timing.writeShadow,
    "pipeline" -> s"lookup latency $latency"
  ) ++ (if (registeredChoice) Seq("prefetchDelay" -> prefetchDelay) else Nil) ++
    (if (drainSkid) Seq("drainDelay" -> drainDelay) else Nil) ++
    (if (pfSendSkid) Seq("pfSendDelay" -> pfSendDelay) else Nil)
}
