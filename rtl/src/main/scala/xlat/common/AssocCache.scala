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
  * entry, else the PLRU victim unless it is *pinned*, then the first unpinned entry, and only
  * when every entry is pinned the PLRU victim (so a fill always lands).
  *
  * ==Pins (with `pins`)==
  * A lookup hit made through `use(way, owner)` pins that entry for the owner (one pin per owner:
  * its latest hit) until the owner's `confirm` or `drop`. Several owners in flight each pin what
  * they are using, so one owner's fills (on a scattered workload, entries used once) do not
  * evict the entries another owner in flight shares with it. Pins only steer replacement: they
  * never keep an entry valid.
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
    pins: Boolean = false
) {
  require(n >= 1, s"AssocCache needs at least one entry, got $n")
  private val store = FullyAssocStorage(gen, n)
  private val validR = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val provR = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val ownerR = Reg(Vec(n, UInt(ownerBits.W)))
  private val repl = new ReplacementState(new TreePlru(n), 1)
  private val owners = if (pins) 1 << ownerBits else 0
  private val pinR = Seq.fill(owners)(RegInit(0.U(n.W))) // per owner, one-hot (0: none)

  val entries: Vec[T] = store.io.all(0)
  val valid: Vec[Bool] = validR

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

  /** The lowest-index entry among `hits` (the caller's match, already ANDed with `valid`). */
  def first(hits: Seq[Bool]): (Bool, T, UInt) = (VecInit(hits).asUInt.orR, PriorityMux(hits, entries), PriorityEncoder(hits))

  def touch(way: UInt): Unit = repl.touch(0.U, way)

  /** A hit of `owner` on `way`: touch it and pin it for the owner (see "Pins"). */
  def use(way: UInt, owner: UInt): Unit = {
    require(pins, "AssocCache.use needs pins = true")
    touch(way); pinEn := true.B; pinWay := way; pinOwner := owner
  }

  /** Write `data` (see "Where a fill goes"). */
  def fill(data: T, owner: UInt): Unit = { fillEn := true.B; fillData := data; fillOwner := owner }

  def invalidate(mask: Seq[Bool]): Unit = invalMask := VecInit(mask)
  def confirm(owner: UInt): Unit = { confirmEn := true.B; confirmOwner := owner }
  def drop(owner: UInt): Unit = { dropEn := true.B; dropOwner := owner }

  private val dup = sameKey match {
    case Some(same) => VecInit(validR.zip(entries).map { case (v, x) => v && same(x, fillData) })
    case None       => VecInit(Seq.fill(n)(false.B))
  }
  private val free = validR.map(!_)
  private val victim = repl.victim(0.U)
  private val evict = if (pins) {
    val pinned = pinR.reduce(_ | _)
    val open = (0 until n).map(i => !pinned(i))
    val victimPinned = (0 until n).map(i => pinned(i) && victim === i.U).reduce(_ || _)
    Mux(!victimPinned || !open.reduce(_ || _), victim, PriorityEncoder(open))
  } else victim
  private val way = Mux(dup.asUInt.orR, PriorityEncoder(dup), Mux(free.reduce(_ || _), PriorityEncoder(free), evict))
  private val evicting = !dup.asUInt.orR && !free.reduce(_ || _)
  /** The entry a fill this cycle writes (for proofs and counters). */
  val fillWay: UInt = way
  store.io.read.valid := false.B
  store.io.read.bits := 0.U
  store.io.write.valid := fillEn
  store.io.write.bits.set := 0.U
  store.io.write.bits.way := way
  store.io.write.bits.data := fillData
  when(fillEn) { repl.fill(0.U, way, evicting && way === victim) }
  for (i <- 0 until n) {
    val mine = ownerR(i)
    val filled = fillEn && way === i.U
    val dropped = dropEn && provR(i) && mine === dropOwner
    validR(i) := filled || (validR(i) && !invalMask(i) && !dropped)
    provR(i) := filled || (provR(i) && !(confirmEn && mine === confirmOwner))
    when(filled) { ownerR(i) := fillOwner }
  }
  for (o <- 0 until owners) {
    val ends = (confirmEn && confirmOwner === o.U) || (dropEn && dropOwner === o.U)
    when(pinEn && pinOwner === o.U) { pinR(o) := UIntToOH(pinWay, n) }.elsewhen(ends) { pinR(o) := 0.U }
  }
}
