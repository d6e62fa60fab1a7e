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
  private def inRange(i: UInt): Bool = i < p.entries.U

  // ---- CSR ---------------------------------------------------------------------------------
  io.csr_req.ready := true.B
  private val creq = io.csr_req.bits
  private val cctx = creq.addr >> log2Ceil(PmlRegs.stride)
  private val coff = creq.addr(log2Ceil(PmlRegs.stride) - 1, 0)
  private val ci = cctx(p.ctxBits - 1, 0)
  private val known = cctx < C.U && creq.addr(2, 0) === 0.U
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
  private val queues = Seq.fill(C)(Module(new RegQueue(new PmlEvent(p), p.queueDepth)))
  private val ev = io.dirty.bits
  private val ectx = ev.vmid
  private val ek = ectx(p.ctxBits - 1, 0)
  private val ctxKnown = if (p.vmidBits > p.ctxBits || (1 << p.ctxBits) > C) ectx < C.U else true.B
  private val wantPml = ctxKnown && ctrlPml(ek)
  private val wantGuest = ctxKnown && ctrlEpml(ek) && ev.asid === trackAsid(ek)
  private val dedup = Option.when(p.dedupEntries > 0)(new AssocCache(new DedupEntry(p), p.dedupEntries, 1))
  private val (dedupHit, _, dedupWay) = dedup match {
    case Some(c) => c.first(c.valid.zip(c.entries).map { case (v, x) => v && x.ctx === ek && x.gpa === ev.gpa })
    case None    => (false.B, 0.U.asTypeOf(new DedupEntry(p)), 0.U)
  }
  private val ignore = !(wantPml || wantGuest)
  private val drop = ignore || dedupHit
  private val enqReady = VecInit(queues.map(_.io.enq.ready))(ek)
  io.dirty.ready := drop || enqReady
  for ((q, c) <- queues.zipWithIndex) {
    q.io.enq.valid := io.dirty.valid && !drop && ek === c.U
    q.io.enq.bits.gpa := ev.gpa
    q.io.enq.bits.gva := ev.gva
    q.io.enq.bits.pml := wantPml
    q.io.enq.bits.guest := wantGuest
  }
  dedup.foreach { c =>
    // Only events the logger would log use the filter: an ignored event leaves it untouched.
    when(io.dirty.fire && !ignore && dedupHit) { c.touch(dedupWay) }
    when(io.dirty.fire && !drop) {
      val x = Wire(new DedupEntry(p)); x.ctx := ek; x.gpa := ev.gpa
      c.fill(x, 0.U)
    }
    when(pmlIndexWritten) { c.invalidate(c.entries.map(_.ctx === ci)) }
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
  private val pick = new RoundRobin(C)((0 until C).map(c => pmlReady(c) || guestReady(c)))
  private val pc = pick.index
  private val loadGuest = !VecInit(pmlReady)(pc)
  private val load = canLoad && pick.valid
  when(io.mem_req.fire) { out.valid := false.B }
  private def sext(gvpn: UInt): UInt = {
    val va = Cat(gvpn, 0.U(12.W))
    if (p.vaBits >= 64) va else Cat(Fill(64 - p.vaBits, va(p.vaBits - 1)), va)
  }
  when(load) {
    pick.granted()
    val hb = VecInit(heads.map(_.bits))(pc)
    val index = Mux(loadGuest, gpmlIndex(pc), pmlIndex(pc))
    val base = Mux(loadGuest, gpmlAddr(pc), pmlAddr(pc))
    out.valid := true.B
    out.bits.id := freeTag
    // index < entries <= 512: the entry stays inside the 4 KiB buffer
    out.bits.addr := Cat(base, Cat(index(log2Ceil(p.entries) - 1, 0), 0.U(3.W)).pad(12))
    out.bits.write := true.B
    out.bits.wdata := Mux(loadGuest, sext(hb.gva), Cat(hb.gpa, 0.U(12.W)).pad(64))
    out.bits.wmask := "hff".U
    outGuest := loadGuest
    outCtx := pc
    tagBusy(freeTag) := true.B
    tagCtx(freeTag) := pc
    tagGuest(freeTag) := loadGuest
    when(loadGuest) { gpmlIndex(pc) := gpmlIndex(pc) - 1.U }.otherwise { pmlIndex(pc) := pmlIndex(pc) - 1.U }
  }
  for (c <- 0 until C) {
    val issuedPml = load && pc === c.U && !loadGuest
    val issuedGuest = load && pc === c.U && loadGuest
    val pmlFinished = !heads(c).bits.pml || pmlDone(c) || pmlDropped(c) || issuedPml
    val guestFinished = !heads(c).bits.guest || guestDone(c) || guestDropped(c) || issuedGuest
    heads(c).ready := heads(c).valid && pmlFinished && guestFinished
    when(heads(c).fire) { pmlDone(c) := false.B; guestDone(c) := false.B }
      .otherwise {
        when(pmlDropped(c) || issuedPml) { pmlDone(c) := true.B }
        when(guestDropped(c) || issuedGuest) { guestDone(c) := true.B }
      }
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
    "ignored" -> PerfCounter.add(Mux(io.dirty.fire && ignore, 1.U, 0.U) +& partsDropped),
    "deduped" -> PerfCounter(io.dirty.fire && !ignore && dedupHit),
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

/** A page the dedup filter remembers as logged. */
class DedupEntry(p: PmlParams) extends Bundle {
  val ctx = UInt(p.ctxBits.W)
  val gpa = UInt((p.paBits - 12).W)
}
