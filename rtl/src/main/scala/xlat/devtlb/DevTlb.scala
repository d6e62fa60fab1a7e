package xlat.devtlb

import chisel3._
import chisel3.util._
import xlat.common._

/** DevTlb: the device TLB of an SR-IOV device shared by many tenants, with HyperTRIO's partitioned
  * DevTLB, Pending Translation Buffer and Prefetch Unit (docs/devtlb.md is the contract).
  *
  * ==Structure==
  *  - the DevTLB: `sets` x `ways` entries of 4 KiB pages or 2 MiB pieces, a row chosen from the
  *    SID (partitioned: each row has a PTag, the tenant that claimed it) or from the 2 MiB region;
  *  - the prefetch buffer: `pbEntries`, fully associative, LRU, filled by prefetches only;
  *  - the [[SlotTable]]: PTB (demand) and prefetch slots, the waiters and the drain;
  *  - the [[PrefetchUnit]]: SID delay line, predictor and history tables;
  *  - the [[xlat.common.InvalWait]]: invalidations waiting for their stale slots and older responses.
  *
  * ==Pipeline==
  * One operation a cycle is accepted, by priority inval > completion > request, and passes the
  * stages of [[LookupTiming]] in order: read (acceptance: the row; the predictor), match (the
  * row's ways and the prefetch buffer against the request, the same-key vector of a completion,
  * an invalidation's coverage of everything; the history at the predicted successor), pick (the
  * one-hot hit), respond (the response into the hit queue, or a merge, or an allocation and the
  * prefetch candidates; a completion's fill and its waiters; an invalidation's removal). A
  * completion or an invalidation opens a [[WriteShadow]], and an invalidation is accepted only
  * into an empty pipeline, so the arrays and the prefetch buffer never change under an operation
  * in flight. A request's merge check compares its key with the slot table in pick (with
  * `selReg`) and adds in respond the slots allocated by the operation one ahead, so it sees the
  * table as respond would (`mergeOH`); the prefetch candidates are compared in respond (with
  * `registeredChoice` their slots are taken in the next cycle, `issueLater`). Requests alone run
  * back to back. A request is accepted only when whatever it turns out to be can be served
  * (a free demand slot and waiter, a place in the hit queue, each counting the requests in
  * flight), so nothing is ever replayed.
  *
  * ==Outputs==
  * `resp` is shared round robin by the hit queue and the drain register; `ats_req` by an output
  * register loaded from two send queues, demand slots before prefetch slots, each in allocation
  * order (with `registeredChoice` the queues take an allocation a cycle after its respond).
  */
class DevTlb(val p: DevTlbParams) extends Module {
  override def desiredName = "DevTlb"

  val io = FlatIO(new Bundle {
    val req = Flipped(Decoupled(new DevReq(p)))
    val resp = Decoupled(new DevResp(p))
    val ats_req = Decoupled(new AtsReq(p))
    val ats_resp = Flipped(Decoupled(new AtsResp(p)))
    val inval = Flipped(Decoupled(new DevInval(p)))
    val invalDone = Output(Bool())
    val perf = Output(new PerfCounters(DevTlbPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new DevTlbDbg(p, p.pbEntries.max(1)))) else None
  })

  private val timing = p.timing
  private val rowW = p.setBits.max(1)
  private def rowOf(sid: UInt, page: UInt): UInt =
    if (p.setBits == 0) 0.U(rowW.W)
    else if (p.partitioned) sid.pad(p.setBits)(p.setBits - 1, 0)
    else (page >> 9).pad(p.setBits)(p.setBits - 1, 0)

  // ---- state -------------------------------------------------------------------------------
  /** The DevTLB's entries in distributed RAM (one `Mem` per way): a row is read through the
    * read port, never the whole array (an invalidation reads its rows too, below), so no entry
    * needs a flop or a multiplexer over every set. Flops only for the proofs, which look at
    * every entry (`dbg_*`), and for one set. Valid bits, PTags and replacement state are flops.
    */
  private val lutram = !p.formalPorts && p.sets > 1
  /** The distributed RAMs' read register on the address (`SetAssocStorage(addrReg)`): the row
    * multiplexer at acceptance loads one small register per way, and each way's RAM cells are
    * read from their own register in match; before, the multiplexer drove the address pins of
    * every cell (144 nets' sinks behind it, the critical path of every routed run). The same
    * data in match (no write lands between an operation's acceptance and its match). Their
    * write addresses come from per-way registers too, loaded in respond (the fill commits a
    * cycle later, `selReg`: latency 4).
    */
  private val ramAddrReg = lutram && timing.readReg && timing.selReg
  private val tlb = Module(new SetAssocStorage(new DevKey(p), p.sets, p.ways, sram = false,
    readReg = timing.readReg, lutram = lutram, wayOH = lutram, addrReg = ramAddrReg))
  /** The entries' translations (frame, permissions), apart from their keys: only a hit's
    * response in respond uses them, so they are read in match at the registered row
    * (`c.bits.row`) and carried to respond; the keys' per-way address registers drive 18 DPR16X4
    * cells each, the operation register's row the translations' 88.
    */
  private val tlbData = Module(new SetAssocStorage(new DevData(p), p.sets, p.ways, sram = false,
    lutram = lutram, wayOH = lutram))
  private val tlbValid = RegInit(VecInit(Seq.fill(p.sets)(VecInit(Seq.fill(p.ways)(false.B)))))
  private val ptagValid = RegInit(VecInit(Seq.fill(p.sets)(false.B)))
  private val ptag = Reg(Vec(p.sets, UInt(p.sidBits.W)))
  private val tlbRepl = new ReplacementState(ReplacementPolicy(p.replacement, p.ways), p.sets)
  private val pbN = p.pbEntries.max(1)
  private val pb = FullyAssocStorage(new DevEntry(p), pbN)
  private val pbValid = RegInit(VecInit(Seq.fill(pbN)(false.B)))
  private val pbUsed = Reg(Vec(pbN, Bool()))
  private val pbRepl = new ReplacementState(ReplacementPolicy("lru", pbN), 1)
  private val st = new SlotTable(p, fast = p.registeredChoice)
  private val pf = if (p.prefetch) Some(new PrefetchUnit(p, timing)) else None
  /** With several slots and the keys' address registers (`devtlb_ptb8`, `ptb32`, `full`), the
    * valid bits and the PTag are instead read in match, at a one-hot copy of the row registered
    * at acceptance (`rowOHC`), and registered after match as parts of the hit (ANDed in pick):
    * the same values, since no write lands between acceptance and match; the acceptance logic
    * (a completion's tag -> its slot's SID -> the row) no longer drives the selection of 8 rows
    * (the critical path of `devtlb_ptb8`'s routed run, 68.9 MHz). `devtlb_base` / `devtlb_part`
    * (one slot) keep the selection at acceptance.
    */
  private val rowLate = ramAddrReg && st.copyResp
  /** `devtlb_full` (session 29, no cycle change): `perf_badInvals`' event registered in parts
    * (`InvalRule.badParts`) and combined behind the register: the same count in the same cycle
    * (`fpga/levels.py devtlb_full`: `inval.sizeLog2` -> the page mask -> the alignment check ->
    * the event register, 10.5-11.1 weighted levels in session 28).
    */
  private val badParts = p.registeredChoice && p.prefetch
  /** Slots per copy of the merge check's key (`rowLate`). */
  private val mergeGroup = 4
  private val hitq = Module(new RegQueue(new DevResp(p), p.respQueue, flagRegs = p.registeredChoice))
  private val inv = new InvalWait(p.invalPending, p.slots, log2Ceil(p.respQueue + 1))
  private val shadow = new WriteShadow(timing.writeShadow)

  // ---- read stage: accept one operation a cycle --------------------------------------------
  private val issue = Wire(Valid(new DevOp(p)))
  private val c = Stage(issue, timing.readReg)
  /** `rowLate`: a completion reads its row a cycle after its acceptance. Acceptance carries only
    * its tag (no multiplexer from `ats_resp.tag` over the slots' SIDs to the row and the DevTLB's
    * read address: the critical path of `devtlb_ptb8`'s routed run on seed 2); in match its
    * slot's SID, page and row are read at the registered tag (a slot whose completion is accepted
    * is outstanding: its fields do not change) and go on to pick with the operation (`cFix`), and
    * into the operation registers of read again, with `valid` low (nothing is accepted in the
    * cycle after a completion: its write shadow), so that match sees the completion's row, PTag,
    * valid bits and same-key compare one cycle later than a request's: a "shadow" pass, whose
    * results go to respond through one register instead of two. Nothing a response, a slot or a
    * counter depends on changes (the row cannot change in that cycle either).
    */
  /** A register of its own, equal to `c.valid && c.bits.kind === OpKind.Comp` in every cycle
    * (`c` is `issue` registered, its valid bit reset to 0): it selects the shadow pass's row,
    * which `rowOHC` decodes, and the shared `kind` register drives every stage's choices
    * (kind -> the row select -> `rowOHC`, the routed critical path of `devtlb_ptb8` on seed 1
    * after the completion's row register).
    */
  private val compInC = if (rowLate) RegNext(issue.valid && issue.bits.kind === OpKind.Comp, false.B) else false.B
  /** The completion's slot row, selected at acceptance by the tag's one-hot and registered
    * beside `c.bits.comp.tag` (a slot whose completion is accepted is outstanding: its row
    * cannot change before match), so the shadow pass's row reaches the DevTLB keys' address
    * registers from one register instead of through the slots' SIDs and a multiplexer over the
    * slots (the routed critical path of `devtlb_ptb8` on seed 1 with the reset on a global).
    */
  private val compTagNow = VecInit((0 until p.slots).map(i => io.ats_resp.bits.tag === i.U)).asUInt
  private val compRowR = if (rowLate) RegNext(Mux1H(compTagNow, st.slot.map(y => rowOf(y.sid, y.page)))) else null
  /** The same one-hot in two copies that synthesis keeps apart (`RegCopies.many`) selects the
    * slot's SID and its page in match: the 3-bit encoded tag drove the 8:1 multiplexers of all
    * their 68 bits (tag -> SID register, 9.7 ns of routing on the same run).
    */
  /** `registeredChoice`: the slots' keys (SID and page) a second time, in distributed RAMs read
    * by slot number, for the two readers that need one slot's key: the completion's shadow pass
    * (read in match at its registered tag) and the ATS request (the send queues then carry the
    * slot number alone). The demand slots' RAM is written from the demand queue's input register,
    * the prefetch slots' from the prefetch queue's input registers, one RAM per history page (the
    * issue stage takes up to `histPages` slots a cycle) with a register per prefetch slot naming
    * the RAM that holds its key. A slot's key is written with its queue entry and does not change
    * while the slot is queued or outstanding (it is not free), so both readers see the key of the
    * slot table's registers. Those stay for the compares over every slot; the 48-way
    * multiplexers of 68 bits (the completion's) and the queues' copies of the keys were the
    * largest single items of `devtlb_full`, which did not fit the LFE5U-45F (docs/devtlb.md
    * "FPGA", session 22).
    */
  private val keyRam = p.registeredChoice
  private val keyW = p.sidBits + p.pageBits
  private val demandKeys = Option.when(keyRam)(Mem(p.ptbEntries, UInt(keyW.W)))
  private val pfKeys = Option.when(keyRam && p.prefetch)(Seq.tabulate(p.histPages)(_ => Mem(p.prefetchSlots, UInt(keyW.W))))
  private val pfKeyRam = Option.when(keyRam && p.prefetch && p.histPages > 1)(Reg(Vec(p.prefetchSlots, UInt(log2Ceil(p.histPages).W))))
  private def demandIdx(n: UInt): UInt = n(log2Up(p.ptbEntries) - 1, 0)
  private def pfIdx(n: UInt): UInt = (n - p.ptbEntries.U)(log2Up(p.prefetchSlots) - 1, 0)
  /** Prefetch slot `n`'s key from the RAMs, as one word (SID, page). */
  private def pfKeyAt(n: UInt): UInt = {
    val i = pfIdx(n)
    pfKeyRam match {
      case None => pfKeys.get.head(i)
      case Some(r) => VecInit(pfKeys.get.map(_(i)))(r(i))
    }
  }
  private def splitKey(key: UInt): (UInt, UInt) = (key(keyW - 1, p.pageBits), key(p.pageBits - 1, 0))
  /** Slot `n`'s key from the RAMs: (SID, page). */
  private def slotKey(n: UInt): (UInt, UInt) = {
    val d = demandKeys.get(demandIdx(n))
    splitKey(if (pfKeys.isEmpty) d else Mux(n < p.ptbEntries.U, d, pfKeyAt(n)))
  }
  private val compKeyOH =
    if (rowLate && !keyRam) RegCopies.many(compTagNow, 2, "compKeyOH").map(c => (0 until p.slots).map(i => c(i))) else null
  private val cFix: Valid[DevOp] = if (!rowLate) c else {
    val x = Wire(Valid(new DevOp(p)))
    x := c
    when(c.bits.kind === OpKind.Comp) {
      if (keyRam) {
        val (sid, page) = slotKey(c.bits.comp.tag)
        x.bits.req.sid := sid
        x.bits.req.iova := page
      } else {
        x.bits.req.sid := Mux1H(compKeyOH(0), st.slot.map(_.sid))
        x.bits.req.iova := Mux1H(compKeyOH(1), st.slot.map(_.page))
      }
      x.bits.row := compRowR
    }
    x
  }
  private val k = Stage(cFix, timing.hitReg)
  private val s = Stage(k, timing.selReg)
  /** The operations held in stage registers (an unregistered stage is the one before it). */
  private val held = Seq((c, timing.readReg), (k, timing.hitReg), (s, timing.selReg)).collect { case (x, true) => x }
  private def isReq(x: Valid[DevOp]): Bool = x.valid && x.bits.kind === OpKind.Req
  /** No operation in a stage register: itself a register, loaded with the stage registers'
    * next valid bits (the same value as their NOR), so the invalidation's row select, which
    * drives the DevTLB's read address, starts at a flop.
    */
  private val pipeEmpty = RegNext(!Seq((issue, timing.readReg), (c, timing.hitReg), (k, timing.selReg))
    .collect { case (x, true) => x.valid }.foldLeft(false.B)(_ || _), true.B)
  /** An invalidation that visits every set (not partitioned, kind 1 or a range beyond one 2 MiB
    * region) issues one operation per set, in consecutive cycles; `sweeping` while the sets
    * after the first are issued (docs/devtlb.md "Invalidation", **decided**).
    */
  private val sweepable = !p.partitioned && p.sets > 1
  private val sweeping = RegInit(false.B)
  /** A copy of `sweeping` for the data side (the operation multiplexer's selects, the sweep
    * registers' load enables: some 150 sinks), so that `sweeping` itself drives only the
    * acceptance logic. The same update as `sweeping`'s from its own output, so synthesis keeps
    * it apart (equal registers with equal inputs are merged).
    */
  private val sweepSel = RegInit(false.B)
  /** The next row of the sweep (it starts at the row of the invalidation's `iova`, as a one-row
    * invalidation, and wraps) and the operations still to issue after this cycle's. */
  private val sweepIdx = RegInit(0.U(rowW.W))
  private val sweepLeft = RegInit(0.U(rowW.W))
  private val sweepOp = Reg(new DevInval(p))
  private val sweepMask = Reg(UInt(p.pageBits.W))
  private val busy = shadow.busy || pf.map(_.busy).getOrElse(false.B) || sweeping

