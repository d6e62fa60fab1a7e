package xlat.walker

import chisel3._
import chisel3.util._
import xlat.common._

/** NestedWalker: two-dimensional page walks, a guest table over a host table, several in flight.
  *
  * ==Structure==
  * `walkers` walk slots ([[WalkSlot]]) share one step engine, one memory port, the A/D locks
  * (one per leaf address being updated) and three optional caches ([[AssocCache]]): the guest PWC (guest pointers by vmid, asid, level
  * and VA prefix), the host PWC (host pointers by vmid, level and GPA prefix) and the nested TLB
  * (host leaves, GPA page -> HPA page). Formats are data ([[PtFormat]]), so the same engine
  * walks x86-64 over EPT and Sv39 over Sv39x4.
  *
  * ==State machine (per slot, [[WalkState]])==
  * {{{
  * Start -> HostStart -> (nested TLB hit) ----------------------------+
  *              |  (miss: host PWC, then host levels)                 |
  *              +-> ReadHost -> MemWait -> HostEntry --(pointer)--> ReadHost
  *                                          | (leaf; A/D: Lock -> ReadLocked -> MemWait
  *                                          |   -> WriteAd -> MemWait -> Dirty)
  *                                          +-> HostLeafDone ---------+
  *   page-table access: ReadGuest -> MemWait -> GuestEntry <----------+
  *        pointer: -> HostStart (next guest level);  leaf (+A/D) -> GuestLeafDone -> HostStart
  *   data access: -> Done (response)
  * }}}
  * Engine states take one turn of the step engine (one slot at a time; each turn does at most
  * one cache lookup or fill); the engine's choice is registered (a round robin picks the slot
  * served in the next cycle, from the slots' next states). A lookup turn is four cycles on the
  * same slot: match (every entry compared, hit vectors registered), select (the deepest
  * registered hit still valid, registered one-hot), read (that entry's fields registered),
  * then the turn (the slot's next registers); the hit's pin / PLRU / re-reference update and a fill
  * land one cycle after their turn (AssocCache `late`; a flush in that cycle drops the fill).
  * Each slot's turn is computed from its own registers every cycle (per-slot precomputation);
  * the served slot loads its own, so no 1-of-walkers multiplexer sits in front of a turn.
  * The turn's branch is decided a cycle ahead: every slot registers its decision vector
  * (`decR`, one-hot over the branches of its state: fault kinds, pointer, leaf, A/D, done; see
  * `Br`), and the engine registers which slot takes its turn in the next cycle (`goI`); a slot
  * served again right after its own turn takes the decision of the state that turn leads to
  * (`decisionsAfter`). Only HostStart's choice among its lookup's outcomes (nested TLB deny /
  * answer / guest-entry read, host read) is made in the turn, from the registered select. Every
  * slot register is written by one AND-OR of its writers (`writes`: acceptance, turn, memory
  * port and response, A/D lock, dirty and response channels, flush act in exclusive states),
  * so a turn's enable of a register is `goI` AND an OR of registered decision bits.
  * Issue states take
  * the memory port (round robin); a
  * slot has at most one access outstanding and tags it with its request id.
  *
  * ==Modes==
  * A request's `mode` ([[TransMode]]) picks the stages, decided at acceptance and kept in the
  * slot, so the step engine is the 2D walk's: a stage-1-only walk is a 2D walk whose host
  * translations are the identity (HostStart's identity branch: the address is the HPA, checked
  * against `paBits`, no host read, no nested TLB or host PWC use); a stage-2-only walk starts at
  * the final GPA's host walk (Start's stage-2 branch: `target` = `gva`, `forData`). Guest PWC
  * entries carry the stage-1-only bit in their tag (their table is host-physical), so the two
  * kinds never answer each other; the host PWC and the nested TLB are shared by stage-2-only
  * and 2D walks. Bare (0) is bad input: fault 4 at Start, no read, counted (`badModes`).
  *
  * ==Caches and flushes==
  * A fill is provisional until its walk answers; a walk that ends in a bus error drops its
  * fills. A flush invalidates what it names in one cycle and stops every walk in flight from
  * filling, so no entry older than the flush survives it.
  *
  * See docs/nested-walker.md for every rule, fault and port.
  */
class NestedWalker(val p: WalkerParams) extends Module {
  override def desiredName = "NestedWalker"

  val io = FlatIO(new Bundle {
    val req = Flipped(Decoupled(new WalkReq(p)))
    val resp = Decoupled(new WalkResp(p))
    val mem_req = Decoupled(new MemReq(p.idBits, p.paBits))
    val mem_resp = Flipped(Decoupled(new MemResp(p.idBits)))
    val dirty = Decoupled(new DirtyEvent(p))
    val flush = Flipped(Decoupled(new WalkerFlush(p)))
    val perf = Output(new PerfCounters(WalkerPerf.names))
    val dbg = if (p.formalPorts) Some(Output(new WalkerDbg(p))) else None
  })

  import WalkState._
  private val g = p.g
  private val h = p.h
  private val W = p.walkers

  // ---- address helpers ----------------------------------------------------------------------
  /** Keeps the page-number bits above a leaf (or pointer) at `level`: clears the low 9 * level. */
  private def keep(level: UInt, width: Int): UInt = {
    val all = (BigInt(1) << width) - 1
    MuxLookup(level, all.U(width.W))(
      (1 to 3).map(l => l.U -> (all & ~((BigInt(1) << (9 * l).min(width)) - 1)).U(width.W))
    )
  }
  /** The 4 KiB frame of page number `pn` inside the page of `level` based at `base`. */
  private def frame(base: UInt, level: UInt, pn: UInt): UInt = {
    val k = keep(level, base.getWidth)
    (base & k) | (pn.pad(base.getWidth)(base.getWidth - 1, 0) & ~k)
  }
  /** An OR, not a sum: the index never reaches into the table's bits (a 9-bit index spans
    * bits 11:3; an x4 root's 11-bit index spans bits 13:3 over a root whose low 2 page bits
    * are 0, see hRootDrop). */
  private def entryAddr(table: UInt, index: UInt, width: Int): UInt =
    ((table << 12) | (index << 3)).pad(width)(width - 1, 0)
  private def allPerm: Perm = { val a = Wire(new Perm); a.r := true.B; a.w := true.B; a.x := true.B; a.u := true.B; a }
  private def andPerm(a: Perm, b: Perm): Perm = {
    val c = Wire(new Perm); c.r := a.r && b.r; c.w := a.w && b.w; c.x := a.x && b.x; c.u := a.u && b.u; c
  }
  private def inGpaRange(t: UInt): Bool = if (p.targetBits > p.gpaBits) !t(p.targetBits - 1, p.gpaBits).orR else true.B
  private def gpnOf(t: UInt): UInt = t(p.gpaBits - 1, 12)
  private def isCmd(c: UInt, k: Int): Bool = c === k.U
  /** The host leaf's check, [[PrivCheck.stage2]] (RISC-V G-stage: U needed, docs/privcheck.md;
    * EPT) of the access the host translation makes: a write, a fetch or a read. `mxr` is the
    * HS-level MXR of the data access only: "Setting MXR at HS-level, however, overrides both
    * VS-stage and G-stage execute-only permissions", and MXR "makes execute-only pages readable
    * by explicit loads" (H extension, "Two-Stage Address Translation"), which an implicit read
    * of a guest table is not (**decided**, docs/nested-walker.md "The walk").
    */
  private def hostDenies(perm: Perm, write: Bool, fetch: Bool, mxr: Bool): Bool = {
    val f = WireDefault(0.U.asTypeOf(new PrivFlags))
    f.mxr := mxr
    PrivCheck.stage2(h.family, Mux(write, AccessCmd.Write.U, Mux(fetch, AccessCmd.Exec.U, AccessCmd.Read.U)), f, perm)
  }

  // ---- slots -------------------------------------------------------------------------------
  private val state = RegInit(VecInit(Seq.fill(W)(Idle)))
  private val slot = Reg(Vec(W, new WalkSlot(p)))
  private val busy = state.map(_ =/= Idle)
  /** The writes of the slot registers and states, collected from every writer (acceptance, the
    * step engine's turn, memory port, memory response, A/D lock, dirty and response channels,
    * flush) and emitted at the end as one AND-OR per register: the writers act in exclusive
    * states (the flush only on `noFill` of busy slots, which acceptance writes in an idle one),
    * so no writer's value passes another's multiplexer and each enable is one OR.
    */
  private val writes = Seq.fill(W)(scala.collection.mutable.LinkedHashMap[Data, Seq[(Bool, Data)]]())
  /** The turn's writes alone (also in `writes`): a slot's registers after its turn. */
  private val turnWrites = Seq.fill(W)(scala.collection.mutable.LinkedHashMap[Data, Seq[(Bool, Data)]]())
  private var inTurn = false
  private def put(i: Int, dst: Data, c: Bool, v: Data): Unit = {
    writes(i)(dst) = writes(i).getOrElse(dst, Seq()) :+ (c -> v)
    if (inTurn) turnWrites(i)(dst) = turnWrites(i).getOrElse(dst, Seq()) :+ (c -> v)
  }
  private def putState(i: Int, c: Bool, v: WalkState.Type): Unit = put(i, state(i), c, v.asUInt)

  // ---- caches ------------------------------------------------------------------------------
  // Keys: two entries with the same key cover the same addresses (a fill of one refreshes the other).
  private def samePrefix(a: UInt, b: UInt, level: UInt): Bool = ((a ^ b) & keep(level, a.getWidth)) === 0.U
  private val gpwc = Option.when(p.guestPwcEntries > 0)(
    new AssocCache(new GuestPwcEntry(p), p.guestPwcEntries, p.slotBits, Some((a: GuestPwcEntry, b: GuestPwcEntry) =>
      a.vmid === b.vmid && a.asid === b.asid && a.s1 === b.s1 && a.level === b.level && samePrefix(a.vpn, b.vpn, a.level)), pins = true, reuse = true, late = true, keyIn = true, ahead = true, split = true, writeLate = true)
  )
  private val hpwc = Option.when(p.hostPwcEntries > 0)(
    new AssocCache(new HostPwcEntry(p), p.hostPwcEntries, p.slotBits, Some((a: HostPwcEntry, b: HostPwcEntry) =>
      a.vmid === b.vmid && a.level === b.level && samePrefix(a.gpn, b.gpn, a.level)), pins = true, reuse = true, late = true, keyIn = true, ahead = true, split = true, writeLate = true)
  )
  private val ntlb = Option.when(p.nestedTlbEntries > 0)(
    new AssocCache(new NestedTlbEntry(p), p.nestedTlbEntries, p.slotBits, Some((a: NestedTlbEntry, b: NestedTlbEntry) =>
      a.vmid === b.vmid && a.size === b.size && samePrefix(a.gpn, b.gpn, a.size)), pins = true, reuse = true, late = true, keyIn = true, ahead = true, split = true, writeLate = true)
  )

