package xlat.common

import chisel3._
import chisel3.util._

/** Valid bits of a set-associative array with many sets, kept as one word per set in
  * distributed RAM instead of one flop per entry, with the same behaviour as the flops.
  *
  * ==Structure==
  * `mem`: a `Mem` of `sets` words of `ways` bits (combinational read, written at the clock
  * edge), which synthesis maps to distributed RAM (ECP5 TRELLIS_DPR16X4, 16 words x 4 bits per
  * cell) or, when the read address is a register it can merge, to block RAM (babelfish_l2: one
  * DP16KD). Reading a set is then a RAM read instead of a 1-of-`sets` multiplexer tree over
  * every valid flop: the tree, fed by a registered set index that fans out to every entry, was
  * the deepest path of the 128-set babelfish_l2.
  *
  * A RAM cannot clear every word at once, so two flags per set stand for the flash clears that
  * have not been written into the set's word yet: `clearAll` (every entry of the set is
  * invalid; reset value 1, which makes the reset state "all invalid" without writing the RAM)
  * and `clearNonGlobal` (every non-global entry is invalid). [[read]] applies them, with the
  * entries' global bits that the caller reads from its own storage beside the word.
  *
  * The flags are read through the set decoded one-hot (`setOH`, a register the caller decodes
  * one stage earlier): an AND-OR over the sets, a few LUT levels, instead of a 1-of-`sets`
  * multiplexer tree behind the set register's fan-out.
  *
  * ==Use==
  * The caller reads a set ([[read]]) and later writes the whole word back ([[write]]), computed
  * from what it read (a fill: the read word plus its way; an invalidation: the read word minus
  * what it removes); a write makes the word exact, so it clears the set's flags. The caller must
  * keep the set unchanged between the read and its write (the TLBs' write shadow does). At most
  * one write per cycle; a flash clear in the same cycle as a write wins over it.
  */
class SetValid(val sets: Int, val ways: Int) {
  require(sets >= 1 && isPow2(sets), s"SetValid: sets must be a power of 2 >= 1, got $sets")
  require(ways >= 1, s"SetValid: ways must be >= 1, got $ways")
  private val setBits = log2Ceil(sets).max(1)
  private def idx(set: UInt): UInt = if (sets == 1) 0.U else set(setBits - 1, 0)

  // named `mem` like the storage's memories: the lint waiver for the unused read clock of a
  // combinational-read Mem matches that name
  private val mem = Mem(sets, UInt(ways.W))
  private val clearAll = RegInit(VecInit(Seq.fill(sets)(true.B)))
  private val clearNonGlobal = RegInit(VecInit(Seq.fill(sets)(false.B)))

  /** The valid bits of `set` now, `setOH` being `set` one-hot (`sets` bits); `global(w)` is the
    * global bit stored in way w of that set (only looked at for a set with a pending non-global
    * clear).
    */
  def read(set: UInt, setOH: UInt, global: Seq[Bool]): Vec[Bool] = {
    require(global.size == ways && setOH.getWidth == sets)
    def flag(f: Vec[Bool]): Bool = (setOH & f.asUInt).orR
    val all = flag(clearAll)
    val nonGlobal = flag(clearNonGlobal)
    val w = mem.read(idx(set))
    VecInit((0 until ways).map(i => w(i) && !all && (!nonGlobal || global(i))))
  }

  /** [[read]] split over stages, for a caller that registers what it reads (the RAM read and
    * the flags' AND-OR then end in registers instead of in front of the caller's comparators):
    * the raw word of `set` ([[readWord]]), the set's two flags ([[readFlags]], `all` and
    * `nonGlobal`, from `setOH` as in [[read]]), then [[applyFlags]] on the registered parts,
    * one LUT level with the global bits of the row read.
    */
  def readWord(set: UInt): UInt = {
    val word = Wire(UInt(ways.W))
    word := mem.read(idx(set))
    word
  }

