package xlat.walker

import chisel3._
import chisel3.util._
import xlat.common.RoundRobin

/** The round robin of an output channel (the channel rule: a choice not granted is kept while
  * its requester asks) whose one-hot choice is a register, computed in the cycle before from the
  * requests of the cycle it is used in: `reqNext`, which requesters ask in the next cycle (from
  * their next states). The same choices as `RoundRobin(n, fast = true)` on the same requests
  * (the held choice first, else the first requester after the last grant), so no cycle changes;
  * what the choice drives (the channel's valid and bits, the grant's writes) starts from a
  * register instead of from the requesters' states through the round robin.
  */
class ChannelChoice(n: Int) {
  private val ohR = RegInit(VecInit(Seq.fill(n)(false.B)))
  /** `last` as a thermometer (bit j: j is after the last grant; reset: none granted). */
  private val afterLast = RegInit(VecInit(Seq.fill(n)(false.B)))
  /** The choice of this cycle, one-hot (none: no requester). */
  val oneHot: Vec[Bool] = ohR
  val valid: Bool = ohR.asUInt.orR

  /** Connect the next cycle's requests and this cycle's grant (the choice is taken). The caller
    * guarantees the channel rule's premise: a chosen requester that is not granted asks in the
    * next cycle (`reqNext` is set for it; the proofs check `ok`). */
  def apply(reqNext: Seq[Bool], grant: Bool): ChannelChoice = apply(reqNext, grant, Seq.fill(n)(false.B), false.B)

  /** The same, with one late requester: `lateOH` (one-hot, early) names it and `late` (which
    * arrives late in the cycle) says whether it asks next cycle too. Both round robins, with and
    * without it, are computed beside `late`, which only selects between them (the choice is the
    * one on `reqNext` OR `lateOH && late`). */
  def apply(reqNext: Seq[Bool], grant: Bool, lateOH: Seq[Bool], late: Bool): ChannelChoice = {
    require(reqNext.size == n && lateOH.size == n)
    // (a choice not granted is kept without looking at its request: the chosen slot is in one of
    // the channel's states, `ok`, and only the grant takes it out, so it still asks next cycle;
    // the kept bit is then a register and the grant, not behind `reqNext`)
    val keptN = (0 until n).map(i => ohR(i) && !grant)
    val keepN = valid && !grant
    val thermo = (0 until n).map(j => (0 until j).map(ohR(_)).foldLeft(false.B)(_ || _))
    val hiN = (0 until n).map(j => Mux(grant, thermo(j), afterLast(j)))
    val without = RoundRobin.firstAfter(reqNext, hiN)
    val freshN =
      if (lateOH.forall(_.litOption.contains(BigInt(0)))) without
      else {
        val withLate = RoundRobin.firstAfter(reqNext.zip(lateOH).map { case (r, l) => r || l }, hiN)
        (0 until n).map(i => Mux(late, withLate(i), without(i)))
      }
    for (i <- 0 until n) ohR(i) := keptN(i) || (!keepN && freshN(i))
    when(grant) { afterLast := VecInit(thermo) }
    this
  }

  /** For proofs: the registered choice is consistent with this cycle's requests `req` (at most
    * one, a requester, and one whenever any asks). */
  def ok(req: Seq[Bool]): Bool = {
    val atMostOne = (0 until n).flatMap(i => (i + 1 until n).map(j => !(ohR(i) && ohR(j)))).foldLeft(true.B)(_ && _)
    val among = (0 until n).map(i => !ohR(i) || req(i)).reduce(_ && _)
    atMostOne && among && (valid === req.reduce(_ || _))
  }
}
