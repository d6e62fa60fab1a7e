package xlat.devtlb

import chisel3._
import chisel3.util._
import xlat.common.{BlockRam, LookupTiming, Stage}

/** The Prefetch Unit's tables (docs/devtlb.md, "Prefetch Unit"): the SID delay line, the SID
  * predictor and the per-SID history of pages that needed a translation.
  *
  * ==Timing==
  * The predictor is read and written in a request's acceptance cycle: the entry it writes
  * (`pred[sid of the request histDistance ago] := sid`) and the one it reads (`pred[sid]`) are
  * both known there, and a read sees every earlier request's write (they landed in earlier
  * cycles) but not its own (read-first). The history is read in the match stage, at the
  * successor from the predictor (and the pointer at the request's own SID), and written in
  * respond when the request allocates a demand slot; the writes of the operations that respond
  * between a read and its respond stage are applied to the read data from a record of the last
  * writes, so every request sees the history as sequential acceptance order makes it. Tables of
  * more than a few entries are memories with a registered read (block RAM) when the pipeline
  * has the register; a reset sweep clears their valid bits, one entry a cycle ([[busy]]).
  *
  * With `registeredChoice` the history's writes land a cycle after respond, from the record's
  * register (`recs(0)`), and the history is a [[BlockRam]], whose read of the entry written in
  * the same cycle is undefined: the reads apply one record more (the write landing in their
  * cycle), so they see what they saw before, and synthesis adds no collision logic between the
  * predictor's block RAM (the history's read address) and the history's (docs/devtlb.md,
  * "FPGA", session 27). The write pins are then one multiplexer (the sweep's) behind registers.
  */
class PrefetchUnit(p: DevTlbParams, timing: LookupTiming) {
  private def idxBits(n: Int) = log2Ceil(n).max(1)
  private def idx(sid: UInt, n: Int): UInt =
    if (n == 1) 0.U(1.W) else sid.pad(idxBits(n))(idxBits(n) - 1, 0)
  private val ptrBits = log2Ceil(p.histPages).max(1)
  private def nextPtr(x: UInt): UInt =
    if (isPow2(p.histPages)) (x + 1.U)(ptrBits - 1, 0) else Mux(x === (p.histPages - 1).U, 0.U, x + 1.U)

  // ---- reset sweep -------------------------------------------------------------------------
  private val sweepN = p.predictorEntries.max(p.historyEntries)
  private val sweepIdx = RegInit(0.U(log2Ceil(sweepN + 1).W))
  /** True until every table entry has been cleared after reset. With `registeredChoice` a
    * register of its own (the same value: it falls when the index steps onto `sweepN`), so the
    * acceptance logic does not wait for an 11-bit compare.
    */
  val busy: Bool =
    if (!p.registeredChoice) sweepIdx =/= sweepN.U
    else {
      val r = RegInit(true.B).suggestName("sweepBusy")
      r := r && sweepIdx =/= (sweepN - 1).U
      r
    }
  when(busy) { sweepIdx := sweepIdx + 1.U }

  // ---- delay line and predictor (acceptance cycle) -----------------------------------------
  private val line = Mem(p.histDistance, UInt(p.sidBits.W))
  private val linePtr = RegInit(0.U(log2Ceil(p.histDistance).max(1).W))
  private val lineFull = RegInit(false.B)
  private val pred = Mem(p.predictorEntries, UInt((p.sidBits + 1).W))
  private val predRead = Wire(UInt((p.sidBits + 1).W))
  predRead := DontCare

  /** A request of `sid` is accepted when `fire`. */
  def accept(fire: Bool, sid: UInt): Unit = {
    predRead := pred.read(idx(sid, p.predictorEntries))
    val old = line.read(linePtr)
    when(fire) {
      line.write(linePtr, sid)
      val last = linePtr === (p.histDistance - 1).U
      linePtr := Mux(last, 0.U, linePtr + 1.U)
      when(last) { lineFull := true.B }
    }
    // one write port: the sweep writes while nothing is accepted
    val sweepPred = busy && sweepIdx < p.predictorEntries.U
    when(sweepPred || (fire && lineFull)) {
      pred.write(Mux(sweepPred, sweepIdx(idxBits(p.predictorEntries) - 1, 0), idx(old, p.predictorEntries)),
        Mux(sweepPred, 0.U, Cat(true.B, sid)))
    }
  }

