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
  *
  * ==Write ahead==
  * With `writeAhead` = n > 0 the slot write enables are registers computed a cycle ahead, n
  * copies per slot, each driving about 1/n of the entry's bits (kept apart in synthesis, see
  * below): slot i is written in cycle t+1 when it is the tail of t+1 and was free in
  * cycle t without the dequeue of t, i.e. count(t) + enq.fire(t) < depth. The data registers'
  * enables then start at a flop with a small fan-out (the count's decode to a ~100-bit enable
  * net spread over the placement was PmlLogger's routed critical path). The caller must
  * guarantee that an enqueue in cycle t+1 had that room in cycle t (PmlLogger's input credit
  * does: its decide stage's event was accepted against the count and the event before it);
  * `enq.ready` stays "not full". The default (0) keeps the behaviour above.
  *
  * ==Read copies==
  * With `readCopies` = n > 0 (1 to 4) `deq.bits` is read through n copies of the head pointer
  * ([[RegCopies.many]]): bit b of the entry's field `name` (`_`-joined below the top, a Vec
  * element by its index) through copy `readCopyOf(name, b)`, by default about 1/n of the bits
  * each by position. The head pointer of a wide entry otherwise drives every bit's read
  * multiplexer, one net spread over the placement; a consumer that splits the entry's bits among distant places gives each place
  * its copy. No cycle changes; a copy may differ from the head in the cycle after reset only,
  * when the queue is empty. The default (0) reads through the head itself.
  *
  * ==Flag registers==
  * With `flagRegs`, `deq.valid` and `enq.ready` are registers of their own, loaded with what
  * the count's compares will say in the next cycle (no cycle changes): a consumer whose
  * `deq.ready` depends on `deq.valid` (an arbiter) then has the count's compare out of its
  * loop (valid -> arbiter -> fire -> count -> valid: DevTlb's hit queue in `devtlb_ptb32`).
  */
class RegQueue[T <: Data](gen: T, depth: Int, peekSecond: Boolean = false, peekAll: Boolean = false,
                          writeAhead: Int = 0, readCopies: Int = 0, readCopyOf: Option[(String, Int) => Int] = None,
                          flagRegs: Boolean = false) extends Module {
  require(depth >= 1, s"RegQueue depth must be >= 1, got $depth")
  require(writeAhead >= 0, s"RegQueue writeAhead must be >= 0, got $writeAhead")
  require(readCopies >= 0 && readCopies <= 4, s"RegQueue readCopies must be in 0..4, got $readCopies")
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

  if (!flagRegs) {
    io.enq.ready := count =/= depth.U
    io.deq.valid := count =/= 0.U
  } else {
    val notFull = RegInit(true.B)
    val nonEmpty = RegInit(false.B)
    notFull := Mux(io.deq.fire, true.B, Mux(io.enq.fire, count =/= (depth - 1).U, count =/= depth.U))
    nonEmpty := Mux(io.enq.fire, true.B, Mux(io.deq.fire, count =/= 1.U, count =/= 0.U))
    io.enq.ready := notFull
    io.deq.valid := nonEmpty
  }
  if (readCopies == 0 || depth == 1) io.deq.bits := data(head)
  else {
    val heads = RegCopies.many(Mux(io.deq.fire, next(head), head), readCopies, "headCopy")
    val total = gen.getWidth
    val slotLeaves = data.map(d => namedLeaves(d).map(_._2))
    var base = 0
    for (((name, out), li) <- namedLeaves(io.deq.bits).zipWithIndex) {
      val w = out.getWidth
      val owner = (0 until w).map { b =>
        val k = readCopyOf.map(_(name, b)).getOrElse((base + b) * readCopies / total)
        require(k >= 0 && k < readCopies, s"RegQueue readCopyOf($name, $b) = $k"); k
      }
      // runs of consecutive bits read through the same copy, lowest first
      val runs = (0 until w).foldLeft(List.empty[(Int, Int, Int)]) {
        case ((lo, hi, k) :: rest, b) if owner(b) == k => (lo, b, k) :: rest
        case (acc, b)                                  => (b, b, owner(b)) :: acc
      }
      val parts = runs.map { case (lo, hi, k) => VecInit(slotLeaves.map(_(li).asUInt(hi, lo)))(heads(k)) }
      out := Cat(parts).asTypeOf(out)
      base += w
    }
  }
  io.count := count
  // the second entry's pointer in a register of its own (head + 1, stepped with the head), so the
  // selection of the entry does not wait for an increment
  private val secondPtr = Option.when(peekSecond && depth > 1)(RegInit(next(0.U(ptrBits.W))))
  secondPtr.foreach(r => when(io.deq.fire) { r := next(r) })
  io.second.foreach { s => s.valid := count >= 2.U; s.bits := (if (depth == 1) data(0) else data(secondPtr.get)) }
  io.all.foreach { a =>
    var q = head
    for (j <- 0 until depth) { a(j) := data(q); q = next(q) }
  }
  io.ptrOk.foreach { o =>
    var q = head
    val agree = (0 to depth).map { j => val hit = count === j.U && tail === q; q = next(q); hit }.reduce(_ || _)
    // with a depth that is not a power of two the pointers' unused codes are excluded too (a head
    // past the last entry would read no entry, and its successor wraps to 0)
    o := (if (isPow2(depth)) agree else agree && head < depth.U)
  }
  private val tailNext = Mux(io.enq.fire, next(tail), tail)
  if (writeAhead == 0) {
    when(count =/= depth.U) { data(tail) := io.enq.bits }
  } else {
    // room next cycle without this cycle's dequeue (the caller's guarantee makes it exact for
    // every enqueue); one register per slot and copy.
    // Equal registers are merged back by synthesis (Yosys opt_merge merges flops with the same
    // input; a `keep` attribute on the reg does not stop it: checked on the netlist). So copy k
    // (1 <= k <= depth) also requires "not (empty, tail /= head and head = k - 1)", which always
    // holds (an empty queue has tail = head) but is a different function of the state for each
    // k, and the copies survive (dontTouch keeps firtool from merging them). Copies beyond
    // `depth` have no such term and may be merged with copy 0.
    val roomNext = count +& io.enq.fire.asUInt < depth.U
    val we = Seq.tabulate(depth, writeAhead) { (i, k) =>
      val apart = if (k >= 1 && k <= depth && depth > 1) !(count === 0.U && tail =/= head && head === (k - 1).U) else true.B
      // (with depth 1 the one-bit pointer toggles; the only slot is 0)
      val atSlot = if (depth == 1) true.B else tailNext === i.U
      val r = RegNext(roomNext && atSlot && apart, false.B).suggestName(s"we_${i}_$k")
      dontTouch(r)
      r
    }
    // the entry's bits, leaf by leaf, each bit with the copy of its position
    val total = gen.getWidth
    for (i <- 0 until depth) {
      var base = 0
      for ((leaf, in) <- leaves(data(i)).zip(leaves(io.enq.bits))) {
        val w = leaf.getWidth
        val chunks = (0 until w).groupBy(b => (base + b) * writeAhead / total).toSeq.sortBy(_._1)
        val parts = chunks.map { case (k, bits) =>
          val (lo, hi) = (bits.min, bits.max)
          Mux(we(i)(k), in.asUInt(hi, lo), leaf.asUInt(hi, lo))
        }
        leaf := Cat(parts.reverse).asTypeOf(leaf)
        base += w
      }
    }
  }
  tail := tailNext
  when(io.deq.fire) { head := next(head) }
  count := count + io.enq.fire.asUInt - io.deq.fire.asUInt

  /** [[leaves]] with their names (a field's name, `_`-joined below the top; a Vec's index). */
  private def namedLeaves(d: Data, prefix: String = ""): Seq[(String, Data)] = {
    def sub(n: String) = if (prefix.isEmpty) n else s"${prefix}_$n"
    d match {
      case r: Record => r.elements.toSeq.reverse.flatMap { case (n, x) => namedLeaves(x, sub(n)) }
      case v: Vec[_] => v.zipWithIndex.flatMap { case (x, i) => namedLeaves(x, sub(i.toString)) }
      case x         => Seq(prefix -> x)
    }
  }

  /** The ground elements of `d` (a Bundle's fields, a Vec's elements), in a fixed order. */
  private def leaves(d: Data): Seq[Data] = d match {
    case r: Record => r.elements.values.toSeq.reverse.flatMap(leaves)
    case v: Vec[_] => v.flatMap(leaves)
    case x         => Seq(x)
  }
}
