package xlat.babelfish

import chisel3._
import chisel3.util._
import xlat.common._

/** BabelFish TLB: translations shared by the processes of a container group (CCID).
  *
  * ==Structure==
  * A set-associative array of 4 KiB entries (flops, or an SRAM for L2-sized configurations) and
  * a fully associative flop array of 2 MiB / 1 GiB entries, each with its own replacement
  * state. Valid bits are flops beside the arrays so invalidations can clear them in one cycle;
  * with SRAM, one word per set in a RAM with per-set flash flags ([[SetValid]]), read and
  * written, like the replacement words, through the set decoded one-hot in the read stage. [[MatchRule]] decides which entries a request may use; among matches a private
  * entry wins over a global one, which wins over a shared one.
  *
  * ==Pipeline==
  * One operation a cycle is accepted, by priority inval > fill > lookup, and passes the stages
  * of [[LookupTiming]] in order:
  *  - read (acceptance): the set and its valid bits are read;
  *  - match: [[MatchRule]] against the set and every superpage entry gives per-class hit
  *    vectors (lookup), the same-key vector (fill) or the removal mask (invalidation);
  *  - pick: class priority turns the hit vectors into a one-hot winner ([[Pick]]);
  *  - respond: the winner's data makes the registered response and touches the replacement
  *    state; a fill picks its way (same key, else first invalid, else the victim); an
  *    invalidation clears the valid bits of what it removes;
  *  - commit (latency 4 and above): the fill's way is written one cycle after it was chosen
  *    ([[FillCommit]]); at lower latencies the fill writes in respond.
  * `latency` (1 to 4 for flops, 2 to 6 for SRAM) says which stage boundaries are registers; SRAM
  * 5 adds a second row register after the block RAM's read register, SRAM 6 also registers the
  * accepted operation before the read (so the block RAMs' address comes from a register), and
  * at both the set's valid word is read with the row and registered like it (the valid bits
  * then join the comparators in match) and a fill's way choice starts in pick. After
  * a fill or an invalidation nothing is accepted until it has landed ([[WriteShadow]]): every
  * operation sees all earlier ones, and lookups alone run back to back, one a cycle. With SRAM
  * an invalidation by PCID or CCID (with a VMID tag also kinds 1 and 6) sweeps the sets, one per
  * cycle, through the same pipeline.
  *
  * ==VM isolation==
  * With `vmidBits` > 0 lookups, fills and invalidations carry a `vmid`, entries store it, and
  * [[MatchRule]] requires it equal for every match class, every key and every invalidation
  * kind but 0 (all); kind 6 removes every entry of one VM and kind 7 one page of one VM, global
  * entries included. With `vmidBits` = 0 no port, flop or comparator is added (kinds 6 and 7
  * stay reserved and act as kind 0).
  *
  * See docs/babelfish-tlb.md for ports, timing and the exact replacement policies.
  */
class BabelFishTlb(val p: BabelFishParams) extends Module {
  override def desiredName = "BabelFishTlb"

  val io = FlatIO(new Bundle {
    val lookup_req = Flipped(Decoupled(new LookupReq(p)))
    val lookup_resp = Valid(new LookupResp(p))
    val fill = Flipped(Decoupled(new FillReq(p)))
    val inval = Flipped(Decoupled(new InvalReq(p)))
    val perf = Output(new PerfCounters(BabelFishPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new BabelFishDbg(p))) else None
  })

  private val rule = new MatchRule(p)
  private val timing = p.timing
  private val setW = p.setBits.max(1)
  private def setOf(vpn: UInt): UInt = if (p.setBits == 0) 0.U(setW.W) else vpn(p.setBits - 1, 0)

  // ---- storage -----------------------------------------------------------------------------
  // Flop storage keeps the 4 KiB entries' data in distributed RAM (same cycle behaviour as a
  // register array; the set read is one LUT level instead of a multiplexer tree over every entry
  // bit), except with the formal ports, whose view reads every entry of a register array.
  private val lutram = !p.sram && !p.formalPorts && p.sets > 1
  // (SRAM: the write shadow keeps every read out of a fill's commit cycle, so the block RAMs'
  // ports never collide and synthesis needs no read-during-write logic: `readsNeverWrite`)
  private val pages = Module(new SetAssocStorage(
    new BabelFishEntry(p, p.tagBits), p.sets, p.ways, p.sram, readReg = timing.readReg, lutram = lutram,
    readsNeverWrite = p.sram, view = p.sram && p.formalPorts))
  // Distributed RAM has no view of every entry: a flop copy of the owner fields (global, own,
  // PCID, CCID, VMID) serves the invalidations that compare every set at once.
  private val pageOwner = if (lutram) Some(Reg(Vec(p.sets, Vec(p.ways, new BabelFishEntry(p, p.tagBits))))) else None
  /** Entry (i, w) as the invalidation by owner sees it (flops storage). */
  private def ownerAt(i: Int, w: Int): BabelFishEntry = pageOwner.map(_(i)(w)).getOrElse(pages.io.all(i)(w))
  private val supers = FullyAssocStorage(new BabelFishEntry(p, p.vpnBits), p.superpageEntries)
  // Valid bits of the 4 KiB array. Flops: one flop per entry (flop invalidations compare every
  // set at once and clear any of them). SRAM: one word per set in distributed RAM with per-set
  // flash flags ([[SetValid]]): an SRAM invalidation changes only the set it reads, or all sets
  // at once (flash kinds), so the entries need no flop each; the flash "non-global" kind takes
  // the global bits from the SRAM row read beside the word.
  private val pageValidRam = if (p.sram) Some(new SetValid(p.sets, p.ways)) else None
  private val pageValid =
    if (p.sram) None else Some(RegInit(VecInit(Seq.fill(p.sets)(VecInit(Seq.fill(p.ways)(false.B))))))
  private val superValid = RegInit(VecInit(Seq.fill(p.superpageEntries)(false.B)))
  private val pageRepl = new ReplacementState(ReplacementPolicy(p.replacement, p.ways), p.sets)
  private val superRepl = new ReplacementState(ReplacementPolicy(p.replacement, p.superpageEntries), 1)