  // ---- history (match stage read, respond write) ------------------------------------------
  /** The history's writes land a cycle after respond (above). */
  private val lateWrite = p.registeredChoice
  private val pages = if (lateWrite) Nil else Seq.fill(p.histPages)(Mem(p.historyEntries, UInt((p.pageBits + 1).W)))
  private val ptrs = if (p.histPages > 1 && !lateWrite) Some(Mem(p.historyEntries, UInt(ptrBits.W))) else None
  private val pageRams =
    if (lateWrite) (0 until p.histPages).map(j => BlockRam(p.historyEntries, p.pageBits + 1, s"pages_$j")) else Nil
  private val ptrRam = if (p.histPages > 1 && lateWrite) Some(BlockRam(p.historyEntries, ptrBits, "ptrs")) else None
  private val toRespondDepth = (if (timing.hitReg) 1 else 0) + (if (timing.selReg) 1 else 0)
  private def toRespond[T <: Data](d: T): T = Stage.carry(Stage.carry(d, timing.hitReg), timing.selReg)

  /** The write of this cycle's respond stage, and the last `toRespondDepth` writes (one more with
    * `lateWrite`: the one landing in the cycle the request in respond read the history), newest
    * first.
    */
  private val rec = Wire(new HistWrite(p, ptrBits))
  rec.valid := false.B
  rec.index := 0.U
  rec.slot := 0.U
  rec.page := 0.U
  private val recs = (1 to toRespondDepth + (if (lateWrite) 1 else 0)).scanLeft(rec)((r, _) => RegNext(r, 0.U.asTypeOf(r))).drop(1)

  /** Successor, candidates and own pointer of the request in respond. */
  val succ = Wire(Valid(UInt(p.sidBits.W)))
  val candidates = Wire(Vec(p.histPages, Valid(UInt(p.pageBits.W))))
  val ownPtr = Wire(UInt(ptrBits.W))

  /** `registeredChoice`: `candIs(j, x)` is `candidates(j).bits === x`, compared with each page
    * the candidate may be (the registered one, the newer history write's) and selected last, so
    * the bypass multiplexer is not in front of the compare; set by [[lookup]].
    */
  var candIs: Option[(Int, UInt) => Bool] = None

