package xlat.pml

import chisel3._
import chisel3.util._
import xlat.common._

/** PmlLogger: Page Modification Logging (Intel PML) and Extended PML for several VM contexts.
  *
  * ==Structure==
  * Per context: the registers of [[PmlRegs]] and a queue of `queueDepth` events. An accepted
  * `dirty` event enters its context's queue with the parts it owes (the PML part, and the guest
  * part when EPML tracks its asid); an optional filter drops pages logged since the last index
  * reset. A round-robin scheduler picks, each cycle, one context whose head part can be written
  * (its index in range) and loads the write into the output register of `mem_req`; the index
  * decrements at that moment. A tag table of 2^idBits outstanding writes matches `mem_resp`.
  *
  * ==Pipeline==
  * Both wide decisions start from registers (docs/pml-logger.md, "Pipeline timing"):
  *  - the scheduler picks over per-context candidate registers (the part each context can load),
  *    computed a cycle ahead for both outcomes of that cycle's pick;
  *  - with the filter, acceptance registers the match as a hit vector (LookupTiming latency 2)
  *    and the event is dropped or queued in the next cycle, the decide stage; the filter's
  *    updates land there, and the match bypasses the decide stage's fill and forget.
  *
  * ==Full buffers==
  * A part whose index is out of range waits at its queue head; the first such wait with the
  * status bit clear sets STATUS.full (guestFull) and raises one `exit` (`guestIrq`). Other
  * contexts keep logging: nothing is shared but the output register, which never waits for a
  * full context.
  *
  * ==CSR==
  * `csr_req` is always ready and answered on `csr_resp` the next cycle. In a cycle a CSR write
  * is accepted no log write is loaded and no exit raised, so software writes and index
  * decrements never meet.
  *
  * See docs/pml-logger.md for every rule.
  */
class PmlLogger(val p: PmlParams) extends Module {
  override def desiredName = "PmlLogger"

  val io = FlatIO(new Bundle {
    val dirty = Flipped(Decoupled(new PmlDirty(p)))
    val csr_req = Flipped(Decoupled(new CsrReq))
    val csr_resp = Valid(new CsrResp)
    val mem_req = Decoupled(new MemReq(p.idBits, p.paBits))
    val mem_resp = Flipped(Decoupled(new MemResp(p.idBits)))
    val exit = Decoupled(new PmlExit(p))
    val guestIrq = Decoupled(new PmlGuestIrq(p))
    val perf = Output(new PerfCounters(PmlPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new PmlDbg(p))) else None
  })

  private val C = p.contexts
  private val regs = PmlRegs.all(p)
  private def off(name: String): Int = regs.find(_.name == name).get.offset
  private def zeros(n: Int, w: Int) = RegInit(VecInit(Seq.fill(n)(0.U(w.W))))
  private def falses(n: Int) = RegInit(VecInit(Seq.fill(n)(false.B)))

  // ---- registers ---------------------------------------------------------------------------
  private val ctrlPml, ctrlEpml, full, guestFull, writeError = falses(C)
  private val pmlAddr, gpmlAddr = zeros(C, p.paBits - 12)
  private val pmlIndex, gpmlIndex = zeros(C, 16)
  private val trackAsid = zeros(C, p.asidBits)
  private val irqVector = zeros(C, p.irqVectorBits)
  // entries is a power of 2: "index < entries" is "no bit at or above log2(entries)", a wide
  // NOR rather than a carry-chain compare (it feeds the scheduler's pick).
  private def inRange(i: UInt): Bool = i(15, log2Ceil(p.entries)) === 0.U
  /** x < n for a constant n; with n a power of 2 the NOR of the bits at or above log2(n) (a
    * compare with a constant otherwise becomes a carry chain on the ECP5, in the CSR and input
    * decode).
    */
  private def below(x: UInt, n: Int): Bool =
    if (!isPow2(n)) x < n.U else if (log2Ceil(n) >= x.getWidth) true.B else x(x.getWidth - 1, log2Ceil(n)) === 0.U
  /** inRange(i - 1) without the subtraction: i in 1 .. entries. */
  private def inRangeAfterDecrement(i: UInt): Bool = {
    val lowBits = log2Ceil(p.entries)
    (inRange(i) && i(lowBits - 1, 0) =/= 0.U) || i === p.entries.U
  }