  // requests in flight that may still take a slot and a waiter (a request counts as a miss until
  // its hit vectors are registered), and that may still take a hit-queue place
  private val kKnownHit = Wire(Bool())
  private val sKnownHit = Wire(Bool())
  /** `st.aboveFlags`: whether each stage register holds a request, as registers of their own
    * (an accepted request is the only operation of its kind, so `c`'s is `req.fire`
    * registered), for the room check: from the stage registers' `kind` it was a decode in front
    * of the count of hit-queue places and of the allocation cases.
    */
  private val reqIn: Option[Seq[Bool]] = Option.when(st.aboveFlags) {
    val inC = RegNext(io.req.fire, false.B).suggestName("reqInC")
    val inK = RegNext(inC, false.B).suggestName("reqInK")
    Seq(inC, inK, RegNext(inK, false.B).suggestName("reqInS"))
  }
  private val mayHit = reqIn.map(PopCount(_)).getOrElse(PopCount(held.map(isReq)))
  // the same rule with the request in pick, whose hit is known last (its registered hit vectors),
  // as the select of a final multiplexer between two compares of registers
  // (the counts compared with constants, no carry chain: free > n for n = 0..3)
  /** `registeredChoice` (**decided** 2026-11-29, session 21, docs/devtlb.md "Acceptance"): the
    * request in pick counts as a possible allocation whatever its hit vectors show. Its hit,
    * ANDed and ORed in pick from the parts registered after match, was the select of the room
    * check in front of `req_ready` and of every acceptance's enables (the predictor's write, the
    * delay line; `fpga/levels.py devtlb_full`: 16.1 weighted levels, the deepest path once the
    * prefetch issue had its own stage); now the room is a function of registers. The cost:
    * `req_ready` may stay low a cycle longer when the last free slot or waiter is counted for a
    * request in pick that hits.
    */
  private val kMayAlloc =
    if (!timing.hitReg) false.B else if (reqIn.isDefined) reqIn.get(1) else if (p.registeredChoice) isReq(k) else isReq(k) && !kKnownHit
  private val cMayAlloc = if (reqIn.isDefined) reqIn.get(0) else if (timing.readReg) isReq(c) else false.B
  /** With `reqIn` (`devtlb_full`; **decided** 2026-11-30, session 29, as session 21 decided for
    * the request in pick): the request in respond counts as a possible allocation whatever its
    * hit too, so the room check is a function of registers only: its hit (`won`, ANDed and ORed
    * in respond) was in front of `req_ready` and every acceptance enable (`fpga/levels.py
    * devtlb_full`: `won.tlbHit` -> `req_ready` -> the delay line's write, 11.7 weighted levels).
    * `req_ready` may stay low a cycle longer when the last free slot or waiter is counted for a
    * request in respond that hits.
    */
  private val sMayAlloc = if (reqIn.isDefined) reqIn.get(2) else if (timing.selReg) isReq(s) && !sKnownHit else false.B
  private def above(x: UInt, n: Int): Bool = {
    val y = x.pad(3)
    n match {
      case 0 => y.orR
      case 1 => y(y.getWidth - 1, 1).orR
      case 2 => y(y.getWidth - 1, 2).orR || (y(1) && y(0))
      case 3 => y(y.getWidth - 1, 2).orR
    }
  }
  private def roomFor(n: Int) =
    if (st.aboveFlags) st.demandAbove.get(n) && st.waitAbove.get(n) else above(st.demandFree, n) && above(st.waitFree, n)
  private def roomRest(extra: Int) =
    Mux(cMayAlloc && sMayAlloc, roomFor(2 + extra), Mux(cMayAlloc || sMayAlloc, roomFor(1 + extra), roomFor(extra)))
  private val room = Mux(kMayAlloc, roomRest(1), roomRest(0)) && (hitq.io.count +& mayHit) < p.respQueue.U

  // priority inval > completion > request among the operations that are accepted: an
  // invalidation presented while invalPending are pending (it waits for their stale slots, which
  // wait for completions) must not hold the completions off, or nothing moves again
  io.inval.ready := !busy && pipeEmpty && inv.count < p.invalPending.U
  io.ats_resp.ready := !busy && !io.inval.fire
  io.req.ready := !busy && !io.inval.fire && !io.ats_resp.fire && room

  // a completion whose tag is not outstanding is consumed here, with no other effect
  private val compTag = io.ats_resp.bits.tag
  // outstanding: allocated, its ATS request sent in an earlier cycle, no completion accepted yet
  /** `rowLate`: a slot's "outstanding" (valid, sent, no completion accepted) as a register of
    * its own, set at its `ats_req` handshake and cleared at its completion's acceptance (a slot is
    * freed only after that, and allocated free), so the tag selects one bit per slot instead of
    * three in front of the acceptance logic (`fpga/levels.py devtlb_ptb32`).
    */
  private val outstanding = if (rowLate) Some(RegInit(VecInit(Seq.fill(p.slots)(false.B)))) else None
  private val compSlotOk = (0 until p.slots).map(i => compTag === i.U && (outstanding match {
    case Some(o) => o(i)
    case None => st.valid(i) && st.slot(i).sent && !st.slot(i).completing
  })).reduce(_ || _)
  private val badTag = io.ats_resp.fire && !compSlotOk
  private val goodComp = io.ats_resp.fire && compSlotOk
  /** Completion of slot `i` accepted in this cycle (the slot's own bits, not the OR over the slots). */
  private def goodCompOf(i: Int): Bool = outstanding match {
    case Some(o) => io.ats_resp.fire && compTag === i.U && o(i)
    case None => goodComp && compTag === i.U
  }
  for (i <- 0 until p.slots) when(goodCompOf(i)) { st.slot(i).completing := true.B }
  private val compSlot = st.slot(compTag)
  /** `registeredChoice`: every accepted completion enters the pipeline, and whether its tag was
    * outstanding is decided in match from registers (the tag's one-hot and a copy of the
    * outstanding bits at its acceptance) and carried to respond, where a bad one does nothing
    * (**decided** 2026-11-29, docs/devtlb.md "Completions"): the tag's selection over the slots
    * was in front of the acceptance (`issue.valid`; `fpga/levels.py devtlb_ptb32`: 10.5
    * weighted levels, the deepest path after the send queues moved a cycle late).
    */
  private val compAll = p.registeredChoice
  require(!compAll || outstanding.isDefined, "registeredChoice needs the outstanding registers (rowLate)")
  private val compGoodC: Bool =
    if (!compAll) true.B
    else (RegNext(compTagNow) & RegNext(outstanding.get.asUInt)).orR

  issue.valid := io.inval.fire || (if (compAll) io.ats_resp.fire else goodComp) || io.req.fire || sweeping
  issue.bits.kind := Mux(io.inval.fire || sweeping, OpKind.Inval, Mux(io.ats_resp.fire, OpKind.Comp, OpKind.Req))
  // a completion carries its slot's SID and page in the request fields. Chosen by
  // `ats_resp.valid`, not `fire`: a request is accepted only when no completion is presented
  // (both need !busy and no invalidation accepted, and a request also needs no completion
  // accepted), so the two agree for every accepted operation, and the row multiplexer's select
  // does not wait for the acceptance logic (write shadow -> busy -> fire)
  issue.bits.req := io.req.bits
  if (!rowLate) when(io.ats_resp.valid) {
    issue.bits.req.sid := compSlot.sid
    issue.bits.req.iova := compSlot.page
  }
  issue.bits.comp := io.ats_resp.bits
  issue.bits.inval := io.inval.bits
  // computed at acceptance so that match compares every entry without the sizeLog2 decode
  issue.bits.ivMask := InvalRule.pageMask(p, io.inval.bits)
  issue.bits.row := rowOf(issue.bits.req.sid, issue.bits.req.iova)
  // an invalidation's operations: which row each reads and clears, and the last one, which
  // also covers the prefetch buffer and the slots and is pushed to the pending invalidations
  private val ivAll = InvalRule.kindAll(io.inval.bits)
  // sizeLog2 > 21 written out (22 = 0b010110) rather than as a carry-chain compare
  private val ivSz = io.inval.bits.sizeLog2
  private val ivSweep = if (!sweepable) false.B else
    !ivAll && (io.inval.bits.kind === InvalKind.Sid.U || ivSz(5) || ivSz(4) && (ivSz(3) || ivSz(2) && ivSz(1)))
  // the row multiplexer's select for an invalidation: `inval_ready` without `busy` (when busy,
  // nothing is accepted and the row is not used), so the read address does not wait for the
  // write shadow and the acceptance logic
  private val ivSel = io.inval.valid && pipeEmpty && inv.count < p.invalPending.U
  // the sweep's registers load from the port in every cycle without a sweep (they are read only
  // while sweeping, which starts the cycle after the invalidation's acceptance), so only
  // `sweeping` waits for the acceptance logic
  when(!sweeping) {
    sweeping := io.inval.fire && ivSweep
  }.otherwise {
    when(sweepLeft === 1.U) { sweeping := false.B }
  }
  when(!sweepSel) {
    sweepSel := io.inval.fire && ivSweep
    sweepIdx := rowOf(io.inval.bits.sid, io.inval.bits.iova) + 1.U
    sweepLeft := (p.sets - 1).U
    sweepOp := io.inval.bits
    sweepMask := InvalRule.pageMask(p, io.inval.bits)
  }.otherwise {
    sweepIdx := sweepIdx + 1.U
    sweepLeft := sweepLeft - 1.U
    when(sweepLeft === 1.U) { sweepSel := false.B }
  }
  if (sweepable) when(sweepSel) {
    issue.bits.inval := sweepOp
    issue.bits.ivMask := sweepMask
    issue.bits.row := sweepIdx
  }.elsewhen(ivSel) {
    issue.bits.row := rowOf(io.inval.bits.sid, io.inval.bits.iova)
  }
  else when(ivSel) { issue.bits.row := rowOf(io.inval.bits.sid, io.inval.bits.iova) }
  // `rowLate`: the completion in match passes again with its slot's fields (nothing is accepted
  // in this cycle: `issue.valid` is low)
  if (rowLate) when(compInC) {
    issue.bits.req := cFix.bits.req
    issue.bits.comp := c.bits.comp
    // with the Prefetch Unit (`devtlb_full`, session 28) the completion's row register itself:
    // `compInC` means that `c` holds a completion, so `cFix`'s row is `compRowR`, and the
    // choice by the shared `kind` register was in front of `rowOHC` (`fpga/levels.py
    // devtlb_full`: 11.7 weighted levels, the deepest path)
    issue.bits.row := (if (p.registeredChoice && p.prefetch) compRowR else cFix.bits.row)
  }
  /** `f` of the row read by the operation accepted this cycle (`issue.bits.row`), applied to
    * each candidate row before the choice, so a table read by row (valid bits, PTags) does not
    * wait for the choice: the same selection as `issue.bits.row`'s, moved behind the tables.
    */
  private def atIssueRow[T <: Data](f: UInt => T): T = {
    val opRow = Mux(io.ats_resp.valid, f(rowOf(compSlot.sid, compSlot.page)), f(rowOf(io.req.bits.sid, io.req.bits.iova)))
    val ivRow = f(rowOf(io.inval.bits.sid, io.inval.bits.iova))
    if (sweepable) Mux(sweepSel, f(sweepIdx), Mux(ivSel, ivRow, opRow)) else Mux(ivSel, ivRow, opRow)
  }
  issue.bits.last := !sweepSel && !ivSweep || sweepSel && sweepLeft === 1.U
  // `registeredChoice`: every accepted completion opens the write shadow, also one with a tag
  // that is not outstanding (consumed with no other effect): the shadow's counter then does not
  // wait for the tag's selection over the slots (`fpga/levels.py devtlb_ptb32`, 11.6 levels);
  // a bad completion is an IOMMU error, its few cycles of acceptance do not matter
  shadow.issue(io.inval.fire || (if (p.registeredChoice) io.ats_resp.fire else goodComp) || sweeping)
  tlb.io.read.valid := issue.valid
  tlb.io.read.bits := issue.bits.row
  pb.io.read.valid := false.B
  pb.io.read.bits := 0.U
  pf.foreach(_.accept(io.req.fire, io.req.bits.sid))

