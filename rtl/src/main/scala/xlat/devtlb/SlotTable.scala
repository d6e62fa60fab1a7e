package xlat.devtlb

import chisel3._
import chisel3.util._
import xlat.common.RegQueue

/** A slot: one ATS translation in flight (a PTB entry, or a prefetch), then its completed
  * translation while its waiters drain.
  */
class Slot(p: DevTlbParams) extends Bundle {
  val sid = UInt(p.sidBits.W)
  val page = UInt(p.pageBits.W)
  /** Its ATS request left on `ats_req` (a completion before that is bad). */
  val sent = Bool()
  /** Completion accepted at the ports (a second completion for the slot is then bad). */
  val completing = Bool()
  /** Completion acted (respond stage): the translation below is valid; no more merges. */
  val done = Bool()
  /** An invalidation covered the slot after its allocation: its completion is cached nowhere. */
  val stale = Bool()
  val frame = UInt(p.ppnBits.W)
  val perm_r = Bool()
  val perm_w = Bool()
  val fault = Bool()
  val waiters = UInt(log2Ceil(p.waiters + 1).W)
}

/** A request waiting for a slot's completion. */
class Waiter(p: DevTlbParams) extends Bundle {
  val tag = UInt(p.tagBits.W)
  val write = Bool()
  val slot = UInt(p.atsTagBits.W)
  /** Its slot is done: the drain may answer it. */
  val ready = Bool()
  /** Taken by the drain register, answered at its `resp` handshake. */
  val out = Bool()
  /** Its response, written with `ready` when its slot's completion acts (a copy of the slot's
    * translation, the fault already decided for this waiter's `write`): the drain selects it
    * over the waiters alone, with no slot multiplexer behind the waiter choice.
    */
  val ppn = UInt(p.ppnBits.W)
  val perm_r = Bool()
  val perm_w = Bool()
  val fault = Bool()
}

/** An entry of the drain's queue in front of `resp` (`DevTlbParams.drainSkid`): the response,
  * and the waiter and slot its handshake frees.
  */
class DrainEntry(p: DevTlbParams) extends Bundle {
  val resp = new DevResp(p)
  val waiter = UInt(log2Ceil(p.waiters).max(1).W)
  val slot = UInt(p.atsTagBits.W)
}

/** The PTB and prefetch slots, the waiter pool and the drain (docs/devtlb.md, "Completions").
  *
  * ==Structure==
  * Slots 0 .. ptbEntries-1 are demand slots, the rest prefetch slots; the slot number is the ATS
  * tag. Waiters live in a pool; the drain moves the lowest-numbered ready waiter into a response
  * register (with `copyResp` through a pick register first, a cycle deeper: docs/devtlb.md
  * "Timing"), and the waiter (and its slot, when it was the last) is freed at that response's
  * handshake, visible to operations responding from the next cycle.
  *
  * Every method that changes state is called from the respond stage of [[DevTlb]] (one operation
  * a cycle, in acceptance order) or from the drain's handshake; the two never touch the same slot
  * or waiter in one cycle (a merge needs a slot that is not done, the drain a slot that is).
  */
class SlotTable(p: DevTlbParams, fast: Boolean = false) {
  /** With several slots (every named configuration but `devtlb_base` and `devtlb_part`, whose
    * Verilog stays as it was): the waiters carry their response (`Waiter.ppn` ...) and the drain
    * selects it one-hot (`firstOH`) without a slot multiplexer; a free demand slot's fields are
    * loaded in every cycle with the request in respond, so only `valid` waits for the
    * allocation decision; the waiter counts are loaded in free slots and count merges only.
    */
  val copyResp: Boolean = p.slots > 1
  /** `fast` (with `copyResp`; DevTlb's `rowLate` configurations, docs/devtlb.md "Timing"): the
    * respond stage's choices of a free demand slot and a free waiter, and the waiter's slot
    * number, come from registers.
    *  - The free demand slot an allocation takes and the free waiter a miss takes are chosen a
    *    cycle ahead ([[chosenAhead]]): the lowest free one of the previous cycle, other than the
    *    one taken in it; one freed in cycle c is taken from cycle c + 2 (the room check counts
    *    it from c + 1, for requests that respond three cycles later, so a request that counted
    *    on it finds it).
    *  - A new waiter's slot number is written a cycle after it is taken, from the registered
    *    merge / allocation one-hot (`addedSlot`); in that cycle the completion's check
    *    ([[complete]]) reads the register instead (nothing else reads a waiter's slot before
    *    it is ready, at least two cycles later).
    * Before, the free-waiter tree over all waiters and the slot's encoding fanned out to every
    * waiter's registers behind the merge decision (`fpga/levels.py devtlb_ptb32`: 14.7 and
    * 13.8 weighted levels, the deepest paths).
    */
  val fastWaiters: Boolean = fast && copyResp
  val valid = RegInit(VecInit(Seq.fill(p.slots)(false.B)))
  val slot = Reg(Vec(p.slots, new Slot(p)))
  val wValid = RegInit(VecInit(Seq.fill(p.waiters)(false.B)))
  val waiter = Reg(Vec(p.waiters, new Waiter(p)))