  /** A 4 KiB entry with its full VPN rebuilt from tag and set. */
  private def pageView(e: BabelFishEntry, set: UInt): BabelFishEntry =
    e.withVpn(if (p.setBits == 0) e.vpn else Cat(e.vpn, set(p.setBits - 1, 0)))

  // ---- read stage: accept one operation a cycle --------------------------------------------
  private val sweeping = RegInit(false.B)
  private val sweepSet = RegInit(0.U(setW.W))
  private val sweepReq = Reg(new InvalReq(p))
  private val shadow = new WriteShadow(timing.writeShadow)
  // (with opReg: `busy` from a register of its own, loaded with its next value, so that the
  // readies and the sweep's start do not wait for the shadow's counter compare)
  private val busyR = if (timing.opReg) Some(RegInit(false.B)) else None
  private val busy = busyR.getOrElse(shadow.busy || sweeping)

  io.inval.ready := !busy
  io.fill.ready := !busy && !io.inval.valid
  io.lookup_req.ready := !busy && !io.inval.valid && !io.fill.valid

  private val doInval = io.inval.fire
  private val doFill = io.fill.fire
  private val doLookup = io.lookup_req.fire
  // (with a VMID tag kinds 1 and 6 compare every entry's VMID: they sweep like 2 and 3)
  private val sweepKind = io.inval.bits.kind === InvalKind.Pcid.U || io.inval.bits.kind === InvalKind.Ccid.U ||
    (if (p.vmid) io.inval.bits.kind === InvalKind.NonGlobal.U || io.inval.bits.kind === InvalKind.Vmid.U else false.B)
  private val sweeps = p.sram && p.sets > 1
  private val startSweep = if (sweeps) doInval && sweepKind else false.B

  // The operation's kind and set follow the valids' priority, not the accept: when anything is
  // accepted it is the highest-priority valid one, and the readies stay out of the read path.
  private val issue = Wire(Valid(new AccessOp(p)))
  issue.valid := doInval || doFill || doLookup || sweeping
  issue.bits.kind := Mux(io.inval.valid || sweeping, AccessKind.Inval, Mux(io.fill.valid, AccessKind.Fill, AccessKind.Lookup))
  issue.bits.lookup := io.lookup_req.bits
  issue.bits.fill := io.fill.bits
  issue.bits.inval := Mux(sweeping, sweepReq, io.inval.bits)
  issue.bits.invalKinds := rule.kindsOf(issue.bits.inval)
  // SRAM: the set one-hot, decoded here for the later stages' per-set state (valid flags,
  // replacement words): an AND-OR over the sets instead of a multiplexer tree in their stage
  // (with opReg: decoded after the operation register instead, out of the acceptance path)
  private def setOHOf(set: UInt): UInt = if (p.sram && p.sets > 1) UIntToOH(set, p.sets) else 1.U
  issue.bits.setOH := (if (timing.opReg) 0.U else setOHOf(issue.bits.set))
  issue.bits.pcSelect := rule.pcSelectOf(io.lookup_req.bits)
  issue.bits.set := MuxCase(
    setOf(io.lookup_req.bits.vpn),
    Seq(
      sweeping -> sweepSet,
      (io.inval.valid && (if (sweeps) sweepKind else false.B)) -> 0.U,
      io.inval.valid -> setOf(io.inval.bits.vpn),
      io.fill.valid -> setOf(io.fill.bits.vpn)
    )
  )
  private val issueWrite = issue.valid && issue.bits.kind =/= AccessKind.Lookup
  shadow.issue(issueWrite)

  when(startSweep) {
    sweeping := true.B
    sweepSet := 1.U
    sweepReq := io.inval.bits
  }.elsewhen(sweeping) {
    sweepSet := sweepSet + 1.U
    when(sweepSet === (p.sets - 1).U) { sweeping := false.B }
  }
  // busy's next value: the shadow's, or sweeping's as the block above leaves it
  busyR.foreach(_ := shadow.busyAfter(issueWrite) ||
    startSweep || (sweeping && sweepSet =/= (p.sets - 1).U))

  // opReg (SRAM latency 6): the accepted operation is registered once before the read, so that
  // the block RAMs' read address and enable come from a register, not from the valids'
  // priority and the set multiplexer of acceptance
  private val r = {
    val x = Stage(issue, timing.opReg)
    if (!timing.opReg) x
    else {
      val y = Wire(chiselTypeOf(x))
      y := x
      y.bits.setOH := setOHOf(x.bits.set)
      y
    }
  }
  pages.io.read.valid := r.valid
  pages.io.read.bits := r.bits.set
  supers.io.read.valid := false.B
  supers.io.read.bits := 0.U

