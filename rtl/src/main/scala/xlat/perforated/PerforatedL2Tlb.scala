package xlat.perforated

import chisel3._
import chisel3.util._
import xlat.common._

/** PerforatedL2Tlb: an L2 TLB with its own x86-64 4-level walker that supports perforated 2 MiB
  * pages (Perforated Page, ISCA'20). docs/perforated-l2tlb.md is the contract; the reference
  * model tb/models/perforated.py implements the same decided behaviour.
  *
  * ==Structure==
  *  - the 4 KiB array (`sets4k` x `ways4k`, holes too) and the 2 MiB array (`sets2m` x `ways2m`,
  *    with filter, PD page and upper permissions): [[SetAssocStorage]] (SRAM or flops) with one
  *    valid word per set ([[ArrayValid]]) and one tree-PLRU word per set ([[ArrayPlru]]), both in
  *    distributed RAM except in the formal configuration (flops, which its `dbg` view reads);
  *  - the bitmap word cache (`bitmapEntries`, tagged by frame >> 6) and the page-walk cache
  *    (`pwcEntries`: PML4E, PDPTE, PDE-pointer and shadow entries): [[AssocCache]], flops,
  *    fully associative, tree-PLRU, same-key fills rewrite; the bitmap words themselves (read
  *    for one entry only) in distributed RAM beside the tags ([[WordStore]]); with `selReg` the
  *    caches' fills and touches land one cycle after respond (`late`, see below); with
  *    `bitmapSets` > 1 the bitmap words are a set-associative cache in block RAM instead,
  *    virtually indexed by the request's 64-page VA chunk and physically tagged, read beside
  *    the arrays and compared in pick (`bmArr`; docs "The bitmap word cache's size");
  *  - `walkers` walk slots ([[WalkState]]): a request that needs memory holds one from its first
  *    read to its response, with at most one read outstanding (`mem_req.id` = slot);
  *  - the miss queue ([[MissQueue]], `missQueue` = the stage registers from acceptance to
  *    respond): requests that need memory and find every slot busy in their respond wait there
  *    in order, their first read decided; the head takes the slot a walk frees (decided
  *    2026-11-28, docs "Acceptance");
  *  - the response queue ([[RegQueue]], `respQueue`) in front of `resp`;
  *  - [[InvalWait]]: accepted invalidations waiting for the responses of the requests accepted
  *    before them.
  *
  * ==Pipeline==
  * One operation a cycle is accepted, by priority inval > mem_resp (a walk step) > req, and
  * passes the stages of [[LookupTiming]] in order:
  *  - '''read''' (acceptance; with `opReg` (storage = sram, latency 4; docs "Timing", 2026-11-29)
  *    the cycle after it, from the operation's register, so that the block RAMs' read
  *    addresses come from flops): the set of the operation's page in both arrays;
  *  - '''row''' (`rowReg`: storage = sram, latency 4; docs "Timing", 2026-11-28): the rows
  *    registered a second time, the sets' valid words read, and the 2 MiB row (distributed
  *    RAM) compared, all registered, so that match starts from flops;
  *  - '''match''': both rows against (asid, vpn): the hit vectors, which are also the same-key
  *    vectors of a step's fill, and (one compare: an invalidation's asid and page ride in the
  *    request's fields) an invalidation's coverage of the row; the PWC against the four prefixes
  *    (also a PWC fill's same-key vector);
  *  - '''pick''': the winners (index and entry, so only the chosen entries go on), and the
  *    bitmap cache (or, with `bitmapSets` > 1, the set read at the operation's VA chunk)
  *    against one key: the word of the 2 MiB winner's page, or a step's `bmKey`
  *    (the word its bitmap read fetched: also the bitmap fill's same-key vector);
  *  - '''decide''' (a register after pick, whatever the latency): the operation's decision but
  *    the perforated one, as flat conditions (the response, the slot's next state and read, the
  *    fills, touches and events), and the perforated decision's inputs (filter bit, the bitmap
  *    cache's hit, the page's bit of the word) and each outcome's data; all registered
  *    (with `preDecide`, i.e. `rowReg`: the large page comes from a register of pick, the
  *    page's bit of every cached bitmap word from match, and its data multiplexers select by
  *    kind; docs "Timing");
  *  - '''respond''' (a register after decide): selects among the registered outcomes and
  *    writes: the response into the queue, replacement touches, fills, the slot, an
  *    invalidation's removal.
  * Only a walk step and an invalidation write (fills, valid bits), so only they open a
  * [[WriteShadow]] (with `selReg` the arrays' shadow of [[LookupTiming]] already covers
  * respond, and the caches' late fills land in the cycle after it, before the next operation's
  * compares; without it one cycle more); requests run back to back: a request changes nothing another request
  * compares (it only touches replacement state, read and written in respond in acceptance
  * order, and takes a slot or a miss-queue place, reserved at acceptance). Hence every operation sees the effect of
  * every operation accepted before it, the model's sequential order.
  *
  * ==Invalidations==
  * An invalidation is accepted only into an empty pipeline. Kind 0 clears every valid bit in its
  * respond; kind 2 touches the sets of its page; kinds 1 and 3 sweep `sweepSets` sets, one a
  * cycle, while nothing else is accepted (the entries' tags are in SRAM). Walks in flight become
  * stale at acceptance (they fill nothing afterwards). `invalDone` pulses once the sweep has
  * landed and every response owed to earlier requests has left on `resp`.
  *
  * ==Acceptance==
  * `req_ready` needs a walk slot or a miss-queue place, and a response-queue place, for every
  * request in flight that might take one, so nothing is ever replayed; a request takes a slot
  * (or a queue place) only in its respond, when it turns out to need memory, so hits run one a
  * cycle (decided 2026-11-28, docs "Acceptance"). `mem_resp_ready` needs a response-queue
  * place. A request also waits while an invalidation that could be accepted is presented, so
  * that the pipeline drains for it; an invalidation waits for an empty miss queue.
  */
class PerforatedL2Tlb(val p: PerforatedParams) extends Module {
  override def desiredName = "PerforatedL2Tlb"

  val io = FlatIO(new Bundle {
    val req = Flipped(Decoupled(new PReq(p)))
    val resp = Decoupled(new PResp(p))
    val bitmapBase = Input(UInt(p.paBits.W))
    val mem_req = Decoupled(new MemReq(p.slotBits, p.paBits))
    val mem_resp = Flipped(Decoupled(new MemResp(p.slotBits)))
    val inval = Flipped(Decoupled(new PInval(p)))
    val invalDone = Output(new InvalDoneValid)
    val perf = Output(new PerfCounters(PerforatedPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new PerforatedDbg(p))) else None
  })

  require(!(p.formalPorts && p.sram), "formalPorts needs storage = flops (the dbg view reads every entry)")
  private val timing = p.timing
  private val hi = p.ppnBits - 1
  private def set4kOf(vpn: UInt): UInt = if (p.setBits4k == 0) 0.U(1.W) else vpn(p.setBits4k - 1, 0)
  private def set2mOf(vpn: UInt): UInt = if (p.setBits2m == 0) 0.U(1.W) else (vpn >> 9)(p.setBits2m - 1, 0)

  // ---- state -------------------------------------------------------------------------------
  /** Flop storage (`storage = flops`) in distributed RAM, as DevTlb's: the same cycle behaviour
    * (combinational read into the row register) without a 1-of-`sets` multiplexer over every
    * entry bit; the formal configuration keeps registers (its `dbg` view reads every entry).
    * With `storage = sram` an array of at most `lutramMaxSets` sets is built the same way: Yosys
    * maps so shallow a memory to distributed RAM (DPR16X4) whatever it is declared as, and as
    * an `sram` memory its read address was then every cell's address pin (perforated_default's
    * 32-set 2 MiB array, the routed critical path of 2026-11-28); as lutram it gets `addrReg`.
    * The owner sees the same rows: both read with latency 1 and no set is read while written.
    */
  private def lutram(sets: Int): Boolean = (!p.sram || sets <= PerforatedL2Tlb.lutramMaxSets) && !p.formalPorts && sets > 1
  /** The distributed RAMs' read register on the address (`SetAssocStorage(addrReg)`, as DevTlb's):
    * the acceptance's set multiplexer loads one small register per way and each way's cells are
    * read from their own copy in match, instead of the multiplexer driving the address pin of
    * every cell (the routed critical path of perforated_flops, 2026-11-28: `invOkR` -> the set
    * multiplexer -> the row register, 13.9 ns of routing). The same data in match: nothing writes
    * an array between an operation's acceptance and its match (writes land in respond, behind
    * the write shadow). The write addresses come from per-way registers too, loaded from the
    * decide stage's set (the fill lands in respond, the cycle after).
    */
  private def addrReg(sets: Int): Boolean = lutram(sets) && timing.readReg && timing.selReg
  // (with `preDecide`, `readsNeverWrite`: nothing is accepted in a cycle the arrays are written
  // (the write shadow), so the row read in that cycle is never used; Yosys then needs no
  // read-first emulation between the block RAM's ports, which compared the acceptance's set
  // with the write's: the routed critical path of 2026-11-29, seed 1)
  private val a4k = Module(new SetAssocStorage(new E4k(p), p.sets4k, p.ways4k, p.sram && !lutram(p.sets4k), readReg = timing.readReg,
    lutram = lutram(p.sets4k), addrReg = addrReg(p.sets4k), readsNeverWrite = p.preDecide && p.sram && !lutram(p.sets4k)))
  private val a2m = Module(new SetAssocStorage(new E2m(p), p.sets2m, p.ways2m, p.sram && !lutram(p.sets2m), readReg = timing.readReg,
    lutram = lutram(p.sets2m), addrReg = addrReg(p.sets2m)))
  /** Per-set state in distributed RAM instead of flops (every configuration but the formal one,
    * whose `dbg` view reads every valid bit): see [[ArrayValid]], [[ArrayPlru]] and `bmWords`.
    */
  private val ramState = !p.formalPorts
  private val valid4k = new ArrayValid(p.sets4k, p.ways4k, ramState)
  private val valid2m = new ArrayValid(p.sets2m, p.ways2m, ramState)
  /** With `preDecide` the fills' ways are chosen in decide and registered ([[ArrayPlru.victimEarly]]). */
  private def plruEarly(sets: Int, ways: Int): Boolean = p.preDecide && ramState && sets > 1 && ways > 1
  private val repl4k = new ArrayPlru(p.ways4k, p.sets4k, ramState, plruEarly(p.sets4k, p.ways4k))
  private val repl2m = new ArrayPlru(p.ways2m, p.sets2m, ramState, plruEarly(p.sets2m, p.ways2m))
  /** The bitmap word cache's tags (compared every cycle: flops) ... */
  /** Fills and touches of the two fully associative caches land one cycle after respond
    * (AssocCache `late`), from registers, so the caches' fill logic is not behind respond's
    * decisions; the fill's same-key vector is the compare match made for the operation
    * (`keyIn`). Legal when a write shadow covers that cycle too (`selReg`, docs "Timing").
    */
  private val lateFills = timing.selReg
  // (`isolated` too: only walk steps fill, each behind a write shadow that also keeps every
  // invalidation away from the landing; the same-key vectors are match's and pick's compares,
  // which include the valid bits)
  private val bmFa = Option.when(!p.bmSA)(new AssocCache(new EBitmapTag(p), p.bitmapEntries, 1,
    sameKey = Some((a: EBitmapTag, b: EBitmapTag) => a.index === b.index), late = lateFills, keyIn = lateFills,
    isolated = lateFills, landOH = lateFills && p.preDecide))
  private def bm = bmFa.get
  /** ... and its words, read only for the one entry the pick stage chose: distributed RAM
    * (flops with `formalPorts`), written where the cache writes the tag. With `preDecide` flops
    * too: match selects the page's bit of every word, beside pick's compares (docs "Timing").
    */
  private val bmWordsFa = Option.when(!p.bmSA)(new WordStore(p.bitmapEntries, 64, ramState && !p.preDecide))
  private def bmWords = bmWordsFa.get
  /** With `bitmapSets` > 1 (**decided** 2026-11-30, docs "The bitmap word cache's size") the
    * bitmap words are a set-associative cache instead: tag and word in block RAM (one memory
    * per way), the valid bits ([[ArrayValid]], flash-cleared by kinds 0 and 3) and tree-PLRU
    * words ([[ArrayPlru]]) in distributed RAM, as the arrays'. **Virtually indexed**: the set is
    * the request's 64-page VA chunk (`bmSetOf`), known at acceptance, so the set is read in the
    * read stage beside the arrays and its row registered for match like the 4 KiB row; pick
    * compares the set's tags (the physical frame-word index) with the key formed in match, as
    * it compares the flop array's: no stage is added. A walk's bitmap step re-enters with its
    * request's VA, so it reads the same set (its compare is its fill's same-key vector). The
    * fill is written in the step's respond, like the arrays' fills, behind its write shadow.
    */
  // (with `formalPorts` (a formal configuration of the set-associative cache, docs "The bitmap
  // word cache's size") the same block-RAM storage with its `view` of every entry for `dbg`)
  private val bmArr = Option.when(p.bmSA)(Module(new SetAssocStorage(new EBitmap(p), p.bitmapSets, p.bitmapWays, true,
    readReg = timing.readReg, readsNeverWrite = true, view = p.formalPorts)))
  private val bmValid = Option.when(p.bmSA)(new SetValid(p.bitmapSets, p.bitmapWays))
  private val bmRepl = Option.when(p.bmSA && p.bitmapWays > 1)(new ArrayPlru(p.bitmapWays, p.bitmapSets, ramState, early = true))
  private def bmSetOf(vpn: UInt): UInt = if (p.bmSetBits == 0) 0.U(1.W) else vpn(6 + p.bmSetBits - 1, 6)
  private val pwc = Option.when(p.pwcEntries > 0)(new AssocCache(new EPwc(p), p.pwcEntries, 1,
    sameKey = Some((a: EPwc, b: EPwc) => a.asid === b.asid && a.kind === b.kind && a.prefix === b.prefix),
    late = lateFills, keyIn = lateFills, isolated = lateFills, landOH = lateFills && p.preDecide))
  private val pwcN = p.pwcEntries.max(1)