  private val demandTaken = WireDefault(false.B)
  /** `lagTake` (`fastWaiters` without the Prefetch Unit): the demand count takes an allocation
    * a cycle late (`demandTakenR`), and [[demandFree]] subtracts it again, so the value is exact
    * in every cycle: the merge decision behind `demandTaken` reaches a single register instead
    * of the count's enable (`devtlb_ptb32` seed 1's routed critical path, docs/devtlb.md "FPGA",
    * session 23). Not in `devtlb_full`, where synthesis mapped the rest 1 400 LUT4 larger with it.
    */
  private val lagTake = fastWaiters && !p.prefetch
  private val demandTakenR = if (lagTake) RegNext(demandTaken, false.B) else false.B
  private val demandCount =
    RegInit(p.ptbEntries.U(log2Ceil(p.ptbEntries + 1).W)).suggestName(if (lagTake) "demandFreeLag" else "demandFree")
  /** Free demand slots and free waiters, kept as counts so that acceptance does not add up bits. */
  val demandFree: UInt = if (lagTake) demandCount - demandTakenR.asUInt else demandCount
  val waitFree = RegInit(p.waiters.U(log2Ceil(p.waiters + 1).W))
  /** `fastWaiters` with the Prefetch Unit (`devtlb_full`): `demandFree > n` and `waitFree > n`
    * for n < [[aboveN]] as registers beside the counts, stepped with them (a count's +1 moves
    * the flags up by one, its -1 down), so the room check in front of `req_ready` reads a flag
    * per case instead of comparing the counts (`fpga/levels.py devtlb_full`: `req_ready` ->
    * the delay line's `lineFull`, 15.5 weighted levels).
    */
  val aboveFlags: Boolean = fastWaiters && p.prefetch && !lagTake
  val aboveN = 4
  private def aboveInit(n: Int) = RegInit(VecInit((0 until aboveN).map(i => (n > i).B)))
  /** With [[aboveFlags]] (session 28): the demand flags take an allocation a cycle late, as
    * `lagTake` does the count: `demandAboveLag(n)` is `demandFree + demandTakenLag > n`, stepped
    * by the take registered, one flag more, and [[demandAbove]] reads `demandFree > n` as a
    * multiplexer of those registers by `demandTakenLag` (the same value in every cycle), so the
    * merge decision behind `demandTaken` reaches one register instead of the flags' enables
    * (`fpga/levels.py devtlb_full`: 11.5 weighted levels into `demandAbove`'s enable).
    */
  private val demandTakenLag = if (aboveFlags) RegNext(demandTaken, false.B).suggestName("demandTakenLag") else false.B
  private val demandAboveLag: Option[Vec[Bool]] = Option.when(aboveFlags)(
    RegInit(VecInit((0 until aboveN + 1).map(i => (p.ptbEntries > i).B))).suggestName("demandAboveLag"))
  val demandAbove: Option[Vec[Bool]] = demandAboveLag.map(f => VecInit((0 until aboveN).map(n => Mux(demandTakenLag, f(n + 1), f(n)))))
  val waitAbove: Option[Vec[Bool]] = Option.when(aboveFlags)(aboveInit(p.waiters).suggestName("waitAbove"))
  private val demandFreed = WireDefault(false.B)
  private val waiterTaken = WireDefault(false.B)
  private val waiterFreed = WireDefault(false.B)

  /** Slots whose ATS request is (or will be) outstanding: merges go there. */
  def mergeable(i: Int): Bool = valid(i) && !slot(i).done

  /** One-hot: the mergeable slot of (sid, page), if any (never more than one: formal). */
  def holding(sid: UInt, page: UInt): Vec[Bool] =
    VecInit((0 until p.slots).map(i => mergeable(i) && slot(i).sid === sid && slot(i).page === page))

  /** Slots freed in this cycle (the drain's handshake, a prefetch completion without waiters). */
  val freeing: Vec[Bool] = WireDefault(VecInit(Seq.fill(p.slots)(false.B)))

  def freeDemandOH: UInt =
    if (fastWaiters) nextDemand.get.asUInt
    else if (copyResp) VecInit(SlotTable.firstOH((0 until p.ptbEntries).map(i => !valid(i)))).asUInt
    else PriorityEncoderOH(VecInit((0 until p.ptbEntries).map(i => !valid(i))).asUInt)
  def anyFreeDemand: Bool = (0 until p.ptbEntries).map(i => !valid(i)).reduce(_ || _)
  def freeWaiterOH: UInt =
    if (fastWaiters) nextWaiter.get.asUInt
    else if (copyResp) VecInit(SlotTable.firstOH(wValid.map(!_))).asUInt
    else PriorityEncoderOH(VecInit(wValid.map(!_)).asUInt)