  private def anyOf(x: Seq[Bool]): Bool = VecInit(x).asUInt.orR
  /** The lowest set bit of `x` one-hot, each bit from the OR of the bits below it, those ORs a
    * parallel prefix (Sklansky) tree: shared between the bits, yet log depth (not a chain). */
  private def firstOH(x: Seq[Bool]): Seq[Bool] = {
    def scan(v: Seq[Bool]): Seq[Bool] =
      if (v.size <= 1) v
      else { val (l, h) = v.splitAt(v.size / 2); val sl = scan(l); sl ++ scan(h).map(_ || sl.last) }
    val below = false.B +: scan(x).init
    x.indices.map(i => x(i) && !below(i))
  }
  /** The select of a lookup: `hitsR` the registered matches (per level with `levels`, one vector
    * otherwise), kept on entries still valid and not rewritten by the fill that landed in the
    * match cycle, nor by the fill written at the end of this (select) cycle (the read cycle
    * after it reads the chosen entry's fields: they must be the ones matched); the deepest
    * level's (the walk then skips the most reads), then the lowest-index entry. Returns hit,
    * the entry one-hot and the hit's level one-hot (levels 1.. in order).
    */
  private def select[T <: Data](c: AssocCache[T], hitsR: Seq[Vec[Bool]]): (Bool, Seq[Bool], Seq[Bool]) = {
    // (the entries valid and not just rewritten: `validKept` registered beside the hits, not
    // into them, so the flush's invalidation is not in front of the hit registers)
    val keptR = RegNext(c.validKept)
    val at = hitsR.map(_.toSeq.zip(c.writing).zip(keptR).map { case ((h, w), k) => h && k && !w })
    val any = at.map(anyOf)
    val lvOH = firstOH(any)
    val perLevel = at.map(firstOH)
    val eOH = (0 until c.n).map(j => anyOf(perLevel.zip(lvOH).map { case (o, l) => o(j) && l }))
    (anyOf(any), eOH, lvOH)
  }
  /** A lookup's select registered (select cycle: hit, entry one-hot, level one-hot), then the
    * chosen entry's fields read by that one-hot and registered with its index (read cycle), so
    * neither the first-hit scan nor the entries' AND-OR is in front of the other or of the turn.
    * Returns, for the turn: hit, entry, index, the level below the hit's (pointer caches), and
    * the select's entry one-hot register (for reads beside the entry's, in the read cycle).
    */
  private def selRead[T <: Data](c: AssocCache[T], sel: (Bool, Seq[Bool], Seq[Bool])): (Bool, T, UInt, UInt, Vec[Bool]) = {
    val (hit, eOH, lvOH) = sel
    val eOHR = RegNext(VecInit(eOH))
    (RegNext(RegNext(hit)), RegNext(Mux1H(eOHR, c.entries)), RegNext(OHToUInt(eOHR)), RegNext(RegNext(below(lvOH))), eOHR)
  }

  // ---- accept ------------------------------------------------------------------------------
  // The acceptance reads each slot's "idle" from a register, loaded in the cycle before from the
  // slot's next state (`nextIn` over Idle, with the channel choices below): `req_ready`, the id
  // compares and the free slot's choice start from it, not from the state decodes, so the
  // engine's choice ahead (which takes an accepted slot's Start) has a register, not the slots'
  // states, at the start of its acceptance term (invariant I9: `dbg_chanOk` bit 3).
  private val freeR = RegInit(VecInit(Seq.fill(W)(true.B)))
  private val free = freeR.toSeq
  private val idInFlight = (0 until W).map(i => !free(i) && slot(i).id === io.req.bits.id).reduce(_ || _)
  private val freeOH = PriorityEncoderOH(free)
  io.req.ready := free.reduce(_ || _) && !idInFlight
  private val sAcc = WireDefault(0.U.asTypeOf(new WalkSlot(p)))
  locally {
    val r = io.req.bits
    val s = sAcc
    s.id := r.id; s.gva := r.gva; s.asid := r.asid; s.vmid := r.vmid; s.hRoot := r.hRoot >> p.hRootDrop; s.cmd := r.cmd
    s.user := r.user; s.flags := r.flags; s.gTable := r.gRoot; s.gLevel := g.topLevel.U; s.gPerm := allPerm
    s.mode := r.mode
    // (a single-stage walk answers with the absent stage's permission: all; a 2D walk writes
    // hPerm before it reads it)
    s.hPerm := allPerm
  }
  private val badMode = io.req.bits.mode === TransMode.Bare.U
  // An idle slot's registers load the request in every cycle, so the one the acceptance takes
  // holds it when it leaves Idle: only its state waits for the acceptance (the id compares, the
  // free slot's choice and `valid`), and the slot's hundreds of register enables hang on one
  // decode of its state (no reader looks at an idle slot's fields: each is behind `busy` or a
  // state's decode; no other writer acts in Idle).
  for (i <- 0 until W) {
    val acc = io.req.fire && freeOH(i)
    for ((name, f) <- slot(i).elements) put(i, f, free(i), sAcc.elements(name))
    putState(i, acc, Start)
  }

  // ---- step engine -------------------------------------------------------------------------
  // The engine serves the slot `cur` chosen in the previous cycle (a registered choice: the
  // round robin over the slots' states runs beside the turn instead of in front of it). A slot
  // leaves an engine state only by its own turn, so a slot chosen in an engine state is still
  // in one when served; the slot being served is a candidate of the next choice too (it may go
  // on to another engine state, e.g. Start -> HostStart), last in the round-robin order, and if
  // its turn took it out of the engine states the cycle it is served in does nothing.
  private val engineStates = Seq(Start, HostStart, HostEntry, HostLeafDone, GuestEntry, GuestLeafDone)
  private val wantsEngine = VecInit(state.map(st => engineStates.map(_ === st).reduce(_ || _)))
  // The round robin's choice (without hold) is itself a register, computed in the cycle before
  // from the slots' registered states (those in an engine state that their turn does not take
  // out, below) and the thermometer `last` as the grant of that cycle leaves it: the round
  // robin on `wantsEngine` now without the slots another writer took into an engine state in
  // the cycle before (they are candidates a cycle later), so `cur`'s and the registered key's
  // loads start from a register, not from the slots' states through the round robin
  // (invariant I7: `dbg_engOk`).
  private val engOH = RegInit(VecInit(Seq.fill(W)(false.B)))
  /** The last grant as a thermometer (bit j: j is after it; reset: none granted). */
  private val engAfter = RegInit(VecInit(Seq.fill(W)(false.B)))
  private val engValid = engOH.asUInt.orR
  private val engThermo = VecInit((0 until W).map(j => (0 until j).map(engOH(_)).foldLeft(false.B)(_ || _)))
  // Four-cycle lookup turns (`lookStates`: the engine states that look a cache up, when that
  // cache exists). The first cycle (match) compares the slot's key with every entry and
  // registers the hit vectors; the engine stays on that slot (`lookPhase`); the second cycle
  // (select) takes the deepest registered hit that is still valid and registers it one-hot,
  // with its next level; the third (read) registers that entry's fields and way; the fourth
  // (the turn) does the rest of the turn from those registers. Nothing lands in the select,
  // read or turn cycle (the engine is the only filler, held on this slot, and a fill lands one
  // cycle after its turn, in the match cycle at the latest); the fill that landed in the match
  // cycle writes its entry at the end of the select cycle, so the select skips that entry (as
  // it skips one written at the end of the match cycle), and the fields read are the data the
  // entry was matched against. An invalidation (flush, a bus-error walk's drop) in the match
  // cycle removes the hit, one in the select, read or turn cycle does not (the walk is in
  // flight at it, as every such walk).
  private val lookStates = Seq(Start -> gpwc.isDefined, HostStart -> (ntlb.isDefined || hpwc.isDefined)).collect {
    case (k, true) => k
  }
  /** The lookup turn's phase: 1 in its select cycle, 2 in its read cycle, 3 in its turn cycle
    * (0 otherwise). */
  private val lookPhase = RegInit(0.U(2.W))
  private val curValid = RegInit(false.B)
  private val cur = RegInit(0.U(p.slotBits.W))
  private val e = cur
  private val s = slot(e)
  private val st = state(e)
  /** `cur` one-hot with `curValid` folded in (the per-slot turn enables start from it). */
  private val curOH = (0 until W).map(i => curValid && cur === i.U)
  private def lookState(x: WalkState.Type): Bool = lookStates.map(_ === x).foldLeft(false.B)(_ || _)
  private val servedI = (0 until W).map(i => curOH(i) && wantsEngine(i))
  private val matchI = (0 until W).map(i => servedI(i) && lookPhase === 0.U && lookState(state(i)))
  private val selectI = (0 until W).map(i => servedI(i) && lookPhase === 1.U)
  private val readI = (0 until W).map(i => servedI(i) && lookPhase === 2.U)
  /** Slot i takes the last (or only) cycle of its turn: `goF` from the engine's registers and the
    * slot's state; `goI` the same, registered a cycle ahead (below: every enable of a turn
    * starts from it). */
  private val goF = (0 until W).map(i => servedI(i) && (lookPhase === 3.U || !lookState(state(i))))
  private val goI = RegInit(VecInit(Seq.fill(W)(false.B)))
  private val matchTurn = anyOf(matchI)
  private val selectTurn = anyOf(selectI)
  private val readTurn = anyOf(readI)
  /** The engine stays on the served slot (a lookup past its turn's first cycle follows): a
    * register, computed in the cycle before (`heldNext`, below), so the choice ahead's thermometer
    * and the key copies' enables start from it, not from `cur` and the served slot's state
    * (invariant I7: `dbg_engOk`). */
  private val heldR = RegInit(false.B)
  private val held = heldR
  lookPhase := Mux(matchTurn, 1.U, Mux(selectTurn, 2.U, Mux(readTurn, 3.U, 0.U)))
  when(held) { curValid := true.B }
    .otherwise {
      curValid := engValid
      cur := OHToUInt(engOH)
      when(engValid) { engAfter := engThermo }
    }
  /** Which cache operations a slot's turn asks for (before `go`: the served slot's count). */
  private class TurnOps extends Bundle {
    val useG, useH, useT, fillG, fillH, fillT = Bool()
  }
  private val filled = WireDefault(false.B)