  // ---- CSR ---------------------------------------------------------------------------------
  io.csr_req.ready := true.B
  private val creq = io.csr_req.bits
  private val cctx = creq.addr >> log2Ceil(PmlRegs.stride)
  private val coff = creq.addr(log2Ceil(PmlRegs.stride) - 1, 0)
  private val ci = cctx(p.ctxBits - 1, 0)
  private val known = below(cctx, C) && creq.addr(2, 0) === 0.U
  private def at(name: String): Bool = known && coff === off(name).U
  private val exists = regs.map(r => at(r.name)).reduce(_ || _)
  private val csrBad = !exists || (creq.write && at("STATUS"))
  private val csrWrite = io.csr_req.fire && creq.write && !csrBad
  private val rdata = Mux1H(
    regs.map(r => at(r.name)) :+ !exists,
    regs.map { r =>
      r.name match {
        case "CTRL"       => (ctrlEpml(ci) << PmlRegs.Bits.ctrlEpml | ctrlPml(ci) << PmlRegs.Bits.ctrlPml).pad(64)
        case "PML_ADDR"   => Cat(pmlAddr(ci), 0.U(12.W)).pad(64)
        case "PML_INDEX"  => pmlIndex(ci).pad(64)
        case "GPML_ADDR"  => Cat(gpmlAddr(ci), 0.U(12.W)).pad(64)
        case "GPML_INDEX" => gpmlIndex(ci).pad(64)
        case "TRACK_ASID" => trackAsid(ci).pad(64)
        case "IRQ_VECTOR" => irqVector(ci).pad(64)
        case "STATUS" =>
          (writeError(ci) << PmlRegs.Bits.writeError | guestFull(ci) << PmlRegs.Bits.guestFull |
            full(ci) << PmlRegs.Bits.full).pad(64)
        case "ACK" => 0.U(64.W)
      }
    } :+ 0.U(64.W)
  )
  io.csr_resp.valid := RegNext(io.csr_req.fire, false.B)
  io.csr_resp.bits.rdata := RegEnable(Mux(creq.write || csrBad, 0.U, rdata), io.csr_req.fire)
  io.csr_resp.bits.error := RegEnable(csrBad, io.csr_req.fire)
  private val w = creq.wdata
  private val pmlIndexWritten = csrWrite && at("PML_INDEX")
  when(csrWrite) {
    when(at("CTRL")) { ctrlPml(ci) := w(PmlRegs.Bits.ctrlPml); ctrlEpml(ci) := w(PmlRegs.Bits.ctrlEpml) }
    when(at("PML_ADDR")) { pmlAddr(ci) := w(p.paBits - 1, 12) }
    when(at("PML_INDEX")) { pmlIndex(ci) := w(15, 0) }
    when(at("GPML_ADDR")) { gpmlAddr(ci) := w(p.paBits - 1, 12) }
    when(at("GPML_INDEX")) { gpmlIndex(ci) := w(15, 0) }
    when(at("TRACK_ASID")) { trackAsid(ci) := w(p.asidBits - 1, 0) }
    when(at("IRQ_VECTOR")) { irqVector(ci) := w(p.irqVectorBits - 1, 0) }
    when(at("ACK")) {
      when(w(PmlRegs.Bits.full)) { full(ci) := false.B }
      when(w(PmlRegs.Bits.guestFull)) { guestFull(ci) := false.B }
      when(w(PmlRegs.Bits.writeError)) { writeError(ci) := false.B }
    }
  }