  /** `fastWaiters`: this cycle's choice among `free` (one-hot), from registers: the lowest
    * entry free in the previous cycle (`first`), or, when that cycle took its choice, the lowest
    * other than it (`after`). Both are computed a cycle ahead, so an entry freed in cycle c is
    * chosen from cycle c + 2.
    */
  private def chosenAhead(free: Seq[Bool], took: Bool, name: String): Vec[Bool] = {
    val tookR = RegNext(took, false.B).suggestName(s"${name}Took")
    val first = RegInit(VecInit(Seq.fill(free.size)(false.B))).suggestName(s"${name}First")
    val after = RegInit(VecInit(Seq.fill(free.size)(false.B))).suggestName(s"${name}After")
    val now = VecInit(first.zip(after).map { case (a, b) => Mux(tookR, b, a) })
    first := VecInit(SlotTable.firstOHCarry(free))
    after := VecInit(SlotTable.firstOHCarry(free.zip(now).map { case (f, c) => f && !c }))
    now
  }
  /** The waiter a miss takes; a waiter's number is internal (the drain's order among ready
    * waiters is not part of the contract).
    */
  private val nextWaiter: Option[Vec[Bool]] =
    if (!fastWaiters) None else Some(chosenAhead(wValid.map(!_), waiterTaken, "nextWaiter"))
  /** The demand slot an allocation takes: its number is the ATS tag, so the rule is in
    * docs/devtlb.md ("Slots", **decided** 2026-11-29) and the model (`alloc_delay`).
    */
  private val nextDemand: Option[Vec[Bool]] =
    if (!fastWaiters) None else Some(chosenAhead((0 until p.ptbEntries).map(i => !valid(i)), demandTaken, "nextDemand"))
  /** `fastWaiters`: the drain's frame and permissions come from a distributed RAM of the
    * slots' translations (written by [[complete]], read at the drain register's slot `outSlot`),
    * and its tag from a RAM of the waiters' tags (written by [[addWaiter]], read at
    * `outWaiter`), instead of per-waiter copies and a 64-way AND-OR of 50 bits behind the pick
    * one-hot: `devtlb_full` did not fit the LFE5U-45F (docs/devtlb.md "FPGA", session 22). The
    * same values at the ports in the same cycles: a slot's translation cannot change while a
    * waiter of it waits (it is freed by its last waiter's handshake), a waiter's tag while the
    * waiter is valid.
    */
  private val frameRam = fastWaiters
  private val frameMem = Option.when(frameRam)(Mem(p.slots, UInt((p.ppnBits + 2).W)))
  private val tagMem = Option.when(frameRam)(Mem(p.waiters, UInt(p.tagBits.W)))
  private val addedOH = if (fastWaiters) RegInit(VecInit(Seq.fill(p.waiters)(false.B))) else null
  /** `fastWaiters` with the Prefetch Unit (`devtlb_full`, session 30, no cycle change): the new
    * waiter's slot registered as its parts, the merge vector (`addedMerge`), the allocation
    * one-hot (`addedAlloc`) and whether the request merged (`addedMerged`), loaded in every
    * cycle ([[noteAdded]]; read only for a waiter taken in the cycle before, `addedOH`): the
    * "any merge" OR over every slot was in front of each bit of the combined one-hot
    * (`fpga/levels.py devtlb_full`: the merge decision -> `addedSlot`, 10.9 weighted levels,
    * the deepest path after session 29). The readers choose a cycle later: the slot number by
    * `addedMerged`; the completion's check by the merge vector alone (below, [[complete]]).
    */
  val splitAdded: Boolean = fastWaiters && p.prefetch
  private val addedMerge = Option.when(splitAdded)(Reg(Vec(p.slots, Bool())).suggestName("addedMerge"))
  /** Bits 1 .. ptbEntries-1 of the allocation one-hot (bit 0 does not enter the number; none
    * with one demand slot).
    */
  private val addedAlloc = Option.when(splitAdded && p.ptbEntries > 1)(Reg(Vec(p.ptbEntries - 1, Bool())).suggestName("addedAlloc"))
  private def addedAllocNo: UInt = addedAlloc.map(a => OHToUInt(VecInit(false.B +: a))).getOrElse(0.U)
  private val addedMerged = Option.when(splitAdded)(Reg(Bool()).suggestName("addedMerged"))
  /** Bits 1 .. slots-1 of the new waiter's slot one-hot (bit 0 does not enter its number). */
  private val addedSlot = if (fastWaiters && !splitAdded) Reg(Vec(p.slots - 1, Bool())) else null
  private def addedSlotNo: UInt =
    if (splitAdded) Mux(addedMerged.get, OHToUInt(addedMerge.get), addedAllocNo.pad(p.atsTagBits))
    else OHToUInt(VecInit(false.B +: addedSlot))
  /** With [[splitAdded]], in every cycle: the merge vector and the free demand slot's one-hot of
    * the request in respond (what the waiter a miss takes waits for, chosen a cycle later).
    */
  def noteAdded(merge: Seq[Bool], alloc: Seq[Bool]): Unit = if (splitAdded) {
    addedMerge.get := VecInit(merge)
    addedAlloc.foreach(_ := VecInit(alloc.slice(1, p.ptbEntries)))
    addedMerged.get := VecInit(merge).asUInt.orR
  }
  if (fastWaiters) {
    addedOH.foreach(_ := false.B)
    for (j <- 0 until p.waiters) when(addedOH(j)) { waiter(j).slot := addedSlotNo }
  }
  /** Waiter `j` waits for slot `i` (with `fastWaiters`, a waiter taken in the previous cycle
    * from the register of its slot).
    */
  private def waitsFor(j: Int, i: UInt): Bool =
    if (fastWaiters) Mux(addedOH(j), addedSlotNo === i, waiter(j).slot === i) else waiter(j).slot === i

