package xlat.common

import chisel3._
import chisel3.util._

/** Storage kinds accepted by every generator parameter `storage`. */
object StorageKind {
  val names = Seq("flops", "sram")
}

/** Data of a set-associative array: `sets` x `ways` entries of `gen`, without valid bits.
  *
  * ==Structure==
  * `flops`: a register array, read combinationally (`readLatency` 0) or through a row register
  * (`readReg`, `readLatency` 1, the read stage of [[LookupTiming]]), and also visible whole
  * through `all` so that flash operations can look at every entry. `flops` with `lutram`: the
  * same cycle behaviour, but one `Mem` per way (combinational read, clocked write), which
  * synthesis maps to distributed RAM (ECP5 DPR16X4: 16 words x 4 bits per cell, asynchronous
  * read; Xilinx RAM32M / RAM64M): a set read is one LUT level and the set index drives one
  * address pin per 4 bits of a way instead of a multiplexer tree over every entry bit; there is
  * no `all` view (zero-filled), so the owner keeps in flops whatever it compares in every set
  * at once. `sram`: one memory
  * per way with one read and one write port (`readLatency` 1), which synthesis maps to block
  * RAM (a `Mem` with a registered read, see below). Either way `readData` holds until the next enabled read.
  *
  * Valid bits are the owner's: they need flash clears that an SRAM cannot give, so every block
  * keeps them in flops beside this array.
  *
  * The owner must not read a set in the cycle it writes it when `readLatency` is 1 (the SRAM's
  * read-during-write value is undefined); the TLBs guarantee it with a [[WriteShadow]].
  *
  * `readsNeverWrite` (sram only): the owner promises more, that it never reads in a cycle it
  * writes (any set). Each way's read enable then excludes the way's write enable, which changes
  * nothing the owner sees (`readData` holds through a cycle without a read) but lets synthesis
  * prove that the block RAM's read and write ports never collide: without it Yosys emulates
  * the read-first order across the ports with a delayed write and a bypass multiplexer on every
  * read bit (babelfish_l2: 1 620 LUT4 and 147 FF between the block RAMs and the row register).
  *
  * `view` (sram only): `all` shows every entry, read combinationally from the memories beside
  * the registered read port. For the proofs of an SRAM configuration (its `dbg_*` view of every
  * entry); the read port and its timing are unchanged, but such memories no longer map to
  * block RAM, so only formal configurations set it.
  *
  * `addrReg` (lutram with `readReg` only): the read register sits on the address instead of the
  * data: `read.bits` is registered, one copy per way, and each way's memory is read
  * combinationally at its copy in the next cycle (`readLatency` 1 as before). The set index of
  * the acceptance cycle then drives `ways` small registers rather than every memory cell's
  * address pin (a net of `ways` x cells-per-way sinks across the die), and each copy drives only
  * its own way. So that synthesis keeps the copies apart (Yosys merges registers with equal
  * inputs, whatever their attributes), way w keeps set s at address `perm(w)(s)`, a permutation
  * of the sets of its own ([[SetAssocStorage.permutations]]): every copy registers a different
  * function of the set index. The write address too comes from per-way registers, loaded from
  * `writeSetEarly` (the write's set one cycle before the write). What the owner sees differs
  * from the data register only when a set is written in the cycle it is read (`readData` then
  * shows the write); the owners never do that (the same rule as for `sram`).
  */