  // ---- match stage: every candidate entry against the operation ---------------------------
  // The write shadow keeps storage unchanged from an operation's read to its last stage, so
  // the valid bits read with the row and the live superpage array agree with the row data.
  // rowReg (SRAM latency 5 and 6): the row registered a second time after the block RAM's read
  // register, so that the comparators start from flops instead of the block RAM's clock-to-out
  private val b = Stage(r, timing.readReg)
  private val c = Stage(b, timing.rowReg)
  private val rowC = Stage.carry(pages.io.readData, timing.rowReg).map(pageView(_, c.bits.set))
  // valid bits are read here from the registered set: the write shadow keeps them as they were
  // when the row was read, and the input ports stay out of their 1-of-sets multiplexer
  // (with rowReg: the valid word is read with the row, from the read stage's set, and
  // registered twice like the row (Yosys merges the first register into the block RAM's read
  // port, as it does a single one); its flags are read one stage later through the registered
  // set one-hot and registered once: the valid bits join the comparators here from flops, one
  // LUT level, with no block-RAM clock-to-out in match)
  private val rowValidC = pageValidRam match {
    case Some(v) if timing.rowReg =>
      val wordB = Reg(UInt(p.ways.W))
      val wordC = Reg(UInt(p.ways.W))
      val allC = Reg(Bool())
      val nonGlobalC = Reg(Bool())
      val (all, nonGlobal) = v.readFlags(b.bits.setOH)
      wordB := v.readWord(r.bits.set); wordC := wordB
      allC := all; nonGlobalC := nonGlobal
      v.applyFlags(wordC, allC, nonGlobalC, rowC.map(_.global))
    case Some(v) => v.read(c.bits.set, c.bits.setOH, rowC.map(_.global))
    case None    => pageValid.get(c.bits.set)
  }
  private val supC = supers.io.readData
  private val entriesC = rowC ++ supC
  private val validsC = rowValidC ++ superValid
  // (rowReg: the fill's key with its VPN unaligned: the same-key compare needs equal sizes,
  // which makes the offset bits irrelevant, so no alignment sits in front of the comparators)
  private val newC = if (timing.rowReg) rule.keyOf(c.bits.fill) else rule.entryOf(c.bits.fill)

  // Valid bits join the comparisons one stage later (hit vectors in pick, same-key vector in
  // respond): the 1-of-sets multiplexer of the valid bits then runs beside the comparators
  // instead of in front of their last gate. With rowReg (SRAM latency 5, 6) they come from
  // flops (read one stage earlier, above) and join here, in match, so that pick starts from
  // the registered vectors.
  private val validInMatch = timing.rowReg
  private val matchValids = if (validInMatch) validsC else validsC.map(_ => true.B)
  private val hitsC = VecInit(entriesC.zip(matchValids).map { case (e, v) => rule.lookup(e, v, c.bits.lookup, c.bits.pcSelect) })
  private val sameC = VecInit(entriesC.zip(matchValids).map { case (e, v) => rule.sameKey(e, v, newC) })
  // What an invalidation removes among the entries it can see here: with SRAM the set being
  // read (page kinds: the set of `vpn`; PCID / CCID: the sweep's set), with flops every entry.
  // A page kind can only remove 4 KiB entries of the page's own set, the row read: every other
  // set is compared by owner alone, without a VPN comparator per entry. This stage compares
  // ([[MatchRule.removeTerms]]); pick decides by kind and selects the row's set.
  private def inPage(e: BabelFishEntry): Bool = PageSize.covers(e.vpn, e.pageSize, c.bits.inval.vpn)
  private val rowTermsC = VecInit(rowC.map(e => rule.removeTerms(e, c.bits.inval, inPage(e))))
  private val otherTermsC =
    if (p.sram) None
    else Some(VecInit((0 until p.sets).map { i =>
      VecInit((0 until p.ways).map(w => rule.removeTerms(ownerAt(i, w), c.bits.inval, false.B)))
    }))
  private val superTermsC = VecInit(supC.map(e => rule.removeTerms(e, c.bits.inval, inPage(e))))

  // With rowReg (SRAM latency 5, 6) the superpage array, flops that no write changes from an
  // operation's acceptance to its last stage (write shadow), is compared with the lookup one
  // stage early, in the row-register stage, and match resolves its priority within each class
  // (the lowest index: [[ClassWin]]): pick then combines the row's 12 ways with one winner and
  // one "any" bit per class of the superpage array instead of with every superpage entry.
  private val classes = Seq[ClassMatch => Bool](_.priv, _.global, _.shared)
  private val supWinC = if (!timing.rowReg) None else Some {
    val hitsB = VecInit(supers.io.readData.zip(superValid).map { case (e, v) =>
      rule.lookup(e, v, b.bits.lookup, b.bits.pcSelect)
    })
    val hits = RegNext(hitsB)
    val cw = Wire(new ClassWin(p.superpageEntries))
    // (two-level lowest-index choice: Chisel's PriorityEncoderOH and a folded OR are chains over
    // the 16 entries, which ABC mapped as up to 7 LUT levels; in groups of 4 each is 2-3)
    cw.sel := VecInit(classes.map(cls => VecInit(ClassWin.lowestOH(hits.map(cls)))))
    cw.any := VecInit(classes.map(cls => ClassWin.anyOf(hits.map(cls))))
    cw
  }
  // With rowReg: per entry, whether its PCID differs from the lookup's, for the response's
  // crossHit (a 1-of-entries bit instead of a PCID multiplexer and comparator in respond)
  private val otherPcidC =
    if (!timing.rowReg) None else Some(VecInit(entriesC.map(_.pcid =/= c.bits.lookup.pcid)))