  // ---- input: ignore, filter or queue ------------------------------------------------------
  private val queues = Seq.fill(C)(Module(new RegQueue(new PmlEvent(p), p.queueDepth, peekSecond = true)))
  private val ev = io.dirty.bits
  private val ectx = ev.vmid
  private val ek = ectx(p.ctxBits - 1, 0)
  private val ctxKnown = below(ectx, C)
  private val wantPml = ctxKnown && ctrlPml(ek)
  private val wantGuest = ctxKnown && ctrlEpml(ek) && ev.asid === trackAsid(ek)
  private val ignore = !(wantPml || wantGuest)
  private val dedup = Option.when(p.dedupEntries > 0)(new AssocCache(new DedupEntry(p), p.dedupEntries, 1))
  // With the filter, its lookup is pipelined (xlat.common.LookupTiming, latency 2): the match of
  // an accepted event is registered as a hit vector and the event is decided (dropped, or queued
  // and filled in) the next cycle. Without it, acceptance and decision share the cycle.
  private val timing = LookupTiming(if (dedup.isDefined) 2 else 1, sram = false)
  private val acc = Wire(Valid(new PmlAccepted(p)))
  acc.valid := io.dirty.fire
  acc.bits.ctx := ek
  acc.bits.ignore := ignore
  acc.bits.ev.gpa := ev.gpa
  acc.bits.ev.gva := ev.gva
  acc.bits.ev.pml := wantPml
  acc.bits.ev.guest := wantGuest
  /** The decide stage: the accepted event (this cycle's, or last cycle's with the filter). */
  private val dec = Stage(acc, timing.hitReg)
  // A PML_INDEX write forgets its context's pages in the decide stage too, so the filter sees
  // fills and forgets in the order of their cycles (a fill beats a same-cycle forget).
  private val forget = Wire(Valid(UInt(p.ctxBits.W)))
  forget.valid := pmlIndexWritten
  forget.bits := ci
  private val forgetDec = Stage(forget, timing.hitReg)
  /** The decide stage's event hit the filter (a filter hit is decided here). */
  private val dedupHit = WireDefault(false.B)
  private val decDrop = dec.bits.ignore || dedupHit
  private val decFill = dec.valid && !decDrop
  dedup.foreach { c =>
    val matched = c.valid.zip(c.entries).map { case (v, x) => v && x.ctx === ek && x.gpa === ev.gpa }
    val forgot = c.entries.map(x => forgetDec.valid && x.ctx === forgetDec.bits)
    val hits = if (!timing.hitReg) matched
    else {
      // The filter lags acceptance by the decide stage's fill and forget: correct the match for
      // what lands at the end of this cycle, as if it had landed before it.
      val filling = c.fillWayOH.map(_ && decFill)
      val sameKey = dec.bits.ctx === ek && dec.bits.ev.gpa === ev.gpa
      matched.zip(forgot).zip(filling).map { case ((m, f), fl) => Mux(fl, sameKey, m && !f) }
    }
    val (h, _, way) = c.first(Stage.carry(VecInit(hits), timing.hitReg))
    dedupHit := h
    // Only events the logger would log use the filter: an ignored event leaves it untouched.
    when(dec.valid && !dec.bits.ignore && h) { c.touch(way) }
    when(decFill) {
      val x = Wire(new DedupEntry(p)); x.ctx := dec.bits.ctx; x.gpa := dec.bits.ev.gpa
      c.fill(x, 0.U)
    }
    when(forgetDec.valid) { c.invalidate(c.entries.map(_.ctx === forgetDec.bits)) }
  }
  // Without the filter stage `dirty_ready` is "dropped, or its queue has room". With it, the hit
  // is known only in the decide stage, so `dirty_ready` is "ignored, or its queue has room for it
  // after the event in the decide stage" (**decided**, docs/pml-logger.md): the room is reserved
  // at acceptance and the decide stage never waits.
  private val room = queues.zipWithIndex.map { case (q, c) =>
    if (!timing.hitReg) q.io.enq.ready
    else q.io.count +& (dec.valid && !decDrop && dec.bits.ctx === c.U).asUInt < p.queueDepth.U
  }
  io.dirty.ready := (if (timing.hitReg) ignore else decDrop) || VecInit(room)(ek)
  for ((q, c) <- queues.zipWithIndex) {
    q.io.enq.valid := dec.valid && !decDrop && dec.bits.ctx === c.U
    q.io.enq.bits := dec.bits.ev
  }
  // ---- scheduler ---------------------------------------------------------------------------
  private val pmlDone, guestDone = falses(C)
  private val heads = queues.map(_.io.deq)
  private val pmlOwed = (0 until C).map(c => heads(c).valid && heads(c).bits.pml && !pmlDone(c))
  private val guestOwed = (0 until C).map(c => heads(c).valid && heads(c).bits.guest && !guestDone(c))
  // A buffer disabled while its event waited: the part is dropped.
  private val pmlDropped = (0 until C).map(c => pmlOwed(c) && !ctrlPml(c))
  private val guestDropped = (0 until C).map(c => guestOwed(c) && !ctrlEpml(c))
  private val pmlReady = (0 until C).map(c => pmlOwed(c) && ctrlPml(c) && inRange(pmlIndex(c)))
  private val guestReady = (0 until C).map(c => guestOwed(c) && ctrlEpml(c) && inRange(gpmlIndex(c)))