  private val sv = RegInit(VecInit(Seq.fill(p.walkers)(false.B)))
  /** The slot's read has been handshaken on `mem_req` (outstanding from the next cycle). */
  private val sSent = RegInit(VecInit(Seq.fill(p.walkers)(false.B)))
  /** The slot's memory response was accepted: its step is in the pipeline. */
  private val sStep = RegInit(VecInit(Seq.fill(p.walkers)(false.B)))
  private val sStale = RegInit(VecInit(Seq.fill(p.walkers)(false.B)))
  private val ws = Reg(Vec(p.walkers, new WalkState(p)))

  private val respq = Module(new RegQueue(new PResp(p), p.respQueue, peekAll = p.formalPorts))
  private val inv = new InvalWait(p.invalPending, p.walkers, log2Ceil(p.respQueue + 1))
  /** Writes land in respond, one cycle after `s` (decide): the arrays' write shadow plus one,
    * except with `selReg`, whose shadow already covers the cycle after `s` (the caches' late
    * fills, which now land in the cycle after respond: the next operation compares the PWC in
    * match and the bitmap cache in pick, both after that).
    */
  private val shadow = new WriteShadow(p.writeShadow)

  private val sweeping = RegInit(false.B)
  private val sweepIdx = RegInit(0.U(log2Ceil(p.sweepSets).max(1).W))
  private val sweepOp = Reg(new PInval(p))

  // ---- read stage: accept one operation a cycle --------------------------------------------
  private val issue = Wire(Valid(new POp(p)))
  /** With `rowReg` the operation in the cycle its rows leave the arrays (the row stage), before
    * they are registered a second time for match; else `c` itself.
    */
  /** With `opReg` the operation in the cycle it reads the arrays, one after its acceptance: the
    * read addresses come from its register; else `issue` itself.
    */
  private val readOp = if (p.opReg) Stage(issue, true) else issue
  private val rowStage = Option.when(p.rowReg)(Stage(readOp, timing.readReg))
  private val c = Stage(rowStage.getOrElse(readOp), timing.readReg || p.rowReg)
  private val c0 = rowStage.getOrElse(c)
  private val k = Stage(c, timing.hitReg)
  private val s = Stage(k, timing.selReg)
  /** Respond: one stage after decide (the old respond cycle, `s`), always a register. */
  private val rs = Stage(s, true)
  private val held = Seq((readOp, p.opReg), (c0, p.rowReg), (c, timing.readReg), (k, timing.hitReg), (s, timing.selReg)).collect { case (x, true) => x } :+ rs
  private def isKind(x: Valid[POp], kd: OpKind.Type): Bool = x.valid && x.bits.kind === kd
  private val pipeEmpty = !held.map(_.valid).foldLeft(false.B)(_ || _)
  private val heldReqs = PopCount(held.map(isKind(_, OpKind.Req)))
  private val heldAnswers = PopCount(held.map(x => x.valid && x.bits.kind =/= OpKind.Inval))
  private val freeSlots = PopCount(sv.map(!_))
  /** With `opReg`, `respRoom` is a register computed a cycle ahead (below, from the queue's next
    * count and the stage registers' next operations: the same function of the next state, no
    * cycle changes). The read stage's operation register drives the block RAMs' read addresses,
    * far from the acceptance logic: its kind, counted into `heldAnswers` and added to the
    * queue's count, reached the write shadow's load through `mem_resp.ready` and `goodStep`
    * (the routed critical path of session 25's seed 1, 96.93 MHz).
    */
  private val respRoomR = Option.when(p.opReg)(RegInit(true.B))
  private val respRoom = respRoomR.getOrElse((respq.io.count +& heldAnswers) < p.respQueue.U)
  /** The miss queue (docs "Acceptance", decided 2026-11-28): a request that needs memory and
    * finds every walk slot busy in its respond waits here, in order, with its slot state (its
    * first read) decided there; one place per request the pipeline holds, so that acceptance
    * reserves a slot or a place. While it is not empty every slot is busy: a walk that ends hands
    * its slot to the head (`handR`, the cycle after its respond), which sends its read from the
    * cycle after that.
    */
  private val mq = new MissQueue(new WalkState(p), held.size, regs = p.formalPorts)
  require(mq.depth == p.missQueue, s"missQueue ${p.missQueue} != the stage registers ${held.size}")
  private val mqAny = mq.count =/= 0.U
  /** The miss queue is empty: a register computed a cycle ahead from the queue's next count
    * (below), so that `inval_ready` (and through it the acceptance's selection) starts from
    * flops (the count's compare was on the routed critical path of 2026-11-28, 84.55 MHz).
    */
  private val mqEmptyR = RegInit(true.B)
  /** The slot a walk that ended hands to the miss queue's head, this cycle. */
  private val handR = RegInit(false.B)
  private val handSlot = Reg(UInt(p.slotBits.W))

  /** `!busy` and `!busy && pipeEmpty`, each computed a cycle ahead into a register (the same
    * functions of the state: below, from the next state of the shadow, the sweep and the stage
    * registers), so the acceptance logic starts from flops.
    */
  private val freeR = RegInit(true.B)
  private val idleR = RegInit(true.B)
  /** `inv.count < invalPending`, a register too (computed a cycle ahead from the tracker's next
    * count, below). */
  private val invOkR = RegInit(true.B)
  io.inval.ready := idleR && invOkR && mqEmptyR
  io.mem_resp.ready := freeR && !io.inval.fire && respRoom
  /** An invalidation that will be accepted once the pipeline has drained: requests wait for it. */
  private val invalWaits = io.inval.valid && invOkR
  io.req.ready := freeR && !invalWaits && !io.mem_resp.fire && respRoom && (freeSlots +& mq.free) > heldReqs

  private val mid = io.mem_resp.bits.id
  private val midOk = if (isPow2(p.walkers)) true.B else mid < p.walkers.U
  private val outstanding = VecInit((0 until p.walkers).map(i => sv(i) && sSent(i) && !sStep(i)))
  private val goodStep = io.mem_resp.fire && midOk && outstanding(mid)
  private val badResp = io.mem_resp.fire && !(midOk && outstanding(mid))
  for (i <- 0 until p.walkers) when(goodStep && mid === i.U) { sStep(i) := true.B }

  private val stepSlot = ws(mid)
  issue.valid := io.inval.fire || goodStep || io.req.fire || sweeping
  // The kind is chosen by the valid bits, not the handshakes (a request is accepted only when no
  // memory response is presented and no invalidation accepted), so the multiplexers' selects do
  // not wait for the acceptance logic.
  issue.bits.kind := Mux(sweeping || io.inval.fire, OpKind.Inval, Mux(io.mem_resp.valid, OpKind.Step, OpKind.Req))
  issue.bits.req := io.req.bits
  when(io.mem_resp.valid) {
    issue.bits.req.id := stepSlot.id
    issue.bits.req.vpn := stepSlot.vpn
    issue.bits.req.asid := stepSlot.asid
    issue.bits.req.cmd := stepSlot.cmd
    issue.bits.req.user := stepSlot.user
  }
  issue.bits.slot := mid
  issue.bits.rdata := io.mem_resp.bits.rdata
  issue.bits.error := io.mem_resp.bits.error
  issue.bits.bmKey := Mux(stepSlot.kind === RdKind.Bitmap.U, bmIndex(stepSlot.large.ppn, stepSlot.vpn),
    bmIndex(io.mem_resp.bits.rdata(p.paBits - 1, 12), stepSlot.vpn))
  private val ivIn = Mux(sweeping, sweepOp, io.inval.bits)
  issue.bits.inval := ivIn
  // an invalidation's asid and page go where a lookup's are, so that match compares the rows
  // once for both (a lookup's hit, an invalidation's coverage)
  when(sweeping || io.inval.fire) {
    issue.bits.req.asid := ivIn.asid
    issue.bits.req.vpn := ivIn.vpn
  }
  private val sweepLast = (p.sweepSets - 1).U
  private val ivSingle = ivIn.kind === 0.U || ivIn.kind === 2.U
  issue.bits.last := Mux(sweeping, sweepIdx === sweepLast, ivSingle || (p.sweepSets == 1).B)
  private val invOp = sweeping || io.inval.fire
  private val sweepSet = Mux(sweeping, sweepIdx, 0.U)
  private val byPage = !invOp || ivIn.kind === 2.U
  issue.bits.set4k := Mux(byPage, Mux(invOp, set4kOf(ivIn.vpn), set4kOf(issue.bits.req.vpn)), set4kOf(sweepSet.pad(p.vpnBits)))
  issue.bits.set2m := Mux(byPage, Mux(invOp, set2mOf(ivIn.vpn), set2mOf(issue.bits.req.vpn)), set2mOf((sweepSet << 9).pad(p.vpnBits)))
  when(io.inval.fire && !ivSingle && (p.sweepSets > 1).B) {
    sweeping := true.B
    sweepIdx := 1.U
    sweepOp := io.inval.bits
  }.elsewhen(sweeping) {
    sweepIdx := sweepIdx + 1.U
    when(sweepIdx === sweepLast) { sweeping := false.B }
  }
  shadow.issue(io.inval.fire || goodStep || sweeping)
  private val sweepingNext = (io.inval.fire && !ivSingle && (p.sweepSets > 1).B) || (sweeping && sweepIdx =/= sweepLast)
  private val busyNext = shadow.busyAfter(io.inval.fire || goodStep || sweeping) || sweepingNext
  private val stageIns = Seq((issue, p.opReg), (readOp, timing.readReg), (c0, p.rowReg), (c, timing.hitReg), (k, timing.selReg)).collect { case (x, true) => x } :+ s
  // (without `rowReg` `c0` is `c`: its entry is left out, `readOp` is the input of `c`)
  private val emptyNext = !stageIns.map(_.valid).reduce(_ || _)
  freeR := !busyNext
  idleR := !busyNext && emptyNext
  // With `rowReg` the block RAM reads every cycle (no read enable): Yosys emulated the enable
  // with a holding register and a multiplexer behind the RAM's output (the acceptance logic
  // into it, and the multiplexer between the output and the compares). The row is used only
  // for an accepted operation, and no set is written in a cycle an operation is accepted.
  // (With `preDecide` the storage still drops the read in a write cycle, `readsNeverWrite`.)
  a4k.io.read.valid := (if (p.rowReg) true.B else issue.valid)
  a4k.io.read.bits := readOp.bits.set4k
  a2m.io.read.valid := readOp.valid
  a2m.io.read.bits := readOp.bits.set2m
  // (every cycle, as the 4 KiB block RAM: `readsNeverWrite` drops the read of a write cycle,
  // in which nothing is accepted)
  bmArr.foreach { a =>
    a.io.read.valid := true.B
    a.io.read.bits := bmSetOf(readOp.bits.req.vpn)
  }
  // walks in flight become stale at an invalidation's acceptance (docs "Walks in flight")
  for (i <- 0 until p.walkers) when(io.inval.fire && sv(i)) { sStale(i) := true.B }