  /** The `clearAll` and `clearNonGlobal` flags of the set `setOH` (one-hot), see [[readWord]]. */
  def readFlags(setOH: UInt): (Bool, Bool) = {
    require(setOH.getWidth == sets)
    def flag(f: Vec[Bool]): Bool = (setOH & f.asUInt).orR
    (flag(clearAll), flag(clearNonGlobal))
  }

  /** [[readFlags]]'s `all` over two cycles, for a caller that reads it in the cycle it reads the
    * word (`set` from a register) and registers it: the `clearAll` flag, in each of the
    * `sets / n` groups of `n` consecutive sets, of the set whose low bits are `set`'s (an
    * `n`:1 multiplexer per group, no decoder in front); a cycle later [[groupPick]] keeps the
    * one of `set`'s group. Each half is a few LUT levels where the AND-OR over every set behind
    * a one-hot set is one long path across the flags' placement.
    */
  def groupFlags(set: UInt, n: Int): Vec[Bool] = {
    require(n >= 1 && isPow2(n) && n <= sets, s"SetValid: group size must be a power of 2 in 1..$sets, got $n")
    val lo = if (n == 1) 0.U else set(log2Ceil(n) - 1, 0)
    VecInit((0 until sets / n).map(g => VecInit(clearAll.slice(g * n, (g + 1) * n))(lo)))
  }

  /** The flag of [[groupFlags]] (registered by the caller) in the group `groupOH` (one-hot, the
    * set's high bits decoded, registered with it).
    */
  def groupPick(flags: Vec[Bool], groupOH: UInt): Bool = {
    require(groupOH.getWidth == flags.size)
    (groupOH & flags.asUInt).orR
  }

  /** Every entry's valid bit now (`global(i)(w)`: the global bit stored in way w of set i), for
    * a formal view of every entry: one combinational read of the memory per set.
    */
  def view(global: Seq[Seq[Bool]]): Seq[Seq[Bool]] = {
    require(global.size == sets && global.forall(_.size == ways))
    for (i <- 0 until sets) yield {
      val w = mem.read(i.U(setBits.W))
      (0 until ways).map(k => w(k) && !clearAll(i) && (!clearNonGlobal(i) || global(i)(k)))
    }
  }

  /** The valid bits from [[readWord]] and [[readFlags]]'s parts (registered by the caller). */
  def applyFlags(word: UInt, all: Bool, nonGlobal: Bool, global: Seq[Bool]): Vec[Bool] = {
    require(global.size == ways && word.getWidth == ways)
    VecInit((0 until ways).map(i => word(i) && !all && (!nonGlobal || global(i))))
  }

  /** Write the valid bits of `set` (exact: the set's pending flash clears are dropped). Call
    * once (one write port), this or [[writeOH]].
    */
  def write(en: Bool, set: UInt, valid: Seq[Bool]): Unit = {
    require(valid.size == ways)
    when(en) {
      mem.write(idx(set), VecInit(valid).asUInt)
      clearAll(idx(set)) := false.B
      clearNonGlobal(idx(set)) := false.B
    }
  }

  /** [[write]], with `setOH` (`set` one-hot, from a register) selecting the flags to drop: each
    * set's flag then clears on its own AND instead of behind a decoder of `set`.
    */
  def writeOH(en: Bool, set: UInt, setOH: UInt, valid: Seq[Bool]): Unit = {
    require(valid.size == ways && setOH.getWidth == sets)
    when(en) { mem.write(idx(set), VecInit(valid).asUInt) }
    for (i <- 0 until sets) {
      when(en && setOH(i)) {
        clearAll(i) := false.B
        clearNonGlobal(i) := false.B
      }
    }
  }

  /** Invalidate every entry (`nonGlobal` = false) or every non-global entry of every set. Call
    * after [[write]], so that a flash wins over a write of the same cycle.
    */
  def flash(en: Bool, nonGlobal: Bool): Unit =
    when(en) {
      for (i <- 0 until sets) {
        when(nonGlobal) { clearNonGlobal(i) := true.B }.otherwise { clearAll(i) := true.B }
      }
    }
}

