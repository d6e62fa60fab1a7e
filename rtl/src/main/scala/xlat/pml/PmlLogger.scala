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
  *    computed a cycle ahead for both outcomes of that cycle's pick; every per-context register
  *    the pick reaches is a 2:1 choice by that context's "loads its candidate", and the parts of
  *    the queued events are read from a shift register beside each queue (head, second), not
  *    through the queue's read multiplexer; the pick itself and "a tag is free" are registers
  *    too, computed a cycle ahead over the two outcomes of the cycle (no load, or the pick
  *    loaded; a CSR write of the cycle is not in it, so no write is loaded in the cycle after
  *    one either); each index's range checks, each tag's context
  *    (one-hot) and the exit / guest-interrupt offers (a held one-hot) are registers as well;
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
  * `csr_req` is always ready. An accepted request is decoded into the CSR stage registers and
  * applies in the next cycle, where it is also answered on `csr_resp` (one cycle after the
  * request; a read returns the registers at the start of that cycle). In a cycle a CSR write
  * applies no log write is loaded and no exit raised, so software writes and index decrements
  * never meet; no log write is loaded in the next cycle either (the pick computed in the
  * write's cycle does not see it).
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
  /** The output register's write is selected in this many slices of its address and data, each
    * by its own copies of the select's drivers (fifteenth round, "Pipeline timing").
    */
  private val OutSlices = 4
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
  /** inRange(i - 2) without the subtraction: i in 2 .. entries + 1. */
  private def inRangeAfterTwo(i: UInt): Bool = {
    val lowBits = log2Ceil(p.entries)
    val twoOrMore = if (lowBits > 1) i(lowBits - 1, 1) =/= 0.U else false.B
    (inRange(i) && twoOrMore) || i === p.entries.U || i === (p.entries + 1).U
  }
  // Each index's range checks as registers beside it (`inRange(index)`, and `inRange(index - 1)`
  // for the candidate after a load), so the scheduler's candidates, the pick computed a cycle
  // ahead and the exit / guest-interrupt raise start from one flop instead of a NOR over the
  // index's high bits. They follow the index: a CSR write sets both from the written value, a
  // decrement shifts them (the new "after a decrement" is inRange(index - 2), computed beside
  // the index in parallel with the scheduler).
  // (reset: index 0, in range; index - 1 = 0xFFFF, out of range)
  private val pmlIn, gpmlIn = RegInit(VecInit(Seq.fill(C)(true.B)))
  private val pmlInDec, gpmlInDec = falses(C)

  // ---- CSR ---------------------------------------------------------------------------------
  // The CSR input stage (issue 9, sixth round; docs/pml-logger.md, "Pipeline timing"): `csr_req`
  // is decoded into registers and the access applies in the next cycle, where it is answered on
  // `csr_resp` (still one cycle after the request). Everything below sees only the staged
  // access: the register write enables (per register and context), the written value's range
  // checks and the context one-hot are flops, so no path starts at the `csr_req` input beyond
  // this decode. A read returns the registers at the start of the cycle it applies in.
  io.csr_req.ready := true.B
  private val creq = io.csr_req.bits
  private val cctxIn = creq.addr >> log2Ceil(PmlRegs.stride)
  private val coffIn = creq.addr(log2Ceil(PmlRegs.stride) - 1, 0)
  private val ciIn = cctxIn(p.ctxBits - 1, 0)
  private val knownIn = below(cctxIn, C) && creq.addr(2, 0) === 0.U
  private def atIn(name: String): Bool = knownIn && coffIn === off(name).U
  private val existsIn = regs.map(r => atIn(r.name)).reduce(_ || _)
  private val csrBadIn = !existsIn || (creq.write && atIn("STATUS"))
  private val writingIn = io.csr_req.fire && creq.write
  /** The staged access: valid (accepted last cycle), a write, and its decode. */
  private val csrValid = RegNext(io.csr_req.fire, false.B)
  private val csrWriting = RegNext(writingIn, false.B)
  private val csrBad = RegNext(csrBadIn, false.B)
  private val csrReadSel = RegNext(VecInit(regs.map(r => atIn(r.name)) :+ !existsIn))
  private val atReg = regs.map(r => r.name -> RegNext(atIn(r.name), false.B)).toMap
  private def at(name: String): Bool = atReg(name)
  private val ci = RegNext(ciIn)
  private val ciOH = (0 until C).map(c => RegNext(ciIn === c.U, false.B))
  // the data bits any register takes (paBits >= 32 covers the indices, ASID, vector, CTRL, ACK)
  private val w = RegNext(creq.wdata(p.paBits - 1, 0))
  // the written index's range checks, computed from the input (registered beside it)
  private val wIn = RegNext(inRange(creq.wdata(15, 0)))
  private val wInDec = RegNext(inRangeAfterDecrement(creq.wdata(15, 0)))
  /** Per context, "this staged access writes register `name` of context c" (a register's write
    * enable from one flop; `at` already checks the context and the alignment; STATUS has no
    * write, so this is csrWrite && at(name) && ci === c without the whole-map decode).
    */
  private val weReg = regs.filter(_.name != "STATUS").map { r =>
    r.name -> (0 until C).map(c => RegNext(writingIn && atIn(r.name) && ciIn === c.U, false.B))
  }.toMap
  private def we(name: String, c: Int): Bool = weReg(name)(c)
  private val csrWrite = csrWriting && !csrBad
  // The read data's register one-hot for a good read only (fourteenth round; no cycle change): a
  // write or a bad access has none set, so `rdata` is 0 for them without a multiplexer behind
  // the AND-OR (`csrReadSel`, with its bad-access entry, stays for the proofs' view).
  private val rdSel = RegNext(VecInit(regs.map(r => !creq.write && atIn(r.name))))
  // The read multiplexer by the staged context is built in four slices of the read data (bits
  // 0-7, 8-15, 16-33, 34-51 with paBits 52: about 35 multiplexed bits each), each by its own copy of the
  // context register (xlat.common.RegCopies.many; fifteenth round, no cycle change): the one
  // `ci` drove the 8-way multiplexer of every readable bit (~140 of them), a long net in the
  // routed critical paths of the tenth, thirteenth and fourteenth rounds (`ci` -> `csr_resp`).
  private val ciS = RegCopies.many(ciIn, OutSlices, "ciCopy")
  // (every readable bit is below paBits, an address's top; paBits >= 32)
  private val rdMid = 16 + (p.paBits - 16) / 2
  private val rdSlices = Seq((0, 8), (8, 16), (16, rdMid), (rdMid, p.paBits))
  /** Register `name` of context c as read (64 bits, constant context: no multiplexer). */
  private def readValue(name: String, c: Int): UInt = name match {
    case "CTRL"       => (ctrlEpml(c) << PmlRegs.Bits.ctrlEpml | ctrlPml(c) << PmlRegs.Bits.ctrlPml).pad(64)
    case "PML_ADDR"   => Cat(pmlAddr(c), 0.U(12.W)).pad(64)
    case "PML_INDEX"  => pmlIndex(c).pad(64)
    case "GPML_ADDR"  => Cat(gpmlAddr(c), 0.U(12.W)).pad(64)
    case "GPML_INDEX" => gpmlIndex(c).pad(64)
    case "TRACK_ASID" => trackAsid(c).pad(64)
    case "IRQ_VECTOR" => irqVector(c).pad(64)
    case "STATUS" =>
      (writeError(c) << PmlRegs.Bits.writeError | guestFull(c) << PmlRegs.Bits.guestFull |
        full(c) << PmlRegs.Bits.full).pad(64)
    case "ACK" => 0.U(64.W)
  }
  // slice [lo, hi) of every register, each multiplexed by the slice's context copy k
  private val rdata = Cat(rdSlices.zip(ciS).reverse.map { case ((lo, hi), k) =>
    Mux1H(rdSel, regs.map(r => VecInit((0 until C).map(c => readValue(r.name, c)(hi - 1, lo)))(k)))
  }).pad(64)
  // answered in the cycle the access applies: the registers at the start of that cycle
  io.csr_resp.valid := csrValid
  io.csr_resp.bits.rdata := rdata
  io.csr_resp.bits.error := csrBad
  private val pmlIndexWritten = csrWriting && at("PML_INDEX")
  for (c <- 0 until C) {
    when(we("CTRL", c)) { ctrlPml(c) := w(PmlRegs.Bits.ctrlPml); ctrlEpml(c) := w(PmlRegs.Bits.ctrlEpml) }
    when(we("PML_ADDR", c)) { pmlAddr(c) := w(p.paBits - 1, 12) }
    when(we("PML_INDEX", c)) { pmlIndex(c) := w(15, 0); pmlIn(c) := wIn; pmlInDec(c) := wInDec }
    when(we("GPML_ADDR", c)) { gpmlAddr(c) := w(p.paBits - 1, 12) }
    when(we("GPML_INDEX", c)) { gpmlIndex(c) := w(15, 0); gpmlIn(c) := wIn; gpmlInDec(c) := wInDec }
    when(we("TRACK_ASID", c)) { trackAsid(c) := w(p.asidBits - 1, 0) }
    when(we("IRQ_VECTOR", c)) { irqVector(c) := w(p.irqVectorBits - 1, 0) }
    when(we("ACK", c)) {
      when(w(PmlRegs.Bits.full)) { full(c) := false.B }
      when(w(PmlRegs.Bits.guestFull)) { guestFull(c) := false.B }
      when(w(PmlRegs.Bits.writeError)) { writeError(c) := false.B }
    }
  }

  // ---- input: ignore, filter or queue ------------------------------------------------------
  // With the decide stage, each queue's slot write enables are registers computed a cycle ahead
  // (RegQueue writeAhead, issue 9, ninth round; no cycle change), one copy per ~22 data bits:
  // the credit below guarantees that an event entering a queue in cycle t+1 had room in cycle t
  // without that cycle's dequeue (it was accepted against the count and the decide stage's
  // event), which is what writeAhead asks. Without the stage the enable stays "not full".
  // Not with the filter (measured, docs/pml-logger.md "FPGA", ninth round: there the slot
  // enable is not critical and the 128 enable flops cost pml_dedup 3.8 / 6.1 MHz at seeds 1 / 2).
  private val eventBits = (new PmlEvent(p)).getWidth
  // Each queue's head is read through four copies of its head pointer (`RegQueue` `readCopies`,
  // issue 9, fifteenth round; no cycle change): the pointer drove the read multiplexer of all
  // 85 bits of the event, a routed critical path into the output register. The copies follow
  // the output's data slices (bits 0-31 and 32-63 of the write's data): copy 0 reads the GPA
  // bits of the low slice, 1 the GVA bits of the low slice, 2 and 3 those of the high slice.
  private def eventCopyOf(field: String, bit: Int): Int = field match {
    case "gpa" => if (bit + 12 >= 32) 2 else 0
    case "gva" => if (bit + 12 >= 32) 3 else 1
    case _     => 0
  }
  private val queues = Seq.fill(C)(Module(new RegQueue(new PmlEvent(p), p.queueDepth,
    writeAhead = if (p.staged && p.dedupEntries == 0) (eventBits + 21) / 22 else 0, readCopies = OutSlices,
    readCopyOf = Some(eventCopyOf))))
  private val ev = io.dirty.bits
  private val ectx = ev.vmid
  private val ek = ectx(p.ctxBits - 1, 0)
  private val ctxKnown = below(ectx, C)
  // Per context, whether it wants the event (its CTRL bits, and its TRACK_ASID compared with the
  // event's asid), computed for every context in parallel and selected by vmid at the end: the
  // asid compare no longer follows a TRACK_ASID multiplexer, and the enqueue of context c needs
  // no multiplexer at all.
  private val ctxSel = (0 until C).map(c => ctxKnown && ek === c.U)
  private val wantPmlOf = (0 until C).map(c => ctrlPml(c))
  private val wantGuestOf = (0 until C).map(c => ctrlEpml(c) && trackAsid(c) === ev.asid)
  private val wantPml = Mux1H(ctxSel, wantPmlOf)
  private val wantGuest = Mux1H(ctxSel, wantGuestOf)
  private val ignore = !(wantPml || wantGuest)
  private val dedup = Option.when(p.dedupEntries > 0)(new AssocCache(new DedupEntry(p), p.dedupEntries, 1))
  // With the input stage (always with the filter), the filter's lookup is pipelined
  // (xlat.common.LookupTiming, latency 2): the match of an accepted event is registered as a hit
  // vector and the event is decided (dropped, or queued and filled in) the next cycle. Without
  // it, acceptance and decision share the cycle.
  // `inputStage` (issue 9, eighth round; a cycle change, docs/pml-logger.md "Pipeline timing")
  // gives the configurations without a filter the same decide stage: the accepted event is
  // registered and enters its queue a cycle later, so the input's classification (the asid
  // compare, the vmid select) ends at that register instead of reaching the queue's count, the
  // parts' shift registers and the scheduler's registers computed a cycle ahead.
  private val timing = LookupTiming(if (p.staged) 2 else 1, sram = false)
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
  // the credits (below, with `dirty_ready`)
  private val wantsOf = (0 until C).map(c => wantPmlOf(c) || wantGuestOf(c))
  private val room = Wire(Vec(C, Bool()))
  private val decHeld = (0 until C).map(c => RegNext(io.dirty.valid && ctxSel(c) && wantsOf(c) && room(c), false.B))
  // The decide stage's event as the logic reads it (issue 9, fifteenth round; no cycle change):
  // "it is ignored" and "it is not ignored" (`decLive`) without the stage's valid, whose input
  // is `dirty` fire and so `dirty_ready`'s select by vmid. An ignored event is always accepted
  // (`dirty_ready` is high for it), so the first is "valid and ignored" registered; an accepted
  // event that is not ignored holds exactly one credit, so the second is the OR of the credits,
  // in parallel with the filter's hit (itself an OR over a registered hit vector). The stage's
  // valid (`dec.valid`) and ignore bit are left to the proofs' view (`dbg_decValid`, `dbg_decIgnore`).
  private val decIgnored = Stage.carry(io.dirty.valid && ignore, timing.hitReg)
  private val decLive = if (timing.hitReg) decHeld.reduce(_ || _) else dec.valid && !dec.bits.ignore
  private val decFill = decLive && !dedupHit
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
    when(decLive && h) { c.touch(way) }
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
  // The reservation is a credit registered at acceptance (issue 9, eighth round; a cycle
  // change, **decided**): `decHeld(c)` is "the decide stage holds a non-ignored event of
  // context c", whatever the filter decides for it. So `dirty_ready` starts from registers (the
  // queue counts and this one-hot) and the filter's hit no longer reaches it (the routed
  // critical path filter hit -> decide-stage enqueue -> room -> dirty_ready); the cost is that
  // an event the filter drops holds its context's last free slot for its decide cycle.
  // `dirty_ready` is computed per context in parallel ("does not want it, or has room") and
  // selected by vmid through a multiplexer tree at the end (issue 9, tenth round; no cycle
  // change): the same value as "ignored, or the context's room" by the vmid one-hot, without the
  // one-hot's decode and AND-OR behind the asid compare. The credit of context c is also
  // written per context ("valid, context c, c wants it, c has room" is "accepted, not ignored,
  // context c"), so it does not wait for `dirty_ready`'s select.
  // the decide stage's event enters queue c: held by c's credit and not dropped by the filter
  // (without the filter the credit is exactly "the decide stage holds c's event")
  private val decEnq = (0 until C).map(c => decHeld(c) && !dedupHit)
  for ((q, c) <- queues.zipWithIndex) {
    room(c) := (if (!timing.hitReg) q.io.enq.ready
    else Mux(decHeld(c), q.io.count < (p.queueDepth - 1).U, q.io.count < p.queueDepth.U))
  }
  private val readyOf = (0 until (1 << p.ctxBits)).map(c => if (c < C) !wantsOf(c) || room(c) else true.B)
  io.dirty.ready := !ctxKnown || VecInit(readyOf)(ek)
  for ((q, c) <- queues.zipWithIndex) {
    // Without the filter the decide stage is this cycle's acceptance: the same condition as
    // "accepted, not ignored, context c", written per context (no vmid multiplexer).
    q.io.enq.valid := (if (timing.hitReg) decEnq(c)
    else io.dirty.valid && ctxSel(c) && (wantPmlOf(c) || wantGuestOf(c)) && room(c))
    q.io.enq.bits := dec.bits.ev
    if (!timing.hitReg) {
      // only events of context c enter queue c: its parts are c's own "wants", with no vmid
      // multiplexer in front of the parts' registers
      q.io.enq.bits.pml := wantPmlOf(c)
      q.io.enq.bits.guest := wantGuestOf(c)
    }
  }
  // ---- scheduler ---------------------------------------------------------------------------
  private val pmlDone, guestDone = falses(C)
  private val heads = queues.map(_.io.deq)
  // The parts each queued event owes, also kept per context as a shift register in step with
  // the queue (entry 0 the head, 1 the second): the scheduler reads the head's and the second's
  // parts from flops, not through the queue's read multiplexer (the queue's copy is unused).
  private val D = p.queueDepth
  private val partPml, partGuest = Seq.fill(C)(Reg(Vec(D, Bool())))
  private val headPml = (0 until C).map(c => partPml(c)(0))
  private val headGuest = (0 until C).map(c => partGuest(c)(0))
  for (c <- 0 until C) {
    val q = queues(c)
    for ((part, in) <- Seq((partPml(c), q.io.enq.bits.pml), (partGuest(c), q.io.enq.bits.guest)); i <- 0 until D) {
      // the slot at the count (or below it after a dequeue) takes the enqueued event's parts; a
      // free slot is never read, so it may take them whether or not the event enters
      val shifted = if (i + 1 < D) Mux((i + 1).U < q.io.count, part(i + 1), in) else in
      val kept = Mux(i.U < q.io.count, part(i), in)
      part(i) := Mux(q.io.deq.fire, shifted, kept)
    }
  }
  private val pmlOwed = (0 until C).map(c => heads(c).valid && headPml(c) && !pmlDone(c))
  // The idle candidate's inputs as registers beside the queue count (issue 9, seventh round),
  // computed a cycle ahead like the candidates: per context, whether the head still has its
  // PML (guest) part to log with that buffer enabled (`pRemR` = pmlOwed && ctrlPml, `gRemR` =
  // guestOwed && ctrlEpml), and whether a second entry exists and owes its PML (guest) part
  // (`secondPmlR`, `secondGuestR`). So "the head leaves when idle" and the next idle candidate
  // are one level from flops instead of behind the queue count's decode, and the pick's round
  // robins start there. Each is a 2:1 choice by "loads its candidate" between two
  // values computed from registers and this cycle's enqueue (an event that enters the head or
  // the second place). The proofs check each against its definition (invariant I8).
  private val pRemR, gRemR, secondPmlR, secondGuestR = falses(C)
  private val guestOwed = (0 until C).map(c => heads(c).valid && headGuest(c) && !guestDone(c))
  // A buffer disabled while its event waited: the part is dropped.
  private val pmlDropped = (0 until C).map(c => pmlOwed(c) && !ctrlPml(c))
  private val guestDropped = (0 until C).map(c => guestOwed(c) && !ctrlEpml(c))

  // outstanding writes: tag -> (context, guest buffer)
  private val tagBusy = falses(p.tags)
  private val tagGuest = Reg(Vec(p.tags, Bool()))
  // The context of each tag, one-hot (tagCtxOH(t)(c): tag t's write is context c's), so a
  // response's error sets writeError(c) through an OR over the tags (the response id decoded
  // one-hot) instead of a 16:1 multiplexer of a binary context followed by a context decode.
  private val tagCtxOH = Reg(Vec(p.tags, Vec(C, Bool())))
  // the first free tag, one-hot (each tag's "loaded" is one AND beside the priority, no
  // decode of the binary tag) and binary (mem_req.id)
  private val freeTagOH = PriorityEncoderOH(tagBusy.map(!_))
  private val freeTag = OHToUInt(freeTagOH)
  // "A tag is free" as a register (a count of busy tags, updated by the load and the response),
  // so the tag table does not feed `canLoad` and through it every context's state.
  private val busyCount = RegInit(0.U(log2Ceil(p.tags + 1).W))
  private val tagFree = RegInit(true.B)

  // The output register: valid, the tag and the write's context / buffer load with the write.
  // The wide address and data have no enable at all (issue 9, seventh round): `outFresh` takes
  // the picked candidate's write every cycle, `outHold` takes what `mem_req` presents every
  // cycle, and `mem_req` presents `outHold` in a cycle after one whose write was not handed
  // over (`outStalled`, a register), else `outFresh`. So the write loaded last cycle is in
  // `outFresh` and a write held over is in `outHold`; neither 100-bit register has a clock
  // enable driven by `mem_req_ready` (the input's fan-out was in front of `canLoad`, the routed
  // critical path of the sixth round), and the choice between them is one level from flops.
  // A free register's payload is not presented (valid low); write / wmask are constants.
  private val outValid = RegInit(false.B)
  private val outId = RegInit(0.U(p.idBits.W))
  // `outFresh` is kept in two halves (issue 9, fourteenth round; no cycle change): the
  // candidates of contexts 0 .. C/2-1 and of C/2 .. C-1 are each multiplexed by their half of the
  // pick into a register of their own (a 4-way AND-OR each in pml_default, the pick's half
  // beside them as `outFreshHi`), and the 2:1 of the halves is made behind the registers, in
  // front of `mem_req` with the hold choice. So the pick -> AND-OR -> register paths (the routed
  // critical paths of the thirteenth round, 86-89 % routing into the one 116-bit register) are
  // one level shorter and end in registers that can sit beside their four contexts.
  private val outFreshLoAddr, outFreshHiAddr, outHoldAddr = Reg(UInt(p.paBits.W))
  private val outFreshLoData, outFreshHiData, outHoldData = Reg(UInt(64.W))
  // The output's slices (fifteenth round; no cycle change): address bits [0, a) and [a, paBits),
  // data bits [0, 32) and [32, 64); each slice is selected by its own copies of the select's
  // drivers (xlat.common.RegCopies.many: the pick, each context's candGuest, each queue's head
  // pointer, and behind the registers "the pick was in the upper half" and the stall), so no
  // driver has more than ~30 loads of the 116 (each had ~116, the routed critical paths of the
  // fourteenth round: long nets from the select's flop to the half's AND-OR).
  private val addrCut = p.paBits / 2
  private val sliceBits = Seq((0, addrCut), (addrCut, p.paBits), (0, 32), (32, 64))
  private def slices(x: UInt, addr: Boolean): Seq[UInt] =
    (if (addr) sliceBits.take(2) else sliceBits.drop(2)).map { case (lo, hi) => x(hi - 1, lo) }
  private val outFreshHiS = Wire(Vec(OutSlices, Bool()))
  private val outStalledS = RegCopies.many((outValid && !io.mem_req.ready).asUInt, OutSlices, "outStalledCopy").map(_.asBool)
  private def outSlice(s: Int, hold: UInt, hi: UInt, lo: UInt, addr: Boolean): UInt = {
    val k = if (addr) s else s - 2
    Mux(outStalledS(s), slices(hold, addr)(k), Mux(outFreshHiS(s), slices(hi, addr)(k), slices(lo, addr)(k)))
  }
  private val outAddr = Cat(outSlice(1, outHoldAddr, outFreshHiAddr, outFreshLoAddr, true),
    outSlice(0, outHoldAddr, outFreshHiAddr, outFreshLoAddr, true))
  private val outData = Cat(outSlice(3, outHoldData, outFreshHiData, outFreshLoData, false),
    outSlice(2, outHoldData, outFreshHiData, outFreshLoData, false))
  outHoldAddr := outAddr
  outHoldData := outData
  private val outGuest = RegInit(false.B)
  private val outCtx = RegInit(0.U(p.ctxBits.W))
  io.mem_req.valid := outValid
  io.mem_req.bits.id := outId
  io.mem_req.bits.addr := outAddr
  io.mem_req.bits.write := true.B
  io.mem_req.bits.wdata := outData
  io.mem_req.bits.wmask := "hff".U
  private val outFree = !outValid || io.mem_req.ready
  // No load in the cycle a CSR write applies, nor in the next one (issue 9, thirteenth round; a
  // cycle change, **decided**, docs/pml-logger.md "Pipeline timing"): the pick computed in the
  // write's cycle for the next one ignores the write (it starts from registers only, no
  // CSR-written candidate by the context one-hot in front of the round robin), so that pick is
  // not used; the one computed in the next cycle sees the written registers.
  private val csrWrote = RegNext(csrWrite, false.B)
  private val canLoad = outFree && tagFree && !csrWrite && !csrWrote
  // The pick starts from registers: per context, the part it can load in this cycle (candValid;
  // candGuest: the guest part), computed in the previous cycle. A candidate is exact or absent:
  // when set, that part is owed, enabled and in range and (for the guest part) the PML part is
  // not loadable; it is absent only in the cycle an event reaches the head of an empty queue
  // (docs/pml-logger.md, "Pipeline timing").
  private val candValid, candGuest = falses(C)
  // Next cycle's candGuest and pick (assigned below), for their slice copies (fifteenth round):
  // copy s of each drives only slice s of the output register's select.
  private val candGuestNext, pickNext = Wire(Vec(C, Bool()))
  private val candGuestS = (0 until C).map(c =>
    RegCopies.many(candGuestNext(c).asUInt, OutSlices, s"candGuestCopy_$c").map(_.asBool))
  private val pickS = RegCopies.many(pickNext.asUInt, OutSlices, "pickCopy")
  // The pick and "a load happens" (anyPick) are computed from next cycle's candidates directly,
  // so candValid itself drives only the proofs' view (dbg_candValid; invariants I5, I6: the pick
  // is the round robin over the candidates, each exact or absent); without formalPorts it is
  // removed.
  // The round robin over the candidates (xlat.common.RoundRobin without hold: the first candidate
  // after the last context granted, `afterLast` its thermometer) is itself a register, `pickOH`,
  // computed a cycle ahead from next cycle's candidates and `afterLast` (below). Always
  // pickOH = firstAfter(candValid, afterLast), so the cycles are the round robin's. Beside it,
  // `anyPick` (a candidate exists, so the pick is not empty) is a register too, so that "a load
  // happens" is one level from flops.
  private val afterLast = falses(C)
  private val pickOH = falses(C)
  private val anyPick = RegInit(false.B)
  private val pc = OHToUInt(pickOH)
  // The output register's fields are AND-OR multiplexed by the registered one-hot pick; the part
  // of the picked context is its candGuest.
  private val loadGuest = Mux1H(pickOH, candGuest)
  private val load = canLoad && anyPick
  when(io.mem_req.fire) { outValid := false.B }
  private def sext(gvpn: UInt): UInt = {
    val va = Cat(gvpn, 0.U(12.W))
    if (p.vaBits >= 64) va else Cat(Fill(64 - p.vaBits, va(p.vaBits - 1)), va)
  }
  // index < entries <= 512: the entry stays inside the 4 KiB buffer
  private def entryAddr(base: UInt, index: UInt): UInt = Cat(base, Cat(index(log2Ceil(p.entries) - 1, 0), 0.U(3.W)).pad(12))
  // Each context's candidate write (address and data of its candidate part) is selected by its
  // candGuest register beside the pick; the pick then multiplexes 8 ways, not 16.
  // Slice s of context c's candidate write is selected by c's candGuest copy s, and the half's
  // AND-OR of slice s by the pick's copy s.
  private def candAddr(c: Int, s: Int): UInt = slices(
    Mux(candGuestS(c)(s), entryAddr(gpmlAddr(c), gpmlIndex(c)), entryAddr(pmlAddr(c), pmlIndex(c))), addr = true)(s)
  private def candData(c: Int, s: Int): UInt = {
    val h = heads(c)
    slices(Mux(candGuestS(c)(s), sext(h.bits.gva), Cat(h.bits.gpa, 0.U(12.W)).pad(64)), addr = false)(s - 2)
  }
  private val pickLo = 0 until (C + 1) / 2
  private val pickHi = (C + 1) / 2 until C
  private def half(r: Seq[Int], s: Int, x: (Int, Int) => UInt): UInt = {
    val (lo, hi) = sliceBits(s)
    if (r.isEmpty) 0.U((hi - lo).W) else Mux1H(r.map(c => pickS(s)(c)), r.map(c => x(c, s)))
  }
  outFreshLoAddr := Cat(half(pickLo, 1, candAddr), half(pickLo, 0, candAddr))
  outFreshHiAddr := Cat(half(pickHi, 1, candAddr), half(pickHi, 0, candAddr))
  outFreshLoData := Cat(half(pickLo, 3, candData), half(pickLo, 2, candData))
  outFreshHiData := Cat(half(pickHi, 3, candData), half(pickHi, 2, candData))
  outFreshHiS := VecInit(RegCopies.many(pickHi.map(pickOH(_)).foldLeft(false.B)(_ || _).asUInt, OutSlices,
    "outFreshHiCopy").map(_.asBool))
  when(load) {
    outValid := true.B
    outId := freeTag
    outGuest := loadGuest
    outCtx := pc
  }
  for (t <- 0 until p.tags) when(load && freeTagOH(t)) {
    tagBusy(t) := true.B
    tagCtxOH(t) := pickOH
    tagGuest(t) := loadGuest
  }
  private val candAfter, candIdleReg = Wire(Vec(C, Bool()))
  for (c <- 0 until C) {
    // c loads its candidate this cycle: the one signal of the pick that reaches c's state; every
    // register of c below is a 2:1 choice, by it, between two values computed from registers
    // (and this cycle's CSR write) in parallel with the pick.
    val loaded = canLoad && pickOH(c)
    val issuedPml = loaded && !candGuest(c)
    val issuedGuest = loaded && candGuest(c)
    // never in a CSR-write cycle (no load then): the CSR write's updates above never meet these
    when(issuedPml) { pmlIndex(c) := pmlIndex(c) - 1.U; pmlIn(c) := pmlInDec(c); pmlInDec(c) := inRangeAfterTwo(pmlIndex(c)) }
    when(issuedGuest) {
      gpmlIndex(c) := gpmlIndex(c) - 1.U; gpmlIn(c) := gpmlInDec(c); gpmlInDec(c) := inRangeAfterTwo(gpmlIndex(c))
    }
    val h = heads(c)
    val q = queues(c)
    // The head's parts still to log, before this cycle's load (a part of a disabled buffer is
    // dropped this cycle, so it is not "remaining"): registers (pRemR = pmlOwed && ctrlPml).
    val pRem = pRemR(c)
    val gRem = gRemR(c)
    // The head leaves when no part remains after this cycle. Loaded, the candidate's part is
    // done (a candidate is exact: the loaded part was remaining), so the other part decides.
    val popIdle = h.valid && !pRem && !gRem
    val popLoaded = h.valid && Mux(candGuest(c), !pRem, !gRem)
    h.ready := Mux(loaded, popLoaded, popIdle)
    // Next cycle's pRemR / gRemR / secondPmlR / secondGuestR. An event enqueued this cycle is
    // the next head when the queue is empty (or holds one entry that leaves), the next second
    // when it holds one entry that stays (or two and the head leaves); the third entry moves
    // up to second when the head leaves.
    val cnt = q.io.count
    val enqPml = q.io.enq.fire && q.io.enq.bits.pml
    val enqGuest = q.io.enq.fire && q.io.enq.bits.guest
    val thirdPml = if (D > 2) cnt >= 3.U && partPml(c)(2) else false.B
    val thirdGuest = if (D > 2) cnt >= 3.U && partGuest(c)(2) else false.B
    // after a pop: the head is the second (or the event entering behind a single head)
    val popHeadP = secondPmlR(c) || (cnt === 1.U && enqPml)
    val popHeadG = secondGuestR(c) || (cnt === 1.U && enqGuest)
    val popSecondP = thirdPml || (cnt === 2.U && enqPml)
    val popSecondG = thirdGuest || (cnt === 2.U && enqGuest)
    // without a pop: the head keeps its remaining parts (or is the event entering an empty queue)
    val staySecondP = secondPmlR(c) || (cnt === 1.U && enqPml)
    val staySecondG = secondGuestR(c) || (cnt === 1.U && enqGuest)
    val ctrlPmlNext = Mux(we("CTRL", c), w(PmlRegs.Bits.ctrlPml), ctrlPml(c))
    val ctrlEpmlNext = Mux(we("CTRL", c), w(PmlRegs.Bits.ctrlEpml), ctrlEpml(c))
    // loaded: no CSR write this cycle (CTRL unchanged), the loaded part is done
    pRemR(c) := Mux(loaded, Mux(popLoaded, popHeadP, pRem && candGuest(c)) && ctrlPml(c),
      Mux(popIdle, popHeadP, pRem || (cnt === 0.U && enqPml)) && ctrlPmlNext)
    gRemR(c) := Mux(loaded, Mux(popLoaded, popHeadG, gRem && !candGuest(c)) && ctrlEpml(c),
      Mux(popIdle, popHeadG, gRem || (cnt === 0.U && enqGuest)) && ctrlEpmlNext)
    secondPmlR(c) := Mux(Mux(loaded, popLoaded, popIdle), popSecondP, staySecondP)
    secondGuestR(c) := Mux(Mux(loaded, popLoaded, popIdle), popSecondG, staySecondG)
    when(h.fire) { pmlDone(c) := false.B; guestDone(c) := false.B }
      .otherwise {
        when(pmlDropped(c) || issuedPml) { pmlDone(c) := true.B }
        when(guestDropped(c) || issuedGuest) { guestDone(c) := true.B }
      }

    // Next cycle's candidate: the readiness rule above applied to next cycle's state, once
    // assuming c loads nothing and once assuming c loads its candidate (never in a CSR-write
    // cycle), so that the pick only selects between the two at the end. A head that leaves is
    // followed by the queue's second entry; an event that enters an empty queue (or one that
    // empties) gets its candidate a cycle later.
    val pmlOn = Mux(we("CTRL", c), w(PmlRegs.Bits.ctrlPml), ctrlPml(c))
    val guestOn = Mux(we("CTRL", c), w(PmlRegs.Bits.ctrlEpml), ctrlEpml(c))
    val pOkIdle = Mux(we("PML_INDEX", c), wIn, pmlIn(c))
    val gOkIdle = Mux(we("GPML_INDEX", c), wIn, gpmlIn(c))
    // Idle, the next head owes its PML part when this head keeps it (pRem) or leaves (no part
    // remains: !pRem && !gRem) for a second entry that owes it (a second entry implies a head).
    val pmlNextIdle = pRem || (!gRem && secondPmlR(c))
    val guestNextIdle = gRem || (!pRem && secondGuestR(c))
    val pmlIdle = pmlNextIdle && pmlOn && pOkIdle
    val guestIdle = guestNextIdle && guestOn && gOkIdle
    val pOkLoaded = Mux(candGuest(c), pmlIn(c), pmlInDec(c))
    val gOkLoaded = Mux(candGuest(c), gpmlInDec(c), gpmlIn(c))
    val pmlAfter = Mux(popLoaded, secondPmlR(c), pRem && candGuest(c)) && ctrlPml(c) && pOkLoaded
    val guestAfter = Mux(popLoaded, secondGuestR(c), gRem && !candGuest(c)) && ctrlEpml(c) && gOkLoaded
    candValid(c) := Mux(loaded, pmlAfter || guestAfter, pmlIdle || guestIdle)
    candGuestNext(c) := Mux(loaded, !pmlAfter, !pmlIdle)
    candGuest(c) := candGuestNext(c)
    candAfter(c) := pmlAfter || guestAfter
    // the idle candidate from registers (the pick's inputs; a CSR write of this cycle is not in it)
    candIdleReg(c) := (pmlNextIdle && ctrlPml(c) && pmlIn(c)) || (guestNextIdle && ctrlEpml(c) && gpmlIn(c))
  }
  // Next cycle's pick: the round robin over next cycle's candidates from next cycle's
  // `afterLast`. Each context's next candidate is its idle candidate (`candIdleReg`, from
  // registers) or its candidate after its own load (`candAfter`, chosen by "c loads its
  // candidate"), so the round robin starts two levels from flops.
  // Next cycle's candidates for both outcomes of this cycle, from registers only: `reqIfNot`
  // without a load (the idle candidates), `reqIfLoad` with the pick loaded (its candidate after
  // the load). When no candidate exists (anyPick low) the pick is empty and the two are equal,
  // so "a load happens" (`canLoad` and anyPick) chooses between them exactly (issue 9, tenth
  // round): `canLoad` (the `mem_req_ready` input, the CSR stage, the tag count) selects at the
  // end instead of entering every context's candidate in front of the round robin. A CSR write
  // of this cycle is not in them (thirteenth round, **decided**): next cycle's pick may miss
  // what the write changes, and no write is loaded next cycle (`csrWrote` in canLoad); the
  // pick computed then sees the written registers. Before, the written context's candidate
  // with the write (by the registered context one-hot) was in front of the round robin, the
  // routed critical path of main at seed 2 (12.36 ns) and `fpga/levels.py`'s deepest (12.4).
  private val reqIfNot = (0 until C).map(c => candIdleReg(c))
  private val reqIfLoad = (0 until C).map(c => Mux(pickOH(c), candAfter(c), candIdleReg(c)))
  private def orOf(x: Seq[Bool]): Bool = x.foldLeft(false.B)(_ || _)
  // next cycle's afterLast: after a load the thermometer of this cycle's pick (a register); the
  // round robin is computed for both (the first from registers only) and `load` selects at the
  // end, so its fan-out (the output register, the tag table) is not in front of the round robin
  private val afterPick = (0 until C).map(j => orOf((0 until j).map(pickOH(_))))
  private val pickIfLoad = RoundRobin.firstAfter(reqIfLoad, afterPick)
  private val pickIfNot = RoundRobin.firstAfter(reqIfNot, afterLast)
  for (j <- 0 until C) {
    when(load) { afterLast(j) := afterPick(j) }
    pickNext(j) := Mux(load, pickIfLoad(j), pickIfNot(j))
    pickOH(j) := pickNext(j)
  }
  anyPick := Mux(load, orOf(reqIfLoad), orOf(reqIfNot))

  // ---- full buffers: exits and guest interrupts ----------------------------------------------
  private val exitPending, irqPending = falses(C)
  private val irqVectorHeld = zeros(C, p.irqVectorBits)
  for (c <- 0 until C) {
    when(!csrWrite) {
      when(pRemR(c) && !pmlIn(c) && !full(c)) { full(c) := true.B; exitPending(c) := true.B }
      when(gRemR(c) && !gpmlIn(c) && !guestFull(c)) {
        guestFull(c) := true.B; irqPending(c) := true.B
        // a re-raise (ACK while still pending) merges: the offered guestIrq keeps its vector
        when(!irqPending(c)) { irqVectorHeld(c) := irqVector(c) }
      }
    }
  }
  /** The choice of the context an `exit` (`guestIrq`) channel offers: the round robin with hold of
    * xlat.common.RoundRobin (the first pending context after the last one taken, kept while it
    * is offered and not taken), written here with the held choice as a one-hot register and the
    * last grant as a thermometer (`after`, as RoundRobin without hold keeps it). A pending flag
    * is cleared only by its own take, so a held choice is still pending (invariant I7 of the
    * proofs): the offer is the held one-hot when there is one, else the round robin's fresh
    * choice, without RoundRobin's check that the held requester still asks (a multiplexer of
    * the pending flags by the held index) or its binary comparators and priority encoders.
    * Returns the offer, one-hot; `fire` is the channel's handshake.
    */
  private def offerChoice(pending: Vec[Bool], held: Vec[Bool], after: Vec[Bool], fire: Bool): Vec[Bool] = {
    val fresh = RoundRobin.firstAfter(pending, after)
    val isHeld = held.asUInt.orR
    val oh = VecInit((0 until C).map(i => Mux(isHeld, held(i), fresh(i))))
    held := Mux(fire, VecInit(Seq.fill(C)(false.B)), oh)
    when(fire) { for (j <- 0 until C) after(j) := (0 until j).map(oh(_)).foldLeft(false.B)(_ || _) }
    oh
  }
  private val exitHeld, exitAfter, irqHeld, irqAfter = falses(C)
  /** The index of a one-hot choice as a UInt of at least one bit (a vmid's low bits). */
  private def ohIndex(oh: Seq[Bool]): UInt = { val i = Wire(UInt(log2Ceil(C).max(1).W)); i := OHToUInt(oh); i }
  private val exitOH = offerChoice(exitPending, exitHeld, exitAfter, io.exit.fire)
  io.exit.valid := exitPending.asUInt.orR
  io.exit.bits.vmid := ohIndex(exitOH).pad(p.vmidBits)
  io.exit.bits.reason := PmlRegs.exitReason.U
  // cleared by the one-hot choice (not a decode of its index): a raise in the same cycle merges
  // into the exit being taken (the clear comes last)
  for (c <- 0 until C) when(io.exit.fire && exitOH(c)) { exitPending(c) := false.B }
  private val irqOH = offerChoice(irqPending, irqHeld, irqAfter, io.guestIrq.fire)
  io.guestIrq.valid := irqPending.asUInt.orR
  io.guestIrq.bits.vmid := ohIndex(irqOH).pad(p.vmidBits)
  io.guestIrq.bits.vector := Mux1H(irqOH, irqVectorHeld)
  for (c <- 0 until C) when(io.guestIrq.fire && irqOH(c)) { irqPending(c) := false.B }

  // ---- write responses ---------------------------------------------------------------------
  io.mem_resp.ready := true.B
  private val rid = io.mem_resp.bits.id
  private val respKnown = io.mem_resp.valid && tagBusy(rid)
  private val respOk = respKnown && !io.mem_resp.bits.error
  // at most one load and one response a cycle: the count moves by -1, 0 or +1
  busyCount := busyCount + load.asUInt - respKnown.asUInt
  tagFree := Mux(load && !respKnown, busyCount =/= (p.tags - 1).U, Mux(!load && respKnown, true.B, busyCount =/= p.tags.U))
  private val ridOH = UIntToOH(rid, p.tags)
  // per tag, the response's id decoded (a busy tag is never the free tag a load takes)
  for (t <- 0 until p.tags) when(io.mem_resp.valid && ridOH(t) && tagBusy(t)) { tagBusy(t) := false.B }
  private val respErr = (0 until p.tags).map(t => io.mem_resp.valid && io.mem_resp.bits.error && ridOH(t) && tagBusy(t))
  for (c <- 0 until C) when((0 until p.tags).map(t => respErr(t) && tagCtxOH(t)(c)).reduce(_ || _)) { writeError(c) := true.B }

  // ---- counters ------------------------------------------------------------------------------
  // perf_ignored advances by up to 2C + 1 a cycle: the decide stage's ignored event and every
  // context's dropped parts. Like PerfCounter.count it counts the cycle's events one cycle later
  // (the same cycles), but the dropped parts, which come from registers, are summed before their
  // register (seventh round): the counter then adds a registered 5-bit sum and a registered bit
  // (a 6-bit add in front of its carry chain instead of a population count of 17 bits).
  private val ignoredCount = {
    val width = PerfCounter.width
    val dropSum = RegNext(PopCount(pmlDropped ++ guestDropped), 0.U)
    val ignoredEv = RegNext(decIgnored, false.B)
    val count = RegInit(0.U(width.W))
    val next = count +& (dropSum +& ignoredEv)
    count := Mux(next(width), ((BigInt(1) << width) - 1).U(width.W), next(width - 1, 0))
    count
  }
  // perf_stallCycles: the cycle's stall registered per context ("valid, context c, c wants it, c
  // has no room", at most one set) and ORed in front of the adder (fifteenth round; the same
  // cycles as PerfCounter: one register, then the add), so `dirty_ready`'s select by vmid is not
  // in front of the event's register (the routed critical path of pml_default at seed 1 in the
  // fourteenth round). An unknown or ignored event is never stalled.
  private val stallCount = {
    val width = PerfCounter.width
    val stallOf = (0 until C).map(c => RegNext(io.dirty.valid && ctxSel(c) && wantsOf(c) && !room(c), false.B))
    val count = RegInit(0.U(width.W))
    val next = count +& stallOf.reduce(_ || _).asUInt
    count := Mux(next(width), ((BigInt(1) << width) - 1).U(width.W), next(width - 1, 0))
    count
  }
  PerfCounters.connect(
    io.perf,
    "logged" -> PerfCounter(respOk && !tagGuest(rid)),
    "guestLogged" -> PerfCounter(respOk && tagGuest(rid)),
    "exits" -> PerfCounter(io.exit.fire),
    "guestIrqs" -> PerfCounter(io.guestIrq.fire),
    "stallCycles" -> stallCount,
    "writeErrors" -> PerfCounter(respKnown && io.mem_resp.bits.error),
    "ignored" -> ignoredCount,
    "deduped" -> PerfCounter(decLive && dedupHit),
    "badCsrs" -> PerfCounter(csrValid && csrBad),
    "badMemResps" -> PerfCounter(io.mem_resp.valid && !tagBusy(rid))
  )

  io.dbg.foreach { d =>
    d.pmlIndex := pmlIndex; d.gpmlIndex := gpmlIndex; d.pmlAddr := pmlAddr; d.gpmlAddr := gpmlAddr
    d.full := full; d.guestFull := guestFull
    d.queueCount := VecInit(queues.map(_.io.count.pad(8)))
    d.outCtx := outCtx; d.outGuest := outGuest
    d.outstanding := PopCount(tagBusy)
    val nr = regs.size
    require(regs.map(_.offset).sorted == (0 until nr).map(8 * _), "registers at 0, 8, 16, ...")
    def byOffset(f: String => Bool): UInt = VecInit((0 until nr).map(i => f(regs.find(_.offset == 8 * i).get.name))).asUInt
    d.csrValid := csrValid; d.csrWriting := csrWriting; d.csrBad := csrBad; d.csrCtx := ci; d.csrWdata := w
    d.csrAt := byOffset(at)
    d.csrReadSel := Cat(csrReadSel(nr), byOffset(n => csrReadSel(regs.indexWhere(_.name == n))))
    d.csrCtxOH := VecInit(ciOH).asUInt
    d.csrWIn := wIn; d.csrWInDec := wInDec
    d.csrWe := VecInit((0 until C).map(c => byOffset(n => if (n == "STATUS") false.B else we(n, c)))).asUInt
    d.candValid := candValid
    d.decValid := dec.valid
    d.decIgnore := dec.bits.ignore
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
