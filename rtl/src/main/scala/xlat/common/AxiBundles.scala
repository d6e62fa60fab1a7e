package xlat.common

import chisel3._

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
  /** `xRESP` codes (AXI4 A3.4.4). */
  val OKAY = 0
  val EXOKAY = 1
  val SLVERR = 2
  val DECERR = 3
  /** A 64-bit beat: `AxSIZE` 3 (8 bytes); `AxBURST` INCR. */
  val size8 = 3
  val burstIncr = 1
  /** `AxCACHE` 0b0011: normal, non-cacheable, bufferable (the AXI4 default for a master that
    * does not know better); `AxPROT` 0: unprivileged, secure, data.
    */
  val cacheNormal = 3
}

/** An AXI4 master port (directions as the master sees them). */
class Axi4Master(p: AxiParams) extends Bundle {
  val awvalid = Output(Bool())
  val awready = Input(Bool())
  val awid = Output(UInt(p.idBits.W))
  val awaddr = Output(UInt(p.addrBits.W))
  val awlen = Output(UInt(8.W))
  val awsize = Output(UInt(3.W))
  val awburst = Output(UInt(2.W))
  val awlock = Output(Bool())
  val awcache = Output(UInt(4.W))
  val awprot = Output(UInt(3.W))
  val awqos = Output(UInt(4.W))
  val wvalid = Output(Bool())
  val wready = Input(Bool())
  val wdata = Output(UInt(Axi.dataBits.W))
  val wstrb = Output(UInt(Axi.strbBits.W))
  val wlast = Output(Bool())
  val bvalid = Input(Bool())
  val bready = Output(Bool())
  val bid = Input(UInt(p.idBits.W))
  val bresp = Input(UInt(2.W))
  val arvalid = Output(Bool())
  val arready = Input(Bool())
  val arid = Output(UInt(p.idBits.W))
  val araddr = Output(UInt(p.addrBits.W))
  val arlen = Output(UInt(8.W))
  val arsize = Output(UInt(3.W))
  val arburst = Output(UInt(2.W))
  val arlock = Output(Bool())
  val arcache = Output(UInt(4.W))
  val arprot = Output(UInt(3.W))
  val arqos = Output(UInt(4.W))
  val rvalid = Input(Bool())
  val rready = Output(Bool())
  val rid = Input(UInt(p.idBits.W))
  val rdata = Input(UInt(Axi.dataBits.W))
  val rresp = Input(UInt(2.W))
  val rlast = Input(Bool())
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
  val arvalid = Input(Bool())
  val arready = Output(Bool())
  val araddr = Input(UInt(addrBits.W))
  val rvalid = Output(Bool())
  val rready = Input(Bool())
  val rdata = Output(UInt(Axi.dataBits.W))
  val rresp = Output(UInt(2.W))
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
