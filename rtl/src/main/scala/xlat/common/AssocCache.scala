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
  * Each operation (one lookup touch or one fill, any invalidations, one confirm and one drop)
  * may happen once a cycle; a fill wins over an invalidation of the same entry. A touch and a
  * fill never share a cycle (the replacement state takes one update a cycle).
  */
class AssocCache[T <: Data](gen: T, val n: Int, ownerBits: Int) {
  require(n >= 1, s"AssocCache needs at least one entry, got $n")
  private val store = FullyAssocStorage(gen, n)
  private val validR = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val provR = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val ownerR = Reg(Vec(n, UInt(ownerBits.W)))
  private val repl = new ReplacementState(new TreePlru(n), 1)

  val entries: Vec[T] = store.io.all(0)
  val valid: Vec[Bool] = validR

  private val fillEn = WireDefault(false.B)
  private val fillData = Wire(gen)
  fillData := DontCare
  private val fillOwner = WireDefault(0.U(ownerBits.W))
  private val invalMask = WireDefault(VecInit(Seq.fill(n)(false.B)))
  private val confirmEn = WireDefault(false.B)
  private val confirmOwner = WireDefault(0.U(ownerBits.W))
  private val dropEn = WireDefault(false.B)
  private val dropOwner = WireDefault(0.U(ownerBits.W))

  /** The lowest-index entry among `hits` (the caller's match, already ANDed with `valid`). */
  def first(hits: Seq[Bool]): (Bool, T, UInt) = (VecInit(hits).asUInt.orR, PriorityMux(hits, entries), PriorityEncoder(hits))

  def touch(way: UInt): Unit = repl.touch(0.U, way)

  /** Write `data` into the first invalid entry, else the PLRU victim. */
  def fill(data: T, owner: UInt): Unit = { fillEn := true.B; fillData := data; fillOwner := owner }

  def invalidate(mask: Seq[Bool]): Unit = invalMask := VecInit(mask)
  def confirm(owner: UInt): Unit = { confirmEn := true.B; confirmOwner := owner }
  def drop(owner: UInt): Unit = { dropEn := true.B; dropOwner := owner }

  private val free = validR.map(!_)
  private val victim = repl.victim(0.U)
  private val way = Mux(free.reduce(_ || _), PriorityEncoder(free), victim)
  /** The entry a fill in this cycle writes, one-hot (for a pipelined caller's bypass). */
  def fillWayOH: Seq[Bool] = (0 until n).map(way === _.U)
  store.io.read.valid := false.B
  store.io.read.bits := 0.U
  store.io.write.valid := fillEn
  store.io.write.bits.set := 0.U
  store.io.write.bits.way := way
  store.io.write.bits.data := fillData
  when(fillEn) { repl.fill(0.U, way, !free.reduce(_ || _)) }
  for (i <- 0 until n) {
    val mine = ownerR(i)
    val filled = fillEn && way === i.U
    val dropped = dropEn && provR(i) && mine === dropOwner
    validR(i) := filled || (validR(i) && !invalMask(i) && !dropped)
    provR(i) := filled || (provR(i) && !(confirmEn && mine === confirmOwner))
    when(filled) { ownerR(i) := fillOwner }
  }
}
