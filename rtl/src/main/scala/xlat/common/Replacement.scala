package xlat.common

import chisel3._
import chisel3.util._

/** Replacement policy names accepted by every generator parameter `replacement`. */
object ReplacementKind {
  val names = Seq("plru", "lru", "random")
}

/** A replacement policy over `n` ways as pure combinational functions of a state word.
  *
  * The state lives in the caller's registers (one word per set, see [[ReplacementState]]), so
  * the same policy serves flop and SRAM arrays. Every policy is exact and documented bit for bit
  * in docs/babelfish-tlb.md, because the reference models in tb/models/replacement.py must
  * reproduce each victim choice.
  */
abstract class ReplacementPolicy(val n: Int) {
  require(n >= 1, s"replacement: ways must be >= 1, got $n")
  def stateBits: Int
  /** True when the state is one word for the whole array rather than one per set. */
  def perArray: Boolean = false
  def victim(state: UInt): UInt
  /** The victim among the ways not in `avoid` (the plain victim when every way is avoided).
    * Policies without a recency order over subsets give the plain victim when it is allowed,
    * else the lowest-index allowed way.
    */
  def victimAvoiding(state: UInt, avoid: Seq[Bool]): UInt = {
    val v = victim(state)
    val allowed = avoid.map(!_)
    val vOk = (0 until n).map(i => allowed(i) && v === i.U).reduce(_ || _)
    Mux(vOk || !allowed.reduce(_ || _), v, PriorityEncoder(allowed))
  }
  /** State after `way` was used (a hit or a fill). */
  def touch(state: UInt, way: UInt): UInt
  /** State after the victim was taken by a fill. */
  def taken(state: UInt): UInt = state
  /** [[touch]] with the way one-hot (exactly one of `oh` set): a policy may compute it without
    * encoding the way first.
    */
  def touchOH(state: UInt, oh: Seq[Bool]): UInt = {
    require(oh.size == n)
    val w = Wire(UInt(wayBits.W))
    w := OHToUInt(oh)
    touch(state, w)
  }
  val wayBits: Int = log2Ceil(n).max(1)
}

object ReplacementPolicy {
  def apply(kind: String, n: Int): ReplacementPolicy = kind match {
    case "plru"   => new TreePlru(n)
    case "lru"    => new TrueLru(n)
    case "random" => new LfsrRandom(n)
    case other =>
      throw new IllegalArgumentException(
        s"replacement must be one of ${ReplacementKind.names.mkString(", ")}, got '$other'"
      )
  }
}

/** Tree pseudo-LRU for any `n`: a node over m > 1 ways splits into a left subtree of
  * 2^(ceil(log2 m) - 1) ways and a right subtree of the rest; each node bit says where the
  * victim is (0 left, 1 right). Bits are in preorder: node, left subtree, right subtree.
  */
class TreePlru(n: Int) extends ReplacementPolicy(n) {
  def stateBits: Int = (n - 1).max(1)

  private def leftSize(m: Int): Int = 1 << (log2Ceil(m) - 1)

  private def victimOf(bits: Seq[Bool], m: Int): UInt =
    if (m == 1) 0.U(wayBits.W)
    else {
      val l = leftSize(m)
      val left = victimOf(bits.slice(1, l), l)
      val right = victimOf(bits.slice(l, m - 1), m - l)
      Mux(bits.head, right + l.U, left)
    }

  private def touchOf(bits: Seq[Bool], m: Int, way: UInt): Seq[Bool] =
    if (m == 1) Seq()
    else {
      val l = leftSize(m)
      val inLeft = way < l.U
      val left = touchOf(bits.slice(1, l), l, way)
      val right = touchOf(bits.slice(l, m - 1), m - l, way - l.U)
      Seq(inLeft) ++
        bits.slice(1, l).zip(left).map { case (o, t) => Mux(inLeft, t, o) } ++
        bits.slice(l, m - 1).zip(right).map { case (o, t) => Mux(inLeft, o, t) }
    }

  // One-hot touch: a node turns left (1) when the way is in its left subtree, right (0) when in
  // its right subtree, else keeps its bit; every node from ORs of the one-hot, no encoded way.
  private def touchOHOf(bits: Seq[Bool], m: Int, oh: Seq[Bool]): Seq[Bool] =
    if (m == 1) Seq()
    else {
      val l = leftSize(m)
      val inLeft = oh.take(l).reduce(_ || _)
      val inRight = oh.drop(l).reduce(_ || _)
      Seq(inLeft || (!inRight && bits.head)) ++
        touchOHOf(bits.slice(1, l), l, oh.take(l)) ++ touchOHOf(bits.slice(l, m - 1), m - l, oh.drop(l))
    }

  /** The victim one-hot: each way's bit the AND of the node bits on its path (no encoded way). */
  def victimOH(state: UInt): Seq[Bool] = victimOHOf(nodes(state), n)