  private def gvpnOf(x: WalkSlot): UInt = x.gva(g.inputBits - 1, 12)
  private def hostWriteOf(x: WalkSlot): Bool = Mux(x.forData, isCmd(x.cmd, AccessCmd.Write), p.hardwareAd.B)
  /** The fields of a slot its lookups and fills compare with the caches' keys. */
  private class LookKey extends Bundle {
    val vmid = UInt(p.vmidBits.W)
    val asid = UInt(p.asidBits.W)
    val gvpn = UInt((g.inputBits - 12).W)
    val gpn = UInt((p.gpaBits - 12).W)
    val gLevel = UInt(p.levelBits.W)
    val hLevel = UInt(p.levelBits.W)
    val hostWrite = Bool()
    val hostFetch = Bool()
    /** The HS-level MXR applies to the host check (hostMxrOf). */
    val hostMxr = Bool()
    /** The walk is stage-1-only (a guest PWC tag bit). */
    val s1 = Bool()
  }
  /** The served slot's key, registered when the engine chooses the slot (from the slot's
    * registers as they are after that cycle: a slot chosen while it takes its turn is served with
    * what the turn writes), so the compares start from registers, not from the 1-of-walkers
    * slot multiplexer. Only a slot's own turn and its acceptance write these fields, so the
    * register is the served slot's key in every cycle it is served (`dbg_keyOk`).
    */
  /** The served slot's key as the engine chooses it (registered in the copies below). */
  private val keyLoad = Wire(new LookKey)
  /** The served key in four copies that synthesis keeps apart (the plain register, one held as
    * its complement, each of the two with a reset: Yosys merges flip-flops of equal inputs and
    * kind, see [[RegCopies]]), each loaded with the same value when the engine chooses, each
    * with the fields its consumers read (the others 0): `keyR` drives the guest PWC's compares
    * and the fills' keys, `keyT` the nested TLB's, `keyH` the lower half of the host PWC's
    * entries (lookups and fills' same-key compares) and `keyH2` the upper half, so no key bit's
    * net spans more than one cache or half the host PWC (the host PWC's compare was the routed
    * critical path of walker_rv48 and walker_rv39_axi, 3.3 ns of it the key's first net across
    * the die). The reset of the last two is never seen: the engine loads them before it serves
    * a slot. `copyFields` names each copy's fields and how many low bits of each it keeps.
    */
  private def keyCopy(kind: Int, fields: Seq[(String, Int)]): LookKey = {
    val k = WireDefault(0.U.asTypeOf(new LookKey))
    for ((f, w) <- fields) {
      val src = keyLoad.elements(f).asUInt(w - 1, 0)
      val r = kind match {
        case 0 => RegEnable(src, !held)
        case 1 => ~RegEnable(~src, !held)
        case 2 => RegEnable(src, ~0.U(w.W), !held)
        case _ => ~RegEnable(~src, ~0.U(w.W), !held)
      }
      k.elements(f) := r.pad(k.elements(f).getWidth).asTypeOf(k.elements(f))
    }
    k
  }
  private val copyFields: Seq[Seq[(String, Int)]] = {
    def all(n: String*): Seq[(String, Int)] = n.map(f => f -> (new LookKey).elements(f).getWidth)
    Seq(
      all("vmid", "asid", "gvpn", "gpn", "gLevel", "hLevel", "s1"),
      all("vmid", "gpn", "hostWrite", "hostFetch", "hostMxr") :+ ("hLevel" -> 2),
      all("vmid", "gpn", "hLevel"),
      all("vmid", "gpn", "hLevel")
    )
  }
  private val keyR = keyCopy(0, copyFields(0))
  private val keyT = keyCopy(1, copyFields(1))
  private val keyH = keyCopy(2, copyFields(2))
  private val keyH2 = keyCopy(3, copyFields(3))
  /** The host PWC's key copy for entry `i` (`keyH` the lower half, `keyH2` the upper). */
  private def keyHOf(i: Int): LookKey = if (i < p.hostPwcEntries / 2) keyH else keyH2
  /** A slot's key from its registers now (for the proofs' view). */
  private def keyNowOf(x: WalkSlot): LookKey = {
    val k = Wire(new LookKey)
    k.vmid := x.vmid; k.asid := x.asid; k.gvpn := gvpnOf(x); k.gpn := gpnOf(x.target)
    k.gLevel := x.gLevel; k.hLevel := x.hLevel; k.hostWrite := hostWriteOf(x); k.hostFetch := hostFetchOf(x)
    k.hostMxr := hostMxrOf(x)
    k.s1 := x.s1Only
    k
  }
  private val gvpn = keyR.gvpn

  // Match stage: the served slot's keys against every entry, registered every cycle (read only
  // in the select cycle that follows a match turn, where the engine still serves that slot).
  private val gpnKey = keyR.gpn
  // (pointer caches: one vector per level, so the select finds the deepest level without
  // reading the entries' levels)
  // (the select ANDs each registered hit with `validKept` registered beside it: the entry is still
  // valid in the select cycle and was not rewritten at the end of the match cycle)
  private def kept[T <: Data](c: AssocCache[T], hit: T => Bool): Vec[Bool] = keptAt(c, (x: T, _: Int) => hit(x))
  private def keptAt[T <: Data](c: AssocCache[T], hit: (T, Int) => Bool): Vec[Bool] =
    RegNext(VecInit(c.entries.zipWithIndex.map { case (x, i) => hit(x, i) }))
  private val gpwcHitsR = gpwc.map(c => (1 to g.topLevel).map(l => kept[GuestPwcEntry](c, x =>
    x.vmid === keyR.vmid && x.asid === keyR.asid && x.s1 === keyR.s1 && ((x.vpn ^ gvpn) & keep(x.level, x.vpn.getWidth)) === 0.U && x.level === l.U
  )))
  private val ntlbHitsR = ntlb.map(c => kept[NestedTlbEntry](c, x =>
    x.vmid === keyT.vmid && ((x.gpn ^ keyT.gpn) & keep(x.size, x.gpn.getWidth)) === 0.U && !(keyT.hostWrite && !x.d)
  ))
  // (and whether each entry denies the served slot's access: the select takes the chosen one's)
  private val ntlbDenyR = ntlb.map(c => RegNext(VecInit(c.entries.map(x => hostDenies(x.perm, keyT.hostWrite, keyT.hostFetch, keyT.hostMxr)))))
  private val hpwcHitsR = hpwc.map(c => (1 to h.topLevel).map(l => keptAt[HostPwcEntry](c, (x, i) =>
    x.vmid === keyHOf(i).vmid && ((x.gpn ^ keyHOf(i).gpn) & keep(x.level, x.gpn.getWidth)) === 0.U && x.level === l.U
  )))
  // The select stage's choices, once for every slot (they depend on no slot register); a
  // pointer hit at level l continues at l - 1 (from the level one-hot, not the entry).
  private def below(lvOH: Seq[Bool]): UInt = Mux1H(lvOH, lvOH.indices.map(_.U(p.levelBits.W)))
  // The select's choice is registered, the chosen entry's fields read from it and registered
  // (every cycle; the turn reads them only two cycles after its select): the turn starts from
  // registers, and the first-hit scan and the entries' AND-OR are a cycle each.
  private val gSelC = gpwc.map(c => select(c, gpwcHitsR.get))
  private val tSelC = ntlb.map(c => select(c, Seq(ntlbHitsR.get)))
  private val pSelC = hpwc.map(c => select(c, hpwcHitsR.get))
  private val gSelR = gpwc.zip(gSelC).map { case (c, x) => selRead(c, x) }
  private val tSelR = ntlb.zip(tSelC).map { case (c, x) => selRead(c, x) }
  private val pSelR = hpwc.zip(pSelC).map { case (c, x) => selRead(c, x) }
  private val (gSelHit, gSelEnt, gSelWay, gSelNext) = gSelR match {
    case Some((a, b, w, l, _)) => (a, b, w, l)
    case None                  => (false.B, 0.U.asTypeOf(new GuestPwcEntry(p)), 0.U, 0.U)
  }
  private val (tSelHit, tSelEnt, tSelWay) = tSelR match {
    case Some((a, b, w, _, _)) => (a, b, w)
    case None                  => (false.B, 0.U.asTypeOf(new NestedTlbEntry(p)), 0.U)
  }
  /** The selected nested-TLB entry denies the served slot's access (registered in the read
    * cycle: the deny compares of the select cycle, on the key the engine holds and the entry
    * the select chose, which nothing rewrites from the match to the read). */
  private val tSelDeny = tSelR match {
    case Some((_, _, _, _, oh)) => RegNext(Mux1H(oh, ntlbDenyR.get))
    case None                   => false.B
  }
  private val (pSelHit, pSelEnt, pSelWay, pSelNext) = pSelR match {
    case Some((a, b, w, l, _)) => (a, b, w, l)
    case None                  => (false.B, 0.U.asTypeOf(new HostPwcEntry(p)), 0.U, 0.U)
  }