  // ---- match stage -------------------------------------------------------------------------
  private val opC = c.bits
  private val vpnC = opC.req.vpn
  private val asidC = opC.req.asid
  // With `rowReg` the rows and the sets' valid words are read in the row stage and registered
  // for match (docs "Timing", 2026-11-28: the 4 KiB array's block RAM output straight into the
  // compares was the routed critical path). Nothing writes them between an operation's
  // acceptance and its match: writes land in respond, behind the write shadow.
  private def toMatch[T <: Data](d: T): T = Stage.carry(d, p.rowReg)
  private val rowC4 = toMatch(a4k.io.readData)
  private val rowC2 = toMatch(a2m.io.readData)
  private val v4kC = toMatch(valid4k.read(c0.bits.set4k))
  /** With `rowReg` the 2 MiB array (distributed RAM, read from its address registers in the
    * row stage) is compared there, and match starts from the registered compares: the hit,
    * its one-hot and the winner's frame into the bitmap key were a path of their own
    * (`fpga/levels.py`, 13.2 levels with the row registered first).
    */
  private val v2m0 = Option.when(p.rowReg)(valid2m.read(c0.bits.set2m))
  private val v2mC = v2m0.map(RegNext(_)).getOrElse(valid2m.read(opC.set2m))
  private val m2R = v2m0.map { v =>
    val row = a2m.io.readData
    val op0 = c0.bits
    val asid = row.map(_.asid === op0.req.asid)
    val vpn = row.map(_.vpn2m === (op0.req.vpn >> 9))
    Seq(asid, vpn, (0 until p.ways2m).map(w => v(w) && asid(w) && vpn(w))).map(x => RegNext(VecInit(x)))
  }
  // (for an invalidation asidC and vpnC are its asid and page)
  private val asid4kC = rowC4.map(_.asid === asidC)
  private val vpn4kC = rowC4.map(_.vpn === vpnC)
  private val asid2mC: Seq[Bool] = m2R.map(_(0).toSeq).getOrElse(rowC2.map(_.asid === asidC))
  private val vpn2mC: Seq[Bool] = m2R.map(_(1).toSeq).getOrElse(rowC2.map(_.vpn2m === (vpnC >> 9)))
  private val hit4kC = VecInit((0 until p.ways4k).map(w => v4kC(w) && asid4kC(w) && vpn4kC(w)))
  private val hit2mC = m2R.map(_(2)).getOrElse(VecInit((0 until p.ways2m).map(w => v2mC(w) && asid2mC(w) && vpn2mC(w))))
  private val ivC = opC.inval
  private val cov4kC = VecInit((0 until p.ways4k).map { w =>
    v4kC(w) && (ivC.kind === 0.U || (asid4kC(w) && (ivC.kind === 1.U || (ivC.kind === 2.U && vpn4kC(w)))))
  })
  private val cov2mC = VecInit((0 until p.ways2m).map { w =>
    v2mC(w) && (ivC.kind === 0.U || (ivC.kind === 3.U && rowC2(w).ppn(hi, 9) === ivC.frame) ||
      (asid2mC(w) && (ivC.kind === 1.U || (ivC.kind === 2.U && vpn2mC(w)))))
  })
  /** The bitmap word index of the page in a large page based at 4 KiB frame `base`. */
  private def bmIndex(base: UInt, vpn: UInt): UInt = Cat(base(hi, 9), vpn(8, 6))
  /** The bitmap cache's entries holding `index`; with two copies of the key, the first half of
    * the entries compares with the first copy, the rest with the second ([[RegCopies]]).
    */
  private def bmHits(index: Seq[UInt]): Vec[Bool] = {
    val half = (p.bmCmp + 1) / 2
    def copyOf(i: Int): Int =
      if (index.size > 2) i * index.size / p.bmCmp else if (i < half) 0 else index.size - 1
    val tags = bmSetK.map(_._1).getOrElse(bm.entries.map(_.index))
    val valid = bmSetK.map(_._2).getOrElse(bm.valid)
    VecInit(tags.zip(valid).zipWithIndex.map { case ((t, v), i) => v && t === index(copyOf(i)) })
  }
  /** With `bitmapSets` > 1: the set's row and valid bits, read in the row stage at the
    * operation's VA chunk and registered for match (nothing writes the set between: fills land
    * in a step's respond, behind its write shadow; invalidations are accepted into an empty
    * pipeline).
    */
  private val bmRowC = bmArr.map(a => toMatch(a.io.readData))
  // (with `rowReg` the set's valid word and its flash flag are read in the read stage, each
  // registered; the flag in two halves, [[SetValid.groupFlags]] there and the group's pick in the
  // row stage: read whole in the row stage, the 512 flags' AND-OR behind the decoder was the
  // deepest path, 11.6 weighted levels, and from a one-hot set register in the read stage it was
  // session 25's seed 2 path, 9.60 ns. Reading the flag a cycle earlier than before is exact: a
  // flag changes only with a fill's write or an invalidation's flash, in respond, and the write
  // shadow keeps every earlier operation's respond out of the cycle an operation reads, as for
  // the word. Without `rowReg`, i.e. a formal configuration, the word read in the read stage is
  // match's and the flag is read in match from the set decoded one-hot in the read stage: the
  // form the proofs cover, with no row stage to split the flags' AND-OR over.)
  private val bmValidC = bmValid.map { v =>
    val set = bmSetOf(readOp.bits.req.vpn)
    val wordRow = Reg(UInt(p.bitmapWays.W))
    wordRow := v.readWord(set)
    if (p.rowReg) {
      val group = p.bitmapSets.min(16)
      val flagsRow = RegNext(v.groupFlags(set, group))
      val groups = p.bitmapSets / group
      val groupOH = Reg(UInt(groups.W))
      groupOH := (if (groups == 1) 1.U else UIntToOH(set >> log2Ceil(group), groups))
      val wordC = Reg(UInt(p.bitmapWays.W))
      wordC := wordRow
      v.applyFlags(wordC, RegNext(v.groupPick(flagsRow, groupOH)), false.B, Seq.fill(p.bitmapWays)(false.B))
    } else {
      val setOH = Reg(UInt(p.bitmapSets.W))
      setOH := UIntToOH(set, p.bitmapSets)
      v.applyFlags(wordRow, v.readFlags(setOH)._1, false.B, Seq.fill(p.bitmapWays)(false.B))
    }
  }
  /** ... and its tags and valid bits carried to pick, where they are compared. */
  private val bmSetK = bmRowC.map(r => (toPick(VecInit(r.map(_.index))), toPick(bmValidC.get)))
  private def pwcHits(kind: Int): Vec[Bool] = pwc match {
    case Some(q) =>
      val prefix = (vpnC >> PwcKind.shift(kind)).pad(27)
      VecInit(q.entries.zip(q.valid).map { case (e, v) => v && e.asid === asidC && e.kind === kind.U && e.prefix === prefix })
    case None => VecInit(Seq.fill(pwcN)(false.B))
  }
  private val pwcC = VecInit((0 until 4).map(pwcHits))
  /** A walk step's checks, their parts (see pick). */
  private val stC = Wire(new PStepRaw)
  locally {
    val slC = ws(opC.slot)
    val d = opC.rdata
    val present = d(0)
    val ps = d(7)
    val perfBit = d(52)
    val rsvdPpn = if (p.paBits < 52) d(51, p.paBits).orR else false.B
    val kd = slC.kind
    val kPml4e = kd === RdKind.Pml4e.U
    val kPdpte = kd === RdKind.Pdpte.U
    val kPde = kd === RdKind.Pde.U
    val kShadow = kd === RdKind.Shadow.U
    val permNew = slC.wux & Wux.of(d)
    stC.kPml4e := kPml4e
    stC.kPdpte := kPdpte
    stC.kPde := kPde
    stC.kShadow := kShadow
    stC.kBitmap := kd === RdKind.Bitmap.U
    stC.kLeaf4 := kd === RdKind.Pte.U || kd === RdKind.Hole.U
    stC.sWord := opC.kind === OpKind.Step && !opC.error
    stC.error := opC.error
    // a perforated leaf with perforation = false is not present (the splintered baseline)
    stC.notPresent := !present || (kPde && ps && perfBit && (!p.perforation).B)
    stC.rsvd := rsvdPpn || ((kPml4e || kPdpte || kShadow) && ps) || (kPde && ps && !perfBit && d(20, 13).orR)
    stC.ps := ps
    stC.accessed := d(5)
    stC.perfBit := perfBit
    stC.deny := (opC.req.user && !permNew(1)) || (opC.req.cmd === 1.U && (!permNew(2) || !d(6))) ||
      (opC.req.cmd === 2.U && !permNew(0))
    stC.permNew := permNew
    stC.shadowWux := slC.up & Wux.of(d)
  }
  // The bitmap cache's key, formed here so that pick only compares: the word of the 2 MiB
  // winner's page (a request; the winner one-hot here, its entry selected again in pick), or a
  // step's `bmKey`.
  private val oh2mC = FirstSet.oh(hit2mC)
  private val bmKeyC = Mux(opC.kind === OpKind.Step, opC.bmKey,
    bmIndex(Mux1H(oh2mC, rowC2.map(_.ppn)), vpnC))
  // With `preDecide`, the page's bit of every cached word, selected here and carried beside the
  // compares of pick: decide's word bit is then an AND-OR of two registers, and the encoding,
  // the word read and the bit's 64:1 multiplexer leave the path behind the compares (the routed
  // critical path of 2026-11-28 on seed 1). Nothing fills the cache between an operation's
  // match and its decide: the late fills land in the cycle after a step's respond, and the
  // step's write shadow keeps the next operation's match behind that.
  // (each a word ANDed with the page offset's one-hot, decoded in the row stage, and ORed: about
  // 42 LUT4 a word against 57 for a 64:1 multiplexer tree or an indexed read, and one-hot selects
  // of fan-out `bitmapEntries` instead of six of fan-out 1 000)
  // (also with `bitmapSets` > 1 without `preDecide`, i.e. a formal configuration: the cached
  // words are read only here, from the set's row; without the row stage `c0` is match itself)
  private val offOHC = Option.when(p.bmBitsEarly)(
    if (p.rowReg) RegNext(UIntToOH(c0.bits.req.vpn(5, 0), 64)) else UIntToOH(c0.bits.req.vpn(5, 0), 64))
  private val bmBitsC = offOHC.map(oh => VecInit(bmRowC.map(_.map(_.word)).getOrElse(bmWords.all).map(w => (w & oh).orR)))