  // outstanding writes: tag -> (context, guest buffer)
  private val tagBusy = falses(p.tags)
  private val tagCtx = Reg(Vec(p.tags, UInt(p.ctxBits.W)))
  private val tagGuest = Reg(Vec(p.tags, Bool()))
  private val freeTag = PriorityEncoder(tagBusy.map(!_))
  private val tagFree = tagBusy.map(!_).reduce(_ || _)

  private val out = RegInit(0.U.asTypeOf(Valid(new MemReq(p.idBits, p.paBits))))
  private val outGuest = RegInit(false.B)
  private val outCtx = RegInit(0.U(p.ctxBits.W))
  io.mem_req.valid := out.valid
  io.mem_req.bits := out.bits
  private val canLoad = (!out.valid || io.mem_req.ready) && tagFree && !csrWrite
  // The pick starts from registers: per context, the part it can load in this cycle (candValid;
  // candGuest: the guest part), computed in the previous cycle. A candidate is exact or absent:
  // when set, that part is owed, enabled and in range and (for the guest part) the PML part is
  // not loadable; it is absent only in the cycle an event reaches the head of an empty queue
  // (docs/pml-logger.md, "Pipeline timing").
  private val candValid, candGuest = falses(C)
  private val pick = new RoundRobin(C, hold = false)(candValid)
  private val pc = pick.index
  // The picked context's part, one-hot over (context, buffer). The output register's fields are
  // AND-OR multiplexed by it, straight from the pick.
  private val selPml = (0 until C).map(c => pick.oneHot(c) && !candGuest(c))
  private val selGuest = (0 until C).map(c => pick.oneHot(c) && candGuest(c))
  private val loadGuest = selGuest.reduce(_ || _)
  private val load = canLoad && pick.valid
  when(io.mem_req.fire) { out.valid := false.B }
  private def sext(gvpn: UInt): UInt = {
    val va = Cat(gvpn, 0.U(12.W))
    if (p.vaBits >= 64) va else Cat(Fill(64 - p.vaBits, va(p.vaBits - 1)), va)
  }
  // index < entries <= 512: the entry stays inside the 4 KiB buffer
  private def entryAddr(base: UInt, index: UInt): UInt = Cat(base, Cat(index(log2Ceil(p.entries) - 1, 0), 0.U(3.W)).pad(12))
  private val sel = selPml ++ selGuest
  when(load) {
    pick.granted()
    out.valid := true.B
    out.bits.id := freeTag
    out.bits.addr := Mux1H(sel, (0 until C).map(c => entryAddr(pmlAddr(c), pmlIndex(c))) ++
      (0 until C).map(c => entryAddr(gpmlAddr(c), gpmlIndex(c))))
    out.bits.write := true.B
    out.bits.wdata := Mux1H(sel, heads.map(h => Cat(h.bits.gpa, 0.U(12.W)).pad(64)) ++ heads.map(h => sext(h.bits.gva)))
    out.bits.wmask := "hff".U
    outGuest := loadGuest
    outCtx := pc
    tagBusy(freeTag) := true.B
    tagCtx(freeTag) := pc
    tagGuest(freeTag) := loadGuest
  }
  for (c <- 0 until C) {
    val issuedPml = load && selPml(c)
    val issuedGuest = load && selGuest(c)
    when(issuedPml) { pmlIndex(c) := pmlIndex(c) - 1.U }
    when(issuedGuest) { gpmlIndex(c) := gpmlIndex(c) - 1.U }
    val pmlFinished = !heads(c).bits.pml || pmlDone(c) || pmlDropped(c) || issuedPml
    val guestFinished = !heads(c).bits.guest || guestDone(c) || guestDropped(c) || issuedGuest
    heads(c).ready := heads(c).valid && pmlFinished && guestFinished
    when(heads(c).fire) { pmlDone(c) := false.B; guestDone(c) := false.B }
      .otherwise {
        when(pmlDropped(c) || issuedPml) { pmlDone(c) := true.B }
        when(guestDropped(c) || issuedGuest) { guestDone(c) := true.B }
      }

    // Next cycle's candidate: the readiness rule above applied to next cycle's state, once
    // assuming this cycle's load is c's candidate and once assuming c loads nothing, so that the
    // pick only selects between the two at the end. A head that leaves is followed by the
    // queue's second entry; an event that enters an empty queue (or one that empties) gets its
    // candidate a cycle later.
    def next(issuedP: Bool, issuedG: Bool): (Bool, Bool) = {
      val pmlFin = !heads(c).bits.pml || pmlDone(c) || pmlDropped(c) || issuedP
      val guestFin = !heads(c).bits.guest || guestDone(c) || guestDropped(c) || issuedG
      val pop = heads(c).valid && pmlFin && guestFin
      val second = queues(c).io.second.get
      val head = Mux(pop, second.bits, heads(c).bits)
      val headValid = Mux(pop, second.valid, heads(c).valid)
      val csrC = csrWrite && ci === c.U
      val pmlOn = Mux(csrC && at("CTRL"), w(PmlRegs.Bits.ctrlPml), ctrlPml(c))
      val guestOn = Mux(csrC && at("CTRL"), w(PmlRegs.Bits.ctrlEpml), ctrlEpml(c))
      val pOk = Mux(csrC && at("PML_INDEX"), inRange(w(15, 0)),
        Mux(issuedP, inRangeAfterDecrement(pmlIndex(c)), inRange(pmlIndex(c))))
      val gOk = Mux(csrC && at("GPML_INDEX"), inRange(w(15, 0)),
        Mux(issuedG, inRangeAfterDecrement(gpmlIndex(c)), inRange(gpmlIndex(c))))
      val pmlNext = headValid && head.pml && !(!pop && (pmlDone(c) || pmlDropped(c) || issuedP)) && pmlOn && pOk
      val guestNext = headValid && head.guest && !(!pop && (guestDone(c) || guestDropped(c) || issuedG)) && guestOn && gOk
      (pmlNext || guestNext, !pmlNext)
    }
    val (idleValid, idleGuest) = next(false.B, false.B)
    val (afterValid, afterGuest) = next(!candGuest(c), candGuest(c))
    val loaded = issuedPml || issuedGuest
    candValid(c) := Mux(loaded, afterValid, idleValid)
    candGuest(c) := Mux(loaded, afterGuest, idleGuest)
  }