  // The fill keys' compares with every entry (AssocCache keyIn) on the served slot's key
  // fields (raw slot registers: only the slot multiplexer is in front of them).
  private val sameG = gpwc.map { c =>
    val k = WireDefault(0.U.asTypeOf(new GuestPwcEntry(p)))
    k.vmid := keyR.vmid; k.asid := keyR.asid; k.level := keyR.gLevel; k.vpn := gvpn; k.s1 := keyR.s1
    c.sameKeyAs(k)
  }
  private val sameH = hpwc.map { c =>
    val ks = Seq(keyH, keyH2).map { kh =>
      val k = WireDefault(0.U.asTypeOf(new HostPwcEntry(p)))
      k.vmid := kh.vmid; k.level := kh.hLevel; k.gpn := kh.gpn
      k
    }
    c.sameKeyAs((i: Int) => if (i < p.hostPwcEntries / 2) ks(0) else ks(1))
  }
  private val sameT = ntlb.map { c =>
    val k = WireDefault(0.U.asTypeOf(new NestedTlbEntry(p)))
    k.vmid := keyT.vmid; k.size := keyT.hLevel(1, 0); k.gpn := keyT.gpn
    c.sameKeyAs(k)
  }

  // ---- turn decisions ------------------------------------------------------------------------
  /** The branches of the engine turns, one bit each (a slot's decision vector is one-hot in an
    * engine state, all 0 elsewhere). HostStart has two: its target in the GPA range (`HOk`, the
    * registered lookup then chooses among the nested TLB's deny / answer / guest-entry read and
    * the host read, in the turn) or not (`HRng`).
    */
  private object Br {
    val SRes = 0; val SRng = 1; val SGo = 2
    val HOk = 3; val HRng = 4
    val HeBus = 5; val HeFlt = 6; val HeRes = 7; val HePtr = 8; val HeLeafFlt = 9; val HeAd = 10; val HeOk = 11
    val HlData = 12; val HlGuest = 13
    val GeBus = 14; val GeFlt = 15; val GeRes = 16; val GePtr = 17; val GeLeafFlt = 18; val GeAd = 19; val GeOk = 20
    val Gl = 21
    // modes: Start of a stage-2-only walk (gva out of the GPA range / on to the host walk of
    // gva); HostStart of a stage-1-only walk (the identity in range / beyond paBits)
    val S2Rng = 22; val S2Go = 23
    val HId = 24; val HIdRng = 25
    val n = 26
  }
  private def hostFetchOf(x: WalkSlot): Bool = x.forData && isCmd(x.cmd, AccessCmd.Exec)
  /** The HS-level MXR reaches the host check of the data access only (hostDenies). */
  private def hostMxrOf(x: WalkSlot): Bool = x.forData && x.flags.mxr
  /** A table (page number) whose entries' GPAs are in the host's input range: the bits of
    * `target` above the GPA range are the table's (an entry's index and a leaf's offset within
    * its page stay below bit 12 + 27 <= gpaBits).
    */
  private def gpaOk(table: UInt): Bool = {
    val lo = p.gpaBits - 12
    if (table.getWidth > lo) !table(table.getWidth - 1, lo).orR else true.B
  }
  /** The same for a stage-1-only walk, whose tables and frames are host-physical: below paBits. */
  private def paOk(table: UInt): Bool = {
    val lo = p.paBits - 12
    if (table.getWidth > lo) !table(table.getWidth - 1, lo).orR else true.B
  }
  require(p.gpaBits - 12 >= 27, "a guest leaf's offset must stay below the GPA range's top")
  private case class EntryDec(bus: Bool, flt: Bool, res: Bool, ptr: Bool, leafFlt: Bool, ad: Bool, ok: Bool)
  /** The verdict of the entry in `pte` as a host (`host`) or guest entry, exclusive, in the
    * order of the checks: bus error, not valid, reserved bits, the format's page fault, a
    * pointer; at a leaf: the permission check (and the host's U), then the A/D need (a fault
    * without hardware A/D).
    */
  private def entryDec(s: WalkSlot, host: Boolean): EntryDec = {
    val e = if (host) h.decode(s.pte, s.hLevel, p.paBits) else g.decode(s.pte, s.gLevel, 64)
    val acc = if (host) h.accumulate(s.hPerm, e.perm, e.leaf) else g.accumulate(s.gPerm, e.perm, e.leaf)
    val write = if (host) hostWriteOf(s) else isCmd(s.cmd, AccessCmd.Write)
    val denied =
      if (host) hostDenies(acc, write, hostFetchOf(s), hostMxrOf(s))
      // a 2D walk's stage 1 is the VS-stage (vsstatus.MXR applies); a stage-1-only walk's is
      // satp's (V = 0: only the HS-level MXR)
      else PrivCheck.stage1(g.family, s.cmd, s.user, vsStage = !s.s1Only, s.flags, acc)
    val needAd = !e.a || (write && !e.d)
    val early = s.memErr || !e.valid || e.reserved || e.pageFault
    val leaf = !early && e.leaf
    EntryDec(
      bus = s.memErr,
      flt = !s.memErr && (!e.valid || (!e.reserved && e.pageFault)),
      res = !s.memErr && e.valid && e.reserved,
      ptr = !early && !e.leaf,
      leafFlt = leaf && (denied || (needAd && (!p.hardwareAd).B)),
      ad = leaf && !denied && needAd && p.hardwareAd.B,
      ok = leaf && !denied && !needAd
    )
  }
  /** The decision vector of slot `s` in state `st`, from its own registers. */
  private def decisionsOf(s: WalkSlot, st: WalkState.Type): Vec[Bool] = {
    val d = WireDefault(VecInit(Seq.fill(Br.n)(false.B)))
    val inS = st === Start
    val res = isCmd(s.cmd, AccessCmd.Reserved) || s.bare
    val rng = !g.inRange(s.gva)
    val gRng = s.gva(63, p.gpaBits).orR
    val s2 = s.s2Only
    d(Br.SRes) := inS && res; d(Br.SRng) := inS && !res && !s2 && rng; d(Br.SGo) := inS && !res && !s2 && !rng
    d(Br.S2Rng) := inS && !res && s2 && gRng; d(Br.S2Go) := inS && !res && s2 && !gRng
    val hs = st === HostStart
    val ok = inGpaRange(s.target)
    val s1 = s.s1Only
    val pok = paOk(s.target(p.targetBits - 1, 12))
    d(Br.HOk) := hs && !s1 && ok; d(Br.HRng) := hs && !s1 && !ok
    d(Br.HId) := hs && s1 && pok; d(Br.HIdRng) := hs && s1 && !pok
    for ((host, inE, base) <- Seq((true, st === HostEntry, Br.HeBus), (false, st === GuestEntry, Br.GeBus))) {
      val c = entryDec(s, host)
      Seq(c.bus, c.flt, c.res, c.ptr, c.leafFlt, c.ad, c.ok).zipWithIndex.foreach { case (b, k) => d(base + k) := inE && b }
    }
    val hl = st === HostLeafDone
    d(Br.HlData) := hl && s.forData; d(Br.HlGuest) := hl && !s.forData
    d(Br.Gl) := st === GuestLeafDone
    d
  }
  /** The decision vector after slot `s`'s turn of decision `dr` (the next state's, from the
    * registers the turn leaves unchanged and the values it writes): a slot may be served again
    * in the cycle after its turn.
    */
  private def decisionsAfter(s: WalkSlot, dr: Vec[Bool]): Vec[Bool] = {
    val a = WireDefault(VecInit(Seq.fill(Br.n)(false.B)))
    val toHs = dr(Br.SGo) || dr(Br.GePtr) || dr(Br.Gl)
    val startTable = Mux(gSelHit, gSelEnt.table, s.gTable)
    // (a guest pointer's table, or a guest leaf's frame, whose bits above the leaf's offset
    // are the entry's: its page number as the format places it in `pte`)
    val nextTable = Mux(dr(Br.SGo), startTable, g.decode(s.pte, s.gLevel, 64).ppn(g.ppnWidth - 1, 0))
    val okNext = gpaOk(nextTable)
    val pokNext = paOk(nextTable)
    val s1 = s.s1Only
    // (a stage-2-only walk's gva was checked against the GPA range at Start)
    a(Br.HOk) := (toHs && !s1 && okNext) || dr(Br.S2Go); a(Br.HRng) := toHs && !s1 && !okNext
    a(Br.HId) := toHs && s1 && pokNext; a(Br.HIdRng) := toHs && s1 && !pokNext
    a(Br.HlData) := dr(Br.HeOk) && s.forData; a(Br.HlGuest) := dr(Br.HeOk) && !s.forData
    a(Br.Gl) := dr(Br.GeOk)
    a
  }
  /** Each slot's decision for its next turn, registered: a slot is served at the earliest in the
    * cycle after it entered its engine state (the engine's choice is registered), and its
    * registers change only by its own turn while it waits; a slot served again right after its
    * turn takes the decision of the state that turn led to.
    */
  private val decR = RegInit(VecInit(Seq.fill(W)(VecInit(Seq.fill(Br.n)(false.B)))))
  private val decNow = (0 until W).map(i => decisionsOf(slot(i), state(i)))
  for (i <- 0 until W) decR(i) := Mux(goI(i), decisionsAfter(slot(i), decR(i)), decNow(i))
  // `goF` of the next cycle: after a match the select (no turn); after a select the turn of the
  // same slot; otherwise the slot the engine chooses now, if it is then in an engine state
  // without lookup: its state now, or, if it takes its turn now, the state that turn leads to
  // (from its registered decision).
  private val hsLook = lookStates.contains(HostStart)
  for (i <- 0 until W) {
    val dr = decR(i)
    val plainAfter = dr(Br.HeOk) || dr(Br.GeOk) || (if (hsLook) false.B else dr(Br.SGo) || dr(Br.GePtr) || dr(Br.Gl) || dr(Br.S2Go))
    val plainNow = wantsEngine(i) && !lookState(state(i))
    goI(i) := !matchTurn && !selectTurn && (readI(i) || (!readTurn && engOH(i) && Mux(goI(i), plainAfter, plainNow)))
  }