  /** `matchSid`: the SID of the request in the match stage; `respondSid` that of respond. */
  def lookup(matchSid: UInt, respondSid: UInt): Unit = {
    val predM = Stage.carry(predRead, timing.readReg)
    val succM = predM(p.sidBits - 1, 0)
    val succIdxM = idx(succM, p.historyEntries)
    // `registeredChoice` reads the same port below, registered once (in pick)
    val rawPages = if (p.registeredChoice) Nil else pages.map(m => toRespond(m.read(succIdxM)))
    val rawPtr = ptrs.map(m => toRespond(m.read(idx(matchSid, p.historyEntries))))
      .orElse(ptrRam.map(m => Stage.carry(m.read(idx(matchSid, p.historyEntries)), timing.selReg)))
      .getOrElse(0.U(ptrBits.W))
    succ.valid := toRespond(predM(p.sidBits))
    succ.bits := toRespond(succM)
    val succIdx = idx(succ.bits, p.historyEntries)
    val ownIdx = idx(respondSid, p.historyEntries)
    // oldest write first: a newer write of the same entry and slot overrides it
    val ordered = recs.reverse
    if (!p.registeredChoice) for (j <- 0 until p.histPages) {
      // each write's entry against the successor's
      val sameIdx: Seq[() => Bool] = ordered.map(r => () => r.index === succIdx)
      val base = Wire(Valid(UInt(p.pageBits.W)))
      base.valid := rawPages(j)(p.pageBits)
      base.bits := rawPages(j)(p.pageBits - 1, 0)
      candidates(j) := ordered.zip(sameIdx).foldLeft(base) { case (c, (r, same)) =>
        val hit = r.valid && same() && r.slot === j.U
        val n = Wire(Valid(UInt(p.pageBits.W)))
        n.valid := c.valid || hit
        n.bits := Mux(hit, r.page, c.bits)
        n
      }
    } else {
      /** The older writes (the records of the two cycles before respond: the one landing in the
        * read's cycle and that of the operation in respond during match) are the newest writes
        * the pick stage sees, so pick applies them (`candK`) and respond only the newer one
        * (`newHit`), the write of the operation in respond during pick: the same fold, cut at its
        * register. Each write's entry is compared with the successor's a stage early and
        * registered (the successor is known there, and so is the write's entry), so the
        * candidates, which the prefetch filter's results follow, are one multiplexer behind
        * fabric registers, which the prefetch filter compares (`issueLater`).
        */
      require(toRespondDepth == 2 && lateWrite, "the early history compare needs the match and pick registers")
      val succIdxK = Stage.carry(succIdxM, timing.hitReg)
      // in registered 2-bit parts (one LUT4 each), ANDed in pick: the successor's index leaves
      // the predictor's block RAM (5.83 ns of clock-to-out on ECP5), so the compare whole was
      // three LUT levels behind it (`fpga/levels.py devtlb_full` with the DP16KD weighed 6.5:
      // 12.4, docs/devtlb.md "FPGA", session 25)
      def sameK(i: UInt, name: String): Bool = RegNext(VecInit((0 until i.getWidth by 2).map { b =>
        val hi = (b + 2).min(i.getWidth) - 1
        i(hi, b) === succIdxM(hi, b)
      })).suggestName(name).asUInt.andR
      val sameOldK = sameK(rec.index, "sameOldKParts")
      val sameOlderK = sameK(recs(0).index, "sameOlderKParts")
      val candK = VecInit((0 until p.histPages).map { j =>
        val base = Wire(Valid(UInt(p.pageBits.W)))
        val raw = pageRams(j).read(succIdxM)
        base.valid := raw(p.pageBits)
        base.bits := raw(p.pageBits - 1, 0)
        val hitOld = recs(0).valid && sameOldK && recs(0).slot === j.U
        val hitOlder = recs(1).valid && sameOlderK && recs(1).slot === j.U
        // the newer record first; both choices are made from registers, so the block RAM's
        // output passes one multiplexer
        val hit = hitOld || hitOlder
        val n = Wire(Valid(UInt(p.pageBits.W)))
        n.valid := base.valid || hit
        n.bits := Mux(hit, Mux(hitOld, recs(0).page, recs(1).page), base.bits)
        n
      })
      val candOld = RegNext(candK)
      // the entry and slot compares registered (session 34, exact: `recs(0)` is `rec`
      // registered), so the select of the candidates' bypass multiplexer, in front of the
      // filter's compares with every slot and PB entry, is `recs(0).valid` and one flop: with the
      // two data bits one LUT4 (`fpga/levels.py devtlb_full`: 9.4 weighted levels into those
      // compares' registers, the source of the routed critical path of session 34,
      // docs/devtlb.md "FPGA"); `rec.valid` stays out of it (the merge decision, 10.7 levels
      // when registered whole)
      val newSame = RegNext(VecInit((0 until p.histPages).map(j =>
        idx(respondSid, p.historyEntries) === succIdxK && rec.slot === j.U))).suggestName("newSameR")
      val newHit = VecInit((0 until p.histPages).map(j => recs(0).valid && newSame(j)))
      for (j <- 0 until p.histPages) {
        candidates(j).valid := candOld(j).valid || newHit(j)
        candidates(j).bits := Mux(newHit(j), recs(0).page, candOld(j).bits)
      }
      candIs = Some((j: Int, x: UInt) => Mux(newHit(j), recs(0).page === x, candOld(j).bits === x))
    }
    ownPtr := ordered.foldLeft(rawPtr)((c, r) => Mux(r.valid && r.index === ownIdx, nextPtr(r.slot), c))
  }

  /** Respond stage: a request of `sid` allocated a demand slot for `page`. */
  def record(en: Bool, sid: UInt, page: UInt): Unit = {
    val i = idx(sid, p.historyEntries)
    rec.valid := en
    rec.index := i
    rec.slot := ownPtr
    rec.page := page
    // one write port per table: the sweep writes while nothing is accepted
    val sweepHist = busy && sweepIdx < p.historyEntries.U
    val sweepAt = sweepIdx(idxBits(p.historyEntries) - 1, 0)
    if (!lateWrite) {
      val at = Mux(sweepHist, sweepAt, i)
      for (j <- 0 until p.histPages) {
        when(sweepHist || (en && ownPtr === j.U)) { pages(j).write(at, Mux(sweepHist, 0.U, Cat(true.B, page))) }
      }
      ptrs.foreach(m => when(sweepHist || en) { m.write(at, Mux(sweepHist, 0.U, nextPtr(ownPtr))) })
    } else {
      // the write of the previous respond stage; the sweep ends before anything is accepted, so
      // the two never meet
      val w = recs(0)
      val at = Mux(sweepHist, sweepAt, w.index)
      for (j <- 0 until p.histPages) {
        pageRams(j).write(sweepHist || (w.valid && w.slot === j.U), at, Mux(sweepHist, 0.U, Cat(true.B, w.page)))
      }
      ptrRam.foreach(_.write(sweepHist || w.valid, at, Mux(sweepHist, 0.U, nextPtr(w.slot))))
    }
  }
}

/** A history write on its way past the reads that did not see it. */
class HistWrite(p: DevTlbParams, ptrBits: Int) extends Bundle {
  val valid = Bool()
  val index = UInt(log2Ceil(p.historyEntries).max(1).W)
  val slot = UInt(ptrBits.W)
  val page = UInt(p.pageBits.W)
}
