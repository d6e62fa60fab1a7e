package xlat.common

import chisel3._
import chisel3.util.PopCount
import scala.collection.immutable.SeqMap

/** A `perf_<name>` event counter: resets to 0 and saturates at all ones, so a long run never
  * wraps into a misleadingly small number.
  *
  * The event is registered before it is added (**decided**: a counter shows an event one cycle
  * after the cycle it happened in), so no counter's adder ever sits in the cone of the logic
  * that decides the event: counters cost area, never Fmax.
  */
object PerfCounter {
  val width = 32

  def apply(event: Bool, width: Int = width): UInt = add(event.asUInt, width)

  /** A counter of several events a cycle, advancing by how many of `events` are set. The events
    * themselves are registered and counted after the register, so the population count is not
    * in the cone of the logic that decides them either (`add` registers the sum instead).
    */
  def count(events: Seq[Bool], width: Int = width): UInt = {
    val r = RegNext(VecInit(events), VecInit(Seq.fill(events.size)(false.B)))
    val count = RegInit(0.U(width.W))
    val next = count +& PopCount(r)
    count := Mux(next(width), ((BigInt(1) << width) - 1).U(width.W), next(width - 1, 0))
    count
  }

  /** A counter of one event decided from `parts`: the parts are registered and `combine`d
    * behind the register, so the count is the same, in the same cycle, as
    * `apply(combine(parts))` (the register holds the parts instead of the event), and the
    * logic of `combine` leaves the event's cone. `combine` of all-false parts (the register
    * after reset) must be false.
    */
  def parts(parts: Seq[Bool], combine: Seq[Bool] => Bool, width: Int = width): UInt = {
    val r = RegNext(VecInit(parts), VecInit(Seq.fill(parts.size)(false.B)))
    val count = RegInit(0.U(width.W))
    val next = count +& combine(r).asUInt
    count := Mux(next(width), ((BigInt(1) << width) - 1).U(width.W), next(width - 1, 0))
    count
  }

  /** A counter that may advance by more than one a cycle (several events at once).
    *
    * Saturation looks only at the adder's carry out, so synthesis keeps the sum on the FPGA's
    * carry chain: a comparison of the sum with all ones would be a second, LUT-rippled chain.
    */
  def add(increment: UInt, width: Int = width): UInt = {
    require(increment.getWidth <= width, s"PerfCounter: increment of ${increment.getWidth} bits on a $width-bit counter")
    val count = RegInit(0.U(width.W))
    val next = count +& RegNext(increment, 0.U)
    count := Mux(next(width), ((BigInt(1) << width) - 1).U(width.W), next(width - 1, 0))
    count
  }
}

/** The `perf_*` output ports of a block: one 32-bit counter per name, in the given order. */
class PerfCounters(val names: Seq[String]) extends Record {
  val elements: SeqMap[String, UInt] = SeqMap(names.map(n => n -> UInt(PerfCounter.width.W)): _*)
  def apply(name: String): UInt = elements(name)
}

object PerfCounters {
  /** Drives every counter of `perf` from `counters` (name -> value, e.g. a [[PerfCounter]]);
    * a name missing or unknown stops elaboration, so no port is left undriven or misnamed.
    */
  def connect(perf: PerfCounters, counters: (String, UInt)*): Unit = {
    val given = counters.map(_._1)
    val missing = perf.names.diff(given)
    val unknown = given.diff(perf.names)
    require(missing.isEmpty && unknown.isEmpty && given.distinct.size == given.size,
      s"perf counters: missing ${missing.mkString(",")}; unknown or repeated ${(unknown ++ given.diff(given.distinct)).mkString(",")}")
    counters.foreach { case (n, v) => perf(n) := v }
  }
}