  /** Slot `i`'s turn: every written register is an AND-OR of its branches' values under their
    * registered decision bits, enabled by `go` AND those bits (written last, after the other
    * writers of the slot registers, which act only in other states). Returns the turn's cache
    * operations and the entries it would fill.
    */
  private def turnOf(i: Int): (TurnOps, GuestPwcEntry, HostPwcEntry, NestedTlbEntry) = {
    val s = slot(i)
    val dr = decR(i)
    val go = goI(i)
    def d(k: Int): Bool = dr(k)
    def any(ks: Int*): Bool = anyOf(ks.map(d))
    // HostStart in range: the registered lookup's outcome
    val hOk = d(Br.HOk)
    val tHit = hOk && tSelHit
    val hTDeny = tHit && tSelDeny
    val hTData = tHit && !tSelDeny && s.forData
    val hTGuest = tHit && !tSelDeny && !s.forData
    val hRead = hOk && !tSelHit
    // a stage-1-only walk's identity: the guest entry's address or the final address is the HPA
    val hIdData = d(Br.HId) && s.forData
    val hIdGuest = d(Br.HId) && !s.forData
    val s2Data = s.s2Only && (hTData || d(Br.HlData))

    val gEntry = g.decode(s.pte, s.gLevel, 64)
    val hEntry = h.decode(s.pte, s.hLevel, p.paBits)
    val gAcc = g.accumulate(s.gPerm, gEntry.perm, gEntry.leaf)
    val hAcc = h.accumulate(s.hPerm, hEntry.perm, hEntry.leaf)
    val gvpn = gvpnOf(s)
    val gpn = gpnOf(s.target)
    val hostRoot = if (p.hRootDrop > 0) Cat(s.hRoot, 0.U(p.hRootDrop.W)) else s.hRoot
    val gPteTable = gEntry.ppn(g.ppnWidth - 1, 0)
    val hPteTable = hEntry.ppn(p.paBits - 13, 0)
    val startLevel = Mux(gSelHit, gSelNext, g.topLevel.U)
    val startTable = Mux(gSelHit, gSelEnt.table, s.gTable)
    val hReadLevel = Mux(pSelHit, pSelNext, h.topLevel.U)
    val hReadTable = Mux(pSelHit, pSelEnt.table, hostRoot)
    val tFrame = frame(tSelEnt.base, tSelEnt.size, gpn)
    val hlBase = hPteTable & keep(s.hLevel, p.paBits - 12)
    val hlFrame = frame(hlBase, s.hLevel, gpn)

    def fit(x: UInt, w: Int): UInt = x.pad(w)(w - 1, 0)
    def write(dst: UInt, ws: (Bool, UInt)*): Unit = {
      val c = ws.map(_._1)
      val w = dst.getWidth
      put(i, dst, go && anyOf(c), if (ws.size == 1) fit(ws.head._2, w) else Mux1H(c, ws.map(x => fit(x._2, w))))
    }
    def writePerm(dst: Perm, ws: (Bool, Perm)*): Unit = {
      val c = ws.map(_._1)
      put(i, dst, go && anyOf(c), if (ws.size == 1) ws.head._2 else Mux1H(c, ws.map(_._2)))
    }
    val hLeafEnd = any(Br.HeLeafFlt, Br.HeAd, Br.HeOk)
    val gLeafEnd = any(Br.GeLeafFlt, Br.GeAd, Br.GeOk)
    val hFault = any(Br.HeBus, Br.HeFlt, Br.HeRes, Br.HeLeafFlt)
    val gFault = any(Br.GeBus, Br.GeFlt, Br.GeRes, Br.GeLeafFlt)
    // faults: code, stage, level (a fault's GPA is `target`)
    write(s.fault, d(Br.SRes) -> Fault.Reserved.U, any(Br.SRng, Br.S2Rng, Br.HRng, Br.HIdRng) -> Fault.Range.U,
      hTDeny -> Fault.Host.U, d(Br.HeBus) -> Fault.Bus.U, d(Br.HeFlt) -> Fault.Host.U, d(Br.HeRes) -> Fault.Reserved.U,
      d(Br.HeLeafFlt) -> Fault.Host.U, d(Br.GeBus) -> Fault.Bus.U, d(Br.GeFlt) -> Fault.Guest.U,
      d(Br.GeRes) -> Fault.Reserved.U, d(Br.GeLeafFlt) -> Fault.Guest.U)
    write(s.faultStage, any(Br.SRes, Br.SRng, Br.HIdRng) -> 0.U, (any(Br.HRng, Br.S2Rng) || hTDeny || hFault) -> 1.U,
      gFault -> 0.U)
    write(s.faultLevel, d(Br.SRes) -> 0.U, d(Br.SRng) -> g.topLevel.U, any(Br.HRng, Br.S2Rng) -> h.topLevel.U,
      hTDeny -> tSelEnt.size, hFault -> s.hLevel, (gFault || d(Br.HIdRng)) -> s.gLevel)
    // next state
    val toDone = any(Br.SRes, Br.SRng, Br.S2Rng, Br.HRng, Br.HIdRng, Br.HlData) || hTDeny || hTData || hIdData || hFault ||
      gFault
    // (one write per next state, each a constant: the channel choices made a cycle ahead read
    // which states a slot enters from their conditions)
    Seq(
      toDone -> Done,
      (hTGuest || d(Br.HlGuest) || hIdGuest) -> ReadGuest,
      (hRead || d(Br.HePtr)) -> ReadHost,
      any(Br.SGo, Br.GePtr, Br.Gl, Br.S2Go) -> HostStart,
      any(Br.HeAd, Br.GeAd) -> Lock,
      d(Br.HeOk) -> HostLeafDone,
      d(Br.GeOk) -> GuestLeafDone
    ).foreach { case (c, x) => putState(i, go && c, x) }
    // guest side
    write(s.gLevel, d(Br.SGo) -> startLevel, d(Br.GePtr) -> (s.gLevel - 1.U))
    write(s.gTable, d(Br.SGo) -> startTable, d(Br.GePtr) -> gPteTable)
    writePerm(s.gPerm, d(Br.SGo) -> Mux(gSelHit, gSelEnt.perm, allPerm), (d(Br.GePtr) || gLeafEnd) -> gAcc)
    write(s.target,
      d(Br.SGo) -> entryAddr(startTable, g.index(s.gva, startLevel), p.targetBits),
      d(Br.GePtr) -> entryAddr(gPteTable, g.index(s.gva, s.gLevel - 1.U), p.targetBits),
      d(Br.Gl) -> Cat(frame(gPteTable, s.gLevel, gvpn), s.gva(11, 0)),
      d(Br.S2Go) -> s.gva)
    write(s.forData, any(Br.SGo, Br.GePtr) -> false.B, any(Br.Gl, Br.S2Go) -> true.B)
    // (a single-stage walk's absent stage maps the page whole: its size is the other's)
    write(s.gSize, d(Br.Gl) -> s.gLevel, (s2Data && hTData) -> tSelEnt.size, (s2Data && d(Br.HlData)) -> s.hLevel)
    // host side
    write(s.hLevel, (hTDeny || hTData || hTGuest) -> tSelEnt.size, hRead -> hReadLevel, d(Br.HePtr) -> (s.hLevel - 1.U))
    writePerm(s.hPerm, (hTData || hTGuest) -> tSelEnt.perm, hRead -> Mux(pSelHit, pSelEnt.perm, allPerm),
      (d(Br.HePtr) || hLeafEnd) -> hAcc)
    write(s.hSize, (hTData || hTGuest) -> tSelEnt.size, any(Br.HlData, Br.HlGuest) -> s.hLevel, hIdData -> s.gSize)
    write(s.ppn, hTData -> tFrame, d(Br.HlData) -> hlFrame, hIdData -> s.target(p.targetBits - 1, 12))
    write(s.pteAddr, hTGuest -> Cat(tFrame, s.target(11, 0)), hIdGuest -> s.target, hRead -> entryAddr(hReadTable, h.index(s.target, hReadLevel), p.paBits),
      d(Br.HePtr) -> entryAddr(hPteTable, h.index(s.target, s.hLevel - 1.U), p.paBits),
      d(Br.HlGuest) -> Cat(hlFrame, s.target(11, 0)))
    write(s.leafD, hLeafEnd -> hEntry.d)
    write(s.adHost, d(Br.HeAd) -> true.B, d(Br.GeAd) -> false.B)
    write(s.adNeedD, d(Br.HeAd) -> hostWriteOf(s), d(Br.GeAd) -> isCmd(s.cmd, AccessCmd.Write))

    val canFill = !s.noFill && !io.flush.fire
    val ops = Wire(new TurnOps)
    ops.useG := d(Br.SGo) && gSelHit
    ops.useT := tHit
    ops.useH := hRead && pSelHit
    ops.fillG := d(Br.GePtr) && canFill
    ops.fillH := d(Br.HePtr) && canFill
    ops.fillT := any(Br.HlData, Br.HlGuest) && canFill
    // The entries this slot's turn would fill, from its own registers (whether it fills is
    // `ops`): selected by the registered `cur` (an AND-OR), not through the turn's conditions.
    val gx = Wire(new GuestPwcEntry(p))
    gx.vmid := s.vmid; gx.asid := s.asid; gx.level := s.gLevel; gx.vpn := gvpn; gx.s1 := s.s1Only
    gx.table := gPteTable; gx.perm := gAcc
    val hx = Wire(new HostPwcEntry(p))
    hx.vmid := s.vmid; hx.level := s.hLevel; hx.gpn := gpn
    hx.table := hPteTable; hx.perm := hAcc
    val tx = Wire(new NestedTlbEntry(p))
    tx.vmid := s.vmid; tx.size := s.hLevel(1, 0); tx.gpn := gpn
    tx.base := hlBase; tx.perm := s.hPerm; tx.d := s.leafD
    (ops, gx, hx, tx)
  }

