package xlat.common

import chisel3._

/** A `perf_<name>` event counter: resets to 0 and saturates at all ones, so a long run never
  * wraps into a misleadingly small number.
  */
object PerfCounter {
  val width = 32

  def apply(event: Bool, width: Int = width): UInt = {
    val count = RegInit(0.U(width.W))
    when(event && !count.andR) { count := count + 1.U }
    count
  }
}
