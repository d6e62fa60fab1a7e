package xlat.common

import chisel3._
import chisel3.util._

/** Fair choice of one requester a cycle: the first requester after the last one granted.
  * Walk slots and contexts compete for step engines, memory ports and output channels; round
  * robin keeps one busy requester from starving the others.
  *
  * With `hold` (the default) a choice that was not granted is kept while its requester still
  * asks, so an output channel driven by the choice holds its valid and bits until `ready` (the
  * library's channel rule). Without it every cycle chooses afresh from `last`: for a choice that
  * only loads a register (it drives no channel), two logic levels shorter; still fair, since
  * `last` moves only on a grant. Without `hold`, `last` is kept as a thermometer (`after(j)`:
  * j > last) and each requester's grant is one OR of the requesters ahead of it (those after
  * `last` first, then from 0), with no comparator, priority encoder or final multiplexer
  * between the requests and the one-hot choice; the same choice as with the binary `last`.
  *
  * With `hold` and `fast`: the same choices as with `hold`, from the thermometer `last` and a
  * held choice (`keep` is one OR of each requester's decode of the held index ANDed with its request), so the
  * one-hot choice is a few logic levels behind the requests; `index` is encoded from it.
  */
class RoundRobin(n: Int, hold: Boolean = true, fast: Boolean = false) {
  require(!fast || hold, "RoundRobin: fast is a form of hold")
  private val bits = log2Ceil(n).max(1)
  private val last = RegInit((n - 1).U(bits.W))
  /** Without hold: `last` as a thermometer, after(j) = j > last (reset: last = n - 1, none). */
  private val afterLast = if (hold && !fast) None else Some(RegInit(VecInit(Seq.fill(n)(false.B))))
  private val grant = WireDefault(false.B)
  val valid: Bool = Wire(Bool())
  val index: UInt = Wire(UInt(bits.W))
  /** The same choice one-hot, computed beside `index` (not decoded from it): a caller that
    * multiplexes wide data by the choice (AND-OR) starts from here, a few logic levels earlier.
    */
  val oneHot: Vec[Bool] = Wire(Vec(n, Bool()))

  /** Connect the requests; call `granted()` in the cycles the choice is used. */
  def apply(req: Seq[Bool]): RoundRobin = {
    require(req.size == n)
    val any = VecInit(req)
    // Order: last+1 .. n-1, then 0 .. last.
    val after = VecInit((0 until n).map(i => req(i) && i.U > last))
    val fresh = Mux(after.asUInt.orR, PriorityEncoder(after), PriorityEncoder(any))
    val freshOH = Mux(after.asUInt.orR, PriorityEncoderOH(after.asUInt), PriorityEncoderOH(any.asUInt))
    valid := any.asUInt.orR
    if (fast) {
      // the held choice as valid + index (one requester whatever the registers hold), each
      // requester's kept bit one decode of it beside its request
      val heldValid = RegInit(false.B)
      val heldIndex = RegInit(0.U(bits.W))
      val kept = (0 until n).map(i => heldValid && heldIndex === i.U && req(i))
      val keep = kept.reduce(_ || _)
      val fresh = RoundRobin.firstAfter(req, afterLast.get)
      val oh = (0 until n).map(i => kept(i) || (!keep && fresh(i)))
      oneHot := VecInit(oh)
      index := OHToUInt(oh)
      heldValid := valid && !grant
      heldIndex := index
    } else if (!hold) {
      val oh = RoundRobin.firstAfter(req, afterLast.get)
      oneHot := VecInit(oh)
      index := OHToUInt(oh)
    } else {
      val heldValid = RegInit(false.B)
      val heldIndex = RegInit(0.U(bits.W))
      val keep = heldValid && any(heldIndex)
      index := Mux(keep, heldIndex, fresh)
      oneHot := VecInit((0 until n).map(i => Mux(keep, heldIndex === i.U, freshOH(i) && any(i))))
      heldValid := valid && !grant
      heldIndex := index
    }
    this
  }

  /** Without `hold` (or with `fast`): `last` as the thermometer the choice uses (bit j: j is
    * after the last grant), for proofs that relate it to the caller's registered choice. */
  def lastThermometer: Option[Vec[Bool]] = afterLast

  def granted(): Unit = {
    grant := true.B
    last := index
    afterLast.foreach(hi => for (j <- 0 until n) hi(j) := (0 until j).map(oneHot(_)).foldLeft(false.B)(_ || _))
  }
}

object RoundRobin {
  /** The choice of a round robin without hold, one-hot: the first requester after `last`, given
    * as the thermometer `hi` (hi(j) = j > last; all false: none granted yet, start from 0).
    * Requester i is ahead of requester j when i is after last and j is not, or both are on the
    * same side and i < j (hi(j) for j < i implies hi(i)). Shared by the class and by callers that
    * compute a choice for next cycle's requests ahead (xlat.pml.PmlLogger).
    */
  def firstAfter(req: Seq[Bool], hi: Seq[Bool]): Seq[Bool] = {
    val n = req.size
    require(hi.size == n)
    def or(x: Seq[Bool]): Bool = if (x.isEmpty) false.B else x.reduce(_ || _)
    (0 until n).map { i =>
      val lowerHi = (0 until i).map(j => req(j) && hi(j))
      val lower = (0 until i).map(j => req(j))
      val upperHi = (i + 1 until n).map(j => req(j) && hi(j))
      req(i) && !Mux(hi(i), or(lowerHi), or(upperHi) || or(lower))
    }
  }
}