  /** `fastWaiters` with the Prefetch Unit (`devtlb_full`): the free prefetch slots are preloaded
    * as the free demand slots are ([[preloadPf]]), so the issue stage's allocation decision sets
    * `valid` only: it fanned out to every field of the slot it took (`fpga/levels.py
    * devtlb_full`: the issue stage's want -> the slot's fields, the deepest path after session
    * 24's other steps).
    */
  val pfPreload: Boolean = fastWaiters && p.prefetch
  /** With [[splitAdded]] (`devtlb_full`, session 31, exact): the completion's "no waiter, free at
    * once" check only on the prefetch slots. A demand slot's allocating request is its waiter
    * until that waiter's `resp` handshake, which follows the completion's respond, so at its
    * completion a demand slot always has a waiter: the check was dead logic, yet the compare of
    * each demand slot's count sat between `compNowR` and its `valid` (`fpga/levels.py
    * devtlb_full`: 10.1-10.4 weighted levels, 16 of the top 20 paths, session 30). The other
    * configurations keep their Verilog.
    */
  val pfOnlyFree: Boolean = splitAdded

  /** Allocate `i` (one-hot over all slots) for (sid, page). */
  def allocate(oh: Seq[Bool], sid: UInt, page: UInt, demand: Boolean): Unit = {
    if (copyResp && demand || pfPreload && !demand) for (i <- 0 until p.slots) when(oh(i)) { valid(i) := true.B }
    else for (i <- 0 until p.slots) when(oh(i)) {
      valid(i) := true.B
      slot(i).sid := sid
      slot(i).page := page
      slot(i).sent := false.B
      slot(i).completing := false.B
      slot(i).done := false.B
      slot(i).stale := false.B
      allocating(i) := true.B
    }
    if (demand) demandTaken := true.B
  }

  /** With `copyResp`: every free demand slot takes the key of the request in respond and the
    * flags of a new slot, in every cycle; the allocation only sets `valid` (nothing reads a free
    * slot's fields).
    */
  def preload(sid: UInt, page: UInt): Unit = if (copyResp) for (i <- 0 until p.ptbEntries) when(!valid(i)) {
    slot(i).sid := sid
    slot(i).page := page
    slot(i).sent := false.B
    slot(i).completing := false.B
    slot(i).done := false.B
    slot(i).stale := false.B
  }

  /** With [[pfPreload]]: every free prefetch slot takes the issue stage's SID, its page
    * `pages(b)` (the page of the candidate that takes it, if one does) and the flags of a new
    * slot, in every cycle.
    */
  def preloadPf(sid: UInt, pages: Seq[UInt]): Unit = if (pfPreload) for (b <- 0 until p.prefetchSlots) {
    val i = p.ptbEntries + b
    when(!valid(i)) {
      slot(i).sid := sid
      slot(i).page := pages(b)
      slot(i).sent := false.B
      slot(i).completing := false.B
      slot(i).done := false.B
      slot(i).stale := false.B
    }
  }

  /** With `copyResp`: every free waiter takes the request in respond (its tag, `write`, and the
    * slot it would wait for, `slotNo`: the merge vector's slot, else the free demand slot) and a
    * new waiter's `ready` in every cycle, so only `wValid` waits for the merge / allocate
    * decision ([[addWaiter]]); nothing reads a free waiter's fields.
    */
  def preloadWaiters(tag: UInt, write: Bool, slotNo: UInt): Unit = if (copyResp) for (j <- 0 until p.waiters) when(!wValid(j)) {
    waiter(j).tag := tag
    waiter(j).write := write
    if (!fastWaiters) waiter(j).slot := slotNo
    waiter(j).ready := false.B
  }

  /** A request waits for slot `s` (one-hot); `fresh`: the slot was allocated in this cycle. */
  def addWaiter(s: Seq[Bool], tag: UInt, write: Bool): Unit = {
    val w = freeWaiterOH
    if (fastWaiters && !splitAdded) addedSlot := VecInit(s.drop(1))
    tagMem.foreach(_.write(OHToUInt(w), tag))
    for (j <- 0 until p.waiters) when(w(j)) {
      wValid(j) := true.B
      if (fastWaiters) addedOH(j) := true.B
      if (!copyResp) {
        waiter(j).tag := tag
        waiter(j).write := write
        waiter(j).slot := OHToUInt(s)
        waiter(j).ready := false.B
        waiter(j).out := false.B
      }
    }
    waiterTaken := true.B
    for (i <- 0 until p.slots) when(s(i)) { waitersInc(i) := true.B }
  }
  private val waitersInc = WireDefault(VecInit(Seq.fill(p.slots)(false.B)))
  /** Slots allocated this cycle: their waiter count starts from 0, not from the register (which
    * has no reset and may hold anything after reset).
    */
  private val allocating = WireDefault(VecInit(Seq.fill(p.slots)(false.B)))
  private val waitersDec = WireDefault(VecInit(Seq.fill(p.slots)(false.B)))
  /** A request joins slot `i` (one-hot, `miss && mergeOH`): with `copyResp` the waiter count's
    * +1, straight from the merge vector and not through the merge / allocate decision.
    */
  val mergeInc = WireDefault(VecInit(Seq.fill(p.slots)(false.B)))