  // ---- pick stage: the winning entry as a one-hot vector -----------------------------------
  private val k = Stage(c, timing.hitReg)
  private val m =
    if (validInMatch) Stage.carry(hitsC, timing.hitReg)
    else VecInit(Stage.carry(hitsC, timing.hitReg).zip(Stage.carry(VecInit(validsC), timing.hitReg)).map {
      case (h, v) => h.onlyIf(v)
    })
  private val supWinK = supWinC.map(Stage.carry(_, timing.hitReg))
  /** Whether any entry of a class matches (with rowReg: the row's ways and the superpage winner). */
  private def anyOf(i: Int): Bool = supWinK match {
    // (one flat OR: a folded one is a chain that ABC does not always rebalance)
    case Some(sw) => VecInit(m.take(p.ways).map(classes(i)) :+ sw.any(i)).asUInt.orR
    case None     => m.map(classes(i)).reduce(_ || _)
  }
  private val anyPriv = anyOf(0)
  private val anyGlobal = anyOf(1)
  private val anyShared = anyOf(2)
  // The class that serves: private > global > shared. Within a class the 4 KiB array wins, and
  // within the superpage array the lowest index. Keys are unique in an array (formal I4) and a
  // class's key fixes everything its match compares, so at most one way of the set matches per
  // class: only the superpage array needs a priority chain.
  private val wins = Seq[ClassMatch => Bool](_.priv, _.global, _.shared)
    .zip(Seq(anyPriv, !anyPriv && anyGlobal, !anyPriv && !anyGlobal && anyShared))
  private val rowHits = m.take(p.ways)
  private val supHits = m.drop(p.ways)
  private val pick = Wire(new Pick(p.ways + p.superpageEntries))
  pick.sel := (if (!timing.rowReg) VecInit(
    rowHits.map(h => wins.map { case (cls, win) => win && cls(h) }.reduce(_ || _)) ++
      wins.map { case (cls, win) =>
        val inRow = rowHits.map(cls).reduce(_ || _)
        PriorityEncoderOH(supHits.map(cls)).map(_ && win && !inRow)
      }.transpose.map(_.reduce(_ || _))
  ) else {
    // the same choice, flatter (SRAM latency 5, 6): an entry of a class matching implies that
    // class matches, so each entry needs only "no higher class matches", and a superpage entry
    // "no entry of its class in the row or at a lower index"
    // (the superpage array's winner per class comes from match: supWinK)
    // (each condition one flat NOR over the bits it depends on, so that ABC builds one balanced
    // tree per condition instead of chaining them through the "any class" ORs)
    val sw = supWinK.get
    def rowOf(i: Int): Seq[Bool] = rowHits.map(classes(i))
    def none(bs: Seq[Bool]): Bool = if (bs.isEmpty) true.B else !VecInit(bs).asUInt.orR
    // bits of which one set means a higher class matches, per class
    val higherBits = Seq(Seq.empty[Bool], rowOf(0) :+ sw.any(0), rowOf(0) ++ rowOf(1) :+ sw.any(0) :+ sw.any(1))
    val noHigher = higherBits.map(none)
    val supOk = classes.indices.map(i => none(higherBits(i) ++ rowOf(i)))
    VecInit(
      rowHits.map(h => classes.indices.map(i => classes(i)(h) && noHigher(i)).reduce(_ || _)) ++
        classes.indices.map(i => sw.sel(i).map(_ && supOk(i))).transpose.map(_.reduce(_ || _))
    )
  })
  // (with rowReg: whether a superpage entry wins, from the class terms above and not from the
  // winner bits, so that respond's replacement enables start from one register each)
  pick.sup := (if (!timing.rowReg) false.B else {
    val sw = supWinK.get
    val row = Seq[ClassMatch => Bool](_.priv, _.global, _.shared).map(cls => m.take(p.ways).map(cls))
    val before = Seq(Seq.empty[Bool], row(0) :+ sw.any(0), row(0) ++ row(1) :+ sw.any(0) :+ sw.any(1))
    VecInit((0 until 3).map(i => sw.any(i) && !VecInit(before(i) ++ row(i) :+ false.B).asUInt.orR)).asUInt.orR
  })
  pick.hit := anyPriv || anyGlobal || anyShared
  pick.shared := !anyPriv && !anyGlobal && anyShared
  pick.any := VecInit(anyPriv, anyGlobal, anyShared)

  // what an invalidation removes, from the comparisons of match and the one-hot kind
  private val kinds = k.bits.invalKinds
  private val rowRmK = VecInit(Stage.carry(rowTermsC, timing.hitReg).map(rule.removesBy(_, kinds)))
  private val pageRmK = otherTermsC match {
    case None => VecInit(Seq(rowRmK))
    case Some(o) =>
      val others = Stage.carry(o, timing.hitReg)
      VecInit((0 until p.sets).map { i =>
        Mux(k.bits.set === i.U, rowRmK, VecInit(others(i).map(rule.removesBy(_, kinds))))
      })
  }
  private val superRmK = VecInit(Stage.carry(superTermsC, timing.hitReg).map(rule.removesBy(_, kinds)))