  // ---- match stage -------------------------------------------------------------------------
  private val rowC = VecInit(tlb.io.readData.map(_.entry(0.U, false.B, false.B)))
  tlbData.io.read.valid := c.valid
  tlbData.io.read.bits := c.bits.row
  private val reqC = c.bits.req
  /** The row's valid bits and PTag, selected at acceptance by the row the storage reads and
    * registered beside its data (`readReg`), so match does not wait for an 8:1 row multiplexer:
    * like the row itself, they cannot change between acceptance and match (a fill or an
    * invalidation lands inside its write shadow, before the next acceptance).
    */
  private val rowOHC = if (rowLate) RegNext(VecInit(UIntToOH(issue.bits.row, p.sets).asBools)) else null
  private val rowValidC =
    if (rowLate) Mux1H(rowOHC, tlbValid) else Stage.carry(atIssueRow(r => tlbValid(r)), timing.readReg)
  private val ptagValidC =
    if (rowLate) Mux1H(rowOHC, ptagValid) else Stage.carry(atIssueRow(r => ptagValid(r)), timing.readReg)
  private val ptagOkC =
    if (!p.partitioned) true.B
    else if (rowLate) ptagValidC && Mux1H(rowOHC, ptag) === reqC.sid
    else ptagValidC && Stage.carry(atIssueRow(r => ptag(r)), timing.readReg) === reqC.sid
  /** With `ramAddrReg` the keys come out of the distributed RAMs in match (behind the per-way
    * address registers), so match's compares of the row are cut into parts of at most
    * `cmpChunk` bits (three LUT levels after the RAM), registered apart and ANDed in pick: a
    * hit in three parts (SID, the low 9 page bits unless 2 MiB, the valid bit and the PTag;
    * then the high page bits in two), an invalidation's coverage of a way in parts of
    * `coverChunk` masked page bits (three inputs a bit) and the SID compare. From flops (the
    * proofs' configuration) the compares stay whole in match.
    */
  private val cmpChunk = 32
  private val coverChunk = 16
  /** `a === b` in about equal parts of at most `n` bits. */
  private def eqParts(a: UInt, b: UInt, n: Int): Seq[Bool] = {
    val w = a.getWidth
    val step = (w + (w + n - 1) / n - 1) / ((w + n - 1) / n)
    (0 until w by step).map(i => a((i + step).min(w) - 1, i) === b((i + step).min(w) - 1, i))
  }
  /** With the Prefetch Unit and `registeredChoice` (`devtlb_full`, session 25): the merge check's
    * compare also makes the invalidation's coverage of the slots ([[coverKeys]]), its page parts
    * in 8-bit chunks. ABC maps 16 registered equalities of 8, 16, 24 or 32 bits at about 0.66
    * LUT4 a bit and of 13, 18, 20 or 26 bits at 1.1 to 1.8 (`synth_ecp5`, each width alone), and
    * in the block only the 8-bit chunks kept that figure: the 26-bit parts took 27 LUT4 each,
    * 24-bit ones did no better (docs/devtlb.md "FPGA", session 25).
    */
  private val byteParts = p.registeredChoice && p.prefetch
  private val lowBits = 9.min(p.pageBits)
  private val tlbHitPartsC = VecInit(rowC.zip(rowValidC).map { case (e, v) =>
    // `rowLate`: the valid bit and the PTag check (read in match) are parts of their own
    val low = (if (rowLate) true.B else v && ptagOkC) && e.sid === reqC.sid &&
      (e.big || e.page(lowBits - 1, 0) === reqC.iova(lowBits - 1, 0))
    val high = if (p.pageBits > lowBits) eqParts(e.page(p.pageBits - 1, lowBits), reqC.iova(p.pageBits - 1, lowBits), cmpChunk) else Nil
    VecInit((low +: high) ++ (if (rowLate) Seq(v, ptagOkC) else Nil))
  })
  private val tlbHitsC = VecInit(rowC.zip(rowValidC).map { case (e, v) => v && ptagOkC && e.covers(reqC.sid, reqC.iova) })
  private val pbHitsC = VecInit(pb.io.readData.zip(pbValid).map { case (e, v) => v && e.covers(reqC.sid, reqC.iova) && p.prefetch.B })
  private val newC = Completion.entry(p, c.bits.comp, reqC.sid, reqC.iova)
  /** A completion's same-key compare ({SID, size, page} of every way and PB entry) is used only
    * in respond: match compares it in chunks of `sameChunk` bits and pick ANDs the registered
    * chunks, so the operation register's long nets to the row are followed by two logic levels,
    * not by the whole 69-bit compare.
    */
  private val sameChunk = 8
  private def keyOf(e: DevEntry): UInt = Cat(e.sid, e.big, e.page)
  private def sameChunks(e: DevEntry): Vec[Bool] = {
    val a = keyOf(e)
    val b = keyOf(newC)
    VecInit((0 until a.getWidth by sameChunk).map(i => a((i + sameChunk).min(a.getWidth) - 1, i) === b((i + sameChunk).min(a.getWidth) - 1, i)))
  }
  private val tlbSameC = VecInit(rowC.map(sameChunks))
  private val pbSameC = VecInit(pb.io.readData.map(sameChunks))
  // an invalidation runs alone (empty pipeline, write shadow): it compares the row it read (kind
  // 0 clears every valid bit without a compare), every PB entry and every slot
  private val ivC = c.bits.inval
  private val ivMaskC = c.bits.ivMask
  private val tlbCoverC = VecInit(rowC.zip(rowValidC).map { case (e, v) => v && InvalRule.covers(p, ivC, ivMaskC, e) })
  /** `tlbCoverC` in parts (`ramAddrReg`): the valid bit, the SID compare, the masked page bits'
    * chunks; the invalidation's kind is applied in pick ([[InvalRule.coversFrom]]).
    */
  private val tlbCoverPartsC = VecInit(rowC.zip(rowValidC).map { case (e, v) =>
    VecInit(Seq(v, e.sid === ivC.sid) ++ InvalRule.pageParts(p, ivC, ivMaskC, e, coverChunk))
  })
  private val pbCoverC = VecInit(pb.io.all(0).zip(pbValid).map { case (e, v) => v && InvalRule.covers(p, ivC, ivMaskC, e) })
  private val slotCoverC = VecInit((0 until p.slots).map(i =>
    st.valid(i) && InvalRule.coversSlot(p, ivC, ivMaskC, st.slot(i).sid, st.slot(i).page)))
  /** `slotCoverC` in parts (`rowLate`): the valid bit, the SID compare, the masked page bits'
    * chunks, registered after match; the invalidation's kind is applied in pick.
    */
  private val slotCoverPartsC = if (!rowLate) None else Some(VecInit((0 until p.slots).map(i =>
    VecInit(Seq(st.valid(i), st.slot(i).sid === ivC.sid) ++ InvalRule.slotPageParts(p, ivC, ivMaskC, st.slot(i).page, coverChunk)))))
  pf.foreach(_.lookup(reqC.sid, s.bits.req.sid))

  // ---- pick stage --------------------------------------------------------------------------
  private def toPick[T <: Data](d: T): T = Stage.carry(d, timing.hitReg)
  private val tlbHitsK =
    if (ramAddrReg) VecInit(toPick(tlbHitPartsC).map(_.asUInt.andR)) else toPick(tlbHitsC)
  private val pbHitsK = toPick(pbHitsC)
  private val pickK = Wire(new DevPick(p, pbN))
  pickK.tlb := PriorityEncoderOH(tlbHitsK)
  pickK.pb := PriorityEncoderOH(pbHitsK)
  pickK.tlbHit := tlbHitsK.asUInt.orR
  pickK.pbHit := pbHitsK.asUInt.orR
  kKnownHit := pickK.tlbHit || pickK.pbHit

  // ---- respond stage -----------------------------------------------------------------------
  private def toRespond[T <: Data](d: T): T = Stage.carry(Stage.carry(d, timing.hitReg), timing.selReg)
  /** The same-key vector in respond: the chunks registered after match, ANDed in pick. */
  private def sameS(v: Vec[Vec[Bool]]): Vec[Bool] =
    Stage.carry(VecInit(Stage.carry(v, timing.hitReg).map(_.asUInt.andR)), timing.selReg)
  private val won = Stage.carry(pickK, timing.selReg)
  sKnownHit := won.tlbHit || won.pbHit
  // the translations read in match, registered in pick and respond (named for the proofs)
  private val rowDataK = Stage.carry(tlbData.io.readData, timing.hitReg)
  private val rowDataS = Stage.carry(rowDataK, timing.selReg)
  private val row = VecInit(toRespond(tlb.io.readData).zip(rowDataS).map { case (k, d) =>
    k.entry(d.ppn, d.perm_r, d.perm_w) })
  // `rowLate`: a completion's row (only completions use these in respond) from its second pass
  private val rowValid = if (rowLate) RegNext(rowValidC) else toRespond(rowValidC)
  /** `rowLate`: the same-key chunks of the second pass, ANDed in groups of four before the
    * register and the groups in respond.
    */
  private def sameLate(v: Vec[Vec[Bool]]): Vec[Bool] =
    VecInit(RegNext(VecInit(v.map(x => VecInit(x.grouped(4).map(_.reduce(_ && _)).toSeq)))).map(_.asUInt.andR))
  private val rowIdx = s.bits.row
  private val req = s.bits.req
  private val reqNow = isReq(s)
  /** `byteParts` (`devtlb_full`, session 28): a register of its own, loaded with what the
    * expression below will be (`s` is `k` registered, its valid bit reset to 0), so the slots'
    * `valid`, the waiters' `ready` and the fill's way choice do not wait for a decode of the
    * shared `kind` register (`fpga/levels.py devtlb_full`: `s.kind` -> `compNow` -> a slot's
    * `valid` 10.5 weighted levels).
    */
  private val compNow =
    if (p.registeredChoice && p.prefetch)
      RegNext(k.valid && k.bits.kind === OpKind.Comp && Stage.carry(compGoodC, timing.hitReg), false.B).suggestName("compNowR")
    else s.valid && s.bits.kind === OpKind.Comp &&
      (if (compAll) Stage.carry(Stage.carry(compGoodC, timing.hitReg), timing.selReg) else true.B)
  private val invalNow = s.valid && s.bits.kind === OpKind.Inval
  /** The invalidation's last operation (its only one unless it sweeps the sets). */
  private val invalLast = invalNow && s.bits.last