  /** The completion of slot `i` acted: its translation, and its waiters become ready. */
  def complete(i: UInt, frame: UInt, r: Bool, w: Bool, fault: Bool): Unit = {
    frameMem.foreach(_.write(i, Cat(!fault && r, !fault && w, Mux(fault, 0.U, frame))))
    for (k <- 0 until p.slots) when(i === k.U) {
      slot(k).done := true.B
      // a fault's frame and permissions are stored as 0 (what its responses carry), so the
      // drain loads them without a multiplexer behind its load enable
      slot(k).frame := Mux(fault, 0.U, frame)
      slot(k).perm_r := !fault && r
      slot(k).perm_w := !fault && w
      slot(k).fault := fault
      // a slot without waiters (a prefetch nobody merged into) is free at once; a demand slot
      // always has one here (see [[pfOnlyFree]]), so with it the check is left out of them
      if (!pfOnlyFree || k >= p.ptbEntries) when(slot(k).waiters === 0.U) { freeing(k) := true.B }
    }
    if (pfPreload) {
      // a new waiter's slot (`addedSlot`, one-hot) read at the completion's slot once for all
      // waiters: its encoding and a compare per waiter were in front of every `ready`
      // (`fpga/levels.py devtlb_full`, 11.3 weighted levels, session 25)
      // (slot 0 is the one-hot without a bit among 1 .. slots-1)
      // With `splitAdded` the merge vector alone: a waiter taken by an allocation waits for a
      // demand slot that was free in the cycle before, and a completion acting now for it would
      // have been accepted three cycles ago, when the slot was outstanding, so it could not have
      // been freed since (`compNow` is false for any other completion of it)
      val addedIs =
        if (splitAdded) VecInit(addedMerge.get.padTo(1 << i.getWidth, false.B))(i)
        else VecInit((!addedSlot.asUInt.orR +: addedSlot).padTo(1 << i.getWidth, false.B))(i)
      for (j <- 0 until p.waiters) when(wValid(j) && Mux(addedOH(j), addedIs, waiter(j).slot === i)) {
        waiter(j).ready := true.B
      }
    } else for (j <- 0 until p.waiters) when(wValid(j) && waitsFor(j, i)) {
      waiter(j).ready := true.B
    }
  }

  /** With `copyResp`, called in every cycle with the translation of the completion in respond
    * (whether there is one or not): every waiter that is not ready loads it as its response copy,
    * so only `ready` waits for the completion's decision ([[complete]]); the copy of a ready
    * waiter (the one the drain reads) is kept.
    */
  def loadCopies(frame: UInt, r: Bool, w: Bool, fault: Bool): Unit = if (copyResp) for (j <- 0 until p.waiters) when(!waiter(j).ready) {
    if (!frameRam) {
      waiter(j).ppn := Mux(fault, 0.U, frame)
      waiter(j).perm_r := !fault && r
      waiter(j).perm_w := !fault && w
    }
    waiter(j).fault := fault || Mux(waiter(j).write, !w, !r)
  }

  /** An invalidation covered the slots of `mask`: their completions are cached nowhere. */
  def markStale(mask: Seq[Bool]): Unit = for (i <- 0 until p.slots) when(mask(i)) { slot(i).stale := true.B }