  private val turn = anyOf(goI)
  // (the turns' writes come after every other writer of the slot registers, at the end of the
  // responses below)
  private val turnOps = Wire(Vec(W, new TurnOps))
  private val turnG = Wire(Vec(W, new GuestPwcEntry(p)))
  private val turnH = Wire(Vec(W, new HostPwcEntry(p)))
  private val turnT = Wire(Vec(W, new NestedTlbEntry(p)))
  /** The served slot's cache operations: the data every cycle from `cur`, the enables from its turn. */
  private def served(f: TurnOps => Bool): Bool = anyOf((0 until W).map(i => goI(i) && f(turnOps(i))))
  private val fills = Seq(served(_.fillG), served(_.fillH), served(_.fillT))
  filled := fills.reduce(_ || _)
  private val gpwcHit = served(_.useG)
  private val hpwcHit = served(_.useH)
  private val ntlbHit = served(_.useT)
  // (the fill's key fields from the served slot's registered key, the rest by `cur`)
  private val fillG = WireDefault(Mux1H(curOH, turnG))
  fillG.vmid := keyR.vmid; fillG.asid := keyR.asid; fillG.level := keyR.gLevel; fillG.vpn := gvpn; fillG.s1 := keyR.s1
  private val fillH = WireDefault(Mux1H(curOH, turnH))
  fillH.vmid := keyR.vmid; fillH.level := keyR.hLevel; fillH.gpn := gpnKey
  private val fillT = WireDefault(Mux1H(curOH, turnT))
  fillT.vmid := keyR.vmid; fillT.size := keyR.hLevel(1, 0); fillT.gpn := gpnKey
  gpwc.foreach { c =>
    c.fillBits(fillG, cur, sameG.get); when(fills(0)) { c.fillGo() }
    c.useBits(gSelWay, cur); when(gpwcHit) { c.useGo() }
  }
  hpwc.foreach { c =>
    c.fillBits(fillH, cur, sameH.get); when(fills(1)) { c.fillGo() }
    c.useBits(pSelWay, cur); when(hpwcHit) { c.useGo() }
  }
  ntlb.foreach { c =>
    c.fillBits(fillT, cur, sameT.get); when(fills(2)) { c.fillGo() }
    c.useBits(tSelWay, cur); when(ntlbHit) { c.useGo() }
  }

  // ---- memory port -------------------------------------------------------------------------
  private val issueStates = Seq(ReadHost, ReadGuest, ReadLocked, WriteAd)
  // (the round robin's one-hot choice selects the slot's fields by an AND-OR and loads the
  // chosen slot's own registers: no index decode behind the choice; the choice is registered,
  // computed a cycle ahead from the slots' next states, see ChannelChoice)
  private def issueState(st: UInt): Bool = issueStates.map(_.asUInt === st).reduce(_ || _)
  private val mem = new ChannelChoice(W)
  /** Slot i is in WriteAd, registered from its next state (`nextIn`, below), so the port's
    * `write` and the `wdata` / `wmask` multiplexers start from the choice's and these registers,
    * not from the slots' state decodes (invariant I9: `dbg_chanOk`).
    */
  private val slotWrite = RegInit(VecInit(Seq.fill(W)(false.B)))
  private val mWrite = Mux1H(mem.oneHot, slotWrite)
  private val ms = Mux1H(mem.oneHot, slot)
  io.mem_req.valid := mem.valid
  io.mem_req.bits.id := ms.id
  io.mem_req.bits.addr := ms.pteAddr
  io.mem_req.bits.write := mWrite
  io.mem_req.bits.wdata := Mux(mWrite, ms.adData, 0.U)
  io.mem_req.bits.wmask := Mux(mWrite, Mux(ms.adHost, (1 << h.adByte).U, (1 << g.adByte).U), 0.U)
  for (i <- 0 until W) {
    val issue = io.mem_req.ready && mem.oneHot(i)
    putState(i, issue, MemWait)
    put(i, slot(i).memKind, issue, MuxLookup(state(i).asUInt, MemKind.Write.U)(
      Seq(
        ReadHost.asUInt -> MemKind.HostEntry.U,
        ReadGuest.asUInt -> MemKind.GuestEntry.U,
        ReadLocked.asUInt -> MemKind.Locked.U
      )
    ))
    put(i, slot(i).memWrites, issue && slotWrite(i), slot(i).memWrites + 1.U)
    put(i, slot(i).memReads, issue && !slotWrite(i), slot(i).memReads + 1.U)
  }

  // ---- A/D locks: one read-modify-write of a leaf address at a time ---------------------------
  // A slot holds the lock of its `pteAddr` from the grant to the end of its read-modify-write;
  // a waiting slot is granted when no holder has its address (one grant a cycle, so two waiters
  // of one address are never granted together).
  private val holds = (0 until W).map { i =>
    state(i) === ReadLocked || state(i) === WriteAd ||
    (state(i) === MemWait && (slot(i).memKind === MemKind.Locked.U || slot(i).memKind === MemKind.Write.U))
  }
  // (the address compares registered: a slot in Lock and a holder kept their `pteAddr` in the
  // cycle before, which only a turn writes, and neither took a turn then; `dbg_lockOk`)
  private val addrEqR = RegNext(VecInit((0 until W).map(i => VecInit((0 until W).map(j =>
    if (i == j) true.B else slot(j).pteAddr === slot(i).pteAddr)))))
  private val lockFree = (0 until W).map { i =>
    (0 until W).filter(_ != i).map(j => !(holds(j) && addrEqR(i)(j))).foldLeft(true.B)(_ && _)
  }
  // (granted whenever valid, so it holds nothing: the choice without hold, the same one)
  private val lock = new RoundRobin(W, hold = false)((0 until W).map(i => state(i) === Lock && lockFree(i)))
  when(lock.valid) { lock.granted() }
  for (i <- 0 until W) putState(i, lock.valid && lock.oneHot(i), ReadLocked)

  // ---- memory responses (always accepted: each slot keeps its own entry register) ----------
  io.mem_resp.ready := true.B
  private val r = io.mem_resp.bits
  private val respSlot = (0 until W).map(i => io.mem_resp.valid && state(i) === MemWait && slot(i).id === r.id)
  for (i <- 0 until W) {
    val sl = slot(i)
    val aBit = Mux(sl.adHost, (BigInt(1) << h.aBit).U(64.W), (BigInt(1) << g.aBit).U(64.W))
    val dBit = Mux(sl.adHost, (BigInt(1) << h.dBit).U(64.W), (BigInt(1) << g.dBit).U(64.W))
    val need = aBit | Mux(sl.adNeedD, dBit, 0.U)
    val hasA = Mux(sl.adHost, r.rdata(h.aBit), r.rdata(g.aBit))
    val hasD = Mux(sl.adHost, r.rdata(h.dBit), r.rdata(g.dBit))
    val level = Mux(sl.adHost, sl.hLevel, sl.gLevel)
    val c = respSlot(i)
    def kind(k: Int): Bool = c && sl.memKind === k.U
    // The wide registers a response writes load it in every cycle the slot waits for that kind
    // of response, not only when it comes: the response's cycle is the last such load (its
    // own response takes the slot out of MemWait), and nothing reads them while it waits. Their
    // enables are then one decode of the slot's state and memKind, not behind the response's
    // id compare and the A/D check (`waitFor`: no cycle change).
    val waiting = state(i) === MemWait
    def waitFor(k: Int): Bool = waiting && sl.memKind === k.U
    // an entry read: the entry and its bus error, checked by the slot's next turn
    val entry = kind(MemKind.HostEntry) || kind(MemKind.GuestEntry)
    val entryWait = waitFor(MemKind.HostEntry) || waitFor(MemKind.GuestEntry)
    put(i, sl.pte, entryWait, r.rdata); put(i, sl.memErr, entryWait, r.error)
    putState(i, kind(MemKind.HostEntry), HostEntry); putState(i, kind(MemKind.GuestEntry), GuestEntry)
    // the locked re-read or the A/D write: a bus error ends the walk
    val bus = (kind(MemKind.Locked) || kind(MemKind.Write)) && r.error
    put(i, sl.fault, bus, Fault.Bus.U); put(i, sl.faultStage, bus, sl.adHost.asUInt); put(i, sl.faultLevel, bus, level)
    putState(i, bus, Done)
    // the locked re-read: A (and D) already set -> resume, else write them
    val locked = kind(MemKind.Locked) && !r.error
    val set = hasA && (hasD || !sl.adNeedD)
    // (`leafD`'s OR is idempotent; `adData` and `dirtyOnWrite` are read only after a locked
    // re-read that did not find A / D set, which loaded them last; a bus error ends the walk)
    val lockedWait = waitFor(MemKind.Locked)
    put(i, sl.leafD, lockedWait, sl.leafD || sl.adNeedD)
    put(i, sl.adData, lockedWait, r.rdata | need)
    put(i, sl.dirtyOnWrite, lockedWait, sl.adHost && sl.adNeedD && !hasD)
    putState(i, locked && !set, WriteAd)
    // the A/D write done: the dirty event (a host D set by it), else resume
    val written = kind(MemKind.Write) && !r.error
    putState(i, written && sl.dirtyOnWrite, Dirty)
    val resume = (locked && set) || (written && !sl.dirtyOnWrite)
    putState(i, resume && sl.adHost, HostLeafDone); putState(i, resume && !sl.adHost, GuestLeafDone)
  }

  // ---- dirty events --------------------------------------------------------------------------
  // (a registered choice, as the response's and the memory port's: the port's bits are one
  // AND-OR of the slots' registers behind it, not the slots' states through a round robin and
  // an index decode; its requests are connected with theirs, below)
  private val dirtyPick = new ChannelChoice(W)
  // Select the page numbers, not whole registers, so no slot bit is left dangling.
  private val ds = Mux1H(dirtyPick.oneHot, slot)
  private val dirtyFireOH = (0 until W).map(i => io.dirty.ready && dirtyPick.oneHot(i))
  io.dirty.valid := dirtyPick.valid
  io.dirty.bits.gpa := Mux1H(dirtyPick.oneHot, slot.map(x => gpnOf(x.target)))
  io.dirty.bits.gva := Mux1H(dirtyPick.oneHot, slot.map(_.gva(63, 12)))
  io.dirty.bits.vmid := ds.vmid
  io.dirty.bits.asid := ds.asid
  io.dirty.bits.pageTable := !ds.forData
  for (i <- 0 until W) putState(i, dirtyFireOH(i), HostLeafDone)