  // With rowReg (SRAM latency 5, 6) a fill's way choice starts here, in pick, which a fill does
  // not otherwise use: the same-key vector with the valid bits applied, and per array whether
  // and where there is a same-key way and a free way; respond then only chooses among them and
  // the victim. (At lower latencies respond does all of it: the flops of babelfish_l1 stay as
  // they are.)
  private val choiceK = if (!timing.rowReg) None else Some {
    // (the valid bits are in the same-key vector since match)
    val sameK = Stage.carry(sameC, timing.hitReg)
    val validK = Stage.carry(VecInit(validsC), timing.hitReg)
    def early(sameKey: Seq[Bool], vs: Seq[Bool]): EarlyWay = {
      val e = Wire(new EarlyWay(p))
      e.anySame := sameKey.reduce(_ || _)
      e.sameWay := PriorityEncoder(sameKey)
      e.anyFree := vs.map(!_).reduce(_ || _)
      e.freeWay := PriorityEncoder(vs.map(!_))
      e
    }
    VecInit(early(sameK.take(p.ways), validK.take(p.ways)), early(sameK.drop(p.ways), validK.drop(p.ways)))
  }

  // ---- respond stage -----------------------------------------------------------------------
  private val s = Stage(k, timing.selReg)
  /** Data of the match stage, carried to respond through every register between them. */
  private def toRespond[T <: Data](d: T): T = Stage.carry(Stage.carry(d, timing.hitReg), timing.selReg)
  private val set = s.bits.set
  private val row = toRespond(VecInit(rowC))
  private val rowValid = toRespond(rowValidC)
  private val sup = supers.io.readData
  private val entries = row ++ sup
  private val same = toRespond(sameC).zip(rowValid ++ superValid).map { case (k, v) => k && v }
  private val pageRm = Stage.carry(pageRmK, timing.selReg)
  private val superRm = Stage.carry(superRmK, timing.selReg)
  private val won = Stage.carry(pick, timing.selReg)

  // ---- lookup ------------------------------------------------------------------------------
  private val req = s.bits.lookup
  private val lookupNow = s.valid && s.bits.kind === AccessKind.Lookup
  // (with rowReg `hit` and `shared` are made in respond from the three registered "any class"
  // bits: the ORs behind pick's class priority then end in three registers instead of also in
  // front of `hit`, which ABC built on the priority's high-fan-out ORs)
  private val hit = if (timing.rowReg) won.any.asUInt.orR else won.hit
  private val wonShared = if (timing.rowReg) !won.any(0) && !won.any(1) && won.any(2) else won.shared
  private val e = Mux1H(won.sel, entries)

  private val resp = Wire(new LookupResp(p))
  resp.hit := hit
  resp.ppn := Mux(hit, PageSize.frameOf(e.ppn, e.pageSize, req.vpn), 0.U)
  resp.pageSize := Mux(hit, e.pageSize, 0.U)
  resp.perm := Mux(hit, e.perm, 0.U.asTypeOf(e.perm))
  resp.dirty := hit && e.dirty
  resp.shared := wonShared
  resp.crossHit := wonShared && (otherPcidC match {
    case Some(o) => Mux1H(won.sel, toRespond(o))
    case None    => e.pcid =/= req.pcid
  })
  resp.permFault := hit && AccessCmd.faults(req.cmd, req.user, e.perm, e.dirty)

  io.lookup_resp.valid := RegNext(lookupNow, false.B)
  io.lookup_resp.bits := RegEnable(resp, lookupNow)

  private val selPage = if (timing.rowReg) hit && !won.sup else VecInit(won.sel.take(p.ways)).asUInt.orR
  private val hitWay = Wire(UInt(pageRepl.policy.wayBits.W))
  hitWay := OHToUInt(won.sel.take(p.ways))
  // With SRAM (many sets: 128 words in babelfish_l2) the set's replacement word is read one
  // stage earlier, in pick ([[ReadAhead]]): the 1-of-sets multiplexer of the words then runs
  // beside the class priority instead of in front of the fill's way choice, and each update is
  // computed once from that word and written into its set, instead of by update logic per set
  // with the way fanned out to every word.
  private val pageAhead = if (p.sram && timing.selReg && p.sets > 1) Some(new ReadAhead(pageRepl, setW)) else None
  // (with rowReg the set comparison of the bypass is registered in pick: the operation in pick
  // now is the one in respond next cycle, and the one in respond now is the one that touched)
  private val pageWord = pageAhead.map { a =>
    val early = RegNext(pageRepl.peekOH(k.bits.setOH))
    if (timing.rowReg) a.wordSame(RegNext(k.bits.set === s.bits.set), early) else a.word(set, early)
  }
  private val touchWord = pageWord.map { pw =>
    // (with rowReg from the one-hot winner: no encoded way in front of the tree update)
    if (timing.rowReg) pageRepl.policy.touchOH(pw, won.sel.take(p.ways)) else pageRepl.policy.touch(pw, hitWay)
  }
  // (with rowReg each array's touch is enabled by its own winner bits, which imply a hit: the
  // superpage state's enables then do not wait for the set's ways)
  private val selSuper = if (timing.rowReg) won.sup else VecInit(won.sel.drop(p.ways)).asUInt.orR
  // (with rowReg: the touch enables, lookup and winning array, made in pick and registered, so
  // that they do not start from respond's high-fan-out `lookupNow`)
  private val kLookup = k.valid && k.bits.kind === AccessKind.Lookup
  private val touchPage = Stage.carry(kLookup && pick.hit && !pick.sup, timing.selReg)
  private val touchSuper = Stage.carry(kLookup && pick.sup, timing.selReg)
  if (timing.rowReg) {
    when(touchPage) {
      touchWord match {
        case Some(t) => pageRepl.writeOH(s.bits.setOH, t)
        case None    => pageRepl.touch(set, hitWay)
      }
    }
    when(touchSuper) {
      superRepl.writeOH(1.U, superRepl.policy.touchOH(superRepl.peek(0.U), won.sel.drop(p.ways)))
    }
  } else when(lookupNow && hit) {
    when(selPage) {
      // with the read-ahead word the new word is computed once and written into the one set
      touchWord match {
        case Some(t) => pageRepl.writeOH(s.bits.setOH, t)
        case None    => pageRepl.touch(set, hitWay)
      }
    }.otherwise {
      superRepl.touch(0.U, OHToUInt(won.sel.drop(p.ways)))
    }
  }
  pageAhead.foreach(_.touched(if (timing.rowReg) touchPage else lookupNow && selPage, set,
    if (timing.rowReg) Mux(s.bits.kind === AccessKind.Fill, pageWord.get, touchWord.get) else touchWord.get))
  private val pageVictim = pageWord.map(pageRepl.policy.victim(_)).getOrElse(pageRepl.victim(set))

