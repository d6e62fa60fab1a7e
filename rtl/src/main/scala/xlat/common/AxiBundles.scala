package xlat.common

import chisel3._
import scala.collection.immutable.SeqMap

/** The AXI4 and AXI4-Lite port shapes of the `*_axi` tops (docs/packaging.md, "AXI"), as flat
  * bundles whose fields carry the standard AXI signal names, so that a port `m_axi` of
  * [[Axi4Master]] prints as `m_axi_awvalid`, `m_axi_awaddr`, ... and a vendor's interface
  * inference or `cocotbext-axi`'s `AxiBus.from_prefix` finds them without a map.
  *
  * Widths: ids and addresses are the memory port's ([[MemReq]]); data is one 8-byte word, the
  * memory port's and the CSR port's word. Signals a single-beat master always drives the same
  * way (`len`, `size`, `burst`, ...) are ports all the same: an interconnect expects them.
  */
case class AxiParams(idBits: Int, addrBits: Int) {
  require(idBits >= 1 && idBits <= 16, s"AxiParams.idBits must be in 1..16, got $idBits")
  require(addrBits >= 12 && addrBits <= 64, s"AxiParams.addrBits must be in 12..64, got $addrBits")
}

object Axi {
  val dataBits = 64
  val strbBits = dataBits / 8
  /** `xRESP` codes (AXI4 A3.4.4) the library sends or reads: OKAY, SLVERR, DECERR (EXOKAY, 1,
    * only answers exclusive accesses, which nothing here makes).
    */
  val (okay, slvErr, decErr) = (0, 2, 3)
  /** A beat of 8 bytes (`AxSIZE` 3), `AxBURST` INCR (1); `AxCACHE` 0b0011: normal,
    * non-cacheable, bufferable (the AXI4 default for a master that does not know better).
    */
  val (size8, burstIncr, cacheNormal) = (3, 1, 3)
}

/** An AXI4 master port (directions as the master sees them), `m("awvalid")` etc. A Record, so
  * that the read and write address channels (the same fields under `ar` / `aw`) are written
  * once; listed in reverse because Chisel prints a Record's last element first.
  */
class Axi4Master(val p: AxiParams) extends Record {
  private def address(c: String): Seq[(String, Data)] = Seq(
    s"${c}valid" -> Output(Bool()), s"${c}ready" -> Input(Bool()), s"${c}id" -> Output(UInt(p.idBits.W)),
    s"${c}addr" -> Output(UInt(p.addrBits.W)), s"${c}len" -> Output(UInt(8.W)), s"${c}size" -> Output(UInt(3.W)),
    s"${c}burst" -> Output(UInt(2.W)), s"${c}lock" -> Output(Bool()), s"${c}cache" -> Output(UInt(4.W)),
    s"${c}prot" -> Output(UInt(3.W)), s"${c}qos" -> Output(UInt(4.W)))
  private def response(c: String, data: Boolean): Seq[(String, Data)] = Seq(
    s"${c}valid" -> Input(Bool()), s"${c}ready" -> Output(Bool()), s"${c}id" -> Input(UInt(p.idBits.W))) ++
    (if (data) Seq("rdata" -> Input(UInt(Axi.dataBits.W))) else Seq()) ++
    Seq(s"${c}resp" -> Input(UInt(2.W))) ++ (if (data) Seq("rlast" -> Input(Bool())) else Seq())
  private val write = Seq("wvalid" -> Output(Bool()), "wready" -> Input(Bool()),
    "wdata" -> Output(UInt(Axi.dataBits.W)), "wstrb" -> Output(UInt(Axi.strbBits.W)), "wlast" -> Output(Bool()))
  val elements: SeqMap[String, Data] =
    SeqMap((address("aw") ++ write ++ response("b", data = false) ++ address("ar") ++ response("r", data = true)).reverse: _*)
  /** A signal by its AXI name (`awvalid`, `rdata`, ...). */
  def apply(name: String): UInt = elements(name).asInstanceOf[UInt]
  /** A 1-bit signal (`*valid`, `*ready`, `rlast`) by its AXI name. */
  def bool(name: String): Bool = elements(name).asInstanceOf[Bool]
}

/** An AXI4-Lite slave port with 64-bit data (directions as the slave sees them). `AxPROT` is
  * left out (optional in AXI4-Lite): no register of the library depends on it.
  */
class AxiLiteSlavePort(val addrBits: Int) extends Bundle {
  val awvalid = Input(Bool())
  val awready = Output(Bool())
  val awaddr = Input(UInt(addrBits.W))
  val wvalid = Input(Bool())
  val wready = Output(Bool())
  val wdata = Input(UInt(Axi.dataBits.W))
  val wstrb = Input(UInt(Axi.strbBits.W))
  val bvalid = Output(Bool())
  val bready = Input(Bool())
  val bresp = Output(UInt(2.W))
  val araddr = Input(UInt(addrBits.W))
  val arvalid = Input(Bool())
  val arready = Output(Bool())
  val rdata = Output(UInt(Axi.dataBits.W))
  val rresp = Output(UInt(2.W))
  val rvalid = Output(Bool())
  val rready = Input(Bool())
}

/** One register access as the library's CSR ports take it (PmlLogger's and XlatMmu's
  * `csr_req`): a byte address of a 64-bit register, whole-register writes.
  */
class RegAccess(val addrBits: Int) extends Bundle {
  val addr = UInt(addrBits.W)
  val write = Bool()
  val wdata = UInt(Axi.dataBits.W)
}

/** The answer to a [[RegAccess]] (`csr_resp`): `error` for a register the block does not have or
  * does not let software write.
  */
class RegAnswer extends Bundle {
  val rdata = UInt(Axi.dataBits.W)
  val error = Bool()
}
