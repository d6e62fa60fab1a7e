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
  *    caches' fills and touches land one cycle after respond (`late`, see below);
  *  - `walkers` walk slots ([[WalkState]]): a request that needs memory holds one from its first
  *    read to its response, with at most one read outstanding (`mem_req.id` = slot);
  *  - the response queue ([[RegQueue]], `respQueue`) in front of `resp`;
  *  - [[InvalWait]]: accepted invalidations waiting for the responses of the requests accepted
  *    before them.
  *
  * ==Pipeline==
  * One operation a cycle is accepted, by priority inval > mem_resp (a walk step) > req, and
  * passes the stages of [[LookupTiming]] in order:
  *  - '''read''' (acceptance): the set of the operation's page in both arrays;
  *  - '''match''': both rows against (asid, vpn): the hit vectors, which are also the same-key
  *    vectors of a step's fill, and (one compare: an invalidation's asid and page ride in the
  *    request's fields) an invalidation's coverage of the row; the PWC against the four prefixes
  *    (also a PWC fill's same-key vector);
  *  - '''pick''': the winners (index and entry, so only the chosen entries go on), and the
  *    bitmap cache against one key: the word of the 2 MiB winner's page, or a step's `bmKey`
  *    (the word its bitmap read fetched: also the bitmap fill's same-key vector);
  *  - '''respond''': everything the model's operation does, from registered vectors: the
  *    response into the queue, replacement touches, fills, the perforated decision (filter bit,
  *    bitmap word, hole), the next read of the walk slot, an invalidation's removal.
  * Only a walk step and an invalidation write (fills, valid bits), so only they open a
  * [[WriteShadow]] (with `selReg` it also covers the cycle after respond, where the caches'
  * late fills land); requests run back to back: a request changes nothing another request
  * compares (it only touches replacement state, read and written in respond in acceptance
  * order, and takes a slot, counted at acceptance). Hence every operation sees the effect of
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
  * `req_ready` needs a free walk slot and a response-queue place for every request in flight
  * that might take one, so nothing is ever replayed (when every slot is busy, hits wait too);
  * `mem_resp_ready` needs a response-queue place. A request also waits while an invalidation
  * that could be accepted is presented, so that the pipeline drains for it.
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
    */
  private def lutram(sets: Int): Boolean = !p.sram && !p.formalPorts && sets > 1
  private val a4k = Module(new SetAssocStorage(new E4k(p), p.sets4k, p.ways4k, p.sram, readReg = timing.readReg,
    lutram = lutram(p.sets4k)))
  private val a2m = Module(new SetAssocStorage(new E2m(p), p.sets2m, p.ways2m, p.sram, readReg = timing.readReg,
    lutram = lutram(p.sets2m)))
  /** Per-set state in distributed RAM instead of flops (every configuration but the formal one,
    * whose `dbg` view reads every valid bit): see [[ArrayValid]], [[ArrayPlru]] and `bmWords`.
    */
  private val ramState = !p.formalPorts
  private val valid4k = new ArrayValid(p.sets4k, p.ways4k, ramState)
  private val valid2m = new ArrayValid(p.sets2m, p.ways2m, ramState)
  private val repl4k = new ArrayPlru(p.ways4k, p.sets4k, ramState)
  private val repl2m = new ArrayPlru(p.ways2m, p.sets2m, ramState)
  /** The bitmap word cache's tags (compared every cycle: flops) ... */
  /** Fills and touches of the two fully associative caches land one cycle after respond
    * (AssocCache `late`), from registers, so the caches' fill logic is not behind respond's
    * decisions; the fill's same-key vector is the compare match made for the operation
    * (`keyIn`). Legal when a write shadow covers that cycle too (`selReg`, docs "Timing").
    */
  private val lateFills = timing.selReg
  private val bm = new AssocCache(new EBitmapTag(p), p.bitmapEntries, 1,
    sameKey = Some((a: EBitmapTag, b: EBitmapTag) => a.index === b.index), late = lateFills, keyIn = lateFills)
  /** ... and its words, read only for the one entry the pick stage chose: distributed RAM
    * (flops with `formalPorts`), written where the cache writes the tag.
    */
  private val bmWords = new WordStore(p.bitmapEntries, 64, ramState)
  private val pwc = Option.when(p.pwcEntries > 0)(new AssocCache(new EPwc(p), p.pwcEntries, 1,
    sameKey = Some((a: EPwc, b: EPwc) => a.asid === b.asid && a.kind === b.kind && a.prefix === b.prefix),
    late = lateFills, keyIn = lateFills))
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
  private val shadow = new WriteShadow(timing.writeShadow)

  private val sweeping = RegInit(false.B)
  private val sweepIdx = RegInit(0.U(log2Ceil(p.sweepSets).max(1).W))
  private val sweepOp = Reg(new PInval(p))

  // ---- read stage: accept one operation a cycle --------------------------------------------
  private val issue = Wire(Valid(new POp(p)))
  private val c = Stage(issue, timing.readReg)
  private val k = Stage(c, timing.hitReg)
  private val s = Stage(k, timing.selReg)
  private val held = Seq((c, timing.readReg), (k, timing.hitReg), (s, timing.selReg)).collect { case (x, true) => x }
  private def isKind(x: Valid[POp], kd: OpKind.Type): Bool = x.valid && x.bits.kind === kd
  private val pipeEmpty = !held.map(_.valid).foldLeft(false.B)(_ || _)
  private val busy = shadow.busy || sweeping
  private val heldReqs = PopCount(held.map(isKind(_, OpKind.Req)))
  private val heldAnswers = PopCount(held.map(x => x.valid && x.bits.kind =/= OpKind.Inval))
  private val freeSlots = PopCount(sv.map(!_))
  private val respRoom = (respq.io.count +& heldAnswers) < p.respQueue.U

  io.inval.ready := !busy && pipeEmpty && inv.count < p.invalPending.U
  io.mem_resp.ready := !busy && !io.inval.fire && respRoom
  /** An invalidation that will be accepted once the pipeline has drained: requests wait for it. */
  private val invalWaits = io.inval.valid && inv.count < p.invalPending.U
  io.req.ready := !busy && !invalWaits && !io.mem_resp.fire && respRoom && freeSlots > heldReqs

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
  a4k.io.read.valid := issue.valid
  a4k.io.read.bits := issue.bits.set4k
  a2m.io.read.valid := issue.valid
  a2m.io.read.bits := issue.bits.set2m
  // walks in flight become stale at an invalidation's acceptance (docs "Walks in flight")
  for (i <- 0 until p.walkers) when(io.inval.fire && sv(i)) { sStale(i) := true.B }

  // ---- match stage -------------------------------------------------------------------------
  private val opC = c.bits
  private val vpnC = opC.req.vpn
  private val asidC = opC.req.asid
  private val rowC4 = a4k.io.readData
  private val rowC2 = a2m.io.readData
  private val v4kC = valid4k.read(opC.set4k)
  private val v2mC = valid2m.read(opC.set2m)
  // (for an invalidation asidC and vpnC are its asid and page)
  private val asid4kC = rowC4.map(_.asid === asidC)
  private val vpn4kC = rowC4.map(_.vpn === vpnC)
  private val asid2mC = rowC2.map(_.asid === asidC)
  private val vpn2mC = rowC2.map(_.vpn2m === (vpnC >> 9))
  private val hit4kC = VecInit((0 until p.ways4k).map(w => v4kC(w) && asid4kC(w) && vpn4kC(w)))
  private val hit2mC = VecInit((0 until p.ways2m).map(w => v2mC(w) && asid2mC(w) && vpn2mC(w)))
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
  private def bmHits(index: UInt): Vec[Bool] =
    VecInit(bm.entries.zip(bm.valid).map { case (e, v) => v && e.index === index })
  private def pwcHits(kind: Int): Vec[Bool] = pwc match {
    case Some(q) =>
      val prefix = (vpnC >> PwcKind.shift(kind)).pad(27)
      VecInit(q.entries.zip(q.valid).map { case (e, v) => v && e.asid === asidC && e.kind === kind.U && e.prefix === prefix })
    case None => VecInit(Seq.fill(pwcN)(false.B))
  }
  private val pwcC = VecInit((0 until 4).map(pwcHits))

  // ---- pick stage --------------------------------------------------------------------------
  private def toPick[T <: Data](d: T): T = Stage.carry(d, timing.hitReg)
  private val hit4kK = toPick(hit4kC)
  private val hit2mK = toPick(hit2mC)
  private val pwcK = toPick(pwcC)
  private val pickK = Wire(new PPick(p, pwcN))
  private val oh4kK = FirstSet.oh(hit4kK)
  private val oh2mK = FirstSet.oh(hit2mK)
  pickK.idx4k := OHToUInt(oh4kK)
  pickK.any4k := hit4kK.asUInt.orR
  pickK.idx2m := OHToUInt(oh2mK)
  pickK.any2m := hit2mK.asUInt.orR
  // the walk starts from the deepest pointer cached: PDE pointer, PDPTE, PML4E
  private val anyL = (0 until 3).map(i => pwcK(i).asUInt.orR)
  pickK.pwcAny := anyL.reduce(_ || _)
  pickK.pwcKind := Mux(anyL(2), PwcKind.L1.U, Mux(anyL(1), PwcKind.L2.U, PwcKind.L3.U))
  pickK.pwcOH := FirstSet.oh(Mux(anyL(2), pwcK(2), Mux(anyL(1), pwcK(1), pwcK(0))))
  pickK.sOH := FirstSet.oh(pwcK(3))
  pickK.sAny := pwcK(3).asUInt.orR
  // the winners' entries are selected here, so only they (not both rows) go on to respond
  pickK.e4k := Mux1H(oh4kK, toPick(rowC4))
  pickK.e2m := Mux1H(oh2mK, toPick(rowC2))
  // The bitmap cache against one key: the word of the 2 MiB winner's page (a request), or a
  // step's `bmKey` (its bitmap read's word, or the PD leaf it carries). One compare per entry
  // here, behind the winner's selection, instead of one per 2 MiB way in match; its priority
  // encoding is left to respond.
  private val bmKeyK = Mux(k.bits.kind === OpKind.Step, k.bits.bmKey, bmIndex(pickK.e2m.ppn, k.bits.req.vpn))
  pickK.bmVec := bmHits(bmKeyK)

  // ---- respond stage -----------------------------------------------------------------------
  private def toRespond[T <: Data](d: T): T = Stage.carry(Stage.carry(d, timing.hitReg), timing.selReg)
  private val won = Stage.carry(pickK, timing.selReg)
  // respond encodes the hit vector: encoding it here as well cost about 1 500 LUT4 more (the
  // compare's logic restructured for the wider fan-out) for no shallower path (levels.py).
  private val bmAny = won.bmVec.asUInt.orR
  private val bmIdx = OHToUInt(FirstSet.oh(won.bmVec))
  private val v4kS = toRespond(v4kC)
  private val v2mS = toRespond(v2mC)
  private val cov4kS = toRespond(cov4kC)
  private val cov2mS = toRespond(cov2mC)
  private val op = s.bits
  private val reqNow = isKind(s, OpKind.Req)
  private val stepNow = isKind(s, OpKind.Step)
  private val invNow = isKind(s, OpKind.Inval)
  private val vpn = op.req.vpn
  private val asid = op.req.asid
  private val off = vpn(8, 0)
  private val sl = ws(op.slot)
  private val stale = sStale(op.slot)
  private val pte = op.rdata
  private val badCmd = reqNow && op.req.cmd === 3.U

  // the response (fault responses carry no translation)
  private val rv = WireDefault(false.B)
  private val r = Wire(new PResp(p))
  r := 0.U.asTypeOf(r)
  r.id := op.req.id
  r.memReads := Mux(stepNow, sl.reads +& 1.U, 0.U)
  private def fault(code: Int, source: UInt): Unit = {
    rv := true.B
    r.fault := code.U
    r.source := source
  }
  /** A translation, or fault 1 when the access is not allowed (docs "Permissions and A/D"). */
  private def translation(ppn: UInt, size: Int, wux: UInt, d: Bool, source: UInt): Unit = {
    val deny = (op.req.user && !wux(1)) || (op.req.cmd === 1.U && (!wux(2) || !d)) || (op.req.cmd === 2.U && !wux(0))
    rv := true.B
    r.source := source
    when(deny) { r.fault := PFault.Page.U }.otherwise {
      r.ppn := ppn
      r.pageSize := size.U
      r.perm_r := true.B
      r.perm_w := wux(2)
      r.perm_x := wux(0)
      r.perm_u := wux(1)
    }
  }

  // the slot's next state: a request's new slot, or the stepping slot
  private val freeIdx = PriorityEncoder(sv.map(!_))
  private val ns = Wire(new WalkState(p))
  ns := sl
  when(reqNow) {
    ns.id := op.req.id
    ns.vpn := vpn
    ns.asid := asid
    ns.cmd := op.req.cmd
    ns.user := op.req.user
    ns.wux := 7.U
    ns.pdPpn := 0.U
    ns.up := 7.U
    // a request that needs memory after a 2 MiB hit keeps source 2 (3 once a hole)
    ns.source := Mux(!won.any4k && won.any2m, PSource.Perforated.U, PSource.Walk.U)
    ns.hole := false.B
    ns.reads := 0.U
  }.otherwise { ns.reads := sl.reads + 1.U }
  private val issueRd = WireDefault(false.B)
  private def read(kind: Int, addr: UInt): Unit = {
    issueRd := true.B
    ns.kind := kind.U
    ns.addr := addr
  }
  private def at(table: UInt, index: UInt): UInt = Cat(table, index, 0.U(3.W))

  // events (counters)
  private val evFilterSkip, evBmLookup, evBmHit, evBmRead, evHole, evPwcHit = WireDefault(false.B)
  private val evFill4k, evFill2m, evEvict4k, evEvict2m, evBmEvict = WireDefault(false.B)

  // fills (landing in this stage; a stale walk fills nothing)
  private val fill4k = WireDefault(false.B)
  private val fill4kE = Wire(new E4k(p))
  fill4kE := DontCare
  private val fill2m = WireDefault(false.B)
  private val fill2mE = Wire(new E2m(p))
  fill2mE := DontCare
  private val fillBm = WireDefault(false.B)
  private val fillPwc = WireDefault(false.B)
  private val fillPwcE = Wire(new EPwc(p))
  fillPwcE := DontCare
  private def pwcFill(kind: Int, table: UInt, wux: UInt): Unit = {
    fillPwc := !stale
    fillPwcSame := pwcS(kind)
    fillPwcE.asid := asid
    fillPwcE.kind := kind.U
    fillPwcE.prefix := (vpn >> PwcKind.shift(kind)).pad(27)
    fillPwcE.ppn := table
    fillPwcE.wux := wux
  }
  /** The PWC entries holding each kind's key of this operation (match's compare): a fill's
    * same-key vector.
    */
  private val pwcS = Stage.carry(pwcK, timing.selReg)
  private val fillPwcSame = WireDefault(VecInit(Seq.fill(pwcN)(false.B)))
  private val pwcEntries = pwc.map(_.entries).getOrElse(VecInit(Seq.fill(pwcN)(0.U.asTypeOf(new EPwc(p)))))
  private val pwcTouch = WireDefault(false.B)
  private val pwcTouchOH = WireDefault(VecInit(Seq.fill(pwcN)(false.B)))

  // The perforated decision (flow steps 3 and 4) of a page in large page `L`: from a request's
  // 2 MiB hit, a walk's perforated PD leaf, or a walk's bitmap read (`wordKnown`).
  private val decideGo = WireDefault(false.B)
  private val leaf = Wire(new E2m(p))
  private val e2 = won.e2m
  private val wordKnown = stepNow && sl.kind === RdKind.Bitmap.U
  private val large = Mux(reqNow, e2, Mux(wordKnown, sl.large, leaf))
  private val word = Mux(wordKnown, pte, bmWords.read(bmIdx))
  private val srcIn = Mux(reqNow, PSource.Perforated.U, sl.source)
  private val frame = Cat(large.ppn(hi, 9), off)
  private val sE = Mux1H(won.sOH, pwcEntries)
  when(decideGo) {
    ns.large := large
    when(!VecInit(large.filter.asBools)(off(8, 6))) {
      evFilterSkip := true.B
      translation(frame, 0, large.wux, large.d, srcIn)
    }.otherwise {
      when(!wordKnown) { evBmLookup := true.B; evBmHit := bmAny }
      when(!wordKnown && !bmAny) {
        evBmRead := true.B
        val base = io.bitmapBase(p.paBits - 1, 3)
        read(RdKind.Bitmap, Cat(base + bmIndex(large.ppn, vpn), 0.U(3.W)))
      }.elsewhen(!VecInit(word.asBools)(frame(5, 0))) {
        translation(frame, 0, large.wux, large.d, srcIn)
      }.otherwise {
        // a hole: its own walk (shadow entry, hole PTE), never the large page
        evHole := true.B
        ns.source := Mux(srcIn === PSource.Walk.U, PSource.Walk.U, PSource.Hole.U)
        ns.hole := true.B
        ns.up := large.up
        ns.pdPpn := large.pdPpn
        when(won.sAny) {
          evPwcHit := true.B
          pwcTouch := true.B
          pwcTouchOH := won.sOH
          ns.wux := sE.wux
          read(RdKind.Hole, at(sE.ppn, off))
        }.otherwise {
          ns.wux := large.up
          read(RdKind.Shadow, at((large.pdPpn + 1.U)(hi, 0), vpn(17, 9)))
        }
      }
    }
  }

  // request
  private val walkNow = reqNow && !badCmd && !won.any4k && !won.any2m
  private val e4 = won.e4k
  private val pwcE = Mux1H(won.pwcOH, pwcEntries)
  when(reqNow) {
    when(badCmd) {
      fault(PFault.Reserved, PSource.Walk.U)
    }.elsewhen(won.any4k) {
      repl4k.touch(op.set4k, won.idx4k)
      translation(e4.ppn, 0, e4.wux, e4.d, PSource.Entry4k.U)
    }.elsewhen(won.any2m) {
      repl2m.touch(op.set2m, won.idx2m)
      when(!e2.perforated) {
        translation(Cat(e2.ppn(hi, 9), off), 1, e2.wux, e2.d, PSource.Entry2m.U)
      }.otherwise {
        decideGo := true.B
      }
    }.otherwise {
      // a walk from the deepest PWC hit
      when(!won.pwcAny) {
        read(RdKind.Pml4e, at(op.req.root, vpn(35, 27)))
      }.otherwise {
        evPwcHit := true.B
        pwcTouch := true.B
        pwcTouchOH := won.pwcOH
        ns.wux := pwcE.wux
        when(won.pwcKind === PwcKind.L3.U) {
          read(RdKind.Pdpte, at(pwcE.ppn, vpn(26, 18)))
        }.elsewhen(won.pwcKind === PwcKind.L2.U) {
          ns.pdPpn := pwcE.ppn
          ns.up := pwcE.wux
          read(RdKind.Pde, at(pwcE.ppn, vpn(17, 9)))
        }.otherwise {
          read(RdKind.Pte, at(pwcE.ppn, off))
        }
      }
    }
  }

  // walk step
  private val present = pte(0)
  private val ps = pte(7)
  private val perfBit = pte(52)
  private val accessed = pte(5)
  private val rsvdPpn = if (p.paBits < 52) pte(51, p.paBits).orR else false.B
  private val table = pte(p.paBits - 1, 12)
  private val kd = sl.kind
  private val permNew = sl.wux & Wux.of(pte)
  leaf.asid := asid
  leaf.vpn2m := vpn >> 9
  leaf.ppn := Cat(pte(p.paBits - 1, 21), 0.U(9.W))
  leaf.wux := permNew
  leaf.d := pte(6)
  leaf.perforated := perfBit
  leaf.filter := Mux(perfBit, pte(20, 13), 0.U)
  leaf.pdPpn := sl.pdPpn
  leaf.up := sl.up
  when(stepNow) {
    when(op.error) {
      fault(PFault.Bus, sl.source)
    }.elsewhen(kd === RdKind.Bitmap.U) {
      fillBm := !stale
      decideGo := true.B
    }.elsewhen(kd === RdKind.Pde.U && present && ps && perfBit && (!p.perforation).B) {
      fault(PFault.Page, sl.source) // the splintered baseline: not present
    }.elsewhen(!present) {
      fault(PFault.Page, sl.source)
    }.elsewhen(rsvdPpn) {
      fault(PFault.Reserved, sl.source)
    }.elsewhen((kd === RdKind.Pml4e.U || kd === RdKind.Pdpte.U || kd === RdKind.Shadow.U) && ps) {
      fault(PFault.Reserved, sl.source)
    }.elsewhen(kd === RdKind.Pml4e.U) {
      pwcFill(PwcKind.L3, table, permNew)
      ns.wux := permNew
      read(RdKind.Pdpte, at(table, vpn(26, 18)))
    }.elsewhen(kd === RdKind.Pdpte.U) {
      pwcFill(PwcKind.L2, table, permNew)
      ns.wux := permNew
      ns.pdPpn := table
      ns.up := permNew
      read(RdKind.Pde, at(table, vpn(17, 9)))
    }.elsewhen(kd === RdKind.Shadow.U) {
      val w = sl.up & Wux.of(pte)
      pwcFill(PwcKind.S, table, w)
      ns.wux := w
      read(RdKind.Hole, at(table, off))
    }.elsewhen(kd === RdKind.Pde.U && !ps) {
      pwcFill(PwcKind.L1, table, permNew)
      ns.wux := permNew
      read(RdKind.Pte, at(table, off))
    }.elsewhen(kd === RdKind.Pde.U) {
      when(!perfBit && pte(20, 13).orR) {
        fault(PFault.Reserved, sl.source)
      }.elsewhen(!accessed) {
        fault(PFault.Page, sl.source)
      }.otherwise {
        fill2m := !stale
        fill2mE := leaf
        when(!perfBit) {
          translation(Cat(leaf.ppn(hi, 9), off), 1, leaf.wux, leaf.d, sl.source)
        }.otherwise {
          decideGo := true.B
        }
      }
    }.otherwise {
      // a 4 KiB leaf: an ordinary PTE or a hole's PTE
      when(!accessed) {
        fault(PFault.Page, sl.source)
      }.otherwise {
        fill4k := !stale
        fill4kE.asid := asid
        fill4kE.vpn := vpn
        fill4kE.ppn := table
        fill4kE.wux := permNew
        fill4kE.d := pte(6)
        translation(table, 0, permNew, pte(6), sl.source)
      }
    }
  }

  // slots: a request that needs memory takes the lowest free slot; a step's walk goes on or ends
  private val alloc = reqNow && issueRd
  private val slotIdx = Mux(reqNow, freeIdx, op.slot)
  private val freeing = stepNow && !issueRd
  when(alloc || (stepNow && issueRd)) {
    ws(slotIdx) := ns
    sSent(slotIdx) := false.B
    sStep(slotIdx) := false.B
  }
  when(alloc) {
    sv(slotIdx) := true.B
    sStale(slotIdx) := false.B
  }
  when(freeing) {
    sv(op.slot) := false.B
    sStep(op.slot) := false.B
    sSent(op.slot) := false.B
  }

  /** A fill into one array: the way holding the key (the hit vector is the same-key vector),
    * else the lowest invalid way, else the PLRU victim; the written way is touched. Returns
    * whether it evicts.
    */
  private def fillArray[T <: Data](arr: SetAssocStorage[T], valid: ArrayValid, repl: ArrayPlru,
      set: UInt, validS: Seq[Bool], cov: Seq[Bool], hitAny: Bool, hitIdx: UInt, fill: Bool, data: T): Bool = {
    val free = validS.map(!_)
    val anyFree = free.reduce(_ || _)
    val way = Mux(hitAny, hitIdx, Mux(anyFree, PriorityEncoder(free), repl.victim(set)))
    val evicting = !hitAny && !anyFree
    arr.io.write.valid := fill
    arr.io.write.bits.set := set
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
  private val evicting4k = fillArray(a4k, valid4k, repl4k, op.set4k, v4kS, cov4kS, won.any4k, won.idx4k, fill4k, fill4kE)
  private val evicting2m = fillArray(a2m, valid2m, repl2m, op.set2m, v2mS, cov2mS, won.any2m, won.idx2m, fill2m, fill2mE)
  evFill4k := fill4k
  evEvict4k := fill4k && evicting4k
  evFill2m := fill2m
  evEvict2m := fill2m && evicting2m

  // the bitmap cache: a walk's bitmap read fills it; a lookup hit touches it
  private val bmFillE = Wire(new EBitmapTag(p))
  bmFillE.index := bmIndex(sl.large.ppn, vpn)
  /** The entries holding the step's bitmap key (match's compare of `bmKey`). */
  private val bmSameS = won.bmVec
  when(fillBm) { if (lateFills) bm.fill(bmFillE, 0.U, bmSameS) else bm.fill(bmFillE, 0.U) }
  bmWords.write(bm.fillWrites, bm.fillWay, if (lateFills) RegNext(pte) else pte)
  when(evBmHit) { bm.touch(bmIdx) }
  private val bmDup = bmSameS.asUInt.orR
  evBmEvict := fillBm && !bmDup && bm.valid.asUInt.andR
  pwc.foreach { q =>
    when(fillPwc) { if (lateFills) q.fill(fillPwcE, 0.U, fillPwcSame) else q.fill(fillPwcE, 0.U) }
    when(pwcTouch) { q.touch(OHToUInt(pwcTouchOH)) }
  }

  // invalidation: its removal (the sweep's step for one set of each array)
  private val iv = op.inval
  // (the arrays' valid bits: in fillArray, one write of the set's row)
  bm.invalidate(bm.entries.zip(bm.valid).map { case (e, v) =>
    invNow && v && (iv.kind === 0.U || (iv.kind === 3.U && (e.index >> 3) === iv.frame))
  })
  pwc.foreach(q => q.invalidate(q.entries.zip(q.valid).map { case (e, v) =>
    invNow && v && (iv.kind === 0.U || ((iv.kind === 1.U || iv.kind === 2.U) && e.asid === iv.asid))
  }))

  // ---- outputs -----------------------------------------------------------------------------
  respq.io.enq.valid := rv && s.valid
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
  io.invalDone.valid := inv.done

  // ---- counters ----------------------------------------------------------------------------
  PerfCounters.connect(
    io.perf,
    "requests" -> PerfCounter(io.req.fire),
    "hits4k" -> PerfCounter(reqNow && !badCmd && won.any4k),
    "hits2m" -> PerfCounter(reqNow && !badCmd && !won.any4k && won.any2m),
    "filterSkips" -> PerfCounter(evFilterSkip),
    "bitmapHits" -> PerfCounter(evBmHit),
    "bitmapReads" -> PerfCounter(evBmRead),
    "holes" -> PerfCounter(evHole),
    "walks" -> PerfCounter(walkNow),
    "memReads" -> PerfCounter(io.mem_req.fire),
    "bitmapLookups" -> PerfCounter(evBmLookup),
    "pwcHits" -> PerfCounter(evPwcHit),
    "fills4k" -> PerfCounter(evFill4k),
    "fills2m" -> PerfCounter(evFill2m),
    "perforatedFills" -> PerfCounter(evFill2m && fill2mE.perforated),
    "evictions4k" -> PerfCounter(evEvict4k),
    "evictions2m" -> PerfCounter(evEvict2m),
    "bitmapEvictions" -> PerfCounter(evBmEvict),
    "faults" -> PerfCounter(respq.io.enq.fire && r.fault =/= 0.U),
    "busErrors" -> PerfCounter(stepNow && op.error),
    "badCmds" -> PerfCounter(badCmd),
    "badMemResps" -> PerfCounter(badResp),
    "invals" -> PerfCounter(io.inval.fire),
    "staleWalks" -> PerfCounter.count((0 until p.walkers).map(i => io.inval.fire && sv(i) && !sStale(i))),
    "walkerFullCycles" -> PerfCounter(io.req.valid && sv.asUInt.andR),
    "respStallCycles" -> PerfCounter(io.resp.valid && !io.resp.ready)
  )

  // ---- formal view -------------------------------------------------------------------------
  io.dbg.foreach { d =>
    d.valid4k := valid4k.flat
    d.valid2m := valid2m.flat
    d.bitmapValid := bm.valid.asUInt
    d.slotValid := sv.asUInt
    d.slotStale := sStale.asUInt
    d.slotSent := sSent.asUInt
    d.pipeEmpty := pipeEmpty
    d.invalCount := inv.count
    d.entries4k := VecInit(a4k.io.all.flatten)
    d.entries2m := VecInit(a2m.io.all.flatten)
    for (i <- 0 until p.bitmapEntries) {
      d.bitmap(i).index := bm.entries(i).index
      d.bitmap(i).word := bmWords.all(i)
    }
    d.slots := ws
    require(held.size == 3, "formalPorts needs latency 4 (every stage register)")
    for ((x, j) <- held.zipWithIndex) {
      d.heldValid(j) := x.valid
      d.heldKind(j) := x.bits.kind.asUInt
      d.heldId(j) := x.bits.req.id
    }
    d.respq := respq.io.all.get
    d.respCount := respq.io.count
    d.respPtrOk := respq.io.ptrOk.get
    d.sweeping := sweeping
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
  val bmVec = Vec(p.bitmapEntries, Bool())
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
class ArrayPlru(ways: Int, sets: Int, ram: Boolean) {
  private val policy = new TreePlru(ways)
  private val regs = Option.when(!ram || sets == 1)(new ReplacementState(policy, sets))
  private val mem = Option.when(ram && sets > 1)(Mem(sets, UInt(policy.stateBits.W)))
  private val wrEn = WireDefault(false.B)
  private val wrWay = WireDefault(0.U(policy.wayBits.W))
  // one read port: every caller names the same set (the responding operation's)
  private val rdSet = WireDefault(0.U(log2Ceil(sets).max(1).W))
  private val rdWord = mem.map(_.read(rdSet))
  mem.foreach { m =>
    when(wrEn) { m.write(rdSet, policy.touch(rdWord.get, wrWay)) }
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
  def all: Vec[UInt] = regs.get
}