  // ---- fill: choose the way in respond, write it in commit ---------------------------------
  private val fillNow = s.valid && s.bits.kind === AccessKind.Fill
  private val n = rule.entryOf(s.bits.fill)
  private val toSuper = PageSize.isSuper(n.pageSize)

  /** Way to write in an array: same key, else first invalid, else the victim. */
  private def chooseWay(sameKey: Seq[Bool], vs: Seq[Bool], victim: UInt): (UInt, Bool) = {
    val free = vs.map(!_)
    val evict = !sameKey.reduce(_ || _) && !free.reduce(_ || _)
    val way = Mux(sameKey.reduce(_ || _), PriorityEncoder(sameKey), Mux(evict, victim, PriorityEncoder(free)))
    (way, evict)
  }
  /** [[chooseWay]] from what pick found ([[EarlyWay]]). */
  private def chooseEarly(e: EarlyWay, victim: UInt): (UInt, Bool) = {
    val evict = !e.anySame && !e.anyFree
    (Mux(e.anySame, e.sameWay, Mux(evict, victim, e.freeWay)), evict)
  }
  private val choiceS = choiceK.map(Stage.carry(_, timing.selReg))
  private val (pageWay, pageEvict) = choiceS match {
    case Some(cs) => chooseEarly(cs(0), pageVictim)
    case None     => chooseWay(same.take(p.ways), rowValid, pageVictim)
  }
  private val (superWay, superEvict) = choiceS match {
    case Some(cs) => chooseEarly(cs(1), superRepl.victim(0.U))
    case None     => chooseWay(same.drop(p.ways), superValid, superRepl.victim(0.U))
  }

  private val choice = Wire(Valid(new FillCommit(p)))
  choice.valid := fillNow && n.pageSize =/= PageSize.Reserved.U
  choice.bits.entry := n
  choice.bits.set := set
  choice.bits.toSuper := toSuper
  choice.bits.way := Mux(toSuper, superWay, pageWay)
  choice.bits.evict := Mux(toSuper, superEvict, pageEvict)
  private val w = Stage(choice, timing.selReg)
  // the fill's new replacement word (as ReplacementState.fill makes it), from the read-ahead
  // word: nothing else updates the set between respond and commit (write shadow)
  // the commit's way is wide enough for either array: each array takes the bits it indexes by
  private val pageWayW = w.bits.way(log2Ceil(p.ways).max(1) - 1, 0)
  // (with rowReg computed in commit from the registered word, way and evict: out of the way
  // choice's path)
  private val fillWordW = pageWord.map { pw =>
    val pol = pageRepl.policy
    val way = Wire(UInt(pol.wayBits.W))
    if (timing.rowReg) {
      val pwW = pageAhead.get.last
      way := pageWayW
      pol.touch(Mux(w.bits.evict, pol.taken(pwW), pwW), way)
    } else {
      way := pageWay
      RegNext(pol.touch(Mux(pageEvict, pol.taken(pw), pw), way))
    }
  }
  private val superWayW = w.bits.way(log2Ceil(p.superpageEntries).max(1) - 1, 0)

  pages.io.write.valid := w.valid && !w.bits.toSuper
  pages.io.write.bits.set := w.bits.set
  pages.io.write.bits.way := pageWayW
  pages.io.write.bits.data := w.bits.entry.withVpn(w.bits.entry.vpn >> p.setBits)
  supers.io.write.valid := w.valid && w.bits.toSuper
  supers.io.write.bits.set := 0.U
  supers.io.write.bits.way := superWayW
  supers.io.write.bits.data := w.bits.entry

