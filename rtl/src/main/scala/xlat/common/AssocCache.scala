package xlat.common

import chisel3._
import chisel3.util._

/** A small fully associative cache of `gen` entries with valid bits, tree-PLRU replacement and
  * provisional ownership, for the walkers' page-walk caches and nested TLBs.
  *
  * ==Structure==
  * Entries live in [[FullyAssocStorage]] (flops, all compared each cycle); the caller matches
  * them with its own rule through `entries` and `valid`. Valid, provisional and owner bits are
  * flops beside the data so invalidations clear many entries in one cycle.
  *
  * ==Provisional entries==
  * A fill names its owner (a walk slot) and stays provisional until the owner `confirm`s it or
  * `drop`s it: a walk that ends in a bus error removes everything it filled. A provisional
  * entry already serves lookups (it was read without error).
  *
  * ==Where a fill goes==
  * With `sameKey` given, a fill whose key a valid entry (confirmed or provisional) already holds
  * rewrites that entry (data, owner, provisional) and touches it instead of taking a second one:
  * owners in flight that missed the same entry leave one copy. Otherwise the first invalid
  * entry, else the PLRU victim among the unpinned entries (see "Pins"; with `reuse`, among the
  * unpinned entries of the highest re-reference value), and only when every entry is pinned
  * among all entries (so a fill always lands).
  *
  * ==Pins (with `pins`)==
  * A lookup hit made through `use(way, owner)` pins that entry for the owner (one pin per owner:
  * its latest hit) until the owner's `confirm` or `drop`. Several owners in flight each pin what
  * they are using, so one owner's fills (on a scattered workload, entries used once) do not
  * evict the entries another owner in flight shares with it. Pins only steer replacement: they
  * never keep an entry valid.
  *
  * ==Re-reference prediction (with `reuse`)==
  * Each entry has a 2-bit re-reference prediction value (static RRIP): a lookup hit (`use` /
  * `touch`) or a de-duplicated fill (a second owner needed the same entry) sets it to 0 (reused
  * soon), a fill into a new entry to 2 (reuse unknown). A fill that must evict takes, among the
  * unpinned entries (all entries when every one is pinned), one with the highest value (the
  * PLRU order among them), and ages the other candidates by the distance of that value to 3. An
  * entry filled once and never used again (one per walk on a scattered workload) is thus evicted
  * before one that owners hit or filled together, even when no owner in flight pins the latter
  * (owners in lockstep that all missed pin nothing, and their one-shot fills would otherwise
  * evict the upper levels they had just filled together), and entries not reused age out.
  *
  * ==Late updates (with `late`)==
  * A touch / use (PLRU, pin, re-reference value) and a fill take effect one cycle after they are
  * asked for, from registers, so none of their logic sits behind the caller's decision; the
  * caller may `cancel()` a fill in the cycle it would land (an invalidation that must win).
  * Invalidations, confirms and drops act at once. `wroteLast` is the entry the previous cycle's
  * fill wrote: a caller that matched in that cycle drops a hit on it (its data changed after the
  * compare). A late fill whose owner confirms in the cycle it lands is confirmed; a late pin
  * whose owner ends in that cycle is not set. With `keyIn` the caller gives, with the fill, the
  * entries holding its key in the cycle it asks (`sameKeyAs`, a compare it can share with its
  * lookup of the same key); the entry the previous fill wrote in between is compared with that
  * fill's data instead, so the fill lands where a compare in its own cycle would put it.
  *
  * ==Choice ahead (with `ahead`, needs `late`)==
  * For the clock, the free entry and the victim a fill lands in are chosen a cycle before it
  * lands, from that cycle's state (the victim's unpinned / highest-re-reference candidates from
  * the cycle before that), together with a second choice: the next free entry, and the victim
  * in the other half of the PLRU tree (the root bit flipped, where a touch of the first victim
  * turns it). A fill whose previous cycle's fill wrote the first choice takes the second, so
  * back-to-back fills never write one entry unless they share a key. The landing only picks
  * among registered one-hot choices (holding its key, else free, else victim); an entry freed,
  * touched, pinned or aged in the cycle before the landing counts from the next choice on. The
  * ageing of an eviction uses the candidates and top value of the cycle before too. The free
  * bits the choice scans are registered from the valid and write registers' next values (the
  * same bits, from registers), and `validKept` gives a caller the entries valid and not written
  * in the next cycle, to register with its compares (a select then starts from registers).
  * The entry holding the key is the landing's same-key vector itself, not its lowest set bit:
  * every fill de-duplicates, so at most one entry holds a key (an entry with its write pending
  * counted with the data written), and the vector is exactly the entries holding the fill's key
  * as they are after that write (one copy per key). This needs `sameKey` to be an equivalence
  * and, with `keyIn`, the caller's same-key vector to be of the fill's own key; `oneCopy` states
  * it for a proof (formal/walker I14).
  *
  * ==Split operations (with `split`, needs `late` and `keyIn`)==
  * For the clock of a caller whose decision to fill or use an entry comes from deep logic but
  * whose data do not: the data (`fillBits`, `useBits`) are given every cycle and only the
  * enables (`fillGo`, `useGo`) when decided, so the data do not pass through the decision's
  * multiplexers (they are registered and read only behind a registered enable); confirms and
  * drops come as one bit per owner (`confirmMask`, `dropMask`), each entry looking up its own
  * owner's bit. With `ahead` the entry a fill lands in also reaches the storage one-hot
  * (decoded beside the landing's selects, not from the chosen index). The same behaviour as
  * the plain operations.
  *
  * ==Late writes (with `writeLate`, needs `ahead` and `split`)==
  * For the clock, a fill's landing only chooses its entry; the entry's data, valid,
  * provisional, owner and re-reference registers and the PLRU order are written one cycle
  * later (the *write* cycle) from the registered choice, so no entry register and no PLRU bit
  * sits behind the landing's de-duplication pick (the PLRU update in the write cycle since
  * session 34, a cancelled write's included: the victim chosen in the write cycle for a
  * landing in the next may then be the entry being written, which that landing evicts). `wroteLast` is then the entry whose write took effect at the
  * end of the previous cycle (a caller that matched in that cycle drops a hit on it); an entry
  * whose write is pending in the write cycle still shows its previous content, valid or not,
  * and a lookup may use it (that content was valid when the caller chose it). A fill's key is
  * compared, besides the previous fill's (landing) data, with the data of the fill in its write
  * cycle, for the entry that write changes. The free entries a choice ahead sees exclude, in
  * the write cycle, the landing's two registered free choices, whichever it took (none when it
  * did not land): so the landing's de-duplication pick and eviction clash are not in front of
  * the free bits. An unused free choice is thus free a cycle later; an entry the landing
  * de-duplicated into or evicted is valid anyway, unless a drop or an invalidation (without a
  * cancel) removed its previous content in the landing cycle: then it counts free while its
  * write is pending, and a fill choosing it later overwrites the new content as an eviction
  * would (a cache may lose an entry; no lookup sees wrong data). A `cancel()` drops both the
  * landing fill and the fill in its write cycle; the entry the latter would have written is
  * invalidated (its previous content too). An owner's
  * confirm in the landing or the write cycle confirms the fill; a drop of the owner of the
  * entry's previous content in the write cycle does not remove the new content.
  *
  * ==Isolated fills (with `isolated`, needs `keyIn`, `late`)==
  * For the clock of a caller whose fills are far apart: it guarantees that between the cycle a
  * fill is asked and its landing no fill lands, nothing is invalidated or dropped, and that no
  * fill landed in the cycle it asks; its same-key vector is then exact and must include the
  * valid bits (the valid entries holding the key: at most one). The entry holding the key, the
  * first free entry and the PLRU victim are chosen when the fill is asked (the victim from the
  * state the landing sees: a touch applied in the asking cycle included). The same behaviour
  * as without it, under that guarantee.
  *
  * ==One-hot landing (with `landOH`, needs `isolated`)==
  * For the clock: the three choices are also registered one-hot when the fill is asked (the
  * entry holding the key is the same-key vector itself; the first free entry from a prefix
  * scan; the victim from the PLRU tree's path bits, after the touch applied in that cycle),
  * with whether the key is held, so each entry's write enable at the landing is a select among
  * registers, not an index muxed from three and decoded again per entry. The same entry as
  * without it (`way` is still formed, for the PLRU update).
  *
  * Each operation (one lookup touch or one fill, any invalidations, one confirm and one drop)
  * may happen once a cycle; a fill wins over an invalidation or a drop of the same entry; an
  * owner's pin set in the cycle of its confirm or drop stays. A touch and a fill never share a
  * cycle (the replacement state takes one update a cycle).
  */
