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
    view: Boolean = false
) extends Module {
  require(!(sram && lutram), "SetAssocStorage: lutram is a kind of flops storage, not of sram")
  require(!view || sram, "SetAssocStorage: view is for sram (flops always show every entry)")
  require(sets >= 1 && isPow2(sets), s"sets must be a power of 2 >= 1, got $sets")
  require(ways >= 1, s"ways must be >= 1, got $ways")
  require(!wayOH || (!sram && (sets == 1 || lutram)), "SetAssocStorage: wayOH is for one set of flops, or lutram")
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
    for (w <- 0 until ways) {
      val mem = Mem(sets, UInt(width.W))
      val rd = mem.read(setOf(io.read.bits)).asTypeOf(gen)
      // the row register (readReg) loads every cycle, as with register storage
      io.readData(w) := (if (readReg) RegNext(rd) else rd)
      when(io.writeWayOH.map(_(w)).getOrElse(io.write.valid && io.write.bits.way === w.U)) {
        mem.write(setOf(io.write.bits.set), io.write.bits.data.asUInt)
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

/** A fully associative array: one set whose ways are all compared every cycle, so always flops. */
object FullyAssocStorage {
  def apply[T <: Data](gen: T, entries: Int, wayOH: Boolean = false): SetAssocStorage[T] =
    Module(new SetAssocStorage(gen, sets = 1, ways = entries, sram = false, wayOH = wayOH))
}