  private def victimOHOf(bits: Seq[Bool], m: Int): Seq[Bool] =
    if (m == 1) Seq(true.B)
    else {
      val l = leftSize(m)
      victimOHOf(bits.slice(1, l), l).map(_ && !bits.head) ++ victimOHOf(bits.slice(l, m - 1), m - l).map(_ && bits.head)
    }

  /** `touch` for a power-of-two `n` from the way's bits (each subtree's way is a slice, so no
    * compare or subtraction), else `touch`: the same state. */
  def touchPow2(state: UInt, way: UInt): UInt =
    if (n == 1 || !isPow2(n)) touch(state, way)
    else {
      def of(bits: Seq[Bool], m: Int, w: UInt): Seq[Bool] =
        if (m == 1) Seq()
        else {
          val l = m / 2
          val inLeft = !w(log2Ceil(m) - 1)
          val low = if (m == 2) 0.U(1.W) else w(log2Ceil(m) - 2, 0)
          val left = of(bits.slice(1, l), l, low)
          val right = of(bits.slice(l, m - 1), l, low)
          Seq(inLeft) ++
            bits.slice(1, l).zip(left).map { case (o, t) => Mux(inLeft, t, o) } ++
            bits.slice(l, m - 1).zip(right).map { case (o, t) => Mux(inLeft, o, t) }
        }
      VecInit(of(nodes(state), n, way(wayBits - 1, 0))).asUInt
    }

  override def touchOH(state: UInt, oh: Seq[Bool]): UInt = {
    require(oh.size == n)
    if (n == 1) state else VecInit(touchOHOf(nodes(state), n, oh)).asUInt
  }

  /** The tree walk of `victimOf` that turns away from a subtree whose ways are all avoided. */
  private def victimAvoidingOf(bits: Seq[Bool], m: Int, avoid: Seq[Bool]): UInt =
    if (m == 1) 0.U(wayBits.W)
    else {
      val l = leftSize(m)
      val left = victimAvoidingOf(bits.slice(1, l), l, avoid.take(l))
      val right = victimAvoidingOf(bits.slice(l, m - 1), m - l, avoid.drop(l))
      val leftFull = avoid.take(l).reduce(_ && _)
      val rightFull = avoid.drop(l).reduce(_ && _)
      Mux((bits.head && !rightFull) || (leftFull && !rightFull), right + l.U, left)
    }

  override def victimAvoiding(state: UInt, avoid: Seq[Bool]): UInt = {
    val all = avoid.reduce(_ && _)
    Mux(all, victim(state), victimAvoidingOf(nodes(state), n, avoid))
  }

  // Bit i of the state word is preorder node i.
  private def nodes(state: UInt): Seq[Bool] = (0 until n - 1).map(state(_))

  def victim(state: UInt): UInt = victimOf(nodes(state), n)
  def touch(state: UInt, way: UInt): UInt =
    if (n == 1) state else VecInit(touchOf(nodes(state), n, way.pad(wayBits + 1))).asUInt
}

/** True LRU over `n` ways as an order matrix: for i < j, bit (i, j) is 1 when way i was used
  * more recently than way j. Reset (all 0) is the order 0, 1, ..., n-1 from least recent.
  */
class TrueLru(n: Int) extends ReplacementPolicy(n) {
  private val pairs = for (i <- 0 until n; j <- i + 1 until n) yield (i, j)
  def stateBits: Int = pairs.size.max(1)

  private def newer(state: UInt, a: Int, b: Int): Bool = {
    val k = pairs.indexOf((a.min(b), a.max(b)))
    if (a < b) state(k) else !state(k)
  }

  def victim(state: UInt): UInt =
    if (n == 1) 0.U
    else {
      val oldest = (0 until n).map(v => (0 until n).filter(_ != v).map(o => newer(state, o, v)).reduce(_ && _))
      PriorityEncoder(oldest)
    }

  def touch(state: UInt, way: UInt): UInt =
    if (n == 1) state
    else
      VecInit(pairs.zipWithIndex.map { case ((i, j), k) =>
        Mux(way === i.U, true.B, Mux(way === j.U, false.B, state(k)))
      }).asUInt
}

/** Random replacement from one 16-bit Galois LFSR per array (taps 0xB400, reset 1). The LFSR
  * steps only when a fill takes its victim, so the sequence of victims depends only on the
  * sequence of evictions.
  */
class LfsrRandom(n: Int) extends ReplacementPolicy(n) {
  def stateBits: Int = 16
  override def perArray: Boolean = true
  def victim(state: UInt): UInt = ((state(7, 0) * n.U) >> 8)(wayBits - 1, 0)
  def touch(state: UInt, way: UInt): UInt = state
  override def taken(state: UInt): UInt = (state >> 1) ^ Mux(state(0), "hb400".U(16.W), 0.U(16.W))
  val resetValue = 1
}

/** The registers of a policy for `sets` sets, with at most one update per cycle (the blocks
  * perform one storage operation per cycle, so two updates never meet).
  */