class SetAssocStorage[T <: Data](
    gen: T,
    val sets: Int,
    val ways: Int,
    val sram: Boolean,
    readReg: Boolean = false,
    lutram: Boolean = false,
    wayOH: Boolean = false,
    readsNeverWrite: Boolean = false,
    view: Boolean = false,
    addrReg: Boolean = false
) extends Module {
  require(!(sram && lutram), "SetAssocStorage: lutram is a kind of flops storage, not of sram")
  require(!view || sram, "SetAssocStorage: view is for sram (flops always show every entry)")
  require(sets >= 1 && isPow2(sets), s"sets must be a power of 2 >= 1, got $sets")
  require(ways >= 1, s"ways must be >= 1, got $ways")
  require(!wayOH || (!sram && (sets == 1 || lutram)), "SetAssocStorage: wayOH is for one set of flops, or lutram")
  require(!addrReg || (lutram && readReg), "SetAssocStorage: addrReg is a placement of lutram's read register")
  val setBits = log2Ceil(sets).max(1)
  val wayBits = log2Ceil(ways).max(1)
  val readLatency = if (sram || readReg) 1 else 0

  val io = IO(new Bundle {
    val read = Flipped(Valid(UInt(setBits.W)))
    /** The ways of the set read `readLatency` cycles ago. */
    val readData = Output(Vec(ways, gen))
    val write = Flipped(Valid(new Bundle {
      val set = UInt(setBits.W)
      val way = UInt(wayBits.W)
      val data = gen.cloneType
    }))
    /** Every entry (flops, and sram with `view`; zero-filled otherwise, where no such view exists). */
    val all = Output(Vec(sets, Vec(ways, gen)))
    /** With `wayOH`: the written way one-hot (the same as `write.way`), which the way's enable
      * uses instead of decoding `write.way`: a caller that has it earlier than the index. With
      * `lutram` the bit alone is the way's write enable (the caller keeps it 0 without
      * `write.valid`), so a caller's register drives the distributed RAM's write enables with
      * no logic between.
      */
    val writeWayOH = Option.when(wayOH)(Input(Vec(ways, Bool())))
    /** With `addrReg`: the set of the next cycle's write (`write.bits.set` a cycle early, which
      * is then unused), registered here per way at the way's permuted address, so that the write
      * address of every way comes from a register of its own as well.
      */
    val writeSetEarly = Option.when(addrReg)(Input(UInt(setBits.W)))
  })

  private def setOf(s: UInt): UInt = if (sets == 1) 0.U else s

  if (sram) {
    // One unmasked memory per way: a masked row write would lower to one write port per bit,
    // which neither synthesis nor block-RAM inference handles well.
    val width = gen.getWidth
    for (w <- 0 until ways) {
      // A combinational-read memory behind a data register with the read enable: synthesis
      // merges the register into the memory as a registered, read-first block-RAM read. A
      // `SyncReadMem` is emitted with its address registered instead (it reads the word being
      // written), which no ECP5 block RAM does across its ports: Yosys built each way of
      // babelfish_l2 from 272 distributed-RAM cells instead of 4 DP16KD. The owners never read
      // a set in the cycle they write it, so the read-during-write order is never seen.
      val mem = Mem(sets, UInt(width.W))
      val wen = io.write.valid && io.write.bits.way === w.U
      val ren = if (readsNeverWrite) io.read.valid && !wen else io.read.valid
      io.readData(w) := RegEnable(mem.read(setOf(io.read.bits)), ren).asTypeOf(gen)
      when(wen) {
        mem.write(setOf(io.write.bits.set), io.write.bits.data.asUInt)
      }
      for (i <- 0 until sets) io.all(i)(w) := (if (view) mem.read(i.U(setBits.W)).asTypeOf(gen) else 0.U.asTypeOf(gen))
    }
  } else if (lutram) {
    val width = gen.getWidth
    val perms = if (addrReg) SetAssocStorage.permutations(sets, ways) else Seq.fill(ways)((0 until sets).toSeq)
    for (w <- 0 until ways) {
      val mem = Mem(sets, UInt(width.W))
      // way w's address of set s: perm(s), a table of constants (the identity without addrReg)
      def addr(s: UInt): UInt =
        if (!addrReg || sets == 1) setOf(s) else VecInit(perms(w).map(_.U(setBits.W)))(s)
      val rd =
        if (addrReg) mem.read(RegNext(addr(io.read.bits))).asTypeOf(gen)
        else mem.read(setOf(io.read.bits)).asTypeOf(gen)
      // the row register (readReg) loads every cycle, as with register storage
      io.readData(w) := (if (readReg && !addrReg) RegNext(rd) else rd)
      val wset = io.writeSetEarly.map(e => RegNext(addr(e))).getOrElse(setOf(io.write.bits.set))
      when(io.writeWayOH.map(_(w)).getOrElse(io.write.valid && io.write.bits.way === w.U)) {
        mem.write(wset, io.write.bits.data.asUInt)
      }
    }
    io.all := 0.U.asTypeOf(io.all)
  } else {
    val regs = Reg(Vec(sets, Vec(ways, gen)))
    // the row register loads every cycle: its owner reads it only for a valid operation
    io.readData := (if (readReg) RegNext(regs(setOf(io.read.bits))) else regs(setOf(io.read.bits)))
    io.writeWayOH match {
      case Some(oh) => for (w <- 0 until ways) when(io.write.valid && oh(w)) { regs(0)(w) := io.write.bits.data }
      case None     => when(io.write.valid) { regs(setOf(io.write.bits.set))(io.write.bits.way) := io.write.bits.data }
    }
    io.all := regs
  }
}

object SetAssocStorage {
  /** `ways` permutations of `0 until sets` (way w keeps set s at address `perms(w)(s)`, the
    * `addrReg` layout), chosen so that the address bits of different ways are different
    * functions of the set index wherever the sets allow it (each bit is a balanced function of
    * the index; with 2 sets there are only two, the bit and its complement), and from the set
    * index itself (which the owner registers too). Deterministic: a fixed-seed search.
    */
  def permutations(sets: Int, ways: Int): Seq[Seq[Int]] = {
    val bits = log2Ceil(sets).max(1)
    def fns(perm: Seq[Int]): Seq[BigInt] =
      (0 until bits).map(b => perm.zipWithIndex.map { case (a, s) => if (((a >> b) & 1) == 1) BigInt(1) << s else BigInt(0) }.sum)
    val rnd = new scala.util.Random(1)
    // the identity's bits are taken too: they are the owner's own registered set index
    var used = fns(0 until sets).toSet
    val out = scala.collection.mutable.ArrayBuffer[Seq[Int]]()
    for (w <- 0 until ways) {
      val perm =
        if (sets <= 2) (if (w % 2 == 1 && sets == 2) Seq(1, 0) else (0 until sets).toSeq)
        else {
          // the candidate with the most new bit functions, out of a fixed number of shuffles
          val cands = Seq.fill(200)(rnd.shuffle((0 until sets).toList).toSeq)
          cands.maxBy(c => fns(c).count(f => !used.contains(f)))
        }
      used ++= fns(perm)
      out += perm
    }
    out.toSeq
  }
}

/** A fully associative array: one set whose ways are all compared every cycle, so always flops. */
object FullyAssocStorage {
  def apply[T <: Data](gen: T, entries: Int, wayOH: Boolean = false): SetAssocStorage[T] =
    Module(new SetAssocStorage(gen, sets = 1, ways = entries, sram = false, wayOH = wayOH))
}