class AssocCache[T <: Data](
    gen: T,
    val n: Int,
    ownerBits: Int,
    sameKey: Option[(T, T) => Bool] = None,
    pins: Boolean = false,
    reuse: Boolean = false,
    late: Boolean = false,
    keyIn: Boolean = false,
    ahead: Boolean = false,
    split: Boolean = false,
    writeLate: Boolean = false,
    isolated: Boolean = false,
    landOH: Boolean = false
) {
  require(!keyIn || (late && sameKey.isDefined), "AssocCache: keyIn needs late and sameKey")
  require(!ahead || late, "AssocCache: ahead needs late")
  require(!split || (late && keyIn), "AssocCache: split needs late and keyIn")
  require(!writeLate || (ahead && split), "AssocCache: writeLate needs ahead and split")
  require(!isolated || (keyIn && !ahead && !pins && !reuse), "AssocCache: isolated needs keyIn, without ahead, pins or reuse")
  require(!landOH || isolated, "AssocCache: landOH needs isolated")
  require(n >= 1, s"AssocCache needs at least one entry, got $n")
  private val store = FullyAssocStorage(gen, n, wayOH = ahead || landOH)
  private val validR = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val provR = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val ownerR = Reg(Vec(n, UInt(ownerBits.W)))
  private val repl = new ReplacementState(new TreePlru(n), 1)
  private val owners = if (pins) 1 << ownerBits else 0
  private val pinR = Seq.fill(owners)(RegInit(0.U(n.W))) // per owner, one-hot (0: none)
  private val rrpvR = Option.when(reuse)(RegInit(VecInit(Seq.fill(n)(3.U(2.W)))))

  val entries: Vec[T] = store.io.all(0)
  val valid: Vec[Bool] = validR

  private val touchEn = WireDefault(false.B)
  private val touchWay = WireDefault(0.U(log2Ceil(n).max(1).W))
  private val fillEn = WireDefault(false.B)
  private val fillData = Wire(gen)
  fillData := DontCare
  private val fillOwner = WireDefault(0.U(ownerBits.W))
  private val pinEn = WireDefault(false.B)
  private val pinWay = WireDefault(0.U(log2Ceil(n).max(1).W))
  private val pinOwner = WireDefault(0.U(ownerBits.W))
  private val invalMask = WireDefault(VecInit(Seq.fill(n)(false.B)))
  private val confirmEn = WireDefault(false.B)
  private val confirmOwner = WireDefault(0.U(ownerBits.W))
  private val dropEn = WireDefault(false.B)
  private val dropOwner = WireDefault(0.U(ownerBits.W))
  private val cancelEn = WireDefault(false.B)
  private val sameIn = WireDefault(VecInit(Seq.fill(n)(false.B)))
  private val wroteLastR = RegInit(VecInit(Seq.fill(n)(false.B)))

  // The operations as they apply (with `late`, the ones asked for a cycle earlier).
  private def applied[D <: Data](x: D): D = if (late) RegNext(x) else x
  private def appliedEn(x: Bool): Bool = if (late) RegNext(x, false.B) else x
  private val touchA = appliedEn(touchEn)
  private val touchWayA = applied(touchWay)
  private val pinA = appliedEn(pinEn)
  private val pinWayA = applied(pinWay)
  private val pinOwnerA = applied(pinOwner)
  private val fillA = appliedEn(fillEn) && !cancelEn
  private val fillDataA = applied(fillData)
  private val fillOwnerA = applied(fillOwner)

  /** The lowest-index entry among `hits` (the caller's match, already ANDed with `valid`). */
  def first(hits: Seq[Bool]): (Bool, T, UInt) = (VecInit(hits).asUInt.orR, PriorityMux(hits, entries), PriorityEncoder(hits))

  def touch(way: UInt): Unit = { touchEn := true.B; touchWay := way }

  /** A hit of `owner` on `way`: touch it and pin it for the owner (see "Pins"). */
  def use(way: UInt, owner: UInt): Unit = {
    require(pins, "AssocCache.use needs pins = true")
    touch(way); pinEn := true.B; pinWay := way; pinOwner := owner
  }

  /** Write `data` (see "Where a fill goes"). */
  def fill(data: T, owner: UInt): Unit = {
    require(!keyIn, "AssocCache with keyIn: fill(data, owner, same)")
    fillEn := true.B; fillData := data; fillOwner := owner
  }

  /** The entries holding `key`'s key now, valid or not. */
  def sameKeyAs(key: T): Vec[Bool] = sameKeyAs((_: Int) => key)

  /** The same, each entry `i` compared with `keyOf(i)`: the one key held in register copies that
    * each drive part of the entries ([[RegCopies]]), so no key bit's net spans them all. */
  def sameKeyAs(keyOf: Int => T): Vec[Bool] = VecInit(entries.zipWithIndex.map { case (x, i) => sameKey.get(x, keyOf(i)) })

  /** With `keyIn`: write `data`; `same` = `sameKeyAs(data)` in this cycle (see "Late updates"). */
  def fill(data: T, owner: UInt, same: Seq[Bool]): Unit = {
    require(keyIn, "AssocCache.fill with a same-key vector needs keyIn = true")
    fillEn := true.B; fillData := data; fillOwner := owner; sameIn := VecInit(same)
  }

  // ---- with `split`: each operation's data given apart from its enable ----------------------
  // A caller whose decision to fill or use comes from deep logic, but whose data does not, gives
  // the data every cycle (`fillBits`, `useBits`) and the enable only when it decides
  // (`fillGo`, `useGo`): the data then does not pass through the decision's multiplexers. With
  // `late` the data are registered and read only when the registered enable is set.
  private val ownersN = 1 << ownerBits
  private val confirmM = WireDefault(VecInit(Seq.fill(ownersN)(false.B)))
  private val dropM = WireDefault(VecInit(Seq.fill(ownersN)(false.B)))

  /** With `split`: the data, owner and same-key vector of a fill asked for this cycle (`fillGo`). */
  def fillBits(data: T, owner: UInt, same: Seq[Bool]): Unit = {
    require(split, "AssocCache.fillBits needs split = true")
    fillData := data; fillOwner := owner; sameIn := VecInit(same)
  }
  def fillGo(): Unit = { require(split, "AssocCache.fillGo needs split = true"); fillEn := true.B }
  /** With `split`: the way and owner of a hit used this cycle (`useGo`, see `use`). */
  def useBits(way: UInt, owner: UInt): Unit = {
    require(split && pins, "AssocCache.useBits needs split and pins")
    touchWay := way; pinWay := way; pinOwner := owner
  }
  def useGo(): Unit = { require(split && pins, "AssocCache.useGo needs split and pins"); touchEn := true.B; pinEn := true.B }
  /** With `split`: confirm / drop the owners whose bit is set (one-hot or none), instead of by
    * index: each entry then looks its own owner's bit up, with no compare behind the caller's
    * choice of owner.
    */
  def confirmMask(m: Seq[Bool]): Unit = {
    require(split && m.size <= ownersN); for (o <- m.indices) confirmM(o) := m(o)
  }
  def dropMask(m: Seq[Bool]): Unit = {
    require(split && m.size <= ownersN); for (o <- m.indices) dropM(o) := m(o)
  }
  private def confirmedOwner(o: UInt): Bool = if (split) confirmM(o) else confirmEn && o === confirmOwner
  private def droppedOwner(o: UInt): Bool = if (split) dropM(o) else dropEn && o === dropOwner

  def invalidate(mask: Seq[Bool]): Unit = invalMask := VecInit(mask)
  /** With `late`: the fill asked for in the previous cycle does not land. */
  def cancel(): Unit = { require(late, "AssocCache.cancel needs late = true"); cancelEn := true.B }
  def confirm(owner: UInt): Unit = { confirmEn := true.B; confirmOwner := owner }
  def drop(owner: UInt): Unit = { dropEn := true.B; dropOwner := owner }

  // With writeLate: the fill in its write cycle (registered at its landing), see "Late writes".
  private val fillW = RegInit(false.B)
  private val wOHW = Reg(Vec(n, Bool()))
  private val dupW = Reg(Bool())
  private val dataW = Reg(gen)
  private val ownerW = Reg(UInt(ownerBits.W))
  /** The entry a write changed at the end of the previous cycle (with writeLate). */
  private val wrote2R = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val pendingW = (0 until n).map(i => writeLate.B && fillW && wOHW(i))
  /** With writeLate: the entries whose write takes effect at the end of this cycle (their
    * content changes then): a caller that chose an entry in this cycle and reads its fields in
    * the next drops such a choice. */
  val writing: Vec[Bool] = VecInit(pendingW)
  private val dup = sameKey match {
    case Some(_) if isolated => RegNext(sameIn)
    case Some(same) if keyIn =>
      // the key compare of the fill's own cycle, except on the entry the previous fill wrote
      val sameA = RegNext(sameIn)
      // (the two fills' keys compared when the second is asked: the same compare a cycle
      // earlier, so it is not in front of the landing)
      val lastSame = RegNext(same(fillDataA, fillData))
      if (writeLate) {
        // the entry the landing fill writes holds its data once written (lastSame); the entry
        // written at the end of the previous cycle was compared with its old data: compare with
        // the fill that wrote it instead (a fill in its write cycle when this one was asked)
        val lastSame2 = RegNext(same(dataW, fillData))
        VecInit((0 until n).map(i => Mux(wroteLastR(i), lastSame, validR(i) && Mux(wrote2R(i), lastSame2, sameA(i)))))
      } else VecInit((0 until n).map(i => validR(i) && Mux(wroteLastR(i), lastSame, sameA(i))))
    case Some(same) => VecInit(validR.zip(entries).map { case (v, x) => v && same(x, fillDataA) })
    case None       => VecInit(Seq.fill(n)(false.B))
  }
  private val free = (0 until n).map(i => !validR(i) && !pendingW(i))
  /** With `ahead`: the same free bits, registered from the valid and pending-write registers'
    * next values (exactly `free` of this cycle: no behaviour change), so the choice ahead's
    * first-two scan starts from registers. */
  private val freeAheadN = Option.when(ahead)(Wire(Vec(n, Bool())))
  private val freeAheadR = freeAheadN.map(x => RegNext(x, VecInit(Seq.fill(n)(true.B))))
  /** With `ahead`: the entries a fill landing now may take as free (its two registered free
    * choices, one-hot), which the free bits of the next cycle exclude whichever it takes. */
  private val freeTakeN = Option.when(ahead)(Wire(Vec(n, Bool())))
  private val victim = repl.victim(0.U)
  private val pinned = if (pins) pinR.reduce(_ | _) else 0.U(n.W)
  private val anyOpen = (0 until n).map(i => !pinned(i)).reduce(_ || _)
  /** Candidates of an eviction: the unpinned entries, or all when every entry is pinned. */
  private val cand = (0 until n).map(i => !pinned(i) || !anyOpen)
  /** With `reuse`: the highest re-reference value among the candidates. */
  private val top = rrpvR.map { rr =>
    val at = (0 to 3).map(v => (0 until n).map(i => cand(i) && rr(i) === v.U).reduce(_ || _))
    Mux(at(3), 3.U, Mux(at(2), 2.U, Mux(at(1), 1.U, 0.U)))
  }
  private val avoid = (0 until n).map { i =>
    !cand(i) || rrpvR.zip(top).map { case (rr, t) => rr(i) =/= t }.getOrElse(false.B)
  }
  private val evict = if (!pins && !reuse) victim else repl.victimAvoiding(0.U, avoid)
  private def any(x: Seq[Bool]): Bool = VecInit(x).asUInt.orR
  /** The lowest set entry one-hot, each bit from one OR of the bits below it (no ripple). */
  private def oh(x: Seq[Bool]): Seq[Bool] = x.indices.map(i => x(i) && !(if (i == 0) false.B else any(x.take(i))))
  /** With `ahead`: the lowest set bit one-hot and the second lowest one-hot, from parallel prefix
    * (Sklansky) scans of "any set / at least two set" over the bits below each one, so that the
    * logic shared between the bits is a tree (log depth), not a chain. */
  private def firstTwo(x: Seq[Bool]): (Seq[Bool], Seq[Bool], Bool, Bool) = {
    type P = (Bool, Bool)
    def op(a: P, b: P): P = (a._1 || b._1, a._2 || b._2 || (a._1 && b._1))
    def scan(v: Seq[P]): Seq[P] =
      if (v.size <= 1) v
      else {
        val (l, h) = v.splitAt(v.size / 2)
        val sl = scan(l); val sh = scan(h)
        sl ++ sh.map(op(sl.last, _))
      }
    val incl = scan(x.map(b => (b, false.B)))
    val below = (false.B, false.B) +: incl.init
    val f1 = x.indices.map(i => x(i) && !below(i)._1)
    val f2 = x.indices.map(i => x(i) && below(i)._1 && !below(i)._2)
    (f1, f2, incl.last._1, incl.last._2)
  }
  // With `ahead` the entry holding the key is `dup` itself, no first-set scan in front of the
  // landing's entry: every fill de-duplicates, so at most one entry (valid, or with its write
  // pending) holds a key, and `dup` is exactly the entries holding the landing fill's key, as
  // they are after the pending write ("One copy per key"; formal/walker I14 via `oneCopy`).
  private val dupOH = if (ahead) dup.toSeq else oh(dup)
  // (with `landOH` the same bit, registered from the asking cycle's same-key vector: `dup` is
  // that vector registered)
  private val dupAny = if (landOH) RegNext(any(sameIn), false.B) else any(dup)
  /** One-hot entry a fill landing now writes, whether the cache has a free entry, and the
    * candidates the re-reference ageing applies to with the value it ages from.
    */
  private val (way, wayOH, freeAny, candA, topA): (UInt, Seq[Bool], Bool, Seq[Bool], Option[UInt]) =
    if (isolated) {
      // "Isolated fills": the entry holding the key and the free entry, chosen when the fill is
      // asked (nothing changes them before it lands); the victim too, from the replacement
      // state the landing sees: this cycle's, or after the touch applied in it (no fill lands
      // in the cycle a fill is asked, so a touch is the only update)
      val dupIdx = RegNext(OHToUInt(sameIn))
      val fAny = RegNext(free.reduce(_ || _))
      val fIdx = RegNext(PriorityEncoder(free))
      val st = repl.peek(0.U)
      val evictR = RegNext(Mux(touchA, repl.policy.victim(repl.policy.touch(st, touchWayA)), repl.policy.victim(st)))
      val w = Mux(dupAny, dupIdx, Mux(fAny, fIdx, evictR))
      val wOH = if (!landOH) (0 until n).map(w === _.U) else {
        val plru = repl.policy.asInstanceOf[TreePlru]
        // (the first free entry from the prefix scan: a tree, where `oh` shares a chain)
        val fOHR = RegNext(VecInit(firstTwo(free)._1))
        val eOHR = RegNext(VecInit(plru.victimOH(Mux(touchA, plru.touchPow2(st, touchWayA), st))))
        (0 until n).map(i => Mux(dupAny, dup(i), Mux(fAny, fOHR(i), eOHR(i))))
      }
      (w, wOH, fAny, cand, top)
    } else if (!ahead) {
      val w = Mux(dupAny, PriorityEncoder(dup), Mux(free.reduce(_ || _), PriorityEncoder(free), evict))
      (w, (0 until n).map(w === _.U), free.reduce(_ || _), cand, top)
    } else {
      // "Choice ahead": the free entry and the victim are chosen from this cycle's state and
      // registered for a fill landing in the next cycle, so the landing only picks among
      // registered one-hot choices. Besides the first choice, a second one: the next free
      // entry, and the victim of the other half of the PLRU tree (its root bit flipped, which
      // is where a touch of the first victim turns it); the landing takes the second when the
      // fill of this cycle writes the first (`wroteLast`, back-to-back fills). The state seen is
      // one cycle old otherwise: an entry freed, touched, pinned or aged in this cycle counts
      // from the next choice on (only the choice among legal entries differs). The entries the
      // victim avoids (pins, re-reference values) are themselves registered a cycle before:
      // two cycles old.
      // the first and the second free entry (the second: free, with exactly one free entry below)
      val (f1, f2, anyFree, twoFree) = firstTwo(freeAheadR.get)
      val avoidR = RegNext(VecInit(avoid))
      val e1v = if (!pins && !reuse) victim else repl.victimAvoiding(0.U, avoidR)
      val e1 = (0 until n).map(e1v === _.U)
      val e2v = if (!pins && !reuse) repl.policy.victim(repl.peek(0.U) ^ 1.U)
        else repl.policy.victimAvoiding(repl.peek(0.U) ^ 1.U, avoidR)
      // The choices are registered as indices (the entry written is decoded from one index,
      // so it is one entry whatever the registers hold); the first choices also one-hot, only
      // to compare them with the entry the fill of this cycle writes.
      val f1R = RegNext(OHToUInt(f1)); val f2R = RegNext(OHToUInt(f2))
      val a1R = RegNext(anyFree, false.B); val a2R = RegNext(twoFree, false.B)
      val e1R = RegNext(e1v); val e2R = RegNext(e2v)
      val f1OHR = RegNext(VecInit(f1)); val e1OHR = RegNext(VecInit(e1))
      // (both free choices one-hot: what a landing excludes from the free bits of the next cycle)
      val f2OHR = RegNext(VecInit(f2))
      for (i <- 0 until n) freeTakeN.get(i) := f1OHR(i) || f2OHR(i)
      val candR = RegNext(VecInit(cand)); val topR = top.map(t => RegNext(t))
      val fClash = any(f1OHR.zip(wroteLastR).map { case (a, b) => a && b })
      val eClash = any(e1OHR.zip(wroteLastR).map { case (a, b) => a && b })
      val fAny = Mux(fClash, a2R, a1R)
      val idx = Mux(dupAny, OHToUInt(dupOH), Mux(fAny, Mux(fClash, f2R, f1R), Mux(eClash, e2R, e1R)))
      // The same entry one-hot, each bit from the registered one-hot free choices and the
      // victims' registered indices decoded beside the selects (not decoded from `idx`, which is
      // behind them): what the entry registers (storage enable, valid, re-reference value)
      // start from. (The free choices one-hot, not their indices decoded: the first-two scan's
      // one-hot outputs are registered as they are, no index encoding behind the scan; the
      // registers are one-hot from the first cycle after reset on, since the scan's outputs
      // are; with writeLate `idx` is unused and the index registers go.)
      val wOH = (0 until n).map { i =>
        Mux(dupAny, dupOH(i), Mux(fAny, Mux(fClash, f2OHR(i), f1OHR(i)), Mux(eClash, e2R === i.U, e1R === i.U)))
      }
      (idx, wOH, fAny, candR.toSeq, topR)
    }
  private val evicting = !dupAny && !freeAny
  /** With writeLate, for proofs ("One copy per key"): no two entries hold one key, each as it
    * is after the write pending in this cycle (valid, or being written, with the data written),
    * and a fill landing now finds at most one entry holding its key. */
  def oneCopy: Bool = {
    require(writeLate && sameKey.isDefined, "AssocCache.oneCopy needs writeLate and sameKey")
    val effV = (0 until n).map(i => validR(i) || pendingW(i))
    val effD = (0 until n).map(i => Mux(pendingW(i), dataW, entries(i)))
    val unique = for (i <- 0 until n; j <- i + 1 until n) yield !(effV(i) && effV(j) && sameKey.get(effD(i), effD(j)))
    val two = for (i <- 0 until n; j <- i + 1 until n) yield dup(i) && dup(j)
    (unique :+ !(fillA && any(two))).reduce(_ && _)
  }
  /** With writeLate, for proofs: the write of this cycle (`fillWrites`) is a de-duplicated fill
    * (its landing found the entry holding its key). */
  def fillDedup: Bool = { require(writeLate, "AssocCache.fillDedup needs writeLate"); fillWrites && dupW }
  /** The entry a fill writes in this cycle (for proofs and counters): the landing's choice, or
    * with writeLate the entry of the fill in its write cycle. */
  val fillWay: UInt = if (writeLate) OHToUInt(wOHW) else way
  /** Whether a fill writes an entry in this cycle (with writeLate: the write cycle's, not cancelled). */
  val fillWrites: Bool = if (writeLate) fillW && !cancelEn else fillA
  /** The entry a fill in this cycle writes, one-hot (for a pipelined caller's bypass). */
  def fillWayOH: Seq[Bool] = wayOH
  store.io.read.valid := false.B
  store.io.read.bits := 0.U
  /** With `late`: the entry the previous cycle's fill wrote, one-hot (none without `late`). */
  wroteLastR := VecInit((0 until n).map(i => late.B && fillA && wayOH(i)))
  private val fillConfirmed = late.B && confirmedOwner(fillOwnerA)
  // The fill the entry registers take: the landing's, or with writeLate the one in its write
  // cycle (from registers only; a cancel in that cycle drops it and invalidates its entry).
  private val wrEn = if (writeLate) fillW && !cancelEn else fillA
  private val wrOH: Seq[Bool] = if (writeLate) wOHW.toSeq else wayOH
  private val wrData = if (writeLate) dataW else fillDataA
  private val wrOwner = if (writeLate) ownerW else fillOwnerA
  private val wrConfirmed = if (writeLate) RegNext(fillConfirmed) || confirmedOwner(ownerW) else fillConfirmed
  private val killed = (0 until n).map(i => writeLate.B && fillW && cancelEn && wOHW(i))
  if (writeLate) {
    fillW := fillA; wOHW := VecInit(wayOH); dataW := fillDataA; ownerW := fillOwnerA; dupW := dupAny
    wrote2R := VecInit((0 until n).map(i => fillW && !cancelEn && wOHW(i)))
  }
  val wroteLast: Vec[Bool] = if (writeLate) wrote2R else wroteLastR
  store.io.write.valid := wrEn
  store.io.write.bits.set := 0.U
  store.io.write.bits.way := (if (writeLate) OHToUInt(wOHW) else way)
  store.io.writeWayOH.foreach(_ := VecInit(wrOH))
  store.io.write.bits.data := wrData
  if (ahead || landOH) {
    // (the tree's update from the landing's one-hot entry, not its encoded index: the same
    // word, since a tree PLRU's `taken` leaves the state as it is; with writeLate in the write
    // cycle, from the registered entry, so the landing's pick is not in front of the tree's
    // state: "Late writes")
    require(repl.policy.isInstanceOf[TreePlru])
    if (writeLate) when(fillW) { repl.write(0.U, repl.policy.touchOH(repl.peek(0.U), wOHW)) }
    else when(fillA) { repl.write(0.U, repl.policy.touchOH(repl.peek(0.U), wayOH)) }
  } else when(fillA) { repl.fill(0.U, way, evicting && way === victim) }
  // (with `landOH` the touch from the way's bits, without the compares and subtractions of
  // `touch`: the same word)
  if (landOH) when(touchA) { repl.write(0.U, repl.policy.asInstanceOf[TreePlru].touchPow2(repl.peek(0.U), touchWayA)) }
  else when(touchA) { repl.touch(0.U, touchWayA) }
  /** With `ahead`: entry i is valid in the next cycle and was not written in this one (`valid &&
    * !wroteLast` of the next cycle: a caller's compare in this cycle ANDed with it and registered
    * is a hit its select may take in the next cycle, with no valid bit in front of the select). */
  private val keptAheadN = Option.when(ahead)(Wire(Vec(n, Bool())))
  /** With `ahead` (see `keptAheadN`). */
  def validKept: Vec[Bool] = keptAheadN.get
  // A late fill lands after its owner's turn: confirmed if the owner answers in that cycle
  // (with writeLate: in the landing or the write cycle).
  for (i <- 0 until n) {
    val mine = ownerR(i)
    val filled = wrEn && wrOH(i)
    val dropped = provR(i) && droppedOwner(mine)
    validR(i) := filled || (validR(i) && !invalMask(i) && !dropped && !killed(i))
    if (ahead) {
      val validN = filled || (validR(i) && !invalMask(i) && !dropped && !killed(i))
      val wroteN = if (writeLate) fillW && !cancelEn && wOHW(i) else fillA && wayOH(i)
      // (a pending write excludes the landing's registered free choices, not its entry: the
      // de-duplication pick and the eviction clash stay out of the free bits; see "Choice ahead")
      freeAheadN.get(i) := !validN && !(writeLate.B && fillA && freeTakeN.get(i))
      keptAheadN.get(i) := validN && !wroteN
    }
    provR(i) := (filled && !wrConfirmed) || (provR(i) && !confirmedOwner(mine))
    when(filled) { ownerR(i) := wrOwner }
  }
  rrpvR.zip(topA).foreach { case (rr, t) =>
    // (with writeLate the landing's de-duplication, eviction and candidates, registered)
    def atWrite[D <: Data](x: D): D = if (writeLate) RegNext(x) else x
    val dupFill = if (writeLate) dupW else dupAny
    val evictW = atWrite(evicting)
    val candW = atWrite(VecInit(candA))
    val age = 3.U - atWrite(t)
    for (i <- 0 until n) {
      val aged = rr(i) +& age
      when(wrEn && wrOH(i)) { rr(i) := Mux(dupFill, 0.U, 2.U) }
        .elsewhen(touchA && touchWayA === i.U) { rr(i) := 0.U }
        .elsewhen(wrEn && evictW && candW(i)) { rr(i) := Mux(aged > 3.U, 3.U, aged(1, 0)) }
    }
  }
  for (o <- 0 until owners) {
    val ends = if (split) confirmM(o) || dropM(o) else (confirmEn && confirmOwner === o.U) || (dropEn && dropOwner === o.U)
    // Without `late` a pin set in its owner's last cycle stays; a late pin then is not set.
    val pinNow = pinA && pinOwnerA === o.U && !(late.B && ends)
    when(pinNow) { pinR(o) := UIntToOH(pinWayA, n) }.elsewhen(ends) { pinR(o) := 0.U }
  }
}
