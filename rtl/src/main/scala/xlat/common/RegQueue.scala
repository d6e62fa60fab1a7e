package xlat.common

import chisel3._
import chisel3.util._

/** A first-in first-out queue of `depth` entries in flops.
  *
  * Unlike chisel3.util.Queue it keeps its entries in registers, not a memory: firtool turns a
  * small `Mem` into a separate memory module with an unused read clock, which lint rejects, and
  * the queues of the library are a few entries deep.
  *
  * ==Timing==
  * The free slot at the tail is written every cycle the queue is not full, whether or not
  * `enq` fires; only the pointers and the count follow `enq.fire`. The slot beyond the count is
  * never read, and the data registers' write enable then depends on the queue's own state
  * only, not on the producer's decision (a wide, high-fan-out enable otherwise at the end of
  * the producer's logic).
  */
class RegQueue[T <: Data](gen: T, depth: Int, peekSecond: Boolean = false, peekAll: Boolean = false) extends Module {
  require(depth >= 1, s"RegQueue depth must be >= 1, got $depth")
  private val ptrBits = log2Ceil(depth).max(1)
  val io = IO(new Bundle {
    val enq = Flipped(Decoupled(gen))
    val deq = Decoupled(gen)
    val count = Output(UInt(log2Ceil(depth + 1).W))
    /** With `peekSecond`: the entry behind the head (what `deq` shows after a dequeue), for a
      * consumer that precomputes its next cycle.
      */
    val second = Option.when(peekSecond)(Output(Valid(gen)))
    /** With `peekAll` (formal views only): every entry in queue order, head first (entry j is
      * in the queue when j < count), and whether the tail pointer is head + count.
      */
    val all = Option.when(peekAll)(Output(Vec(depth, gen)))
    val ptrOk = Option.when(peekAll)(Output(Bool()))
  })
  private val data = Reg(Vec(depth, gen))
  private val head = RegInit(0.U(ptrBits.W))
  private val tail = RegInit(0.U(ptrBits.W))
  private val count = RegInit(0.U(log2Ceil(depth + 1).W))
  private def next(p: UInt): UInt = if (isPow2(depth)) p + 1.U else Mux(p === (depth - 1).U, 0.U, p + 1.U)

  io.enq.ready := count =/= depth.U
  io.deq.valid := count =/= 0.U
  io.deq.bits := data(head)
  io.count := count
  io.second.foreach { s => s.valid := count >= 2.U; s.bits := (if (depth == 1) data(0) else data(next(head))) }
  io.all.foreach { a =>
    var q = head
    for (j <- 0 until depth) { a(j) := data(q); q = next(q) }
  }
  io.ptrOk.foreach { o =>
    var q = head
    o := (0 to depth).map { j => val hit = count === j.U && tail === q; q = next(q); hit }.reduce(_ || _)
  }
  when(count =/= depth.U) { data(tail) := io.enq.bits }
  when(io.enq.fire) { tail := next(tail) }
  when(io.deq.fire) { head := next(head) }
  count := count + io.enq.fire.asUInt - io.deq.fire.asUInt
}