  // ---- drain: one ready waiter a cycle into the response register --------------------------
  val out = RegInit(false.B)
  val outWaiter = Reg(UInt(log2Ceil(p.waiters).max(1).W))
  /** The drained waiter one-hot and its slot, registered with the response (the handshake frees
    * them without decoding `outWaiter`).
    */
  private val outOH = RegInit(VecInit(Seq.fill(p.waiters)(false.B)))
  private val outSlot = Reg(UInt(p.atsTagBits.W))
  private val drainHs = WireDefault(false.B)
  val outResp = Reg(new DevResp(p))
  /** `p.drainSkid` (`devtlb_full`, docs/devtlb.md "Timing", **decided** 2026-11-30, session 29):
    * the response register moves into a 2-entry queue in front of `resp` whenever the queue has
    * room (a register of its own, `flagRegs`), so the response register's and the pick
    * register's loads are functions of registers only, not of the `resp` handshake behind the
    * round robin; the handshake frees its waiter and slot a cycle later (`rel*`, registered
    * from the queue's head), so it ends in a few flops instead of fanning out to 64 waiters and
    * 48 slots. A waiter is `taken` from its pick to its release (it may be in the pick
    * register, the response register, the queue or the release register).
    */
  private val skid = p.drainSkid
  require(!skid || (fast && copyResp && p.prefetch), "drainSkid needs the registered choices and the Prefetch Unit")
  private val skidQ = Option.when(skid)(Module(new RegQueue(new DrainEntry(p), 2, flagRegs = true)))
  private val taken = Option.when(skid)(RegInit(VecInit(Seq.fill(p.waiters)(false.B))).suggestName("drainTaken"))
  private val relV = Option.when(skid)(RegInit(false.B).suggestName("relV"))
  private val relOH = Option.when(skid)(RegNext(VecInit((0 until p.waiters).map(j => skidQ.get.io.deq.bits.waiter === j.U))).suggestName("relOH"))
  private val relSlotOH = Option.when(skid)(RegNext(VecInit((0 until p.slots).map(i => skidQ.get.io.deq.bits.slot === i.U))).suggestName("relSlotOH"))
  /** With [[skid]]: the queue head's waiter is its slot's last, decided a cycle ahead (read in
    * the release's cycle): the slot's count then is this cycle's less this cycle's release
    * (a done slot's count moves by releases only), so the release frees a slot behind an AND of
    * two registers instead of a compare of its count.
    */
  private val relLastNext = Option.when(skid)(VecInit((0 until p.slots).map { i =>
    val dec = relV.get && relSlotOH.get(i)
    skidQ.get.io.deq.bits.slot === i.U && Mux(dec, slot(i).waiters === 2.U, slot(i).waiters === 1.U)
  }))
  private val relLastR = relLastNext.map(x => RegNext(x).suggestName("relLastR"))
  /** The drain has a response for `resp`. */
  def drainValid: Bool = skidQ.map(_.io.deq.valid).getOrElse(out)
  /** The drain's response at the `resp` port: the response register's, or with [[skid]] the
    * queue head's.
    */
  def drainResp: DevResp = skidQ.map(_.io.deq.bits.resp).getOrElse(outRead)
  /** The response register's response (with `frameRam` its frame, permissions and tag read from
    * the RAMs at the register's slot and waiter).
    */
  private def outRead: DevResp = if (!frameRam) outResp else {
    val r = Wire(new DevResp(p))
    r := outResp
    val f = frameMem.get(outSlot)
    r.ppn := f(p.ppnBits - 1, 0)
    r.perm_w := f(p.ppnBits)
    r.perm_r := f(p.ppnBits + 1)
    r.tag := tagMem.get(outWaiter)
    r
  }
  /** The waiter is in the drain register: with `copyResp` its bit of the register's one-hot
    * (zero when the register is empty), else its own `out` flag.
    */
  def isOut(j: Int): Bool = if (copyResp) outOH(j) else waiter(j).out
  /** With `copyResp`, the drain's first stage (docs/devtlb.md "Timing", the drain's pick
    * register, **decided** 2026-11-28): the first ready waiter one-hot, loaded while it is empty
    * or moving into the response register; the response register then loads the picked
    * waiter's copy by one AND-OR. Zero when empty.
    */
  val pickV = if (copyResp) RegInit(false.B) else false.B
  val pickOH: Vec[Bool] =
    if (copyResp) RegInit(VecInit(Seq.fill(p.waiters)(false.B))) else VecInit(Seq.fill(p.waiters)(false.B))
  private val readyVec = VecInit((0 until p.waiters).map(j =>
    wValid(j) && waiter(j).ready && (taken match {
      case Some(t) => !t(j)
      case None => !isOut(j) && (if (copyResp) !pickOH(j) else true.B)
    })))

  /** The lowest set bit, one-hot ([[SlotTable.firstOH]]). */
  private def firstOH(x: Seq[Bool]): Seq[Bool] = if (fastWaiters) SlotTable.firstOHCarry(x) else SlotTable.firstOH(x)

  /** At the drain's handshake: the drained waiter is freed (`clear`), and its slot (`slotOf`)
    * loses a waiter, and is freed when that was its last.
    */
  private def release(handshake: Bool, clear: () => Unit, slotOf: () => UInt): Unit = when(handshake) {
    clear()
    waiterFreed := true.B
    val s = slotOf()
    for (i <- 0 until p.slots) when(s === i.U) {
      waitersDec(i) := true.B
      when(slot(i).waiters === 1.U) { freeing(i) := true.B }
    }
  }

  /** With [[pfPreload]] (`devtlb_full`): the response register's slot one-hot (`outSlotOH`),
    * registered with it, so the handshake frees the slot behind one AND with a function of
    * registers (the one-hot bit and the slot's waiter count) instead of behind a decode of
    * `outSlot` (`fpga/levels.py devtlb_full`: `resp_ready` -> the handshake -> a freed slot's
    * `valid`, 12.5 weighted levels, session 25).
    */
  private val lastReg = pfPreload
  private val outSlotOH = Option.when(lastReg)(Reg(Vec(p.slots, Bool())).suggestName("outSlotOH"))
  /** With `lastReg`: the response register's waiter is its slot's last (from registers). */
  private def outLast(i: Int): Bool = outSlotOH.get(i) && slot(i).waiters === 1.U

  /** Call with the `resp` handshake of the drain register. */
  def drain(handshake: Bool): Unit = if (!copyResp) drainSlot(handshake) else if (skid) drainSkidded(handshake) else {
    drainHs := handshake
    if (lastReg) when(handshake) {
      for (j <- 0 until p.waiters) when(outOH(j)) { wValid(j) := false.B }
      waiterFreed := true.B
      for (i <- 0 until p.slots) {
        when(outSlotOH.get(i)) { waitersDec(i) := true.B }
        when(outLast(i)) { freeing(i) := true.B }
      }
    }
    else release(handshake, () => for (j <- 0 until p.waiters) when(outOH(j)) { wValid(j) := false.B }, () => outSlot)
    // two stages: the pick register takes the first ready waiter (not picked, not in the
    // response register) whenever it is empty or moves on; the response register takes the
    // picked waiter whenever it is empty or answered, its fields by one AND-OR over the pick
    // one-hot (the picked waiter cannot change: it is freed only by its own handshake)
    val load = !out || handshake
    when(load) {
      out := pickV
      outOH := pickOH
      outWaiter := OHToUInt(pickOH)
      val nextSlot = Mux1H(pickOH, waiter.map(_.slot))
      outSlot := nextSlot
      outSlotOH.foreach(_ := VecInit((0 until p.slots).map(i => nextSlot === i.U)))
      outResp.fault := Mux1H(pickOH, waiter.map(_.fault))
      if (!frameRam) {
        outResp.tag := Mux1H(pickOH, waiter.map(_.tag))
        outResp.ppn := Mux1H(pickOH, waiter.map(_.ppn))
        outResp.perm_r := Mux1H(pickOH, waiter.map(_.perm_r))
        outResp.perm_w := Mux1H(pickOH, waiter.map(_.perm_w))
      }
      outResp.source := Source.Completion.U
    }
    when(!pickV || load) {
      pickV := readyVec.asUInt.orR
      pickOH := VecInit(firstOH(readyVec))
    }
  }