  // SRAM: the set's valid word as the fill leaves it (the row's bits read in match, unchanged
  // since: write shadow), written whole in commit
  // (with rowReg: computed in commit from the registered way, out of the way choice's path)
  private val fillValidW =
    if (timing.rowReg) VecInit(RegNext(rowValid).zipWithIndex.map { case (b, i) => b || pageWayW === i.U })
    else Stage.carry(VecInit(rowValid.zipWithIndex.map { case (b, i) => b || pageWay === i.U }), timing.selReg)
  when(w.valid && !w.bits.toSuper) {
    pageValid.foreach(_(w.bits.set)(pageWayW) := true.B)
    pageOwner.foreach { o =>
      val d = o(w.bits.set)(pageWayW)
      d.global := w.bits.entry.global; d.own := w.bits.entry.own; d.pcid := w.bits.entry.pcid; d.ccid := w.bits.entry.ccid
      if (p.vmid) d.vmid := w.bits.entry.vmid
    }
    fillWordW match {
      // the read-ahead exists only with selReg: the commit is the cycle after respond
      case Some(f) => pageRepl.writeOH(RegNext(s.bits.setOH), f)
      case None    => pageRepl.fill(w.bits.set, pageWayW, w.bits.evict)
    }
  }
  when(w.valid && w.bits.toSuper) {
    if (!timing.rowReg) superValid(superWayW) := true.B
    superRepl.fill(0.U, superWayW, w.bits.evict)
  }
  // With rowReg the superpage valid bits take registered per-entry enables: set, decoded in
  // respond from the chosen way and registered into commit; cleared, the removal mask with the
  // invalidation's kind and valid folded in pick and registered into respond (one LUT in front
  // of each valid flop instead of the commit's and respond's control fanned out to them)
  if (timing.rowReg) {
    val setW = RegNext(VecInit((0 until p.superpageEntries).map(j => choice.valid && toSuper && superWay === j.U)),
      VecInit(Seq.fill(p.superpageEntries)(false.B)))
    val kInval = k.valid && k.bits.kind === AccessKind.Inval
    val clrS = RegNext(VecInit(superRmK.map(_ && kInval)), VecInit(Seq.fill(p.superpageEntries)(false.B)))
    for (j <- 0 until p.superpageEntries) {
      when(clrS(j)) { superValid(j) := false.B }.elsewhen(setW(j)) { superValid(j) := true.B }
    }
  }
  private val evicted = w.valid && w.bits.evict

  // ---- invalidation ------------------------------------------------------------------------
  private val invalNow = s.valid && s.bits.kind === AccessKind.Inval
  private val iv = s.bits.inval
  // (with a VMID tag only kind 0 is VM-blind: the others are sweeps or page kinds)
  private def flashOf(kind: UInt): Bool =
    if (p.vmid) kind === InvalKind.All.U
    else kind === InvalKind.All.U || kind === InvalKind.NonGlobal.U || InvalKind.reserved(kind, p)
  private val flash = flashOf(iv.kind)
  // SRAM: the set read loses what the invalidation removes (a page kind, or a sweep's set),
  // or every set takes a flash flag (the flags are set after any write of the same cycle)
  // A fill's commit and an invalidation's respond never share a cycle (write shadow): one
  // write port.
  pageValidRam.foreach { v =>
    val fillW = w.valid && !w.bits.toSuper
    val invalWord = VecInit(rowValid.zip(pageRm(0)).map { case (b, rm) => b && !rm })
    if (timing.rowReg) {
      // the set one-hot registered with the commit (the commit is the cycle after respond)
      val oh = Wire(UInt(p.sets.W))
      oh := Mux(fillW, RegNext(s.bits.setOH), s.bits.setOH)
      // which invalidation writes, decided in pick from its kind and registered (selReg: respond
      // is the cycle after pick), so that the enables fanned out to every set's flags start
      // from registers
      val ki = k.valid && k.bits.kind === AccessKind.Inval
      val kFlash = flashOf(k.bits.inval.kind)
      val invalSetW = RegNext(ki && !kFlash, false.B)
      val flashW = RegNext(ki && kFlash, false.B)
      val flashNonGlobal = RegNext(k.bits.inval.kind === InvalKind.NonGlobal.U)
      v.writeOH(fillW || invalSetW, Mux(fillW, w.bits.set, set), oh, Mux(fillW, fillValidW, invalWord))
      v.flash(flashW, flashNonGlobal)
    } else {
      v.write(fillW || (invalNow && !flash), Mux(fillW, w.bits.set, set), Mux(fillW, fillValidW, invalWord))
      v.flash(invalNow && flash, iv.kind === InvalKind.NonGlobal.U)
    }
  }
  when(invalNow) {
    pageValid.foreach { pv =>
      for (i <- 0 until p.sets; w <- 0 until p.ways) { when(pageRm(i)(w)) { pv(i)(w) := false.B } }
    }
    if (!timing.rowReg) for (j <- 0 until p.superpageEntries) {
      when(superRm(j)) { superValid(j) := false.B }
    }
  }

  // ---- counters ----------------------------------------------------------------------------
  private val pcIdxOutOfRange =
    if ((1 << p.pcIdxBits) > p.pcBits) io.lookup_req.bits.pcIdx >= p.pcBits.U else false.B
  PerfCounters.connect(
    io.perf,
    "lookups" -> PerfCounter(doLookup),
    "hits" -> PerfCounter(lookupNow && hit),
    "sharedHits" -> PerfCounter(lookupNow && resp.shared),
    "crossHits" -> PerfCounter(lookupNow && resp.crossHit),
    "permFaults" -> PerfCounter(lookupNow && resp.permFault),
    "fills" -> PerfCounter(doFill),
    "evictions" -> PerfCounter(evicted),
    "invals" -> PerfCounter(doInval),
    "badFills" -> PerfCounter(doFill && rule.badFill(io.fill.bits)),
    "badPcIdx" -> PerfCounter(doLookup && io.lookup_req.bits.pcIdxValid && pcIdxOutOfRange),
    "badCmds" -> PerfCounter(doLookup && io.lookup_req.bits.cmd === AccessCmd.Reserved.U),
    "badInvals" -> PerfCounter(doInval && InvalKind.reserved(io.inval.bits.kind, p))
  )