  // ---- responses -----------------------------------------------------------------------------
  private val respPick = new ChannelChoice(W)
  // The answered slot's fields by the choice one-hot (an AND-OR, no index decode behind the
  // round robin); a slot's bus error is known from its own register, so the caches' drop and
  // confirm are per owner (`dropMask`): each entry looks up its own owner's bit.
  private val rs = Mux1H(respPick.oneHot, slot)
  private val ok = rs.fault === Fault.None.U
  private val respBus = slot.map(_.fault === Fault.Bus.U)
  private val respFireOH = (0 until W).map(i => io.resp.ready && respPick.oneHot(i))
  io.resp.valid := respPick.valid
  io.resp.bits.id := rs.id
  io.resp.bits.fault := rs.fault
  io.resp.bits.faultLevel := rs.faultLevel
  io.resp.bits.faultStage := rs.faultStage
  // (a stage-2-only walk's gva beyond the GPA range is reported whole: `target` holds a GPA's
  // width; every other fault's GPA is `target`)
  io.resp.bits.faultGpa := Mux(ok, 0.U, Mux1H(respPick.oneHot, slot.map(x =>
    Mux(x.s2Only && x.fault === Fault.Range.U, x.gva, x.target.pad(64)))))
  io.resp.bits.ppn := Mux(ok, rs.ppn, 0.U)
  io.resp.bits.guestPageSize := Mux(ok, rs.gSize(1, 0), 0.U)
  io.resp.bits.hostPageSize := Mux(ok, rs.hSize(1, 0), 0.U)
  io.resp.bits.pageSize := Mux(ok, Mux(rs.gSize < rs.hSize, rs.gSize, rs.hSize)(1, 0), 0.U)
  io.resp.bits.perm := Mux(ok, andPerm(rs.gPerm, rs.hPerm), 0.U.asTypeOf(new Perm))
  io.resp.bits.memReads := rs.memReads
  io.resp.bits.memWrites := rs.memWrites
  for (i <- 0 until W) putState(i, respFireOH(i), Idle)
  for (c <- Seq(gpwc, hpwc, ntlb)) c.foreach { c =>
    c.dropMask((0 until W).map(i => respFireOH(i) && respBus(i)))
    c.confirmMask((0 until W).map(i => respFireOH(i) && !respBus(i)))
  }

  // ---- the turns, and every write of the slot registers (see `writes`) -----------------------
  inTurn = true
  for (i <- 0 until W) {
    val (o, gx, hx, tx) = turnOf(i)
    turnOps(i) := o; turnG(i) := gx; turnH(i) := hx; turnT(i) := tx
  }
  inTurn = false

  // ---- flush ---------------------------------------------------------------------------------
  io.flush.ready := true.B
  private val fk = io.flush.bits.kind
  private val flushAll = fk === FlushKind.All.U || fk === 3.U
  for (i <- 0 until W) put(i, slot(i).noFill, io.flush.fire && busy(i), true.B)
  when(io.flush.fire) {
    // a fill decided in the previous cycle lands in this one, and the one that landed in the
    // previous cycle writes its entry in this one (AssocCache writeLate): the flush wins over
    // both (they were asked for by walks in flight at the flush), and the entry the second was
    // writing is invalidated
    for (c <- Seq(gpwc, hpwc, ntlb)) c.foreach(_.cancel())
    gpwc.foreach(c =>
      c.invalidate(c.entries.map { x =>
        flushAll || (x.vmid === io.flush.bits.vmid &&
          (fk === FlushKind.Vmid.U || (fk === FlushKind.VmidAsid.U && x.asid === io.flush.bits.asid)))
      })
    )
    hpwc.foreach(c => c.invalidate(c.entries.map(x => flushAll || (fk === FlushKind.Vmid.U && x.vmid === io.flush.bits.vmid))))
    ntlb.foreach(c => c.invalidate(c.entries.map(x => flushAll || (fk === FlushKind.Vmid.U && x.vmid === io.flush.bits.vmid))))
  }

  // every slot register and state: one AND-OR of its writers' values, enabled by the OR of their
  // conditions (exclusive, see `writes`)
  // (and each slot's key fields after its turn, for the served slot's registered key: the
  // engine only chooses a slot in an engine state, whose key fields only its turn writes)
  private def nextOf(i: Int, dst: UInt): UInt = turnWrites(i).get(dst) match {
    case Some(ws) =>
      val c = ws.map(_._1)
      val vs = ws.map(_._2.asUInt)
      Mux(anyOf(c), if (vs.size == 1) vs.head else Mux1H(c, vs), dst).pad(dst.getWidth)(dst.getWidth - 1, 0)
    case None => dst
  }
  private val keyNext = (0 until W).map { i =>
    val x = slot(i)
    val k = Wire(new LookKey)
    val forData = nextOf(i, x.forData).asBool
    k.vmid := x.vmid; k.asid := x.asid; k.gvpn := gvpnOf(x); k.gpn := gpnOf(nextOf(i, x.target))
    k.gLevel := nextOf(i, x.gLevel); k.hLevel := nextOf(i, x.hLevel)
    k.hostWrite := Mux(forData, isCmd(x.cmd, AccessCmd.Write), p.hardwareAd.B)
    k.hostFetch := forData && isCmd(x.cmd, AccessCmd.Exec)
    k.hostMxr := forData && x.flags.mxr
    k.s1 := x.s1Only
    k
  }
  keyLoad := Mux1H(engOH, keyNext)
  for (i <- 0 until W; (dst, ws) <- writes(i)) {
    val c = ws.map(_._1)
    val vs = ws.map(_._2)
    def v: Data = if (vs.size == 1) vs.head else Mux1H(c, vs)
    when(anyOf(c)) {
      dst match {
        case st: WalkState.Type => st := WalkState.safe(v.asUInt)._1
        case b: Bool            => b := v.asUInt.asBool
        case u: UInt            => u := (if (vs.size == 1) vs.head.asUInt else Mux1H(c, vs.map(_.asUInt))).pad(u.getWidth)(u.getWidth - 1, 0)
        case x                  => x := v
      }
    }
  }

  // the channel choices of the next cycle, from the slots' next states: a slot asks next cycle
  // if a writer takes it into one of the channel's states, or if it is in one and is not granted
  // (the grant is the only writer of a slot in those states: the writers act in exclusive
  // states)
  private def nextIn(i: Int, set: Seq[WalkState.Type], leave: Bool): Bool = {
    val ws = writes(i)(state(i))
    require(ws.forall(_._2.litOption.isDefined), "every state write is a constant")
    val into = ws.collect { case (c, v) if set.exists(_.litValue == v.litValue) => c }
    anyOf(into) || staysIn(i, set, leave)
  }
  /** Slot i is in one of `set` and `leave` (its grant) does not take it out. */
  private def staysIn(i: Int, set: Seq[WalkState.Type], leave: Bool): Bool = set.map(state(i) === _).reduce(_ || _) && !leave
  /** `c` is one of slot i's turn's state-write conditions. */
  private def byTurn(i: Int, c: Bool): Boolean = turnWrites(i).getOrElse(state(i), Seq()).exists(_._1 eq c)
  /** Slot i is taken into one of the states `set` by a writer other than its turn now (it is
    * not among the requests a choice ahead that takes only the turn's entries saw for the next
    * cycle; the proofs' invariants I7 and I9 register it). */
  private def enteredByOther(i: Int, set: Seq[WalkState.Type]): Bool =
    anyOf(writes(i)(state(i)).collect { case (c, v) if set.exists(_.litValue == v.litValue) && !byTurn(i, c) => c })
  // (the engine: a slot in an engine state leaves it only by its own turn's state write)
  private val engAfterNext = (0 until W).map(j => Mux(engValid && !held, engThermo(j), engAfter(j)))
  /** Slot i's turn takes it out of the engine states: from its registered decision vector, not
    * the turn's state-write conditions (HostStart's in-range branch leaves whatever the lookup
    * says: each of its outcomes, fault, leaf, guest read or host read, is outside), so the
    * choice ahead does not wait for the selected hits (the same OR as the writes' conditions).
    */
  private def turnLeaves(i: Int): Bool = {
    val stay = Seq(Br.SGo, Br.GePtr, Br.Gl, Br.S2Go, Br.HeOk, Br.GeOk)
    goI(i) && anyOf((0 until Br.n).filterNot(stay.contains).map(decR(i)(_)))
  }
  // `held` of the next cycle: a match now is followed by its select, a select by its read (the
  // engine stays, and the slot, in an engine state, waits: only its own turn writes it);
  // otherwise the engine serves its choice next, and holds if that slot is then in a lookup
  // state: its state now, or, if it takes its turn now, the one its registered decision leads to
  // (a turn enters HostStart, never Start)
  private val lookAfter = (0 until W).map { i =>
    if (hsLook) anyOf(Seq(Br.SGo, Br.GePtr, Br.Gl, Br.S2Go).map(decR(i)(_))) else false.B
  }
  heldR := matchTurn || selectTurn ||
    (!held && anyOf((0 until W).map(i => engOH(i) && Mux(goI(i), lookAfter(i), lookState(state(i))))))
  // The choice's requests are the slots in an engine state now that do not leave it by their
  // turn now: a slot that another writer (the acceptance, the memory response, the dirty
  // channel) takes into an engine state is a candidate from the next cycle, from its registered
  // state (one cycle per such entry when the engine would have chosen it at once: Step engine
  // timing, **decided**), so no writer's condition (the response's id compare, the A/D check,
  // `req_ready`) is in front of `engOH`; the turn's own entries stay in: a slot in an engine
  // state is written there only by its turn, which keeps it a candidate unless it leaves.
  engOH := VecInit(RoundRobin.firstAfter((0 until W).map(i => wantsEngine(i) && !turnLeaves(i)), engAfterNext))
  respPick((0 until W).map(i => nextIn(i, Seq(Done), respFireOH(i))), io.resp.fire)
  // (the memory port's choice ahead takes only the turns' entries into the issue states: a slot
  // that the lock's grant or the locked re-read's response takes there asks from the next
  // cycle, read from its registered state; Step engine timing, decided. The turn's entry is a
  // late requester: one slot at most takes its turn (`goI`, one-hot), and whether its turn
  // enters an issue state comes from its lookup's select, so it only selects between the
  // round robins with and without that slot)
  private val memTurnInto = (0 until W).map(i => anyOf(writes(i)(state(i)).collect {
    case (c, v) if issueStates.exists(_.litValue == v.litValue) && byTurn(i, c) => c
  }))
  mem((0 until W).map(i => staysIn(i, issueStates, io.mem_req.ready && mem.oneHot(i))), io.mem_req.fire, goI, anyOf(memTurnInto))
  for (i <- 0 until W) slotWrite(i) := nextIn(i, Seq(WriteAd), io.mem_req.ready && mem.oneHot(i))
  for (i <- 0 until W) freeR(i) := nextIn(i, Seq(Idle), io.req.fire && freeOH(i))
  dirtyPick((0 until W).map(i => nextIn(i, Seq(Dirty), dirtyFireOH(i))), io.dirty.fire)