class ReplacementState(val policy: ReplacementPolicy, sets: Int) {
  private val words = if (policy.perArray) 1 else sets
  private val init = policy match {
    case r: LfsrRandom => r.resetValue
    case _             => 0
  }
  private val state = RegInit(VecInit(Seq.fill(words)(init.U(policy.stateBits.W))))
  private def word(set: UInt): UInt = if (words == 1) state(0) else state(set)

  def victim(set: UInt): UInt = policy.victim(word(set))

  /** The state word of `set`, for a caller that reads it one stage before it uses it (see
    * [[ReadAhead]]).
    */
  def peek(set: UInt): UInt = word(set)
  /** [[peek]] with the set one-hot (`sets` bits): an AND-OR over the words instead of a
    * multiplexer tree behind the set's fan-out.
    */
  def peekOH(setOH: UInt): UInt = if (words == 1) state(0) else Mux1H(setOH, state)
  /** True when every set shares one word (the bypass of [[ReadAhead]] then ignores the set). */
  val oneWord: Boolean = words == 1
  def victimAvoiding(set: UInt, avoid: Seq[Bool]): UInt = policy.victimAvoiding(word(set), avoid)

  // Updates write each set's word from itself (no 1-of-sets read before the policy's logic):
  // a pipelined caller's stage only decodes `set` in front of the word's enable.
  private def updateEach(set: UInt)(next: UInt => UInt): Unit =
    for (i <- 0 until words) {
      when(words.U === 1.U || set === i.U) { state(i) := next(state(i)) }
    }

  /** Write `next` into the word of `set`: a caller that computed the new word once (from a
    * [[ReadAhead]] word) instead of by the update logic of every word.
    */
  def write(set: UInt, next: UInt): Unit = updateEach(set)(_ => next)
  /** [[write]] with the set one-hot (`sets` bits). */
  def writeOH(setOH: UInt, next: UInt): Unit =
    for (i <- 0 until words) {
      when(words.U === 1.U || setOH(i)) { state(i) := next }
    }

  /** A hit used `way`. */
  def touch(set: UInt, way: UInt): Unit = updateEach(set)(policy.touch(_, sized(way)))

  /** [[touch]] with the set one-hot (`sets` bits; all zero: no touch), for a caller that
    * registers the decoded set and way of its hit apart from the wide winner's fan-out.
    */
  def touchOH(setOH: UInt, way: UInt): Unit =
    for (i <- 0 until words) {
      when(if (words == 1) setOH.orR else setOH(i)) { state(i) := policy.touch(state(i), sized(way)) }
    }

  /** A fill wrote `way`; `tookVictim` when that way was the policy's victim (an eviction). */
  def fill(set: UInt, way: UInt, tookVictim: Bool): Unit =
    updateEach(set)(w => policy.touch(Mux(tookVictim, policy.taken(w), w), sized(way)))

  /** `way` at the policy's way width (callers may pass widths Chisel has not inferred yet). */
  private def sized(way: UInt): UInt = {
    val w = Wire(UInt(policy.wayBits.W))
    w := way
    w
  }
}

/** The replacement word of the set an operation works on, read one stage before the stage that
  * uses it, so that the 1-of-sets multiplexer of the state words is not in front of the victim
  * choice of a pipelined fill.
  *
  * The caller registers [[ReplacementState.peek]] of the operation's set in the stage before
  * (`early`), and reports every touch of the using stage ([[touched]]). The word so read misses
  * at most the update the using stage made in the same cycle (that of the operation just ahead):
  * [[word]] takes it from a register of that update when the set is the same. Updates made
  * elsewhere (a fill's commit) must not overlap a read-ahead: the caller's write shadow keeps
  * them apart.
  */
class ReadAhead(state: ReplacementState, setBits: Int) {
  private val lastValid = RegInit(false.B)
  private val lastSet = Reg(UInt(setBits.W))
  private val lastWord = Reg(UInt(state.policy.stateBits.W))

  /** The word of `set` now, from `early` (its word one cycle ago). */
  def word(set: UInt, early: UInt): UInt =
    Mux(lastValid && (if (state.oneWord) true.B else lastSet === set), lastWord, early)

  /** [[word]], with `sameSet` = (`set` == the set the using stage had one cycle ago), which a
    * caller can register one stage early, out of the path to the word.
    */
  def wordSame(sameSet: Bool, early: UInt): UInt =
    Mux(lastValid && (if (state.oneWord) true.B else sameSet), lastWord, early)

  /** The word given to [[touched]] in the cycle before, whether or not `en` was high: a caller
    * that passes, with `en` low, a word it needs one cycle later reads it back here instead of
    * registering it a second time (the bypass looks at it only after an enabled touch).
    */
  def last: UInt = lastWord

  /** Call once: the using stage updates `set` with `next` (its new word) when `en`. */
  def touched(en: Bool, set: UInt, next: UInt): Unit = {
    lastValid := en
    lastSet := set
    lastWord := next
  }
}