  // ---- pick stage --------------------------------------------------------------------------
  private def toPick[T <: Data](d: T): T = Stage.carry(d, timing.hitReg)
  private val hit4kK = toPick(hit4kC)
  private val hit2mK = toPick(hit2mC)
  private val pwcK = toPick(pwcC)
  private val pickK = Wire(new PPick(p, pwcN))
  private val oh4kK = FirstSet.oh(hit4kK)
  private val oh2mK = toPick(oh2mC)
  pickK.idx4k := OHToUInt(oh4kK)
  pickK.any4k := hit4kK.asUInt.orR
  pickK.idx2m := OHToUInt(oh2mK)
  pickK.any2m := hit2mK.asUInt.orR
  // the walk starts from the deepest pointer cached: PDE pointer, PDPTE, PML4E
  private val anyL = (0 until 3).map(i => pwcK(i).asUInt.orR)
  pickK.pwcAny := anyL.reduce(_ || _)
  pickK.pwcKind := Mux(anyL(2), PwcKind.L1.U, Mux(anyL(1), PwcKind.L2.U, PwcKind.L3.U))
  // At most one entry holds a key (a fill of a key already held rewrites that entry), so each
  // kind's hit vector is one-hot or empty, and an entry has one kind: the deepest kind's hit,
  // one AND-OR per entry (no priority encoder behind the kinds' selection).
  pickK.pwcOH := VecInit((0 until pwcN).map(i =>
    pwcK(2)(i) || (pwcK(1)(i) && !anyL(2)) || (pwcK(0)(i) && !anyL(2) && !anyL(1))))
  pickK.sOH := pwcK(3)
  pickK.sAny := pwcK(3).asUInt.orR
  // the winners' entries are selected here, so only they (not both rows) go on to respond
  pickK.e4k := Mux1H(oh4kK, toPick(rowC4))
  pickK.e2m := Mux1H(oh2mK, toPick(rowC2))
  // The bitmap cache against one key: the word of the 2 MiB winner's page (a request), or a
  // step's `bmKey` (its bitmap read's word, or the PD leaf it carries). One compare per entry
  // here, behind the winner's selection, instead of one per 2 MiB way in match; its priority
  // encoding is left to respond.
  // (its fan-out: one compare per entry of the cache, spread over the die; the routed critical
  // path of perforated_default and perforated_flops, 2026-11-28: 7-8 ns on the key's net alone)
  // (two copies of the key in the configurations without proofs: the formal configuration's
  // k-induction did not relate the two copies (no result in 30 min, against 1 min with one);
  // the same function either way)
  // (four copies with `preDecide`: each quarter of the entries compares with one)
  private val bmKeyK =
    if (p.preDecide) RegCopies.many(bmKeyC, 4, "bmKeyK")
    else if (timing.hitReg && !p.formalPorts) { val (a, b) = RegCopies.two(bmKeyC); Seq(a, b) } else Seq(toPick(bmKeyC))
  pickK.bmVec := bmHits(bmKeyK)
  // at most one bitmap entry holds a word (a fill of a key already held rewrites that entry):
  // the index is the vector's OR-encoding, here so that decide's word read starts from a register
  pickK.bmIdx := OHToUInt(pickK.bmVec)
  pickK.bmAny := pickK.bmVec.asUInt.orR
  pickK.bmBits.foreach(_ := toPick(bmBitsC.get))

  // ---- decide stage (D) ---------------------------------------------------------------------
  // The operation's whole decision except the perforated one, from the pick registers, the
  // operation's fields and the slot it steps: the response, the slot's next state and read, the
  // fills, touches and events; and for the perforated decision (flow steps 3 and 4) the inputs
  // and every outcome's data: the filter bit, the bitmap cache's hit and the page's bit of the
  // word, the response of a translation through the large page, the slot's next state for a
  // bitmap read and for a hole (shadow or hole PTE read). All registered for respond, which
  // only selects (docs "Timing").
  private val won = Stage.carry(pickK, timing.selReg)
  private val opD = s.bits
  // (with `preDecide` the data multiplexers of decide select by the operation's kind alone:
  // respond uses the decision only with its own valid bit, and the stage's valid bit had a
  // fan-out over the whole stage, the head of the routed critical path of 2026-11-28)
  private val reqD = if (p.preDecide) s.bits.kind === OpKind.Req else isKind(s, OpKind.Req)
  private val stepD = if (p.preDecide) s.bits.kind === OpKind.Step else isKind(s, OpKind.Step)
  private val vpnD = opD.req.vpn
  private val asidD = opD.req.asid
  private val offD = vpnD(8, 0)
  // The stepping slot's state, read in pick: nothing writes a slot between its step's pick and
  // respond (only the slot's own operations write it, and its next step is accepted after its
  // read is sent, i.e. after this step's respond; a request writes a free slot).
  private val slD = Stage.carry(ws(k.bits.slot), timing.selReg)
  private val staleD = Stage.carry(sStale(k.bits.slot), timing.selReg)
  private val pteD = opD.rdata
  private val badCmdD = reqD && opD.req.cmd === 3.U
  private val pwcEntries = pwc.map(_.entries).getOrElse(VecInit(Seq.fill(pwcN)(0.U.asTypeOf(new EPwc(p)))))
  private def at(table: UInt, index: UInt): UInt = Cat(table, index, 0.U(3.W))
  private val dec = Wire(new PDecide(p, pwcN))
  dec := DontCare

  // The operation's outcome without the perforated decision, as flat conditions (not a chain
  // of priority multiplexers): a request (flow steps 0-2 and 5), or a walk step (the word it
  // read checked in the order of "Faults and bus errors").
  private val e4 = won.e4k
  private val e2 = won.e2m
  private val pwcE = Mux1H(won.pwcOH, pwcEntries)
  private def reqWalk = flD.walk

  // A walk step's checks of the word it read (flow "Faults and bus errors"), made in pick from
  // their parts formed in match (the operation's fields and its slot's read kind: nothing
  // writes the slot between its step's acceptance and respond), so that decide only combines
  // them with the request side (docs "Timing").
  private val stK = Wire(new PStepPre)
  locally {
    val r = toPick(stC)
    val sOk = r.sWord && !r.kBitmap && !r.notPresent && !r.rsvd
    stK.kPml4e := r.kPml4e
    stK.kPdpte := r.kPdpte
    stK.kPde := r.kPde
    stK.kShadow := r.kShadow
    stK.kBitmap := r.kBitmap
    stK.sBitmap := r.sWord && r.kBitmap
    stK.sPtr := sOk && (r.kPml4e || r.kPdpte || r.kShadow || (r.kPde && !r.ps))
    stK.sLeaf2 := sOk && r.kPde && r.ps && r.accessed
    stK.sLeaf4 := sOk && r.kLeaf4 && r.accessed
    stK.sGo := (r.sWord && r.kBitmap) || (sOk && r.kPde && r.ps && r.accessed && r.perfBit)
    stK.code := Mux(r.error, PFault.Bus.U,
      Mux(r.notPresent, PFault.Page.U,
        Mux(r.rsvd, PFault.Reserved.U,
          Mux(!r.accessed, PFault.Page.U, Mux(r.deny, PFault.Page.U, 0.U)))))
    stK.permNew := r.permNew
    stK.shadowWux := r.shadowWux
  }
  private val stD = Stage.carry(stK, timing.selReg)
  /** The operation's flow (flow steps 0-5: which of response, read, perforated decision; the
    * perforated decision's filter bit and whether the word is carried), from pick's winners and
    * the step's checks, so that decide starts from registers.
    */
  private val flK = Wire(new PFlow)
  locally {
    val req = k.bits.kind === OpKind.Req
    val step = k.bits.kind === OpKind.Step
    val bad = req && k.bits.req.cmd === 3.U
    val reqOk = req && !bad
    val reqGo = reqOk && !pickK.any4k && pickK.any2m && pickK.e2m.perforated
    val reqWalk = reqOk && !pickK.any4k && !pickK.any2m
    flK.go := reqGo || stK.sGo
    flK.rv := (req && !reqGo && !reqWalk) || (step && !stK.sGo && !stK.sPtr)
    flK.rd := reqWalk || stK.sPtr
    flK.walk := reqWalk
    flK.hit4k := reqOk && pickK.any4k
    flK.hit2m := reqOk && !pickK.any4k && pickK.any2m
    val known = step && stK.kBitmap
    flK.known := known
    // the large page's filter: a request's 2 MiB winner, a bitmap step's slot, a step's PD leaf
    val pteK = k.bits.rdata
    val filter = Mux(req, pickK.e2m.filter, Mux(known, ws(k.bits.slot).large.filter, Mux(pteK(52), pteK(20, 13), 0.U)))
    flK.filterBit := VecInit(filter.asBools)(k.bits.req.vpn(8, 6))
  }
  private val flD = Stage.carry(flK, timing.selReg)
  /** With `preDecide`: the large page of the perforated decision (a request's 2 MiB winner, a
    * bitmap step's slot, a step's PD leaf) selected in pick and registered for decide, which
    * adds its shadow node's frame (`pdPpn + 1`) from that register (the adder's carry chain
    * behind the selection was the routed critical path of 2026-11-28, in decide at 88.26 MHz,
    * in pick at 88.60 on `perforated_off` and 93.24 on seed 2). The same values in
    * decide: the slot is read in pick as decide reads it (`slD`), the leaf's fields are the
    * step's word and checks (`stK`).
    */
  private val largePre = Option.when(p.preDecide) {
    val req = k.bits.kind === OpKind.Req
    val pteK = k.bits.rdata
    val slK = ws(k.bits.slot)
    val leafK = Wire(new E2m(p))
    leafK.asid := k.bits.req.asid
    leafK.vpn2m := k.bits.req.vpn >> 9
    leafK.ppn := Cat(pteK(p.paBits - 1, 21), 0.U(9.W))
    leafK.wux := stK.permNew
    leafK.d := pteK(6)
    leafK.perforated := pteK(52)
    leafK.filter := Mux(pteK(52), pteK(20, 13), 0.U)
    leafK.pdPpn := slK.pdPpn
    leafK.up := slK.up
    val l = Mux(req, pickK.e2m, Mux(flK.known, slK.large, leafK))
    RegNext(l)
  }
  private val perfBit = pteD(52)
  private val table = pteD(p.paBits - 1, 12)
  private val kPml4e = stD.kPml4e
  private val kPdpte = stD.kPdpte
  private val kPde = stD.kPde
  private val kShadow = stD.kShadow
  private val permNew = stD.permNew
  private val leaf = Wire(new E2m(p))
  leaf.asid := asidD
  leaf.vpn2m := vpnD >> 9
  leaf.ppn := Cat(pteD(p.paBits - 1, 21), 0.U(9.W))
  leaf.wux := permNew
  leaf.d := pteD(6)
  leaf.perforated := perfBit
  leaf.filter := Mux(perfBit, pteD(20, 13), 0.U)
  leaf.pdPpn := slD.pdPpn
  leaf.up := slD.up
  private val sBitmap = stD.sBitmap
  private val sPtr = stD.sPtr
  private val sLeaf2 = stD.sLeaf2
  private val sLeaf4 = stD.sLeaf4
  private val sGo = stD.sGo