  // request: DevTLB hit, PB hit, merge, allocate
  private val tlbE = Mux1H(won.tlb, row)
  private val pbIdx = OHToUInt(won.pb)
  private val pbE = Mux1H(won.pb, pb.io.readData)
  private val hitE = Mux(won.tlbHit, tlbE, pbE)
  private val hitResp = Wire(new DevResp(p))
  hitResp.tag := req.tag
  hitResp.ppn := hitE.frameOf(req.iova)
  hitResp.perm_r := hitE.perm_r
  hitResp.perm_w := hitE.perm_w
  hitResp.fault := Mux(req.write, !hitE.perm_w, !hitE.perm_r)
  hitResp.source := Mux(won.tlbHit, Source.DevTlb.U, Source.PrefetchBuffer.U)
  hitq.io.enq.valid := reqNow && (won.tlbHit || won.pbHit)
  hitq.io.enq.bits := hitResp
  // the touch of a hit from its own registers (the set one-hot, gated by the hit, and the way in
  // binary), decoded in pick: the winner `won` fans out to the row's hundreds of data bits and
  // lies with them, across the die from the replacement state
  private val touchSetOH = Stage.carry(Mux(isReq(k) && pickK.tlbHit, UIntToOH(k.bits.row, p.sets), 0.U(p.sets.W)), timing.selReg)
  private val touchWay = Stage.carry(OHToUInt(pickK.tlb), timing.selReg)
  tlbRepl.touchOH(touchSetOH, touchWay)
  when(reqNow && !won.tlbHit && won.pbHit) {
    pbRepl.touch(0.U, pbIdx)
    pbUsed(pbIdx) := true.B
  }
  private val miss = reqNow && !won.tlbHit && !won.pbHit
  // The slots allocated in this cycle's respond (the demand slot, then the prefetches), for the
  // merge check of the request behind.
  private val allocEvents = Wire(Vec(1 + p.histPages, new SlotAlloc(p)))
  allocEvents.foreach { e => e.valid := false.B; e.sid := req.sid; e.page := req.iova; e.oh := 0.U }
  /** With `selReg`, from the merge check below: the registered compare parts of the request in
    * respond with every slot (made in its pick), and the allocations of the cycle before with
    * their valid bits; the prefetch filter of `issueLater` reads them too.
    */
  private var mergeEarlyParts: Option[Vec[Vec[Bool]]] = None
  private var mergeLast: Option[(Vec[SlotAlloc], Vec[Bool])] = None
  /** The mergeable slot of the request in respond, one-hot. With `selReg` (latency 4) its key is
    * compared with the slot table in pick, a cycle early, from registers, and respond only adds
    * the slots allocated by the operation that responded in between: nothing else changes the
    * mergeable slots in that cycle (a completion or an invalidation never has a request behind
    * it in the pipeline, the write shadow; the drain frees only done slots, which are not
    * mergeable; a slot freed at the end of pick is not allocated before the next cycle). The
    * demand slot of that operation has its request's key, compared in pick as well; its
    * prefetch slots' keys are compared here (one 68-bit compare per history page instead of one
    * per slot). Without `selReg`, respond compares every slot itself.
    */
  /** `byteParts` (`devtlb_full`): the invalidation's coverage of the slots is the merge check's
    * compare (`coverShared`, session 25, no cycle change): the merge key copies carry a page
    * mask (every bit for a request; for an invalidation its page mask above the 2 MiB offset,
    * as [[InvalRule.coversSlot]]) and its kind, the page parts compare under the mask and the
    * SID part takes every valid slot for an invalidation (respond ANDs `valid` as before). The
    * same result: an invalidation runs alone, so no slot is allocated between its match (where
    * the coverage was compared) and its pick, and a slot freed in between is left out in
    * respond. The coverage's own parts (48 slots x a SID compare and 43 masked page bits, 3 210
    * LUT4 of 25 495, `fpga/area.py`) are gone; the merge compare takes three inputs a page bit
    * instead of two.
    */
  private val coverShared = byteParts
  require(!coverShared || rowLate, "the shared coverage compare needs the merge key copies (rowLate)")
  private val coverKeys: Option[Seq[CoverKey]] = Option.when(coverShared) {
    val big = ~((BigInt(1) << 9.min(p.pageBits)) - 1).U(p.pageBits.W)
    val isIv = c.bits.kind === OpKind.Inval
    val key = Wire(new CoverKey(p))
    key.sid := Mux(isIv, c.bits.inval.sid, c.bits.req.sid)
    key.iova := Mux(isIv, c.bits.inval.iova, c.bits.req.iova)
    key.mask := Mux(isIv, c.bits.ivMask & big, ~0.U(p.pageBits.W))
    key.inval := isIv
    (0 until (p.slots + mergeGroup - 1) / mergeGroup).map { g =>
      RegNext(Mux(ReqCopy.sel(c.valid, c.bits.kind.asUInt, g, inval = true), key, 0.U.asTypeOf(key))).suggestName(s"mergeKey_$g")
    }
  }
  private val mergeOH: Vec[Bool] =
    if (!timing.selReg) st.holding(req.sid, req.iova)
    else {
      val kReq = k.bits.req
      /** `rowLate`: the pick-stage key the slots are compared with, one register copy per
        * `mergeGroup` slots (the key of the pick-stage register fanned out to every slot's
        * compare: the critical path of `devtlb_ptb8`'s routed run after the PTag change). Copy g
        * holds the key when the operation in match is a request and 0 otherwise, under its own
        * condition (`ReqCopy.sel`), so that synthesis does not merge the copies: the compare
        * matters only for a request (`miss`), for which every copy holds the key.
        */
      val keyOf: Int => DevReq =
        if (!rowLate || coverShared) (_: Int) => kReq
        else {
          val n = (p.slots + mergeGroup - 1) / mergeGroup
          val copies = (0 until n).map { g =>
            val r = RegNext(Mux(ReqCopy.sel(c.valid, c.bits.kind.asUInt, g), c.bits.req, 0.U.asTypeOf(c.bits.req)))
            r.suggestName(s"mergeKey_$g")
          }
          (i: Int) => copies(i / mergeGroup)
        }
      // compared in pick in registered parts (the SID with the slot's mergeable bit, the page in
      // `cmpChunk`-bit parts; with `coverShared` masked, in 8-bit chunks), ANDed here: the
      // slots' keys fan out across the die
      val earlyParts = RegNext(VecInit((0 until p.slots).map(i => VecInit(
        if (coverShared) {
          val key = coverKeys.get(i / mergeGroup)
          val d = (st.slot(i).page ^ key.iova) & key.mask
          (st.slot(i).sid === key.sid && (st.mergeable(i) || key.inval)) +:
            (0 until p.pageBits by 8).map(b => d((b + 8).min(p.pageBits) - 1, b) === 0.U)
        } else
          (st.mergeable(i) && st.slot(i).sid === keyOf(i).sid) +: eqParts(st.slot(i).page, keyOf(i).iova, cmpChunk)))))
      val early = VecInit(earlyParts.map(_.asUInt.andR))
      val sameAhead = RegNext(kReq.sid === req.sid && kReq.iova === req.iova)
      /** `registeredChoice` with the Prefetch Unit: the prefetches allocated in the cycle before
        * respond come from the issue stage's registers (`issueLater`), so their keys are compared
        * in pick as well and registered (in respond the 68-bit compares were in front of the
        * merge decision: `fpga/levels.py devtlb_full`, 15.9 weighted levels into `demandFree`).
        */
      val pfAhead = p.registeredChoice && p.prefetch
      val samePfAhead = if (!pfAhead) Nil else (1 to p.histPages).map(j =>
        RegNext(kReq.sid === allocEvents(j).sid && kReq.iova === allocEvents(j).page).suggestName(s"mergeSamePf_$j"))
      val last = RegNext(allocEvents)
      val lastValid = RegNext(VecInit(allocEvents.map(_.valid)), VecInit(Seq.fill(1 + p.histPages)(false.B)))
      mergeEarlyParts = Some(earlyParts)
      mergeLast = Some((last, lastValid))
      val hits = last.zip(lastValid).zipWithIndex.map { case ((e, v), j) =>
        val same = if (j == 0) sameAhead else if (pfAhead) samePfAhead(j - 1) else e.sid === req.sid && e.page === req.iova
        Mux(v && same, e.oh, 0.U(p.slots.W))
      }
      VecInit((early.asUInt | hits.reduce(_ | _)).asBools)
    }
  private val merge = miss && mergeOH.asUInt.orR
  private val alloc = miss && !mergeOH.asUInt.orR
  private val allocOH = st.freeDemandOH.asBools.padTo(p.slots, false.B)
  private val pfPushes = Wire(Vec(p.histPages, Valid(new AtsSlot(p))))
  pfPushes.foreach { x => x.valid := false.B; x.bits.tag := 0.U; x.bits.sid := 0.U; x.bits.page := 0.U }
  /** `issueLater`: the prefetch slot each push takes, one-hot over the prefetch slots; the send
    * queue's input register holds it and encodes the slot number behind the register
    * (`atsSendRam`): the encoder after the issue decision was the deepest path's tail
    * (`fpga/levels.py devtlb_full`, 12.6 weighted levels into `pfIn`'s tag, session 25).
    */
  private val pfPushOH = Wire(Vec(p.histPages, Vec(p.prefetchSlots.max(1), Bool())))
  pfPushOH.foreach(_.foreach(_ := false.B))
  if (!st.copyResp) {
    when(alloc) {
      st.allocate(allocOH, req.sid, req.iova, demand = true)
      st.addWaiter(allocOH, req.tag, req.write)
    }
    when(merge) { st.addWaiter(mergeOH, req.tag, req.write) }
  } else {
    // the waiter's fields are preloaded (`preloadWaiters`, its slot from the merge vector); a
    // miss takes a waiter whether it merges or allocates, so `wValid` waits for `miss` alone
    when(alloc) { st.allocate(allocOH, req.sid, req.iova, demand = true) }
    // `fastWaiters`: the waiter's slot one-hot (the merge's, else the allocated one), registered
    // and written into the waiter in the next cycle
    // (`splitAdded`, `devtlb_full`: the merge vector and the allocation one-hot registered
    // apart, chosen a cycle later; `waitSlotOH` is then read by nothing)
    val waitSlotOH = if (!st.fastWaiters || st.splitAdded) mergeOH
      else VecInit((0 until p.slots).map(i => mergeOH(i) || !mergeOH.asUInt.orR && allocOH(i)))
    when(miss) { st.addWaiter(waitSlotOH, req.tag, req.write) }
    st.noteAdded(mergeOH, allocOH)
  }
  st.mergeInc := VecInit(mergeOH.map(_ && miss))
  st.preload(req.sid, req.iova)
  st.preloadWaiters(req.tag, req.write, Mux(mergeOH.asUInt.orR, OHToUInt(mergeOH), OHToUInt(VecInit(allocOH))))
  allocEvents(0).valid := alloc
  allocEvents(0).oh := VecInit(allocOH).asUInt

  // prefetch candidates of the predicted successor, in history-slot order
  private val dropped = Wire(Vec(p.histPages, Bool()))
  dropped.foreach(_ := false.B)
  pf.foreach { u =>
    u.record(alloc, req.sid, req.iova)
    if (p.registeredChoice) issueLater(u) else issueInRespond(u)
  }

  /** The prefetch candidates of the request in respond, issued in the same cycle (the
    * configurations without `registeredChoice`).
    */
  private def issueInRespond(u: PrefetchUnit): Unit = {
    val trigger = miss && u.succ.valid
    val t = u.succ.bits
    var takenPf: Seq[Bool] = Seq.fill(p.slots)(false.B)
    var keys: Seq[(Bool, UInt, UInt)] = Seq((alloc, req.sid, req.iova))
    for (j <- 0 until p.histPages) {
      val cand = u.candidates(j)
      val q = cand.bits
      val inPb = pb.io.readData.zip(pbValid).map { case (e, v) => v && e.covers(t, q) }.reduce(_ || _)
      val inSlot = st.holding(t, q).asUInt.orR || keys.map { case (v, ks, kq) => v && ks === t && kq === q }.reduce(_ || _)
      val freePf = (p.ptbEntries until p.slots).map(i => !st.valid(i) && !takenPf(i))
      val pfOH = PriorityEncoderOH(VecInit(freePf).asUInt).asBools
      val want = trigger && cand.valid
      val issuePf = want && !inPb && !inSlot && freePf.reduce(_ || _)
      dropped(j) := want && !inPb && !inSlot && !freePf.reduce(_ || _)
      val oh = Seq.fill(p.ptbEntries)(false.B) ++ pfOH.map(_ && issuePf)
      when(issuePf) { st.allocate(oh, t, q, demand = false) }
      allocEvents(1 + j).valid := issuePf
      allocEvents(1 + j).sid := t
      allocEvents(1 + j).page := q
      allocEvents(1 + j).oh := VecInit(oh).asUInt
      pfPushes(j).valid := issuePf
      pfPushes(j).bits.tag := OHToUInt(oh)
      pfPushes(j).bits.sid := t
      pfPushes(j).bits.page := q
      takenPf = takenPf.zip(oh).map { case (a, b) => a || b }
      keys = keys :+ ((issuePf, t, q))
    }
  }