  // ---- full buffers: exits and guest interrupts ----------------------------------------------
  private val exitPending, irqPending = falses(C)
  private val irqVectorHeld = zeros(C, p.irqVectorBits)
  for (c <- 0 until C) {
    when(!csrWrite) {
      when(pmlOwed(c) && ctrlPml(c) && !inRange(pmlIndex(c)) && !full(c)) { full(c) := true.B; exitPending(c) := true.B }
      when(guestOwed(c) && ctrlEpml(c) && !inRange(gpmlIndex(c)) && !guestFull(c)) {
        guestFull(c) := true.B; irqPending(c) := true.B
        // a re-raise (ACK while still pending) merges: the offered guestIrq keeps its vector
        when(!irqPending(c)) { irqVectorHeld(c) := irqVector(c) }
      }
    }
  }
  private val exitPick = new RoundRobin(C)(exitPending)
  io.exit.valid := exitPick.valid
  io.exit.bits.vmid := exitPick.index.pad(p.vmidBits)
  io.exit.bits.reason := PmlRegs.exitReason.U
  when(io.exit.fire) { exitPick.granted(); exitPending(exitPick.index) := false.B }
  private val irqPick = new RoundRobin(C)(irqPending)
  io.guestIrq.valid := irqPick.valid
  io.guestIrq.bits.vmid := irqPick.index.pad(p.vmidBits)
  io.guestIrq.bits.vector := irqVectorHeld(irqPick.index)
  when(io.guestIrq.fire) { irqPick.granted(); irqPending(irqPick.index) := false.B }