  // ---- formal view -------------------------------------------------------------------------
  io.dbg.foreach { d =>
    val all = (for (i <- 0 until p.sets; w <- 0 until p.ways) yield pageView(pages.io.all(i)(w), i.U(setW.W))) ++
      supers.io.all(0)
    val pv = pageValidRam match {
      case Some(ram) => ram.view(Seq.tabulate(p.sets, p.ways)((i, w) => pages.io.all(i)(w).global))
      case None      => Seq.tabulate(p.sets, p.ways)((i, w) => pageValid.get(i)(w))
    }
    val v = pv.flatten ++ superValid
    d.valid := VecInit(v).asUInt
    d.vpn := VecInit(all.map(_.vpn)).asUInt
    d.ppn := VecInit(all.map(_.ppn)).asUInt
    d.pageSize := VecInit(all.map(_.pageSize)).asUInt
    d.global := VecInit(all.map(_.global)).asUInt
    d.own := VecInit(all.map(_.own)).asUInt
    d.pcid := VecInit(all.map(_.pcid)).asUInt
    d.ccid := VecInit(all.map(_.ccid)).asUInt
    if (p.vmid) d.vmid := VecInit(all.map(_.vmid)).asUInt else d.vmid := 0.U(0.W)
    d.pc := VecInit(all.map(_.pc)).asUInt
    d.orpc := VecInit(all.map(_.orpc.orR)).asUInt
  }
}

object AccessKind extends ChiselEnum {
  val Lookup, Fill, Inval = Value
}

/** An operation on its way from acceptance to the access stage. */
class AccessOp(p: BabelFishParams) extends Bundle {
  val kind = AccessKind()
  val set = UInt(p.setBits.max(1).W)
  /** `set` one-hot (SRAM with more than one set; else 1 bit, unused). */
  val setOH = UInt((if (p.sram && p.sets > 1) p.sets else 1).W)
  val lookup = new LookupReq(p)
  val fill = new FillReq(p)
  val inval = new InvalReq(p)
  /** `inval.kind` one-hot ([[MatchRule.kindsOf]]). */
  val invalKinds = UInt((1 << InvalKind.width).W)
  /** `lookup`'s PrivateCopy bit one-hot ([[MatchRule.pcSelectOf]]). */
  val pcSelect = new PcSelect(p)
}

/** The pick stage's result: the winning entry (one-hot over the set's ways, then the
  * superpage entries), whether there is one, and whether it is a shared entry (with SRAM
  * latency 5, 6 respond makes these two from `any` instead).
  */
class Pick(n: Int) extends Bundle {
  val sel = Vec(n, Bool())
  val hit = Bool()
  val shared = Bool()
  /** Whether an entry of each class matches (private, global, shared). */
  val any = Vec(3, Bool())
  /** Whether the winner is a superpage entry (SRAM latency 5, 6; else false). */
  val sup = Bool()
}

/** What pick finds for a fill in one array (SRAM latency 5, 6): a valid way with the same key
  * (the lowest), and the lowest invalid way.
  */
class EarlyWay(p: BabelFishParams) extends Bundle {
  val anySame = Bool()
  val sameWay = UInt(log2Ceil(p.ways.max(p.superpageEntries)).max(1).W)
  val anyFree = Bool()
  val freeWay = UInt(log2Ceil(p.ways.max(p.superpageEntries)).max(1).W)
}

/** A fill's chosen way, on its way from respond to commit. */
class FillCommit(p: BabelFishParams) extends Bundle {
  val entry = new BabelFishEntry(p, p.vpnBits)
  val set = UInt(p.setBits.max(1).W)
  val toSuper = Bool()
  val way = UInt(log2Ceil(p.ways.max(p.superpageEntries)).max(1).W)
  val evict = Bool()
}

/** The superpage array's matches per class, resolved in match (SRAM latency 5, 6): `sel(c)` the
  * lowest-index entry of class c (0 private, 1 global, 2 shared) one-hot, `any(c)` whether one
  * matches.
  */
class ClassWin(n: Int) extends Bundle {
  val sel = Vec(3, Vec(n, Bool()))
  val any = Vec(3, Bool())
}

object ClassWin {
  private val group = 4
  private def groups(h: Seq[Bool]): Seq[Bool] = h.grouped(group).map(g => VecInit(g).asUInt.orR).toSeq

  /** Whether any of `h` is set, as a tree over groups of 4. */
  def anyOf(h: Seq[Bool]): Bool = VecInit(groups(h)).asUInt.orR

  /** The lowest set bit of `h` one-hot: set, no lower bit of its group set, and no lower group
    * with a bit set (each term an OR of at most 4 bits, so 2-3 LUT levels for 16 entries).
    */
  def lowestOH(h: Seq[Bool]): Seq[Bool] = {
    val g = groups(h)
    h.zipWithIndex.map { case (b, j) =>
      val gi = j / group
      val lowerInGroup = (gi * group until j).map(h(_))
      val lowerGroups = g.take(gi)
      val lower = lowerInGroup ++ lowerGroups
      if (lower.isEmpty) b else b && !VecInit(lower).asUInt.orR
    }
  }
}