  /** `registeredChoice` (**decided** 2026-11-29, session 21, docs/devtlb.md "Prefetch Unit"; two
    * cycles since 2026-11-30, session 25, `prefetchDelay` 2): the candidates of the request that
    * responds in cycle t are compared in t (the PB, the slots holding their page, `filterLate`)
    * from the fabric registers behind the history's block RAM, filtered in t + 1 and the result
    * registered; the prefetch slots are taken in the issue stage, cycle t + 2, after the requests
    * responding in t + 1 and t + 2 and before a completion responding in either. With the
    * compares in pick the history's block RAM (5.83 ns of clock-to-out on ECP5) fed them
    * directly: the routed critical path of `devtlb_full` (69.47 MHz, docs/devtlb.md "FPGA").
    * In one cycle (respond) the chain was the successor -> the history bypass -> the candidate
    * -> its compares with the PB and every slot -> the free prefetch slots' choice -> the slots'
    * registers (`fpga/levels.py devtlb_full`: 26.4 weighted levels). What can change the filter
    * between the compares in t and the issue:
    *  - the allocations of cycle t (the trigger's own demand slot, the prefetches of the trigger
    *    of t - 2): `mergeLast` in t + 1 (`filterLate`);
    *  - the requests responding in t + 1 and t + 2 (ordered before the issue): a miss makes or
    *    finds a slot for its key, so a candidate with that key (compared in t, resp. t + 1, with
    *    the key in pick) is dropped, as a held page;
    *  - the issue stage in t + 1 (the prefetches of the request that responded in t - 1, ordered
    *    before this trigger's): a candidate with the key of one it issued is held;
    *  - an earlier candidate of the same trigger issued in t + 2, with the same key;
    *  - nothing else (`filterLate`): the PB and the slots' completions are those of cycle t.
    * The free prefetch slots are those of cycle t + 2 (`valid`) but the one a completion that
    * responded in t + 1 freed: a slot freed by a `resp` handshake in t + 1 is a candidate, one
    * freed by the completion ordered after the issue is not.
    */
  private def issueLater(u: PrefetchUnit): Unit = {
    require(p.prefetchDelay == 2, "the issue stage of `registeredChoice` is two cycles after respond")
    val hp = p.histPages
    val trigger = miss && u.succ.valid
    val t = u.succ.bits
    val kReq = k.bits.req
    // a request behind the trigger that misses makes or finds a slot for its key: the key is
    // compared while that request is in pick, and its miss is taken in respond, a cycle later
    // (`miss`: `won` is pick's hit vectors registered, the stages advance every cycle, so it is
    // pick's "miss" registered; session 34, exact): in pick (`kKnownHit`, the OR over the hit
    // vectors) it was in front of `isWant` beside the slots' OR, the routed critical path of
    // `devtlb_full` (docs/devtlb.md "FPGA", session 34). `miss` in t + 1 is that of the request
    // responding in t + 1 (`fSameKey`), in t + 2 that of the one responding in t + 2
    // (`isSameKey2`)
    // ---- respond (cycle t): the candidates, registered with their compares (`filterLate`)
    val cand = u.candidates
    val fTrig = RegNext(trigger, false.B).suggestName("pfFTrig")
    val fSid = RegNext(t).suggestName("pfFSid")
    val fCand = RegNext(cand).suggestName("pfFCand")
    // the request responding in t + 1 (in pick now) holds a candidate with its key
    val candIs = u.candIs.get
    val fSameKey = RegNext(VecInit((0 until hp).map(j => kReq.sid === t && candIs(j, kReq.iova)))).suggestName("pfFSameKey")
    /** Candidate j repeats an earlier valid candidate of the trigger (the history may hold a page
      * twice): it shares the first one's fate, held behind its issue or dropped with it. The
      * first earlier candidate with the same page only. Compared in t + 1 from the registered
      * candidates (`fCand`, the same values), where only `isWant` and `isDupOf` read it: in
      * respond the history bypass's selects (`newHit`) of both candidates were in front of the
      * 52-bit compare (`fpga/levels.py devtlb_full`: 11.6 weighted levels into its register,
      * docs/devtlb.md "FPGA", session 28).
      */
    val fDupOf = VecInit((0 until hp).map(j => VecInit((0 until hp).map(m =>
      if (m < j) fCand(j).valid && fCand(m).valid && fCand(m).bits === fCand(j).bits &&
        !(0 until m).map(x => fCand(x).valid && fCand(x).bits === fCand(j).bits).foldLeft(false.B)(_ || _)
      else false.B))))
    val (inPbOf, inSlotOf, inLastOf) = filterLate(u, fSid, fCand)
    // ---- the filter (cycle t + 1)
    val isWant = RegInit(VecInit(Seq.fill(hp)(false.B))).suggestName("pfIsWant")
    // the filter's other results, registered apart from `isWant` and ANDed into the issue
    // stage's `want` (session 34, exact): a slot holds the candidate (the OR over every slot's
    // registered compare; an allocation of cycle t, `mergeLast`, compared whole), the request
    // responding in t + 2 has its key (`miss` in t + 2)
    val isInSlot = Reg(Vec(hp, Bool())).suggestName("pfIsInSlot")
    val isInLast = Reg(Vec(hp, Bool())).suggestName("pfIsInLast")
    val isSameKey2 = Reg(Vec(hp, Bool())).suggestName("pfIsSameKey2")
    val isSid = Reg(UInt(p.sidBits.W)).suggestName("pfIsSid")
    val isPage = Reg(Vec(hp, UInt(p.pageBits.W))).suggestName("pfIsPage")
    val isSameIss = Reg(Vec(hp, Vec(hp, Bool()))).suggestName("pfIsSameIss")
    val isDupOf = Reg(Vec(hp, Vec(hp, Bool()))).suggestName("pfIsDupOf")
    val issuedNow = Wire(Vec(hp, Bool()))
    val issuedR = RegNext(issuedNow, VecInit(Seq.fill(hp)(false.B))).suggestName("pfIssuedR")
    for (j <- 0 until hp) {
      // the request responding in t + 2 (in pick now) likewise, its miss from `miss` in t + 2
      isSameKey2(j) := kReq.sid === fSid && kReq.iova === fCand(j).bits
      isInSlot(j) := inSlotOf(j)
      isInLast(j) := inLastOf(j)
      // a candidate held by a request behind or repeating an earlier one is not wanted on its
      // own: both are known here, so the issue stage's `want` waits only for the issue before it
      // (and for the two registered results above)
      isWant(j) := fTrig && fCand(j).valid && !inPbOf(j) && !(miss && fSameKey(j)) && !fDupOf(j).asUInt.orR
      isPage(j) := fCand(j).bits
      // the issue stage's registers hold the previous trigger's candidates, issued in t + 1
      for (m <- 0 until hp) {
        isSameIss(j)(m) := isSid === fSid && fCand(j).bits === isPage(m)
        isDupOf(j)(m) := fDupOf(j)(m)
      }
    }
    isSid := fSid
    // ---- issue (cycle t + 2): the j-th issued candidate takes the j-th free prefetch slot, each
    // found from `valid` on the carry chain; a slot freed by the completion that responded in
    // t + 1 is not free to them (that completion acts after the issue)
    val compFreeR = RegNext(VecInit((p.ptbEntries until p.slots).map(i => compNow && s.bits.comp.tag === i.U)),
      VecInit(Seq.fill(p.prefetchSlots)(false.B))).suggestName("pfCompSlotR")
    val freeNow = (p.ptbEntries until p.slots).map(i => !st.valid(i) && !compFreeR(i - p.ptbEntries))
    val kthFree: Seq[Seq[Bool]] = (0 until hp).scanLeft(freeNow) { case (f, _) =>
      f.zip(SlotTable.firstOHCarry(f)).map { case (a, b) => a && !b } }.map(f => SlotTable.firstOHCarry(f) :+ f.reduce(_ || _))
    // issued(n): n of the earlier candidates were issued (one-hot over 0 .. j)
    var issued: Seq[Bool] = Seq(true.B)
    // the page each free prefetch slot loads (`SlotTable.preloadPf`): the first candidate that
    // takes it, else the last one, so only `valid` waits for the last candidate's decision
    val takenBy = Seq.fill(hp - 1)(Wire(Vec(p.prefetchSlots, Bool())))
    for (j <- 0 until hp) {
      val held = (0 until hp).map(m => isSameIss(j)(m) && issuedR(m)).reduce(_ || _)
      val want = isWant(j) && !isInSlot(j) && !isInLast(j) && !(miss && isSameKey2(j)) && !held
      val ranked = (0 until p.prefetchSlots + 1).map(b => issued.zipWithIndex.map { case (x, n) => x && kthFree(n)(b) }.reduce(_ || _))
      val issuePf = want && ranked.last
      dropped(j) := want && !ranked.last || (0 until j).map(m => isDupOf(j)(m) && dropped(m)).foldLeft(false.B)(_ || _)
      issuedNow(j) := issuePf
      // a slot bit of the rank implies that the rank has a free slot, so `want` gates it alone
      val oh = Seq.fill(p.ptbEntries)(false.B) ++ ranked.dropRight(1).map(_ && want)
      when(issuePf) { st.allocate(oh, isSid, isPage(j), demand = false) }
      if (j < hp - 1) takenBy(j) := VecInit(oh.drop(p.ptbEntries))
      allocEvents(1 + j).valid := issuePf
      allocEvents(1 + j).sid := isSid
      allocEvents(1 + j).page := isPage(j)
      allocEvents(1 + j).oh := VecInit(oh).asUInt
      pfPushes(j).valid := issuePf
      pfPushes(j).bits.tag := OHToUInt(oh)
      pfPushOH(j) := VecInit(oh.drop(p.ptbEntries))
      pfPushes(j).bits.sid := isSid
      pfPushes(j).bits.page := isPage(j)
      // counted by `want`, not by `issuePf` (session 25): a wanted candidate left without a free
      // slot leaves none for the later ones either, whatever rank they get, so the ranks (and
      // the one-hots above) no longer wait for the carry chains' "any free" of the earlier ones
      val before = issued :+ false.B
      issued = before.indices.map(n => before(n) && !want || (if (n > 0) before(n - 1) && want else false.B))
    }
    st.preloadPf(isSid, (0 until p.prefetchSlots).map(b =>
      (0 until hp - 1).foldRight(isPage(hp - 1))((j, acc) => Mux(takenBy(j)(b), isPage(j), acc))))
  }
  /** The prefetch filter of `issueLater`: whether candidate j of the trigger that responded in
    * cycle t is covered by the PB (`inPb(j)`) or held by a slot (`inSlot(j)` from the slots'
    * registers of cycle t, `inLast(j)` from the allocations of cycle t), all in cycle t + 1. The candidates leave the history's block RAM in pick (5.83 ns of clock-to-out on
    * ECP5: the routed critical path of `devtlb_full` ended at the filter's compares behind it,
    * docs/devtlb.md "FPGA", session 25), so they are compared in respond from the fabric
    * registers behind it (`u.candidates`: `candOld` or the newer history write's page, one
    * multiplexer) and registered with the compares' parts; cycle t + 1 ANDs and ORs them
    * (`fSid`, `fCand`: the successor and the candidates registered). The same results:
    *  - in cycle t the slots hold every allocation of the cycles before t; those of cycle t (the
    *    trigger's own demand slot, the issue stage's prefetches of the trigger of t - 2) are
    *    `mergeLast` in t + 1, compared whole (68 bits from registers, one page a slot);
    *  - a slot stops holding a page at its completion and the PB changes by fills and
    *    invalidations: no completion responds in t - 1 (a request responds in t, behind the
    *    write shadow), so the PB and the slots of cycle t have every completion before the
    *    trigger; a completion responding in t + 1 or t + 2 is ordered after the issue, and
    *    its fill (committed a cycle after its respond) and its slot's completion are in
    *    neither; no invalidation responds before t + 4 (it is accepted into an empty pipeline);
    *  - the drain frees done slots only, which are not mergeable.
    * The prefetches issued in t + 1 and the requests responding in t + 1 and t + 2 are the
    * issue's and `isWant`'s (`issueLater`).
    */
  private def filterLate(u: PrefetchUnit, fSid: UInt, fCand: Vec[Valid[UInt]]): (Seq[Bool], Seq[Bool], Seq[Bool]) = {
    val hp = p.histPages
    val t = u.succ.bits
    val cand = u.candidates
    val (last, lastValid) = mergeLast.get
    // from fabric registers (one multiplexer) the compares take 8-bit chunks, as the merge check
    val chunk = 8
    val low = 9.min(p.pageBits)
    def hiOf(x: UInt): UInt = x(p.pageBits - 1, low)
    // respond: the successor's SID against every mergeable slot, the candidates' pages in parts
    val sidEqR = RegNext(VecInit((0 until p.slots).map(i => st.mergeable(i) && st.slot(i).sid === t)))
    val slotPartsR = RegNext(VecInit(cand.map(c => VecInit((0 until p.slots).map(i =>
      VecInit(eqParts(st.slot(i).page, c.bits, chunk)))))))
    // the PB: SID with the valid bit, the low 9 page bits (ignored by a 2 MiB entry), the rest
    val pbE = pb.io.readData.zip(pbValid)
    val pbSidR = RegNext(VecInit(pbE.map { case (e, ok) => ok && e.sid === t }))
    val pbBigR = RegNext(VecInit(pbE.map(_._1.big)))
    val pbLowR = RegNext(VecInit(cand.map(c => VecInit(pbE.map { case (e, _) =>
      VecInit(eqParts(e.page(low - 1, 0), c.bits(low - 1, 0), chunk)) }))))
    val pbHighR = RegNext(VecInit(cand.map(c => VecInit(pbE.map { case (e, _) =>
      VecInit(if (p.pageBits > low) eqParts(hiOf(e.page), hiOf(c.bits), chunk) else Seq(true.B)) }))))
    // t + 1
    val inPb = (0 until hp).map(j =>
      (0 until pbN).map(e => pbSidR(e) && (pbBigR(e) || pbLowR(j)(e).asUInt.andR) && pbHighR(j)(e).asUInt.andR).reduce(_ || _))
    val lastHolds = (x: UInt) => last.zip(lastValid).map { case (e, ok) => ok && e.sid === fSid && e.page === x }.reduce(_ || _)
    val inSlot = (0 until hp).map(j => (0 until p.slots).map(i => sidEqR(i) && slotPartsR(j)(i).asUInt.andR).reduce(_ || _))
    (inPb, inSlot, (0 until hp).map(j => lastHolds(fCand(j).bits)))
  }