  // ---- write responses ---------------------------------------------------------------------
  io.mem_resp.ready := true.B
  private val rid = io.mem_resp.bits.id
  private val respKnown = io.mem_resp.valid && tagBusy(rid)
  private val respOk = respKnown && !io.mem_resp.bits.error
  when(respKnown) {
    tagBusy(rid) := false.B
    when(io.mem_resp.bits.error) { writeError(tagCtx(rid)) := true.B }
  }

  // ---- counters ------------------------------------------------------------------------------
  private val partsDropped = PopCount(pmlDropped ++ guestDropped)
  PerfCounters.connect(
    io.perf,
    "logged" -> PerfCounter(respOk && !tagGuest(rid)),
    "guestLogged" -> PerfCounter(respOk && tagGuest(rid)),
    "exits" -> PerfCounter(io.exit.fire),
    "guestIrqs" -> PerfCounter(io.guestIrq.fire),
    "stallCycles" -> PerfCounter(io.dirty.valid && !io.dirty.ready),
    "writeErrors" -> PerfCounter(respKnown && io.mem_resp.bits.error),
    "ignored" -> PerfCounter.add(Mux(dec.valid && dec.bits.ignore, 1.U, 0.U) +& partsDropped),
    "deduped" -> PerfCounter(dec.valid && !dec.bits.ignore && dedupHit),
    "badCsrs" -> PerfCounter(io.csr_req.fire && csrBad),
    "badMemResps" -> PerfCounter(io.mem_resp.valid && !tagBusy(rid))
  )

  io.dbg.foreach { d =>
    d.pmlIndex := pmlIndex; d.gpmlIndex := gpmlIndex; d.pmlAddr := pmlAddr; d.gpmlAddr := gpmlAddr
    d.full := full; d.guestFull := guestFull
    d.queueCount := VecInit(queues.map(_.io.count.pad(8)))
    d.outCtx := outCtx; d.outGuest := outGuest
    d.outstanding := PopCount(tagBusy)
  }
}

/** An accepted event on its way to the decide stage: its context, whether it is ignored, and
  * the parts it owes.
  */
class PmlAccepted(p: PmlParams) extends Bundle {
  val ctx = UInt(p.ctxBits.W)
  val ignore = Bool()
  val ev = new PmlEvent(p)
}

/** A page the dedup filter remembers as logged. */
class DedupEntry(p: PmlParams) extends Bundle {
  val ctx = UInt(p.ctxBits.W)
  val gpa = UInt((p.paBits - 12).W)
}