  // the translation of a hit or a leaf (fault 1 when the access is not allowed: docs
  // "Permissions and A/D"), and the response's fault code
  // (with `preDecide` the large page of a request's 2 MiB hit and of a step's PD leaf is
  // `largePre`'s, registered in pick)
  private val tPpn = largePre match {
    case Some(l) => Mux(reqD && won.any4k, e4.ppn, Mux(reqD || kPde, Cat(l.ppn(hi, 9), offD), table))
    case None => Mux(reqD, Mux(won.any4k, e4.ppn, Cat(e2.ppn(hi, 9), offD)), Mux(kPde, Cat(leaf.ppn(hi, 9), offD), table))
  }
  private val tBig = Mux(reqD, !won.any4k, kPde)
  private val tWux = Mux(reqD, Mux(won.any4k, e4.wux, e2.wux), permNew)
  private def denied(wux: UInt, d: Bool): Bool =
    (opD.req.user && !wux(1)) || (opD.req.cmd === 1.U && (!wux(2) || !d)) || (opD.req.cmd === 2.U && !wux(0))
  private val reqCode = Mux(badCmdD, PFault.Reserved.U,
    Mux(denied(Mux(won.any4k, e4.wux, e2.wux), Mux(won.any4k, e4.d, e2.d)), PFault.Page.U, 0.U))
  private val stepCode = stD.code
  private val code = Mux(reqD, reqCode, stepCode)
  private def rvD = flD.rv
  private val rD = Wire(new PResp(p))
  /** A response's fields, the translation not yet cleared for a fault (respond clears it). */
  private def respOf(resp: PResp, code: UInt, ppn: UInt, big: Bool, wux: UInt, source: UInt): Unit = {
    resp.id := opD.req.id
    resp.memReads := Mux(stepD, slD.reads +& 1.U, 0.U)
    resp.fault := code
    resp.source := source
    resp.ppn := ppn
    resp.pageSize := big.asUInt
    resp.perm_r := true.B
    resp.perm_w := wux(2)
    resp.perm_x := wux(0)
    resp.perm_u := wux(1)
  }
  respOf(rD, code, tPpn, tBig, tWux,
    Mux(reqD, Mux(badCmdD, PSource.Walk.U, Mux(won.any4k, PSource.Entry4k.U, PSource.Entry2m.U)), slD.source))

  // the slot's next state: a request's new slot, or the stepping slot
  private val nsBase = Wire(new WalkState(p))
  nsBase := slD
  when(reqD) {
    nsBase.id := opD.req.id
    nsBase.vpn := vpnD
    nsBase.asid := asidD
    nsBase.cmd := opD.req.cmd
    nsBase.user := opD.req.user
    nsBase.wux := 7.U
    nsBase.pdPpn := 0.U
    nsBase.up := 7.U
    // a request that needs memory after a 2 MiB hit keeps source 2 (3 once a hole)
    nsBase.source := Mux(!won.any4k && won.any2m, PSource.Perforated.U, PSource.Walk.U)
    nsBase.hole := false.B
    nsBase.reads := 0.U
  }.otherwise { nsBase.reads := slD.reads + 1.U }
  // a read (meaningful when `rdD`): a request's walk from the deepest PWC hit (PDE pointer,
  // PDPTE, PML4E) or from the root; a step's next table after a pointer
  private def rdD = flD.rd
  private val ns = WireDefault(nsBase)
  private val pL3 = won.pwcKind === PwcKind.L3.U
  private val pL2 = won.pwcKind === PwcKind.L2.U
  private val reqKind = Mux(!won.pwcAny, RdKind.Pml4e.U, Mux(pL3, RdKind.Pdpte.U, Mux(pL2, RdKind.Pde.U, RdKind.Pte.U)))
  private val reqAddr = Mux(!won.pwcAny, at(opD.req.root, vpnD(35, 27)),
    at(pwcE.ppn, Mux(pL3, vpnD(26, 18), Mux(pL2, vpnD(17, 9), offD))))
  private val stepKind = Mux(kPml4e, RdKind.Pdpte.U, Mux(kPdpte, RdKind.Pde.U, Mux(kShadow, RdKind.Hole.U, RdKind.Pte.U)))
  private val stepAddr = at(table, Mux(kPml4e, vpnD(26, 18), Mux(kPdpte, vpnD(17, 9), offD)))
  private val shadowWux = stD.shadowWux
  ns.kind := Mux(reqD, reqKind, stepKind)
  ns.addr := Mux(reqD, reqAddr, stepAddr)
  ns.wux := Mux(reqD, Mux(won.pwcAny, pwcE.wux, 7.U), Mux(kShadow, shadowWux, permNew))
  ns.pdPpn := Mux(reqD, Mux(won.pwcAny && pL2, pwcE.ppn, 0.U), Mux(kPdpte, table, slD.pdPpn))
  ns.up := Mux(reqD, Mux(won.pwcAny && pL2, pwcE.wux, 7.U), Mux(kPdpte, permNew, slD.up))

  // fills (landing in respond; a stale walk fills nothing): each pointer into the PWC, each leaf
  // with A = 1 into its array, each bitmap word read into the bitmap cache
  /** The PWC entries holding each kind's key of this operation (match's compare): a fill's
    * same-key vector.
    */
  private val pwcS = Stage.carry(pwcK, timing.selReg)
  private val fillPwcKind = Mux(kPml4e, PwcKind.L3.U, Mux(kPdpte, PwcKind.L2.U, Mux(kShadow, PwcKind.S.U, PwcKind.L1.U)))
  private val fillPwcE = Wire(new EPwc(p))
  fillPwcE.asid := asidD
  fillPwcE.kind := fillPwcKind
  fillPwcE.prefix := Mux(kPml4e, (vpnD >> 27).pad(27), Mux(kPdpte, (vpnD >> 18).pad(27), (vpnD >> 9).pad(27)))
  fillPwcE.ppn := table
  fillPwcE.wux := Mux(kShadow, shadowWux, permNew)
  private val fillPwcSame = Mux(kPml4e, pwcS(PwcKind.L3), Mux(kPdpte, pwcS(PwcKind.L2), Mux(kShadow, pwcS(PwcKind.S), pwcS(PwcKind.L1))))
  private val fill4kE = Wire(new E4k(p))
  fill4kE.asid := asidD
  fill4kE.vpn := vpnD
  fill4kE.ppn := table
  fill4kE.wux := permNew
  fill4kE.d := pteD(6)

  // The perforated decision (flow steps 3 and 4) of a page in large page `large`: from a
  // request's 2 MiB hit, a walk's perforated PD leaf, or a walk's bitmap read (`wordKnown`).
  // Decided in respond from the registered bits below; each outcome's data is formed here.
  private val wordKnownD = flD.known
  private val large = largePre.getOrElse(Mux(reqD, e2, Mux(wordKnownD, slD.large, leaf)))
  // at most one bitmap entry holds a word (a fill of a key already held rewrites that entry)
  private val bmIdxD = if (p.preDecide) OHToUInt(won.bmVec) else won.bmIdx
  // (not used with `preDecide`; no word store to read with `bitmapSets` > 1)
  private val word = if (p.bmSA) 0.U(64.W) else Mux(wordKnownD, pteD, bmWords.read(bmIdxD))
  private val srcIn = Mux(reqD, PSource.Perforated.U, slD.source)
  private val frame = Cat(large.ppn(hi, 9), offD)
  private val sE = Mux1H(won.sOH, pwcEntries)
  dec.filterBit := flD.filterBit
  dec.known := wordKnownD
  // (with `preDecide` pick registers only the hit vector: the compares' fan-in ends in flops)
  dec.bmAny := (if (p.preDecide) won.bmVec.asUInt.orR else won.bmAny)
  dec.bmIdx := bmIdxD
  // (the page's frame is the large page's base + off: its low 6 bits are off's)
  // (with `preDecide` both words' bits are selected a stage or two earlier, the carried word's
  // in pick, the cached words' in match: decide only chooses between registers)
  dec.wordBit := (won.bmBits match {
    case Some(b) => Mux(wordKnownD, RegNext((k.bits.rdata & toPick(offOHC.get)).orR), (won.bmVec.asUInt & b.asUInt).orR)
    case None => VecInit(word.asBools)(offD(5, 0))
  })
  dec.sAny := won.sAny
  dec.sIdx := OHToUInt(won.sOH)
  // a translation through the large page (filter bit 0, or the word's bit clear)
  respOf(dec.rTP, Mux(denied(large.wux, large.d), PFault.Page.U, 0.U), frame, false.B, large.wux, srcIn)
  // a bitmap read
  dec.nsDec := nsBase
  dec.nsDec.large := large
  dec.nsDec.kind := RdKind.Bitmap.U
  dec.nsDec.addr := Cat(io.bitmapBase(p.paBits - 1, 3) + bmIndex(large.ppn, vpnD), 0.U(3.W))
  // a hole: its own walk (shadow entry, hole PTE), never the large page
  dec.hSource := Mux(srcIn === PSource.Walk.U, PSource.Walk.U, PSource.Hole.U)
  dec.hWux := Mux(won.sAny, sE.wux, large.up)
  dec.hKind := Mux(won.sAny, RdKind.Hole.U, RdKind.Shadow.U)
  dec.hAddr := Mux(won.sAny, at(sE.ppn, offD), at((large.pdPpn + 1.U)(hi, 0), vpnD(17, 9)))

  dec.go := flD.go
  // respond's selections, each a flat condition of the registered decision (respond ANDs them
  // with its valid bit): the perforated decision's outcomes (filter bit 0 translates; else the
  // word, carried by a bitmap step or cached, decides: bit clear translates, bit set is a hole;
  // no word: read it)
  locally {
    val go = flD.go
    val inWord = go && dec.filterBit && (dec.known || dec.bmAny)
    val lookup = go && dec.filterBit && !dec.known
    dec.skip := go && !dec.filterBit
    dec.lookup := lookup
    dec.bmRead := lookup && !dec.bmAny
    dec.bmHit := lookup && dec.bmAny
    dec.inWord := inWord
    dec.rvPre := rvD || (go && !dec.filterBit)
    dec.rdPre := rdD || (lookup && !dec.bmAny)
    dec.pwcTouchPre := reqWalk && won.pwcAny
    dec.sTouch := inWord && won.sAny
  }
  dec.rv := rvD
  dec.r := rD
  dec.rd := rdD
  dec.ns := ns
  dec.fill4k := sLeaf4 && !staleD
  dec.fill4kE := fill4kE
  dec.fill2m := sLeaf2 && !staleD
  dec.fill2mE := leaf
  dec.fillBm := sBitmap && !staleD
  dec.bmFillIdx := bmIndex(slD.large.ppn, vpnD)
  dec.fillPwc := sPtr && !staleD
  dec.fillPwcE := fillPwcE
  dec.fillPwcSame := fillPwcSame
  dec.pwcTouch := reqWalk && won.pwcAny
  dec.pwcIdx := OHToUInt(won.pwcOH)
  dec.hit4k := flD.hit4k
  dec.hit2m := flD.hit2m
  dec.walk := reqWalk
  dec.badCmd := badCmdD