  // completion: its translation, its waiters, and the fill of the DevTLB or the PB
  private val comp = s.bits.comp
  private val cSlot = comp.tag
  private val n = Completion.entry(p, comp, req.sid, req.iova)
  private val compFault = comp.fault || comp.pageSize === PageSize.Reserved.U
  /** `rowLate`: the completing slot's `stale` bit read in pick (at the tag there) and registered:
    * from respond's tag it was a 32:1 selection in front of the fill's way choice (`cmWayOH`,
    * `fpga/levels.py devtlb_ptb32`). The same value: only an invalidation's respond marks a
    * slot stale, and none is in the pipeline beside a completion (the write shadows).
    */
  private val stale =
    if (rowLate) RegNext(Mux1H((0 until p.slots).map(i => k.bits.comp.tag === i.U), st.slot.map(_.stale))) else st.slot(cSlot).stale
  when(compNow) { st.complete(cSlot, n.frameOf(req.iova), comp.perm_r, comp.perm_w, compFault) }
  st.loadCopies(n.frameOf(req.iova), comp.perm_r, comp.perm_w, compFault)
  private val cache = compNow && !compFault && !stale
  private val toTlb = cache && cSlot < p.ptbEntries.U
  private val toPb = cache && cSlot >= p.ptbEntries.U && p.prefetch.B
  private val tlbSame = (if (rowLate) sameLate(tlbSameC) else sameS(tlbSameC)).zip(rowValid).map { case (a, v) => a && v }
  // the PTag compared in match (`ptagOkC`; nothing changes a PTag between a completion's match
  // and its respond: the write shadow of the operations ahead has passed)
  private val claimRow = if (p.partitioned) !(if (rowLate) RegNext(ptagOkC) else toRespond(ptagOkC)) else false.B
  private val takeover = if (p.partitioned) (if (rowLate) RegNext(ptagValidC && !ptagOkC) else toRespond(ptagValidC && !ptagOkC)) else false.B
  private val anySame = tlbSame.reduce(_ || _)
  private val freeWays = rowValid.map(!_)
  private val evict = !claimRow && !anySame && !freeWays.reduce(_ || _)
  private val tlbWay = Mux(claimRow, 0.U, Mux(anySame, PriorityEncoder(tlbSame), Mux(evict, tlbRepl.victim(rowIdx), PriorityEncoder(freeWays))))
  // The fill commits (entry, valid bit, PTag, replacement state) one cycle after respond chose
  // its way, with `selReg` (LookupTiming "commit"): the way choice ends in a register instead of
  // in every entry's write enable and the replacement state. The write shadow already counts
  // that cycle, so no operation sees the difference (nothing is accepted until it has landed).
  private def toCommit[T <: Data](d: T): T = Stage.carry(d, timing.selReg)
  private val cmTlb = if (timing.selReg) RegNext(toTlb, false.B) else toTlb
  private val cmRow = toCommit(rowIdx)
  /** `registeredChoice`: the fill's way one-hot straight from the candidates' one-hots (the
    * same way as `tlbWay`, without its encoder and a decoder behind it: `fpga/levels.py
    * devtlb_ptb32`, 10.9 weighted levels into `cmWayOH`), and the committed way's number
    * encoded from the registered one-hot in the commit cycle.
    */
  private val cmWayOHDirect: Option[Vec[Bool]] = Option.when(p.registeredChoice) {
    val oh = Mux(claimRow, VecInit(UIntToOH(0.U, p.ways).asBools),
      Mux(anySame, VecInit(PriorityEncoderOH(tlbSame)),
        Mux(evict, VecInit(UIntToOH(tlbRepl.victim(rowIdx), p.ways).asBools), VecInit(PriorityEncoderOH(freeWays)))))
    toCommit(VecInit(oh.map(_ && toTlb))).suggestName("cmWayOH")
  }
  private val cmWay = cmWayOHDirect.map(OHToUInt(_)).getOrElse(toCommit(tlbWay))
  private val cmEntry = toCommit(n)
  private val cmClaim = toCommit(claimRow)
  private val cmEvict = toCommit(evict)
  tlb.io.write.valid := cmTlb
  tlb.io.write.bits.set := cmRow
  tlb.io.writeSetEarly.foreach(_ := rowIdx)
  tlb.io.write.bits.way := cmWay
  tlb.io.write.bits.data := DevKey(p, cmEntry)
  tlbData.io.write.valid := cmTlb
  tlbData.io.write.bits.set := cmRow
  tlbData.io.write.bits.way := cmWay
  tlbData.io.write.bits.data := DevData(p, cmEntry)
  // distributed RAM: each way's write enable straight from its own register (decoded in respond),
  // which the placer can put near that way's cells; from `cmWay` it was a decode behind a net
  // across the die
  private val cmWayOH = cmWayOHDirect.getOrElse(toCommit(VecInit(UIntToOH(tlbWay, p.ways).asBools.map(_ && toTlb))))
  tlb.io.writeWayOH.foreach(_ := cmWayOH)
  tlbData.io.writeWayOH.foreach(_ := cmWayOH)
  when(cmTlb) {
    when(cmClaim) {
      for (w <- 0 until p.ways) tlbValid(cmRow)(w) := false.B
      ptagValid(cmRow) := true.B
      ptag(cmRow) := cmEntry.sid
    }
    tlbValid(cmRow)(cmWay) := true.B
    tlbRepl.fill(cmRow, cmWay, cmEvict)
  }
  private val pbSame = (if (rowLate) sameLate(pbSameC) else sameS(pbSameC)).zip(pbValid).map { case (a, v) => a && v }
  private val pbAnySame = pbSame.reduce(_ || _)
  private val pbFree = pbValid.map(!_)
  private val pbEvict = !pbAnySame && !pbFree.reduce(_ || _)
  private val pbWay = Mux(pbAnySame, PriorityEncoder(pbSame), Mux(pbEvict, pbRepl.victim(0.U), PriorityEncoder(pbFree)))
  // the PB's fill commits a cycle later too
  private val cmPb = if (timing.selReg && p.prefetch) RegNext(toPb, false.B) else toPb
  private val cmPbWay = toCommit(pbWay)
  private val cmPbEvict = toCommit(pbEvict)
  pb.io.write.valid := cmPb
  pb.io.write.bits.set := 0.U
  pb.io.write.bits.way := cmPbWay
  pb.io.write.bits.data := cmEntry
  private val pbLostUnused = WireDefault(VecInit(Seq.fill(pbN)(false.B)))
  // `byteParts` (`devtlb_full`): an eviction's way is the LRU victim, so the entry it loses is
  // read there, not behind the way's multiplexer of the same-key and free choices
  // (`perf_prefetchUnused`'s event, `fpga/levels.py devtlb_full` 11.1-12.9, session 25)
  if (byteParts) { val v = pbRepl.victim(0.U); when(toPb && pbEvict && !pbUsed(v)) { pbLostUnused(v) := true.B } }
  else when(toPb && pbEvict && !pbUsed(pbWay)) { pbLostUnused(pbWay) := true.B }
  when(cmPb) {
    pbValid(cmPbWay) := true.B
    pbUsed(cmPbWay) := false.B
    pbRepl.fill(0.U, cmPbWay, cmPbEvict)
  }

  // invalidation: remove what it covers, mark its slots stale, wait for them
  private val tlbCover =
    if (!ramAddrReg) toRespond(tlbCoverC)
    else {
      val partsK = toPick(tlbCoverPartsC)
      val coverK = VecInit(partsK.map(x => x(0) && InvalRule.coversFrom(k.bits.inval, x(1), x.drop(2).reduce(_ && _))))
      Stage.carry(coverK, timing.selReg)
    }
  private val pbCover = toRespond(pbCoverC)
  // coverage is computed in match; a slot freed between match and respond (its last waiter's
  // response) is no longer there: it must not be marked nor waited for (its bit would never
  // clear, and invalDone would never come)
  private val slotCover = VecInit((
    if (!rowLate) toRespond(slotCoverC)
    else if (coverShared) VecInit(mergeEarlyParts.get.map(x => InvalRule.coversFrom(s.bits.inval, x(0), x.drop(1).reduce(_ && _))))
    else {
      val partsK = toPick(slotCoverPartsC.get)
      val coverK = VecInit(partsK.map(x => x(0) && InvalRule.coversFrom(k.bits.inval, x(1), x.drop(2).reduce(_ && _))))
      Stage.carry(coverK, timing.selReg)
    }).zipWithIndex.map { case (x, i) => x && st.valid(i) })
  when(invalNow) {
    when(InvalRule.kindAll(s.bits.inval)) {
      for (i <- 0 until p.sets; w <- 0 until p.ways) tlbValid(i)(w) := false.B
    }.otherwise {
      for (w <- 0 until p.ways) when(tlbCover(w)) { tlbValid(rowIdx)(w) := false.B }
    }
  }
  when(invalLast) {
    for (j <- 0 until pbN) when(pbCover(j)) {
      pbValid(j) := false.B
      when(!pbUsed(j)) { pbLostUnused(j) := true.B }
    }
    st.markStale(slotCover)
  }

  // ---- outputs -----------------------------------------------------------------------------
  private val rr = new RoundRobin(2, fast = true)  // the same choices as `hold`, fewer levels in front of the drain's load
  rr(Seq(hitq.io.deq.valid, st.drainValid))
  io.resp.valid := rr.valid
  io.resp.bits := Mux(rr.index === 0.U, hitq.io.deq.bits, st.drainResp)
  hitq.io.deq.ready := io.resp.ready && rr.index === 0.U
  private val drained = io.resp.fire && rr.index === 1.U
  when(io.resp.fire) { rr.granted() }
  st.drain(drained)