  /** With [[skid]]: the queue answers `resp`; the release, the response register and the pick
    * register as above, a register further from the handshake.
    */
  private def drainSkidded(handshake: Bool): Unit = {
    val q = skidQ.get
    q.io.deq.ready := handshake
    relV.get := handshake
    drainHs := relV.get
    when(relV.get) {
      for (j <- 0 until p.waiters) when(relOH.get(j)) { wValid(j) := false.B; taken.get(j) := false.B }
      waiterFreed := true.B
      for (i <- 0 until p.slots) {
        when(relSlotOH.get(i)) { waitersDec(i) := true.B }
        when(relLast(i)) { freeing(i) := true.B }
      }
    }
    q.io.enq.valid := out
    q.io.enq.bits.resp := outRead
    q.io.enq.bits.waiter := outWaiter
    q.io.enq.bits.slot := outSlot
    val load = !out || q.io.enq.ready
    when(load) {
      out := pickV
      outWaiter := OHToUInt(pickOH)
      outSlot := Mux1H(pickOH, waiter.map(_.slot))
      outResp.fault := Mux1H(pickOH, waiter.map(_.fault))
      outResp.source := Source.Completion.U
    }
    val first = firstOH(readyVec)
    when(!pickV || load) {
      pickV := readyVec.asUInt.orR
      pickOH := VecInit(first)
      for (j <- 0 until p.waiters) when(first(j)) { taken.get(j) := true.B }
    }
  }
  /** With [[skid]]: the released waiter was its slot's last (a register). */
  private def relLast(i: Int): Bool = relLastR.get(i)

  /** The drain of one slot: the waiter's response from the slot at the drain's load. */
  private def drainSlot(handshake: Bool): Unit = {
    release(handshake, () => wValid(outWaiter) := false.B, () => waiter(outWaiter).slot)
    val load = !out || handshake
    val any = readyVec.asUInt.orR
    val j = PriorityEncoder(readyVec)
    when(load) { out := any }
    when(load && any) {
      outWaiter := j
      waiter(j).out := true.B
      val w = waiter(j)
      val s = slot(w.slot)
      outResp.tag := w.tag
      outResp.fault := s.fault || Mux(w.write, !s.perm_w, !s.perm_r)
      outResp.ppn := s.frame
      outResp.perm_r := s.perm_r
      outResp.perm_w := s.perm_w
      outResp.source := Source.Completion.U
    }
  }

  /** Call once, after every other method: counts, waiter counts and frees. */
  def finish(): Unit = {
    // each count's +1 and -1 are computed from its register alone and chosen last by the events
    // (which are decided late in the cycle), so no adder sits behind them
    def step(x: UInt, up: Bool, down: Bool): UInt = Mux(up === down, x, Mux(up, x + 1.U, x - 1.U))
    for (i <- 0 until p.slots) {
      // a slot allocated in this cycle was free: no waiter of it is drained in the same cycle
      if (!copyResp) slot(i).waiters := Mux(allocating(i), waitersInc(i).asUInt, step(slot(i).waiters, waitersInc(i), waitersDec(i)))
      // a free slot's count is loaded in every cycle with what an allocation starts it at (a
      // demand slot with its request, 1; a prefetch slot, 0), so the allocation decision is not
      // behind it; a valid slot's +1 is a merge only (it is not allocated)
      else slot(i).waiters := Mux(!valid(i), (if (i < p.ptbEntries) 1 else 0).U,
        step(slot(i).waiters, mergeInc(i), waitersDec(i)))
      when(freeing(i)) { valid(i) := false.B }
    }
    // with `copyResp`, a demand slot is freed only by the drain's handshake (it has a waiter from
    // its allocation until its completion has acted): whether the drained waiter was its slot's
    // last is known from registers, and the handshake comes last
    demandFreed := (if (!copyResp) (0 until p.ptbEntries).map(freeing(_)).reduce(_ || _)
      else if (skid) drainHs && (0 until p.ptbEntries).map(relLast).reduce(_ || _)
      else if (lastReg) drainHs && (0 until p.ptbEntries).map(outLast).reduce(_ || _)
      else drainHs && (0 until p.ptbEntries).map(i => outSlot === i.U && slot(i).waiters === 1.U).reduce(_ || _))
    // `fastWaiters`: the counts see a free a cycle late (the drain's handshake is the last
    // input of the cycle; a freed slot or waiter is a candidate from c + 2 anyway), so the room
    // check counts it from c + 2 and never counts one that is not free
    def late(x: Bool): Bool = if (fastWaiters) RegNext(x, false.B) else x
    demandCount := step(demandCount, late(demandFreed), if (lagTake) demandTakenR else demandTaken)
    waitFree := step(waitFree, late(waiterFreed), waiterTaken)
    // the top flag's -1 compares the count itself (count > aboveN)
    def stepAbove(f: Vec[Bool], x: UInt, up: Bool, down: Bool): Unit = for (n <- 0 until aboveN)
      f(n) := Mux(up === down, f(n), Mux(up, if (n == 0) true.B else f(n - 1), if (n + 1 < aboveN) f(n + 1) else x > (n + 1).U))
    // the lagging flags' top -1 comes with the take registered: demandFree + 1 > aboveN + 1
    demandAboveLag.foreach { f =>
      val up = late(demandFreed)
      for (n <- 0 to aboveN) f(n) := Mux(up === demandTakenLag, f(n), Mux(up, if (n == 0) true.B else f(n - 1),
        if (n < aboveN) f(n + 1) else demandCount > aboveN.U))
    }
    waitAbove.foreach(stepAbove(_, waitFree, late(waiterFreed), waiterTaken))
  }
}