  // ---- respond stage (R) -------------------------------------------------------------------
  private val wonR = RegNext(won)
  private val dR = RegNext(dec)
  private def toRespond[T <: Data](d: T): T = RegNext(Stage.carry(Stage.carry(d, timing.hitReg), timing.selReg))
  private val v4kS = toRespond(v4kC)
  private val v2mS = toRespond(v2mC)
  private val cov4kS = toRespond(cov4kC)
  private val cov2mS = toRespond(cov2mC)
  private val op = rs.bits
  private val reqNow = isKind(rs, OpKind.Req)
  private val stepNow = isKind(rs, OpKind.Step)
  private val invNow = isKind(rs, OpKind.Inval)
  private val pte = op.rdata
  private val bmIdx = dR.bmIdx

  // the perforated decision: filter bit 0 translates; else the word (carried by a bitmap step,
  // or cached) decides: bit clear translates, bit set is a hole; no word: read it
  private val skip = rs.valid && dR.skip
  private val lookup = rs.valid && dR.lookup
  private val bmRead = rs.valid && dR.bmRead
  // (the word's bit, read in decide, is used here once: a hole or a translation)
  private val hole = rs.valid && dR.inWord && dR.wordBit
  private val rv = rs.valid && (dR.rvPre || (dR.inWord && !dR.wordBit))
  // (fault responses carry no translation)
  private val r = WireDefault(Mux(dR.go, dR.rTP, dR.r))
  when(r.fault =/= 0.U) {
    r.ppn := 0.U
    r.pageSize := 0.U
    r.perm_r := false.B
    r.perm_w := false.B
    r.perm_x := false.B
    r.perm_u := false.B
  }
  private val issueRd = rs.valid && (dR.rdPre || (dR.inWord && dR.wordBit))
  private val nsH = WireDefault(dR.nsDec)
  when(dR.inWord && dR.wordBit) {
    nsH.source := dR.hSource
    nsH.hole := true.B
    nsH.up := dR.nsDec.large.up
    nsH.pdPpn := dR.nsDec.large.pdPpn
    nsH.wux := dR.hWux
    nsH.kind := dR.hKind
    nsH.addr := dR.hAddr
  }
  private val nsR = Mux(dR.go, nsH, dR.ns)
  private val fill4k = rs.valid && dR.fill4k
  private val fill2m = rs.valid && dR.fill2m
  private val fillBm = rs.valid && dR.fillBm
  private val fillPwc = rs.valid && dR.fillPwc
  private val pwcTouch = rs.valid && (dR.pwcTouchPre || (dR.sTouch && dR.wordBit))
  private val pwcTouchIdx = Mux(dR.go, dR.sIdx, dR.pwcIdx)
  when(rs.valid && dR.hit4k) { repl4k.touch(op.set4k, wonR.idx4k) }
  when(rs.valid && (dR.hit2m)) { repl2m.touch(op.set2m, wonR.idx2m) }

  // events (counters)
  private val evFilterSkip = skip
  private val evBmLookup = lookup
  private val evBmHit = rs.valid && dR.bmHit
  private val evBmRead = bmRead
  private val evHole = hole
  private val evPwcHit = pwcTouch

  // slots: a request that needs memory takes the lowest free slot, or waits in the miss queue
  // when every slot is busy; a step's walk goes on or ends
  private val freeIdx = PriorityEncoder(sv.map(!_))
  private val allBusy = sv.asUInt.andR
  private val alloc = reqNow && issueRd && !allBusy
  private val mqPush = reqNow && issueRd && allBusy
  private val slotIdx = Mux(reqNow, freeIdx, op.slot)
  private val freeing = stepNow && !issueRd
  /** A walk ends while requests wait: its slot stays busy and goes to the queue's head in the
    * next cycle (nothing responds then: the step's write shadow keeps the pipeline behind it
    * empty).
    */
  private val handing = freeing && mqAny
  // the slot's state is written whatever the decision: a request writes a free slot (if one
  // exists), which stays free unless it allocates; a step whose walk ends writes the slot it
  // frees. So the state registers' enables do not wait for the decision. The head of the miss
  // queue is written into the slot handed to it.
  when((reqNow && !allBusy) || stepNow) { ws(slotIdx) := nsR }
  when(handR) { ws(handSlot) := mq.first }
  when(alloc || (stepNow && issueRd)) {
    sSent(slotIdx) := false.B
    sStep(slotIdx) := false.B
  }
  when(alloc) {
    sv(slotIdx) := true.B
    sStale(slotIdx) := false.B
  }
  when(freeing && !mqAny) {
    sv(op.slot) := false.B
    sStep(op.slot) := false.B
    sSent(op.slot) := false.B
  }
  // (an invalidation waits for an empty miss queue: none is accepted while a slot is handed,
  // and the head was accepted after every invalidation, so it is not stale)
  handR := handing
  when(handing) { handSlot := op.slot }
  when(handR) {
    sStep(handSlot) := false.B
    sSent(handSlot) := false.B
    sStale(handSlot) := false.B
  }
  mq.update(mqPush, nsR, handR)
  mqEmptyR := (mq.count + mqPush.asUInt - handR.asUInt) === 0.U

  /** A fill into one array: the way holding the key (the hit vector is the same-key vector),
    * else the lowest invalid way, else the PLRU victim; the written way is touched. Returns
    * whether it evicts.
    */
  private def fillArray[T <: Data](arr: SetAssocStorage[T], valid: ArrayValid, repl: ArrayPlru,
      set: UInt, setD: UInt, touchEn: Bool, validS: Seq[Bool], cov: Seq[Bool], hitAny: Bool, hitIdx: UInt, fill: Bool,
      data: T, wayEarly: Option[UInt] = None): Bool = {
    val free = validS.map(!_)
    val anyFree = free.reduce(_ || _)
    val way = wayEarly.getOrElse(Mux(hitAny, hitIdx, Mux(anyFree, PriorityEncoder(free),
      repl.victimAhead(setD, touchEn, set, hitIdx).getOrElse(repl.victim(set)))))
    val evicting = !hitAny && !anyFree
    arr.io.write.valid := fill
    arr.io.write.bits.set := set
    arr.io.writeSetEarly.foreach(_ := setD)
    arr.io.write.bits.way := way
    arr.io.write.bits.data := data
    when(fill) { repl.fill(set, way) }
    // the set's valid bits are written whole, from the row read in match (nothing writes the set
    // in between: only steps and invalidations write, each behind a write shadow): a fill adds
    // its way, an invalidation of kind 1, 2 or 3 removes what it covers, kind 0 clears them all
    val rowNext = validS.indices.map(w => Mux(fill, validS(w) || way === w.U, validS(w) && !cov(w)))
    valid.write(fill || (invNow && op.inval.kind =/= 0.U), set, rowNext)
    valid.clearAll(invNow && op.inval.kind === 0.U)
    evicting
  }
  /** With `preDecide`: a fill's way chosen in decide, the same rule as [[fillArray]]'s, and
    * registered, so respond's write enables (and the block RAM's address, which Yosys shares
    * between the read and the write port) start from flops: `rs.valid` -> the fill's way -> the
    * 4 KiB block RAM's address was the routed critical path of 2026-11-29, seed 2.
    */
  private def wayAhead(repl: ArrayPlru, early: Boolean, validD: Seq[Bool], hitAny: Bool, hitIdx: UInt,
      setC: UInt, setK: UInt, setD: UInt, touchEn: Bool, touchSet: UInt, touchWay: UInt): Option[UInt] = Option.when(early) {
    val free = validD.map(!_)
    RegNext(Mux(hitAny, hitIdx, Mux(free.reduce(_ || _), PriorityEncoder(free),
      repl.victimEarly(setC, setK, setD, touchEn, touchSet, touchWay))))
  }
  private def toDecide[T <: Data](d: T): T = Stage.carry(Stage.carry(d, timing.hitReg), timing.selReg)
  private val way4kR = wayAhead(repl4k, plruEarly(p.sets4k, p.ways4k), toDecide(v4kC), won.any4k, won.idx4k,
    opC.set4k, k.bits.set4k, opD.set4k, rs.valid && dR.hit4k, op.set4k, wonR.idx4k)
  private val way2mR = wayAhead(repl2m, plruEarly(p.sets2m, p.ways2m), toDecide(v2mC), won.any2m, won.idx2m,
    opC.set2m, k.bits.set2m, opD.set2m, rs.valid && dR.hit2m, op.set2m, wonR.idx2m)
  private val evicting4k = fillArray(a4k, valid4k, repl4k, op.set4k, opD.set4k, rs.valid && dR.hit4k, v4kS, cov4kS, wonR.any4k, wonR.idx4k, fill4k, dR.fill4kE, way4kR)
  private val evicting2m = fillArray(a2m, valid2m, repl2m, op.set2m, opD.set2m, rs.valid && dR.hit2m, v2mS, cov2mS, wonR.any2m, wonR.idx2m, fill2m, dR.fill2mE, way2mR)
  private val evFill4k = fill4k
  private val evEvict4k = fill4k && evicting4k
  private val evFill2m = fill2m
  private val evEvict2m = fill2m && evicting2m

  // the bitmap cache: a walk's bitmap read fills it; a lookup hit touches it
  private val bmFillE = Wire(new EBitmapTag(p))
  bmFillE.index := dR.bmFillIdx
  /** The entries holding the step's bitmap key (match's compare of `bmKey`). */
  private val bmSameS = wonR.bmVec
  /** Every entry the fill could take is valid (the set's, or the flop array's). */
  private val bmFull = Wire(Bool())
  if (!p.bmSA) when(fillBm) { if (lateFills) bm.fill(bmFillE, 0.U, bmSameS) else bm.fill(bmFillE, 0.U) }
  // With `preDecide` the words (flops) are written a cycle after the tag lands, from the
  // landing's one-hot entry registered with its enable: each word's enable is then one flop,
  // not the landing's choice, which drove 2 048 enables across the die (the routed critical
  // path of 2026-11-29). No word is read before it is written: the fill is a walk step's, whose
  // write shadow accepts the next operation at respond + 1 (the landing) at the earliest, so
  // that operation's match, where the words are read, is at the landing + 2 (with the row
  // stage: accepted t+6, row t+7, match t+8; the landing t+6, the word write t+7); and nothing
  // behind an operation's match reads the words (pick and decide carry match's bits).
  if (p.bmSA) {
    // the set-associative cache: the fill's way is the entry holding the key (pick's compare of
    // the step's key), else the lowest invalid way, else the PLRU victim (from registers, as the
    // arrays' `victimEarly`, registered for respond); written in respond with the arrays'
    // fills; the set's valid word written whole from the row read
    val setD = bmSetOf(opD.req.vpn)
    val setR = RegNext(setD)
    val vS = RegNext(Stage.carry(Stage.carry(bmValidC.get, timing.hitReg), timing.selReg))
    val free = vS.map(!_)
    // (the PLRU words in flops with `formalPorts`: read in respond)
    val victim = bmRepl.map(r => if (ramState) RegNext(r.victimEarly(bmSetOf(opC.req.vpn), bmSetOf(k.bits.req.vpn), setD, evBmHit, setR, bmIdx))
      else r.victim(setR)).getOrElse(0.U)
    val way = Mux(bmSameS.asUInt.orR, OHToUInt(bmSameS), Mux(free.reduce(_ || _), PriorityEncoder(free), victim))
    val a = bmArr.get
    a.io.write.valid := fillBm
    a.io.write.bits.set := setR
    a.io.write.bits.way := way
    a.io.write.bits.data.index := dR.bmFillIdx
    a.io.write.bits.data.word := pte
    bmRepl.foreach { r =>
      when(fillBm) { r.fill(setR, way) }
      when(evBmHit) { r.touch(setR, bmIdx) }
    }
    bmValid.get.write(fillBm, setR, vS.indices.map(w => vS(w) || way === w.U))
    // (kind 3 cannot find a frame's words in a VA-indexed cache: every word goes, with kind 0)
    bmValid.get.flash(invNow && (op.inval.kind === 0.U || op.inval.kind === 3.U), false.B)
    bmFull := vS.reduce(_ && _)
  } else if (p.preDecide) {
    require(lateFills)
    val wEn = RegNext(VecInit(bm.fillWayOH.map(_ && bm.fillWrites)), VecInit(Seq.fill(p.bitmapEntries)(false.B)))
    bmWords.writeOH(wEn, RegNext(RegNext(pte)))
  } else bmWords.write(bm.fillWrites, bm.fillWay, if (lateFills) RegNext(pte) else pte)
  if (!p.bmSA) {
    when(evBmHit) { bm.touch(bmIdx) }
    bmFull := bm.valid.asUInt.andR
  }
  private val bmDup = bmSameS.asUInt.orR
  private val evBmEvict = fillBm && !bmDup && bmFull
  pwc.foreach { q =>
    when(fillPwc) { if (lateFills) q.fill(dR.fillPwcE, 0.U, dR.fillPwcSame) else q.fill(dR.fillPwcE, 0.U) }
    when(pwcTouch) { q.touch(pwcTouchIdx) }
  }