  // ATS requests, oldest first: a FIFO of demand slots, then a FIFO of prefetch slots (a
  // trigger may queue several prefetches in one cycle), into an output register. With several
  // slots the queues carry the slot's SID and page beside its number (written at the
  // allocation; a queued slot is not free, so they cannot change before it is sent), so the
  // output register loads from the queue heads without a multiplexer over the slots; with one
  // slot (`devtlb_base`, `devtlb_part`) the queue holds the number alone, as before.
  private val atsCarry = p.slots > 1
  /** The two send queues and the output register, for queue entries of type `gen`: the demand
    * queue takes `demandEntry` at an allocation, the prefetch queue `pfEntries`; `fields` gives
    * an entry's slot number, SID and page.
    *
    * With `registeredChoice` both queues take the allocations a cycle after respond (both, so
    * demand sends still go before the prefetches of the same respond), and `ats_req` is a cycle
    * later (**decided** 2026-11-29, docs/devtlb.md "Timing"): the merge decision was in front
    * of the demand queue's counter (`fpga/levels.py devtlb_ptb32`: 13.9 weighted levels, the
    * deepest path; `devtlb_ptb8`'s routed critical path). A slot stays unsent a cycle longer,
    * which only a completion for it can see (bad either way).
    */
  private def atsSend[T <: Data](gen: T, demandEntry: T, pfEntries: Seq[Valid[T]], fields: T => (UInt, UInt, UInt)): (Bool, AtsReq) = {
    val demandQ = Module(new RegQueue(gen, p.ptbEntries))
    val demandNow = Wire(Valid(gen))
    demandNow.valid := alloc
    demandNow.bits := demandEntry
    val demandIn = Stage(demandNow, p.registeredChoice)
    demandQ.io.enq.valid := demandIn.valid
    demandQ.io.enq.bits := demandIn.bits
    val pfq = new MultiPushQueue(gen, p.prefetchSlots.max(1), "pfq")
    pfq.push(pfEntries.map(Stage(_, p.registeredChoice)))
    atsOut(demandQ, pfq.valid, (en: Bool) => pfq.pop(en), pfq.head, fields)
  }
  /** `keyRam`: the keys are written into the RAMs from the queues' input registers (the
    * allocations a cycle after respond). With the Prefetch Unit (`devtlb_full`, where area
    * decides: it did not fit the device) both queues carry slot numbers and each head reads its
    * own RAM, the multiplexer of the two after the reads; without it (`devtlb_ptb8`, `ptb32`,
    * where the timing decides) the demand queue keeps its entries' keys, as before: its head's
    * 32:1 slot number in front of the RAM's read was `devtlb_ptb32`'s deepest path (12.1
    * weighted levels, 11.3 before; docs/devtlb.md "FPGA", session 22). A queue's unused key
    * fields are written with constants, which synthesis removes.
    */
  private def atsSendRam(): (Bool, AtsReq) = {
    val keysInQueue = !p.prefetch
    def entry(tag: UInt, sid: UInt, page: UInt, keep: Boolean): AtsSlot = {
      val e = Wire(new AtsSlot(p))
      e.tag := tag
      e.sid := (if (keep) sid else 0.U)
      e.page := (if (keep) page else 0.U)
      e
    }
    // without the Prefetch Unit the head's 32:1 selection of the key feeds the output
    // register's 68 bits through four copies of the head pointer (`devtlb_ptb32` seed 2's routed
    // critical path was the head pointer -> the selection -> `ats_req_bits_iova`, 8.18 ns of
    // routing in 10.14; docs/devtlb.md "FPGA", session 23)
    val demandQ = Module(new RegQueue(new AtsSlot(p), p.ptbEntries, readCopies = if (keysInQueue) 4 else 0,
      peekSecond = !keysInQueue))
    val demandNow = Wire(Valid(new AtsSlot(p)))
    demandNow.valid := alloc
    demandNow.bits.tag := OHToUInt(allocOH)
    demandNow.bits.sid := req.sid
    demandNow.bits.page := req.iova
    val demandIn = Stage(demandNow, true)
    demandQ.io.enq.valid := demandIn.valid
    demandQ.io.enq.bits := entry(demandIn.bits.tag, demandIn.bits.sid, demandIn.bits.page, keysInQueue)
    when(demandIn.valid) { demandKeys.get.write(demandIdx(demandIn.bits.tag), Cat(demandIn.bits.sid, demandIn.bits.page)) }
    // with the Prefetch Unit the head in a register (read at it: the prefetch keys' RAMs and the
    // register naming a slot's RAM; the 16:1 selection by the head pointer was in front of them,
    // `fpga/levels.py devtlb_full` 13.6 into `ats_req_bits_iova`)
    val pfq = new MultiPushQueue(new AtsSlot(p), p.prefetchSlots.max(1), "pfq", headReg = p.prefetch)
    val pfIn = pfPushes.zip(pfPushOH).map { case (x, oh) =>
      val r = Stage(x, true)
      if (!p.prefetch) r
      else {
        // the slot number from the registered one-hot (the prefetch slots follow the demand slots)
        val y = Wire(Valid(new AtsSlot(p)))
        y := r
        // bit 0 does not enter the number
        y.bits.tag := (if (p.prefetchSlots == 1) p.ptbEntries.U
          else p.ptbEntries.U +& OHToUInt(VecInit(false.B +: RegNext(VecInit(oh.drop(1))).suggestName("pfInOH"))))
        y
      }
    }
    pfq.push(pfIn.map { x =>
      val y = Wire(Valid(new AtsSlot(p)))
      y.valid := x.valid
      y.bits := entry(x.bits.tag, x.bits.sid, x.bits.page, false)
      y
    })
    pfKeys.foreach(ms => pfIn.zip(ms).zipWithIndex.foreach { case ((x, m), j) =>
      when(x.valid) {
        m.write(pfIdx(x.bits.tag), Cat(x.bits.sid, x.bits.page))
        pfKeyRam.foreach(_(pfIdx(x.bits.tag)) := j.U)
      }
    })
    /** With the Prefetch Unit, the demand queue's head slot number in a register of its own,
      * loaded with the entry that becomes the head (the one behind it at a dequeue, the entry
      * written into an empty queue), so that the keys' RAM is read at a register: the queue's
      * 32:1 selection by its head pointer was in front of the read (`fpga/levels.py
      * devtlb_full`: 15.0 weighted levels into `ats_req_bits_iova`). The same value whenever the
      * queue is not empty.
      */
    val headTag = Option.when(!keysInQueue) {
      val r = Reg(UInt(p.atsTagBits.W)).suggestName("demandHeadTag")
      val second = demandQ.io.second.get
      r := Mux(demandQ.io.deq.fire, Mux(second.valid, second.bits.tag, demandQ.io.enq.bits.tag),
        Mux(demandQ.io.deq.valid, r, demandQ.io.enq.bits.tag))
      r
    }
    /** `pfSendSkid`: the prefetch queue's head, with its key read from the RAMs at the head
      * register, moves into a 2-entry queue whenever that queue is not full (a flag register:
      * its own dequeue in the cycle is not counted, so the pop is a function of registers),
      * and the output register takes the prefetches from there. The output's demand-first
      * choice (`ats_req_ready` and the demand queue's count) popped the prefetch queue, in
      * front of its head register's 16:1 selection (`fpga/levels.py devtlb_full`: 10.8
      * weighted levels, session 30); it now moves two pointers of one bit. A prefetch reaches
      * `ats_req` a cycle later; the queue still sends one a cycle (it enqueues while it holds
      * one entry and dequeues it).
      */
    val skid = Option.when(p.pfSendSkid) {
      val q = Module(new RegQueue(new AtsSlot(p), 2, flagRegs = true))
      q.io.enq.valid := pfq.valid
      val (sid, page) = splitKey(pfKeyAt(pfq.head.tag))
      q.io.enq.bits.tag := pfq.head.tag
      q.io.enq.bits.sid := sid
      q.io.enq.bits.page := page
      pfq.pop(q.io.enq.fire)
      q
    }
    skid match {
      case Some(q) =>
        atsOut(demandQ, q.io.deq.valid, (en: Bool) => q.io.deq.ready := en, q.io.deq.bits, (n: AtsSlot) => (n.tag, n.sid, n.page),
          headTag.map(d => (takeDemand: Bool) => {
            val (sid, page) = splitKey(demandKeys.get(demandIdx(d)))
            val h = q.io.deq.bits
            (Mux(takeDemand, d, h.tag), Mux(takeDemand, sid, h.sid), Mux(takeDemand, page, h.page))
          }))
      case None =>
        atsOut(demandQ, pfq.valid, (en: Bool) => pfq.pop(en), pfq.head, (n: AtsSlot) => (n.tag, n.sid, n.page), headTag.map(d => (takeDemand: Bool) => {
          val (sid, page) = splitKey(Mux(takeDemand, demandKeys.get(demandIdx(d)), pfKeyAt(pfq.head.tag)))
          (Mux(takeDemand, d, pfq.head.tag), sid, page)
        }))
    }
  }
  /** The ATS output register, loaded from the demand queue's head or the prefetch source's
    * (`pfValid`, `pfHead`, dequeued by `pfPop`), demand first (`fields` of the head taken, or
    * `byHeads` given whether the demand queue's head is taken).
    */
  private def atsOut[T <: Data](demandQ: RegQueue[T], pfValid: Bool, pfPop: Bool => Unit, pfHead: T,
                                fields: T => (UInt, UInt, UInt),
                                byHeads: Option[Bool => (UInt, UInt, UInt)] = None): (Bool, AtsReq) = {
    val atsValid = RegInit(false.B)
    val atsBits = Reg(new AtsReq(p))
    val load = !atsValid || io.ats_req.ready
    val takeDemand = demandQ.io.deq.valid
    val takePf = !takeDemand && pfValid
    demandQ.io.deq.ready := load
    pfPop(load && takePf)
    val next = Mux(takeDemand, demandQ.io.deq.bits, pfHead)
    when(load) { atsValid := takeDemand || takePf }
    when(load && (takeDemand || takePf)) {
      val (tag, sid, page) = byHeads.map(_(takeDemand)).getOrElse(fields(next))
      atsBits.tag := tag
      atsBits.sid := sid
      atsBits.iova := page
      atsBits.prefetch := takePf
    }
    (atsValid, atsBits)
  }
  private val (atsValid, atsBits) =
    if (keyRam) atsSendRam()
    else if (!atsCarry) atsSend(UInt(p.atsTagBits.W), OHToUInt(allocOH), pfPushes.map { x =>
      val y = Wire(Valid(UInt(p.atsTagBits.W)))
      y.valid := x.valid
      y.bits := x.bits.tag
      y
    }, (n: UInt) => (n, st.slot(n).sid, st.slot(n).page))
    else {
      val e = Wire(new AtsSlot(p))
      e.tag := OHToUInt(allocOH)
      e.sid := req.sid
      e.page := req.iova
      atsSend(new AtsSlot(p), e, pfPushes, (n: AtsSlot) => (n.tag, n.sid, n.page))
    }
  io.ats_req.valid := atsValid
  io.ats_req.bits := atsBits
  for (i <- 0 until p.slots) when(io.ats_req.fire && atsBits.tag === i.U) { st.slot(i).sent := true.B }
  // a completion for a slot whose request leaves in the same cycle is bad (the slot is unsent)
  outstanding.foreach(o => for (i <- 0 until p.slots) {
    when(goodCompOf(i)) { o(i) := false.B }.elsewhen(io.ats_req.fire && atsBits.tag === i.U) { o(i) := true.B }
  })

  st.finish()
  private val pushOwed = hitq.io.count - hitq.io.deq.fire.asUInt
  /** `registeredChoice`: the pending invalidations forget a freed slot one cycle after its
    * freeing (the drain's handshake is late in the cycle: `resp_ready` -> the handshake -> the
    * freed slot -> every pending mask; `fpga/levels.py devtlb_ptb32`, 14.0), so `invalDone` may
    * come one cycle later ("Same-cycle inputs", **decided** 2026-11-29). Safe: a slot freed in
    * cycle c is not valid in c + 1, so no invalidation pushed then covers it, and a new owner
    * (a prefetch slot may be allocated in c + 1) is valid from c + 2.
    */
  inv.update(invalLast, slotCover.asUInt, pushOwed,
    if (p.registeredChoice) RegNext(st.freeing.asUInt, 0.U) else st.freeing.asUInt, hitq.io.deq.fire)
  io.invalDone := inv.done

