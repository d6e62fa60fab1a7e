package xlat.common

import chisel3._
import chisel3.util._

/** A block RAM with one write port and one registered read port, whose read of the entry written
  * in the same cycle is undefined.
  *
  * ==Why not a `Mem`==
  * A `Mem` read combinationally with a register behind it says read-first: Yosys maps it to a
  * block RAM (ECP5 DP16KD) whose ports do not guarantee that order, and emulates it with a
  * delayed write (address, data and enable into flops) and a compare of the read address with
  * that write's, into a flop and a multiplexer behind the block RAM's output. For an owner that
  * never uses the value of a colliding read (it applies the write itself, from a record of its
  * writes), that logic sits on the read address's path for nothing (docs/devtlb.md, "FPGA",
  * session 27). The Verilog here marks the memory `(* no_rw_check *)`, which tells Yosys that
  * the collision's value does not matter, so it maps the memory and the read register to the
  * block RAM alone.
  *
  * ==Simulation==
  * The same Verilog is the simulation model (Verilator, cocotb): outside synthesis (`SYNTHESIS`
  * is defined by Yosys, not by Verilator) a colliding read returns the inverse of the data
  * written, never the entry as the write leaves it, so that a test sees every read whose
  * collision its owner did not cover (the inverse of the old entry would not do: a 1-bit pointer
  * that the write advances reads back as its new value).
  *
  * `depth` entries of `width` bits; the address is `log2Ceil(depth)` bits (at least 1) and the
  * memory has every entry that address can reach. The read port reads every cycle: `readData`
  * is the entry at the address of the cycle before.
  */
class BlockRam(depth: Int, width: Int) extends BlackBox with HasBlackBoxInline {
  require(depth >= 1 && width >= 1, s"BlockRam: depth and width must be >= 1, got $depth x $width")
  private val addrBits = log2Ceil(depth).max(1)
  val io = IO(new Bundle {
    val clock = Input(Clock())
    val R_addr = Input(UInt(addrBits.W))
    val R_data = Output(UInt(width.W))
    val W_en = Input(Bool())
    val W_addr = Input(UInt(addrBits.W))
    val W_data = Input(UInt(width.W))
  })
  // Chisel does not prefix a black box's name (`Emit`'s `--prefix`), and this one's Verilog is
  // written here, so it takes the prefix itself (`modulePrefix`, as its construction saw it):
  // two prefixed designs share no module
  override def desiredName: String = s"${modulePrefix}BlockRam_${depth}x$width"
  private val a = s"[${addrBits - 1}:0]"
  private val d = s"[${width - 1}:0]"
  setInline(
    s"$desiredName.sv",
    s"""// xlat.common.BlockRam: a block RAM whose read of the entry written in the same cycle is
       |// undefined (no_rw_check: Yosys adds no collision logic); in simulation that read returns
       |// the inverse of the data written, so a test sees a collision its owner did not cover.
       |module $desiredName(
       |  input         clock,
       |  input  $a R_addr,
       |  output $d R_data,
       |  input         W_en,
       |  input  $a W_addr,
       |  input  $d W_data
       |);
       |
       |  (* no_rw_check *) reg $d mem [0:${(1 << addrBits) - 1}];
       |  reg $d data;
       |  always @(posedge clock) begin
       |    if (W_en)
       |      mem[W_addr] <= W_data;
       |    data <= mem[R_addr];
       |  end
       |`ifdef SYNTHESIS
       |  assign R_data = data;
       |`else
       |  reg collide;
       |  reg $d notWritten;
       |  always @(posedge clock) begin
       |    collide <= W_en && W_addr == R_addr;
       |    notWritten <= ~W_data;
       |  end
       |  assign R_data = collide ? notWritten : data;
       |`endif
       |endmodule
       |""".stripMargin
  )
}

object BlockRam {
  /** A [[BlockRam]] clocked by the enclosing module's clock, named `name`, with its write port
    * idle until [[write]] drives it.
    */
  def apply(depth: Int, width: Int, name: String): BlockRamPort = {
    val m = Module(new BlockRam(depth, width)).suggestName(name)
    m.io.clock := Module.clock
    m.io.R_addr := 0.U
    m.io.W_en := false.B
    m.io.W_addr := 0.U
    m.io.W_data := 0.U
    new BlockRamPort(m)
  }
}

/** The ports of a [[BlockRam]] as calls, like a `Mem`'s. */
class BlockRamPort(m: BlockRam) {
  /** The entry at `addr`, in the next cycle. */
  def read(addr: UInt): UInt = {
    m.io.R_addr := addr
    m.io.R_data
  }

  /** Writes `data` at `addr` when `en`; lands at the end of this cycle. */
  def write(en: Bool, addr: UInt, data: UInt): Unit = {
    m.io.W_en := en
    m.io.W_addr := addr
    m.io.W_data := data
  }
}