object SlotTable {
  /** The lowest set bit of `x`, one-hot, as a tree of 4-way groups: each bit is its group's
    * first and its group the first with one, at every level (a few LUT levels for 64 bits, not
    * the chain `PriorityEncoderOH` becomes after synthesis).
    */
  def firstOH(x: Seq[Bool]): Seq[Bool] = tree(x)._2

  /** The lowest set bit of `x`, one-hot, as `x & -x`: the borrow runs along the FPGA's carry
    * chain (ECP5 CCU2C, two bits a cell) instead of LUTs. Synthesis remaps the tree of
    * [[firstOH]] into a chain of 7 LUT levels for 32 or 64 bits (`fpga/levels.py devtlb_ptb32`);
    * the carry chain is one LUT level plus a fast ripple.
    */
  def firstOHCarry(x: Seq[Bool]): Seq[Bool] = {
    val v = VecInit(x).asUInt
    val neg = (~v).asUInt + 1.U(x.size.W)
    (v & neg(x.size - 1, 0)).asBools
  }

  private def first4(v: Seq[Bool]): Seq[Bool] = v.indices.map(i => v(i) && !(if (i == 0) false.B else v.take(i).reduce(_ || _)))

  private def tree(x: Seq[Bool]): (Bool, Seq[Bool]) =
    if (x.size <= 4) (x.reduce(_ || _), first4(x))
    else {
      val groups = x.grouped((x.size + 3) / 4).map(tree).toSeq
      val sel = first4(groups.map(_._1))
      (groups.map(_._1).reduce(_ || _), groups.zip(sel).flatMap { case ((_, oh), g) => oh.map(_ && g) })
    }
}

/** A FIFO that takes several entries a cycle (in order) and gives one; the owner never pushes
  * more than it has room for (each prefetch slot is queued at most once).
  *
  * `headReg`: [[head]] is a register of its own, loaded with the entry that becomes the head (the
  * one behind it at a pop, the first pushed into an empty queue), instead of a selection over
  * the entries by the head pointer: the same value whenever the queue is not empty, for an
  * owner that reads a memory at the head (docs/devtlb.md "FPGA", session 24).
  */
class MultiPushQueue[T <: Data](gen: T, depth: Int, name: String, headReg: Boolean = false) {
  private val ptrBits = log2Ceil(depth).max(1)
  // named, so that the proofs' views of the queue find its registers
  private val data = Reg(Vec(depth, gen)).suggestName(s"${name}Data")
  private val headPtr = RegInit(0.U(ptrBits.W)).suggestName(s"${name}Head")
  private val count = RegInit(0.U(log2Ceil(depth + 1).W)).suggestName(s"${name}Count")
  private def add(x: UInt, n: UInt): UInt = {
    val sum = x +& n
    if (isPow2(depth)) sum(ptrBits - 1, 0) else Mux(sum >= depth.U, sum - depth.U, sum)(ptrBits - 1, 0)
  }
  private val popped = WireDefault(false.B)
  private val pushed = WireDefault(0.U(log2Ceil(depth + 8).W))
  val valid: Bool = count =/= 0.U
  private val headR = if (headReg) Some(Reg(gen).suggestName(s"${name}HeadEntry")) else None
  val head: T = headR.getOrElse(data(headPtr))
  private var pushes: Seq[Valid[T]] = Nil

  def push(xs: Seq[Valid[T]]): Unit = {
    pushes = xs
    val tail = add(headPtr, count)
    var offset = 0.U(log2Ceil(xs.size + 1).W)
    for (x <- xs) {
      when(x.valid) { data(add(tail, offset)) := x.bits }
      offset = offset + x.valid.asUInt
    }
    pushed := offset
  }

  def pop(en: Bool): Unit = {
    popped := en
    when(en) { headPtr := add(headPtr, 1.U) }
    count := count + pushed - popped.asUInt
    headR.foreach { r =>
      val first = PriorityMux(pushes.map(_.valid) :+ true.B, pushes.map(_.bits) :+ r)
      r := Mux(en, Mux(count > 1.U, data(add(headPtr, 1.U)), first), Mux(count =/= 0.U, r, first))
    }
  }
}