  // ---- counters ------------------------------------------------------------------------------
  private val success = io.resp.fire && ok
  private val huge = success && rs.gSize =/= 0.U
  PerfCounters.connect(
    io.perf,
    "walks" -> PerfCounter(io.resp.fire),
    "memReads" -> PerfCounter(io.mem_req.fire && !mWrite),
    "memWrites" -> PerfCounter(io.mem_req.fire && mWrite),
    "guestPwcHits" -> PerfCounter(turn && gpwcHit),
    "hostPwcHits" -> PerfCounter(turn && hpwcHit),
    "nestedTlbHits" -> PerfCounter(turn && ntlbHit),
    "faults" -> PerfCounter(io.resp.fire && !ok),
    "busErrors" -> PerfCounter(io.resp.fire && rs.fault === Fault.Bus.U),
    "dirtyEvents" -> PerfCounter(io.dirty.fire),
    "hugeGuest" -> PerfCounter(huge),
    "hugeAligned" -> PerfCounter(huge && rs.hSize >= rs.gSize),
    "splintered" -> PerfCounter(huge && rs.hSize < rs.gSize),
    "flushes" -> PerfCounter(io.flush.fire),
    "badFlushes" -> PerfCounter(io.flush.fire && fk === 3.U),
    "badMemResps" -> PerfCounter(io.mem_resp.valid && !respSlot.reduce(_ || _)),
    "idStalls" -> PerfCounter(io.req.valid && idInFlight),
    "badModes" -> PerfCounter(io.req.fire && badMode)
  )

  // ---- proof views ---------------------------------------------------------------------------
  io.dbg.foreach { d =>
    for (i <- 0 until W) {
      d.slotBusy(i) := busy(i); d.slotId(i) := slot(i).id; d.slotReads(i) := slot(i).memReads
      d.slotWrites(i) := slot(i).memWrites; d.slotNoFill(i) := slot(i).noFill; d.slotMemWait(i) := state(i) === MemWait
    }
    d.lockHeld := VecInit(holds)
    d.slotPteAddr := VecInit(slot.map(_.pteAddr))
    d.slotAdNeedD := VecInit(slot.map(_.adNeedD))
    def view[T <: Data](c: Option[AssocCache[T]], valid: Vec[Bool], vmid: Vec[UInt], vmidOf: T => UInt): Unit = c match {
      case Some(c) => valid := c.valid; vmid := VecInit(c.entries.map(vmidOf))
      case None    => valid := VecInit(Seq.fill(valid.size)(false.B)); vmid := VecInit(Seq.fill(vmid.size)(0.U))
    }
    view[GuestPwcEntry](gpwc, d.gpwcValid, d.gpwcVmid, _.vmid)
    view[HostPwcEntry](hpwc, d.hpwcValid, d.hpwcVmid, _.vmid)
    view[NestedTlbEntry](ntlb, d.ntlbValid, d.ntlbVmid, _.vmid)
    // A hit is shown in its lookup's select cycle (where it is chosen among the entries valid
    // then; the turn uses the registered entry a cycle later): the cache whose hit the turn
    // would take (nested TLB before host PWC) and that entry's vmid.
    // (a stage-2-only walk's Start and a stage-1-only walk's HostStart look up but use nothing)
    val selG = selectTurn && st === Start && !s.s2Only && gSelC.map(_._1).getOrElse(false.B)
    val selT = selectTurn && st === HostStart && !s.s1Only && tSelC.map(_._1).getOrElse(false.B)
    val selP = selectTurn && st === HostStart && !s.s1Only && !selT && pSelC.map(_._1).getOrElse(false.B)
    d.hitCache := Mux(selG, 1.U, Mux(selT, 3.U, Mux(selP, 2.U, 0.U)))
    def selVmid[T <: Data](c: Option[AssocCache[T]], sel: Option[(Bool, Seq[Bool], Seq[Bool])], vmidOf: T => UInt): UInt =
      c.zip(sel).map { case (c, x) => Mux1H(x._2, c.entries.map(vmidOf)) }.getOrElse(0.U)
    d.hitVmid := Mux(selG, selVmid[GuestPwcEntry](gpwc, gSelC, _.vmid), Mux(selT, selVmid[NestedTlbEntry](ntlb, tSelC, _.vmid),
      selVmid[HostPwcEntry](hpwc, pSelC, _.vmid)))
    // fills land one cycle after the turn that decides them (AssocCache late) and write their
    // entry a cycle later (AssocCache writeLate), unless a flush comes in either cycle
    d.fillValid := RegNext(RegNext(turn && filled, false.B) && !io.flush.fire, false.B) && !io.flush.fire
    d.fillSlot := RegNext(RegNext(e))
    d.respHostPerm := rs.hPerm
    d.lockOk := (0 until W).flatMap(i => (0 until W).filter(_ != i).map(j =>
      !(state(i) === Lock && holds(j)) || addrEqR(i)(j) === (slot(j).pteAddr === slot(i).pteAddr))).foldLeft(true.B)(_ && _)
    val keyNow = keyNowOf(slot(cur))
    d.keyOk := !curValid || Seq(keyR, keyT, keyH, keyH2).zip(copyFields).flatMap { case (k, fs) =>
      fs.map { case (f, w) => k.elements(f).asUInt(w - 1, 0) === keyNow.elements(f).asUInt(w - 1, 0) }
    }.reduce(_ && _)
    // (a slot the lock's grant or the locked re-read's response took into an issue state in the
    // cycle before is not among the requests the memory port's choice ahead saw)
    val memEnteredR = (0 until W).map(i => RegNext(enteredByOther(i, issueStates), false.B))
    d.chanOk := Cat((0 until W).map(i => free(i) === (state(i) === Idle)).reduce(_ && _), dirtyPick.ok(state.map(_ === Dirty)), mem.ok((0 until W).map(i => issueState(state(i).asUInt) && !memEnteredR(i))) &&
      (0 until W).map(i => slotWrite(i) === (state(i) === WriteAd)).reduce(_ && _), respPick.ok(state.map(_ === Done)))
    d.decOk := VecInit((0 until W).map(i => goI(i) === goF(i) && (!goI(i) || decR(i).asUInt === decNow(i).asUInt))).asUInt
    for (i <- 0 until W) {
      val x = slot(i)
      d.slotState(i) := state(i).asUInt; d.slotGLevel(i) := x.gLevel; d.slotHLevel(i) := x.hLevel
      d.slotForData(i) := x.forData; d.slotAdHost(i) := x.adHost; d.slotMemKind(i) := x.memKind
      d.slotVmid(i) := x.vmid; d.slotAsid(i) := x.asid; d.slotCmd(i) := x.cmd; d.slotUser(i) := x.user
      d.slotFault(i) := x.fault; d.slotGPerm(i) := x.gPerm; d.slotHPerm(i) := x.hPerm
      d.slotDirtyOnWrite(i) := x.dirtyOnWrite; d.slotFlags(i) := x.flags
    }
    gpwc match {
      case Some(c) => d.gpwcAsid := VecInit(c.entries.map(_.asid)); d.gpwcS1 := VecInit(c.entries.map(_.s1))
      case None    => d.gpwcAsid := VecInit(Seq.fill(d.gpwcAsid.size)(0.U)); d.gpwcS1 := VecInit(Seq.fill(d.gpwcS1.size)(false.B))
    }
    d.hitS1 := gpwc.zip(gSelC).map { case (c, x) => Mux1H(x._2, c.entries.map(_.s1)) }.getOrElse(false.B)
    for (i <- 0 until W) {
      val x = slot(i)
      d.slotMode(i) := x.mode
    }
    d.engSlot := e
    d.engValid := curValid
    d.engAfter := engAfter
    val enteredR = (0 until W).map(i => RegNext(enteredByOther(i, engineStates), false.B))
    d.engOk := engOH.asUInt === VecInit(RoundRobin.firstAfter((0 until W).map(i => wantsEngine(i) && !enteredR(i)), engAfter)).asUInt &&
      held === (matchTurn || selectTurn || readTurn)
    d.lookPhase := lookPhase
    val fillCache = RegNext(RegNext(MuxCase(0.U, Seq((st === GuestEntry) -> 1.U, (st === HostEntry) -> 2.U, (st === HostLeafDone) -> 3.U))))
    d.fillCache := fillCache
    val ways = Seq(1 -> gpwc, 2 -> hpwc, 3 -> ntlb).collect { case (k, Some(c)) => (fillCache === k.U) -> c.fillWay }
    d.fillWay := MuxCase(0.U, ways)
    val dedups = Seq(1 -> gpwc, 2 -> hpwc, 3 -> ntlb).collect { case (k, Some(c)) => (fillCache === k.U) -> c.fillDedup }
    d.fillDup := MuxCase(false.B, dedups)
    d.dupOk := Cat(ntlb.map(_.oneCopy).getOrElse(true.B), hpwc.map(_.oneCopy).getOrElse(true.B), gpwc.map(_.oneCopy).getOrElse(true.B))
  }
}