  // ---- counters ----------------------------------------------------------------------------
  private val misaligned = compNow && !comp.fault && ((comp.pageSize === PageSize.Size2M.U && comp.ppn(8.min(p.ppnBits - 1), 0).orR) ||
    (comp.pageSize === PageSize.Size1G.U && comp.ppn((17).min(p.ppnBits - 1), 0).orR))
  PerfCounters.connect(
    io.perf,
    "requests" -> PerfCounter(io.req.fire),
    "hits" -> PerfCounter(reqNow && won.tlbHit),
    "pbHits" -> PerfCounter(reqNow && !won.tlbHit && won.pbHit),
    "misses" -> PerfCounter(miss),
    "merged" -> PerfCounter(merge),
    "atsRequests" -> PerfCounter(io.ats_req.fire && !io.ats_req.bits.prefetch),
    "prefetches" -> PerfCounter(io.ats_req.fire && io.ats_req.bits.prefetch),
    "ptbFullCycles" -> PerfCounter(io.req.valid && st.demandFree === 0.U),
    "invalidations" -> PerfCounter(io.inval.fire),
    "badCompletions" -> PerfCounter.count(Seq(badTag, compNow && !comp.fault && comp.pageSize === PageSize.Reserved.U)),
    "badAlign" -> PerfCounter(misaligned),
    "badInvals" -> (if (!badParts) PerfCounter(io.inval.fire && InvalRule.bad(p, io.inval.bits))
      else PerfCounter.parts(io.inval.fire +: InvalRule.badParts(p, io.inval.bits), ps => ps.head && InvalRule.badOf(ps.tail))),
    "faults" -> PerfCounter(io.resp.fire && io.resp.bits.fault),
    "claims" -> PerfCounter(toTlb && takeover),
    "prefetchDropped" -> PerfCounter.count(dropped),
    "prefetchUnused" -> PerfCounter.count(pbLostUnused),
    "staleCompletions" -> PerfCounter(compNow && stale),
    "respStallCycles" -> PerfCounter(io.resp.valid && !io.resp.ready),
    "atsStallCycles" -> PerfCounter(io.ats_req.valid && !io.ats_req.ready)
  )
  // ---- formal view -------------------------------------------------------------------------
  io.dbg.foreach { d =>
    val all = for (i <- 0 until p.sets; w <- 0 until p.ways) yield {
      val d = tlbData.io.all(i)(w)
      (tlb.io.all(i)(w).entry(d.ppn, d.perm_r, d.perm_w), tlbValid(i)(w))
    }
    d.tlbValid := VecInit(all.map(_._2)).asUInt
    d.tlbSid := VecInit(all.map(_._1.sid)).asUInt
    d.tlbPage := VecInit(all.map(_._1.page)).asUInt
    d.tlbBig := VecInit(all.map(_._1.big)).asUInt
    d.ptagValid := ptagValid.asUInt
    d.ptag := ptag.asUInt
    d.pbValid := pbValid.asUInt
    d.pbSid := VecInit(pb.io.all(0).map(_.sid)).asUInt
    d.pbPage := VecInit(pb.io.all(0).map(_.page)).asUInt
    d.pbBig := VecInit(pb.io.all(0).map(_.big)).asUInt
    d.slotValid := st.valid.asUInt
    d.slotDone := VecInit(st.slot.map(_.done)).asUInt
    d.slotSent := VecInit(st.slot.map(_.sent)).asUInt
    d.slotStale := VecInit(st.slot.map(_.stale)).asUInt
    d.slotSid := VecInit(st.slot.map(_.sid)).asUInt
    d.slotPage := VecInit(st.slot.map(_.page)).asUInt
    d.waiterValid := st.wValid.asUInt
    d.pipeEmpty := pipeEmpty
    d.tlbPpn := VecInit(all.map(_._1.ppn)).asUInt
    d.pbPpn := VecInit(pb.io.all(0).map(_.ppn)).asUInt
    d.slotCompleting := VecInit(st.slot.map(_.completing)).asUInt
    d.slotFault := VecInit(st.slot.map(_.fault)).asUInt
    d.slotFrame := VecInit(st.slot.map(_.frame)).asUInt
    d.waiterTag := VecInit(st.waiter.map(_.tag)).asUInt
    d.waiterSlot := VecInit(st.waiter.map(_.slot)).asUInt
    d.waiterOut := VecInit((0 until p.waiters).map(st.isOut)).asUInt
    d.waiterReady := VecInit(st.waiter.map(_.ready)).asUInt
    d.drainValid := st.out
    d.drainWaiter := st.outWaiter
    d.pickValid := st.pickV
    d.waiterPicked := st.pickOH.asUInt
    d.atsValid := atsValid
    d.slotWaiters := VecInit(st.slot.map(_.waiters)).asUInt
  }
}

object OpKind extends ChiselEnum {
  val Req, Comp, Inval = Value
}

/** An operation on its way from acceptance to respond. A completion carries its slot's SID and
  * page in `req`.
  */
class DevOp(p: DevTlbParams) extends Bundle {
  val kind = OpKind()
  val row = UInt(p.setBits.max(1).W)
  val req = new DevReq(p)
  val comp = new AtsResp(p)
  val inval = new DevInval(p)
  /** The invalidation's page mask (`InvalRule.pageMask`). */
  val ivMask = UInt(p.pageBits.W)
  /** An invalidation's last operation (one per set when it sweeps; else its only one). */
  val last = Bool()
}

/** A slot waiting in an ATS send queue: its number, SID and page. */
class AtsSlot(p: DevTlbParams) extends Bundle {
  val tag = UInt(p.atsTagBits.W)
  val sid = UInt(p.sidBits.W)
  val page = UInt(p.pageBits.W)
}

/** A slot allocated in a respond cycle: its key and the slot, one-hot. */
class SlotAlloc(p: DevTlbParams) extends Bundle {
  val valid = Bool()
  val sid = UInt(p.sidBits.W)
  val page = UInt(p.pageBits.W)
  val oh = UInt(p.slots.W)
}

class DevPick(p: DevTlbParams, pbN: Int) extends Bundle {
  val tlb = Vec(p.ways, Bool())
  val pb = Vec(pbN, Bool())
  val tlbHit = Bool()
  val pbHit = Bool()
}

/** Copies of a request's fields that synthesis must not merge: copy g is loaded under
  * `sel(valid, kind, g)`, true for a valid request and, for every other (valid, kind) code, a
  * function of g (copy 0: a valid request only), so no two copies have equal inputs.
  */
object ReqCopy {
  /** `inval`: a valid invalidation loads every copy as well (`DevTlb.coverShared`). */
  def sel(valid: Bool, kind: UInt, g: Int, inval: Boolean = false): Bool = {
    val loads = if (inval) Seq(4, 6) else Seq(4) // valid, OpKind.Req (0) / OpKind.Inval (2)
    val others = (0 until 8).filter(!loads.contains(_))
    require(g < (1 << others.size))
    val code = Cat(valid, kind.pad(2)(1, 0))
    VecInit((0 until 8).map(v => (loads.contains(v) || (others.indexOf(v) >= 0 && ((g >> others.indexOf(v)) & 1) == 1)).B))(code)
  }
}

/** A merge key copy that also carries an invalidation (`DevTlb.coverShared`). */
class CoverKey(p: DevTlbParams) extends Bundle {
  val sid = UInt(p.sidBits.W)
  val iova = UInt(p.pageBits.W)
  val mask = UInt(p.pageBits.W)
  val inval = Bool()
}

/** What a completion caches: 4 KiB as is; 2 MiB and 1 GiB as the 2 MiB piece holding the page. */
object Completion {
  def entry(p: DevTlbParams, c: AtsResp, sid: UInt, page: UInt): DevEntry = {
    val e = Wire(new DevEntry(p))
    val big = c.pageSize === PageSize.Size2M.U || c.pageSize === PageSize.Size1G.U
    val lowPage = 9.min(p.pageBits)
    e.sid := sid
    e.big := big
    e.page := Mux(big, (page >> lowPage << lowPage)(p.pageBits - 1, 0), page)
    e.perm_r := c.perm_r
    e.perm_w := c.perm_w
    // the piece's frame: a 2 MiB page's own (low 9 bits ignored), or within a 1 GiB page the
    // frame of the 2 MiB piece holding `page` (low 18 bits from the page)
    val keep9 = ~((BigInt(1) << 9) - 1).U(p.ppnBits.W)
    val keep18 = ~((BigInt(1) << 18.min(p.ppnBits)) - 1).U(p.ppnBits.W)
    val pieceIn1G = (page.pad(18)(17, 9) << 9).pad(p.ppnBits)(p.ppnBits - 1, 0)
    e.ppn := MuxLookup(c.pageSize, c.ppn)(Seq(
      PageSize.Size2M.U -> (c.ppn & keep9),
      PageSize.Size1G.U -> ((c.ppn & keep18) | (pieceIn1G & ~keep18))
    ))
    e
  }
}

/** What an invalidation covers (docs/devtlb.md, "Invalidation"). */
object InvalRule {
  /** Page-number bits an entry must share with `iova` (the range's size, at least one page). */
  def pageMask(p: DevTlbParams, iv: DevInval): UInt = {
    // bit i is kept when the range is at most 2^i pages: sizeLog2 <= 12 + i; a table indexed
    // by sizeLog2 (each bit a 6-input function) rather than a carry-chain compare per bit
    val table = (0 until 64).map(v => (0 until p.pageBits).filter(i => v <= 12 + i).map(i => BigInt(1) << i).sum.U(p.pageBits.W))
    VecInit(table)(iv.sizeLog2)
  }

  def kindAll(iv: DevInval): Bool = iv.kind === InvalKind.All.U || iv.kind === InvalKind.Reserved.U

  def covers(p: DevTlbParams, iv: DevInval, mask: UInt, e: DevEntry): Bool = {
    val big = ~((BigInt(1) << 9.min(p.pageBits)) - 1).U(p.pageBits.W)
    val m = Mux(e.big, mask & big, mask)
    kindAll(iv) || (e.sid === iv.sid && (iv.kind === InvalKind.Sid.U || ((e.page ^ iv.iova) & m) === 0.U))
  }

  /** [[covers]] cut for a registered compare: the chunks of `n` bits of the page compare under
    * the mask (each true when the entry's page agrees with `iova` on the chunk's masked bits).
    */
  def pageParts(p: DevTlbParams, iv: DevInval, mask: UInt, e: DevEntry, n: Int): Seq[Bool] = {
    val big = ~((BigInt(1) << 9.min(p.pageBits)) - 1).U(p.pageBits.W)
    val d = (e.page ^ iv.iova) & Mux(e.big, mask & big, mask)
    (0 until p.pageBits by n).map(i => d((i + n).min(p.pageBits) - 1, i) === 0.U)
  }

  /** [[coversSlot]]'s page compare cut into chunks of `n` bits (as [[pageParts]]). */
  def slotPageParts(p: DevTlbParams, iv: DevInval, mask: UInt, page: UInt, n: Int): Seq[Bool] = {
    val big = ~((BigInt(1) << 9.min(p.pageBits)) - 1).U(p.pageBits.W)
    val d = (page ^ iv.iova) & mask & big
    (0 until p.pageBits by n).map(i => d((i + n).min(p.pageBits) - 1, i) === 0.U)
  }

  /** [[covers]] from its parts: the SID compare and the AND of [[pageParts]]. */
  def coversFrom(iv: DevInval, sidEq: Bool, pageEq: Bool): Bool =
    kindAll(iv) || (sidEq && (iv.kind === InvalKind.Sid.U || pageEq))

  /** A slot: its size is unknown until the completion, so it is covered when the 2 MiB region
    * of its page overlaps the range (a 2 MiB completion in flight is then not cached).
    */
  def coversSlot(p: DevTlbParams, iv: DevInval, mask: UInt, sid: UInt, page: UInt): Bool = {
    val big = ~((BigInt(1) << 9.min(p.pageBits)) - 1).U(p.pageBits.W)
    kindAll(iv) || (sid === iv.sid && (iv.kind === InvalKind.Sid.U || ((page ^ iv.iova) & mask & big) === 0.U))
  }

  /** [[bad]] in parts for a registered event (`PerfCounter.parts`, [[badOf]] combines them):
    * the two kind codes, a range below one page, and the start's bits below the size in chunks
    * of 4 (each a function of 4 `iova` bits and `sizeLog2`), instead of the page mask's table ->
    * a 52-bit AND -> its OR in one cycle.
    */
  def badParts(p: DevTlbParams, iv: DevInval): Seq[Bool] = {
    val low = iv.iova & ~pageMask(p, iv)
    Seq(iv.kind === InvalKind.Reserved.U, iv.kind === InvalKind.Range.U, iv.sizeLog2 < 12.U) ++
      (0 until p.pageBits by 4).map(i => low((i + 4).min(p.pageBits) - 1, i).orR)
  }

  /** [[bad]] from [[badParts]]. */
  def badOf(parts: Seq[Bool]): Bool = parts(0) || (parts(1) && (parts(2) || parts.drop(3).reduce(_ || _)))

  /** A reserved kind, a range below one page, or a range start not aligned to its size. */
  def bad(p: DevTlbParams, iv: DevInval): Bool =
    iv.kind === InvalKind.Reserved.U ||
      (iv.kind === InvalKind.Range.U && (iv.sizeLog2 < 12.U || (iv.iova & ~pageMask(p, iv)) =/= 0.U))
}