  // invalidation: its removal (the sweep's step for one set of each array)
  private val iv = op.inval
  // (the arrays' valid bits: in fillArray, one write of the set's row)
  bmFa.foreach(b => b.invalidate(b.entries.zip(b.valid).map { case (e, v) =>
    invNow && v && (iv.kind === 0.U || (iv.kind === 3.U && (e.index >> 3) === iv.frame))
  }))
  pwc.foreach(q => q.invalidate(q.entries.zip(q.valid).map { case (e, v) =>
    invNow && v && (iv.kind === 0.U || ((iv.kind === 1.U || iv.kind === 2.U) && e.asid === iv.asid))
  }))

  // ---- outputs -----------------------------------------------------------------------------
  respq.io.enq.valid := rv
  respq.io.enq.bits := r
  io.resp <> respq.io.deq

  private val rr = new RoundRobin(p.walkers)
  rr((0 until p.walkers).map(i => sv(i) && !sSent(i) && !sStep(i)))
  io.mem_req.valid := rr.valid
  io.mem_req.bits.id := rr.index
  io.mem_req.bits.addr := ws(rr.index).addr
  io.mem_req.bits.write := false.B
  io.mem_req.bits.wdata := 0.U
  io.mem_req.bits.wmask := 0.U
  when(io.mem_req.fire) {
    rr.granted()
    sSent(rr.index) := true.B
  }

  // the invalidation is pushed when its removal has landed (its last step's respond); nothing
  // else was accepted since, so the slots and the queue are as at its acceptance
  private val enqNow = respq.io.enq.fire
  private val deqNow = respq.io.deq.fire
  private val countNext = respq.io.count + enqNow.asUInt - deqNow.asUInt
  inv.update(invNow && op.last, sv.asUInt, respq.io.count - deqNow.asUInt,
    Mux(freeing, UIntToOH(op.slot, p.walkers), 0.U), deqNow, owedAfterFree = Some(countNext))
  respRoomR.foreach { room =>
    // the queue's count and the answers among the stage registers' next operations (`stageIns`)
    // but the accepted one are flops: their sum is compared with four bounds, and the late
    // terms, the accepted operation's answer and the queue's enqueue and dequeue (a change of -1
    // to +2), select the compare (with the queue's next count in the sum, the add behind
    // respond's `rv` was the routed path of every route of this change's first cut, 96.29 MHz
    // on perforated_off)
    def answer(x: Valid[POp]): Bool = x.valid && x.bits.kind =/= OpKind.Inval
    val (late, early) = stageIns.partition(_ eq issue)
    val base = respq.io.count +& PopCount(early.map(answer))
    val lateAnswer = late.map(answer).foldLeft(false.B)(_ || _)
    def lt(d: Int): Bool = base < (p.respQueue - d).U
    room := Mux(deqNow,
      Mux(enqNow, Mux(lateAnswer, lt(1), lt(0)), Mux(lateAnswer, lt(0), lt(-1))),
      Mux(enqNow, Mux(lateAnswer, lt(2), lt(1)), Mux(lateAnswer, lt(1), lt(0))))
  }
  // (the tracker's own update of its count, the same width: equal to its next count in every state)
  invOkR := ((inv.count + (invNow && op.last).asUInt) - inv.done.asUInt) < p.invalPending.U
  io.invalDone.valid := inv.done

  // ---- counters ----------------------------------------------------------------------------
  PerfCounters.connect(
    io.perf,
    "requests" -> PerfCounter(io.req.fire),
    "hits4k" -> PerfCounter(rs.valid && dR.hit4k),
    "hits2m" -> PerfCounter(rs.valid && dR.hit2m),
    "filterSkips" -> PerfCounter(evFilterSkip),
    "bitmapHits" -> PerfCounter(evBmHit),
    "bitmapReads" -> PerfCounter(evBmRead),
    "holes" -> PerfCounter(evHole),
    "walks" -> PerfCounter(rs.valid && dR.walk),
    "memReads" -> PerfCounter(io.mem_req.fire),
    "bitmapLookups" -> PerfCounter(evBmLookup),
    "pwcHits" -> PerfCounter(evPwcHit),
    "fills4k" -> PerfCounter(evFill4k),
    "fills2m" -> PerfCounter(evFill2m),
    "perforatedFills" -> PerfCounter(evFill2m && dR.fill2mE.perforated),
    "evictions4k" -> PerfCounter(evEvict4k),
    "evictions2m" -> PerfCounter(evEvict2m),
    "bitmapEvictions" -> PerfCounter(evBmEvict),
    "faults" -> PerfCounter(respq.io.enq.fire && r.fault =/= 0.U),
    "busErrors" -> PerfCounter(stepNow && op.error),
    "badCmds" -> PerfCounter(rs.valid && dR.badCmd),
    "badMemResps" -> PerfCounter(badResp),
    "invals" -> PerfCounter(io.inval.fire),
    "staleWalks" -> PerfCounter.count((0 until p.walkers).map(i => io.inval.fire && sv(i) && !sStale(i))),
    // (a request waiting, req_ready low, with every slot busy: since the miss queue a request
    // may be accepted with every slot busy)
    "walkerFullCycles" -> PerfCounter(io.req.valid && !io.req.ready && sv.asUInt.andR),
    "respStallCycles" -> PerfCounter(io.resp.valid && !io.resp.ready)
  )

  // ---- formal view -------------------------------------------------------------------------
  io.dbg.foreach { d =>
    d.valid4k := valid4k.flat
    d.valid2m := valid2m.flat
    d.bitmapValid := (if (p.bmSA) VecInit(bmValid.get.view(Seq.fill(p.bitmapSets)(Seq.fill(p.bitmapWays)(false.B))).flatten).asUInt
      else bm.valid.asUInt)
    // (a slot being handed to the miss queue's head holds the ended walk's state until the next
    // cycle: not live; the head is still in the queue)
    d.slotValid := sv.asUInt & ~Mux(handR, UIntToOH(handSlot, p.walkers), 0.U)
    d.handValid := handR
    d.slotBusy := sv.asUInt
    d.handSlot := handSlot
    d.mq := mq.all
    d.mqCount := mq.count
    d.mqPtrOk := mq.ptrOk
    d.slotStale := sStale.asUInt
    d.slotSent := sSent.asUInt
    d.pipeEmpty := pipeEmpty
    d.invalCount := inv.count
    d.entries4k := VecInit(a4k.io.all.flatten)
    d.entries2m := VecInit(a2m.io.all.flatten)
    // (set * ways + way with `bitmapSets` > 1)
    if (p.bmSA) d.bitmap := VecInit(bmArr.get.io.all.flatten)
    else for (i <- 0 until p.bitmapEntries) {
      d.bitmap(i).index := bm.entries(i).index
      d.bitmap(i).word := bmWords.all(i)
    }
    d.bmEvents.foreach { e =>
      e.hit := evBmHit
      e.fill := fillBm
      e.set := RegNext(bmSetOf(opD.req.vpn))
    }
    d.slots := ws
    require(held.size == 4, "formalPorts needs latency 4 (every stage register)")
    for ((x, j) <- held.zipWithIndex) {
      d.heldValid(j) := x.valid
      d.heldKind(j) := x.bits.kind.asUInt
      d.heldId(j) := x.bits.req.id
      d.heldSlot(j) := x.bits.slot
    }
    d.respq := respq.io.all.get
    d.respCount := respq.io.count
    d.respPtrOk := respq.io.ptrOk.get
    d.sweeping := sweeping
    d.slotStep := sStep.asUInt
    // ... and a write (walk step, invalidation) in stage register j was issued j + 1 cycles ago:
    // its shadow has at least `held.size - j` cycles left
    val shadowOk = held.zipWithIndex.map { case (x, j) =>
      !(x.valid && x.bits.kind =/= OpKind.Req) || shadow.atLeast(held.size - j)
    }.reduce(_ && _)
    d.accOk := freeR === !(shadow.busy || sweeping) && idleR === (!(shadow.busy || sweeping) && pipeEmpty) && shadowOk &&
      invOkR === (inv.count < p.invalPending.U) && mqEmptyR === !mqAny
  }
}

object PerforatedPerf {
  /** The spec's counters first, then the decided ones (docs "Counters"). */
  val names: Seq[String] = Seq(
    "requests", "hits4k", "hits2m", "filterSkips", "bitmapHits", "bitmapReads", "holes", "walks", "memReads",
    "bitmapLookups", "pwcHits", "fills4k", "fills2m", "perforatedFills", "evictions4k", "evictions2m",
    "bitmapEvictions", "faults", "busErrors", "badCmds", "badMemResps", "invals", "staleWalks",
    "walkerFullCycles", "respStallCycles"
  )
}

/** The winners of the pick stage. */
class PPick(p: PerforatedParams, pwcN: Int) extends Bundle {
  val idx4k = UInt(log2Ceil(p.ways4k).max(1).W)
  val any4k = Bool()
  val idx2m = UInt(log2Ceil(p.ways2m).max(1).W)
  val any2m = Bool()
  /** The deepest walk-start pointer (L1, else L2, else L3). */
  val pwcOH = Vec(pwcN, Bool())
  val pwcAny = Bool()
  val pwcKind = UInt(2.W)
  /** The shadow entry of the page's 2 MiB region. */
  val sOH = Vec(pwcN, Bool())
  val sAny = Bool()
  /** The bitmap entries holding the word of the 2 MiB winner's page (a request) or the step's
    * `bmKey` (a bitmap fill's same-key vector; respond uses the lowest-index one).
    */
  val bmVec = Vec(p.bmCmp, Bool())
  /** `bmVec` encoded (it is one-hot or empty). */
  val bmIdx = UInt(log2Ceil(p.bmCmp).max(1).W)
  val bmAny = Bool()
  /** With `bmBitsEarly`: the page's bit of every cached word (meaningful where `bmVec` is set). */
  val bmBits = Option.when(p.bmBitsEarly)(Vec(p.bmCmp, Bool()))
  /** The 4 KiB and 2 MiB winners' entries (meaningful when `any4k` / `any2m`). */
  val e4k = new E4k(p)
  val e2m = new E2m(p)
}

/** The lowest-index set bit, one-hot, in logarithmic depth: Chisel's `PriorityEncoderOH` is a
  * chain of multiplexers, one LUT level per bit (16 on the PWC's hit vectors).
  */
object FirstSet {
  /** `x(0) || ... || x(i)` for every i (Sklansky prefix: log2(n) levels of OR2). */
  def prefixOr(x: Seq[Bool]): Seq[Bool] =
    if (x.size <= 1) x
    else {
      val (l, r) = x.splitAt(1 << (log2Ceil(x.size) - 1))
      val pl = prefixOr(l)
      pl ++ prefixOr(r).map(_ || pl.last)
    }
  def oh(x: Seq[Bool]): Vec[Bool] = {
    val p = prefixOr(x)
    VecInit(x.indices.map(i => if (i == 0) x(0) else x(i) && !p(i - 1)))
  }
}

/** The valid bits of a set-associative array: one flop per entry (`ram` false: the formal view
  * reads them all), else a [[SetValid]] word per set in distributed RAM with per-set flash flags.
  * Read a set in match ([[read]]), write the set's whole row in respond ([[write]], at most once
  * a cycle), clear every entry ([[clearAll]], wins over a write of the same cycle).
  */
class ArrayValid(sets: Int, ways: Int, ram: Boolean) {
  private val regs = Option.when(!ram || sets == 1)(RegInit(VecInit(Seq.fill(sets)(VecInit(Seq.fill(ways)(false.B))))))
  private val words = Option.when(ram && sets > 1)(new SetValid(sets, ways))
  private def row(s: UInt): UInt = if (sets == 1) 0.U else s
  private val noGlobal = Seq.fill(ways)(false.B)

  def read(set: UInt): Vec[Bool] = (regs, words) match {
    case (Some(r), _) => r(row(set))
    case (_, Some(w)) => w.read(set, UIntToOH(set, sets), noGlobal)
    case _            => throw new IllegalStateException
  }
  def write(en: Bool, set: UInt, next: Seq[Bool]): Unit = {
    regs.foreach(r => when(en) { r(row(set)) := VecInit(next) })
    words.foreach(_.write(en, set, next))
  }
  def clearAll(en: Bool): Unit = {
    regs.foreach(r => when(en) { r.foreach(_.foreach(_ := false.B)) })
    words.foreach(_.flash(en, false.B))
  }
  /** Every valid bit (set * ways + way), flops only. */
  def flat: UInt = VecInit(regs.get.flatten).asUInt
}

/** Tree-PLRU words of a set-associative array: [[ReplacementState]] registers (`ram` false, or
  * one set), else one `Mem` word per set in distributed RAM, read combinationally where the
  * victim is needed and written once a cycle (a touch or a fill, never both: one operation
  * responds a cycle).
  *
  * The RAM has no reset (**decided**, docs "Timing"): a word's bits are exact once every way of
  * the set was touched since reset, and before that the set has an invalid way, so no fill takes
  * the victim. (A node's bit is the direction of the latest touch below it, whatever it held
  * before; a fill of a full set needs every way valid, and each became valid by a fill that
  * touched it.) Invalidations leave the words alone either way.
  */
class ArrayPlru(ways: Int, sets: Int, ram: Boolean, early: Boolean = false) {
  private val policy = new TreePlru(ways)
  private val regs = Option.when(!ram || sets == 1)(new ReplacementState(policy, sets))
  private val mem = Option.when(ram && sets > 1)(Mem(sets, UInt(policy.stateBits.W)))
  private val wrEn = WireDefault(false.B)
  private val wrWay = WireDefault(0.U(policy.wayBits.W))
  // one read port: every caller names the same set (the responding operation's)
  private val rdSet = WireDefault(0.U(log2Ceil(sets).max(1).W))
  private val rdWord = mem.map(m => if (early) 0.U else m.read(rdSet))
  /** With `early`: the word of the operation in respond as its decide saw it ([[victimEarly]]),
    * which respond's write touches instead of reading the RAM a second time.
    */
  private val wordRsp = Option.when(early && mem.isDefined)(Wire(UInt(policy.stateBits.W)))
  mem.foreach { m =>
    when(wrEn) { m.write(rdSet, policy.touch(wordRsp.getOrElse(rdWord.get), wrWay)) }
  }

  /** With `early` (and the words in RAM): the victim of `setD`, the set of the operation in
    * decide, from registers only. The RAM is read two stages earlier, at `setC` (the same
    * operation in match), and its output registered twice, so a block RAM's clock-to-out ends in
    * a flop (it was the routed critical path of 2026-11-29, seed 1: the clock-to-out into the
    * victim logic). The read misses the touches of the three operations ahead (those that respond
    * in the read's cycle and the two after it); each is bypassed with the word it saw, the
    * nearest ahead first: a touch sets the path bits of its way whatever they were, so the word
    * of the nearest same-set operation ahead, touched by its way, is the word now. (Fills need no
    * bypass: a fill is a walk step's, whose write shadow keeps match, pick and decide empty until
    * it has responded.) The same-set compares are made a stage ahead, in pick, from registers.
    * Whether the read sees a write of its own cycle does not matter either (touching twice is
    * touching once), so the block RAM's port order is free.
    */
  def victimEarly(setC: UInt, setK: UInt, setD: UInt, touchEn: Bool, touchSet: UInt, touchWay: UInt): UInt = {
    require(early && mem.isDefined && ways > 1)
    val m = mem.get
    val raw = RegNext(RegNext(m.read(setC)))
    // the touches of respond one and two cycles ago (the 2nd and 3rd operations ahead of decide)
    val en1 = RegNext(touchEn, false.B)
    val en2 = RegNext(en1, false.B)
    val set1 = RegNext(touchSet)
    val way2 = RegNext(RegNext(touchWay))
    // in pick: the set of the operation in decide (responds next), in respond, and responded
    val sameY = RegNext(setK === setD)
    val sameZ = RegNext(setK === touchSet)
    val sameW = RegNext(setK === set1)
    // (only ever touched, and a touch rewrites the root bit: the root bit is not kept)
    val wordYHi = Reg(UInt((policy.stateBits - 1).W))
    val wordY = Cat(wordYHi, 0.U(1.W))
    val touchedY = policy.touch(wordY, touchWay)
    val touchedZ = RegNext(touchedY)
    val word = Mux(touchEn && sameY, touchedY, Mux(en1 && sameZ, touchedZ, Mux(en2 && sameW, policy.touch(raw, way2), raw)))
    wordYHi := word >> 1
    wordRsp.get := wordY
    policy.victim(word)
  }

  /** In distributed RAM: the victim of `setD`, the set of the operation in decide, read there
    * and registered for its respond (respond's write of this cycle to the same set bypassed:
    * the word respond reads for it is the word read here). None with registers ([[victim]] in
    * respond).
    */
  def victimAhead(setD: UInt, touchEn: Bool, touchSet: UInt, touchWay: UInt): Option[UInt] = mem.map { m =>
    val w = m.read(setD)
    // the word of the operation now in respond, as its decide read it (exact: its own
    // predecessor's touch bypassed the same way); only a request's touch can be in respond
    // while an operation is in decide (a fill is a walk step's, behind a write shadow that
    // keeps decide empty), so the touch is the only write to bypass
    val wordR = Reg(UInt(policy.stateBits.W))
    val same = touchEn && touchSet === setD
    wordR := Mux(same, policy.touch(wordR, touchWay), w)
    RegNext(Mux(same, policy.victim(policy.touch(wordR, touchWay)), policy.victim(w)))
  }
  def victim(set: UInt): UInt = regs match {
    case Some(r) => r.victim(set)
    case None    => rdSet := set; policy.victim(rdWord.get)
  }
  /** A hit used `way`. */
  def touch(set: UInt, way: UInt): Unit = regs match {
    case Some(r) => r.touch(set, way)
    case None    => rdSet := set; wrEn := true.B; wrWay := way
  }
  /** A fill wrote `way` (tree-PLRU: taking the victim changes nothing but the touch). */
  def fill(set: UInt, way: UInt): Unit = regs match {
    case Some(r) => r.fill(set, way, false.B)
    case None    => rdSet := set; wrEn := true.B; wrWay := way
  }
}

/** The miss queue: `depth` entries in order, in distributed RAM (combinational read of the head,
  * written at the clock edge), or flops with `regs` (the formal view reads them all, [[all]]).
  * One push or one pop a cycle (`update`; both in one cycle is not used: a push is a request's
  * respond, a pop the cycle after a step's). `free` is `depth - count`, a register of its own.
  */
class MissQueue[T <: Data](gen: T, val depth: Int, regs: Boolean) {
  private val ptrBits = log2Ceil(depth).max(1)
  private def next(x: UInt): UInt =
    if (depth == 1) 0.U(ptrBits.W) else if (isPow2(depth)) (x + 1.U)(ptrBits - 1, 0) else Mux(x === (depth - 1).U, 0.U, x + 1.U)
  private def idx(i: UInt): UInt = if (depth == 1) 0.U else i
  private val head = RegInit(0.U(ptrBits.W))
  private val tail = RegInit(0.U(ptrBits.W))
  val count: UInt = RegInit(0.U(log2Ceil(depth + 1).W))
  val free: UInt = RegInit(depth.U(log2Ceil(depth + 1).W))
  private val r = Option.when(regs)(Reg(Vec(depth, gen)))
  private val mem = Option.when(!regs)(Mem(depth, gen))
  /** The head (meaningful when `count` is not 0). */
  val first: T = r match {
    case Some(x) => x(idx(head))
    case None    => mem.get.read(idx(head))
  }
  def update(push: Bool, data: T, pop: Bool): Unit = {
    when(push) {
      r.foreach(x => x(idx(tail)) := data)
      mem.foreach(x => x.write(idx(tail), data))
      tail := next(tail)
    }
    when(pop) { head := next(head) }
    count := count + push.asUInt - pop.asUInt
    free := free - push.asUInt + pop.asUInt
  }
  /** Every entry in queue order, head first (entry j is queued when j < count); flops only. */
  def all: Vec[T] = {
    val x = r.get
    var q = head
    val v = Wire(Vec(depth, gen))
    for (j <- 0 until depth) { v(j) := x(idx(q)); q = next(q) }
    v
  }
  /** The pointers and counts agree: tail = head + count, free = depth - count. */
  def ptrOk: Bool = {
    var q = head
    val ok = (0 to depth).map { j => val hit = count === j.U && tail === q; q = next(q); hit }.reduce(_ || _)
    ok && free === depth.U - count && (if (isPow2(depth)) true.B else head < depth.U)
  }
}

/** `n` words of `width` bits read one at a time by index: flops (`ram` false, visible whole
  * through [[all]]) or a `Mem` in distributed RAM (combinational read, written at the clock
  * edge; [[all]] is then not available). One write a cycle.
  */
class WordStore(n: Int, width: Int, ram: Boolean) {
  private val regs = Option.when(!ram)(Reg(Vec(n, UInt(width.W))))
  private val mem = Option.when(ram)(Mem(n, UInt(width.W)))
  private def idx(i: UInt): UInt = if (n == 1) 0.U else i
  def read(i: UInt): UInt = regs match {
    case Some(r) => r(idx(i))
    case None    => mem.get.read(idx(i))
  }
  def write(en: Bool, i: UInt, data: UInt): Unit = when(en) {
    regs.foreach(_(idx(i)) := data)
    mem.foreach(_.write(idx(i), data))
  }
  /** Flops only: write `data` into the words whose enable is set (one-hot or none). */
  def writeOH(en: Seq[Bool], data: UInt): Unit =
    for ((e, i) <- en.zipWithIndex) when(e) { regs.get(i) := data }
  def all: Vec[UInt] = regs.get
}

object PerforatedL2Tlb {
  /** The deepest `storage = sram` array built as distributed RAM (see `lutram`): 32 sets, the
    * depth below which Yosys's ECP5 mapping chose DPR16X4 over DP16KD for the 2 MiB array.
    */
  val lutramMaxSets = 32
}
