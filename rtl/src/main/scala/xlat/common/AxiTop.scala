package xlat.common

import chisel3._
import chisel3.reflect.DataMirror
import chisel3.util.{DecoupledIO, Valid}

/** The `*_axi` top of a block (docs/packaging.md, "AXI"): the block with its memory port as an
  * AXI4 master `m_axi_*` ([[AxiMemMaster]]) and its CSR port, or (blocks without one) its
  * counters as read-only registers ([[AxiLiteCounters]]), as an AXI4-Lite slave `s_axil_*`
  * ([[AxiLiteSlave]]). Every other port of the block is a port of the top under its own name,
  * so a testbench or a board design of the plain block carries over; `perf_*` keeps the block's
  * counters and adds the wrapper's ([[AxiTop.memCounters]], [[AxiTop.liteCounters]]).
  *
  * The wrapper reads the block's ports from the elaborated module (by their contract names
  * `mem_req`, `mem_resp`, `csr_req`, `csr_resp`, `perf`), so it is written once for every block.
  */
class AxiTop(inner: Design, info: ujson.Obj) extends Module {
  override def desiredName: String = inner.module + "Axi"
  private val block = Module(inner.elaborate().asInstanceOf[Module])
  private val ports = DataMirror.modulePorts(block).filterNot(p => Set("clock", "reset")(p._1)).toMap
  private val memReq = ports.get("mem_req").map(_.asInstanceOf[DecoupledIO[MemReq]])
  private val memResp = ports.get("mem_resp").map(_.asInstanceOf[DecoupledIO[MemResp]])
  private val csrReq = ports.get("csr_req").map(_.asInstanceOf[DecoupledIO[Record]])
  private val csrResp = ports.get("csr_resp").map(_.asInstanceOf[Valid[Record]])
  private val perfIn = ports("perf").asInstanceOf[PerfCounters]
  require(memReq.isDefined || csrReq.isDefined, s"AxiTop: ${inner.module} has no memory or CSR port to wrap")
  // Kept whole (firtool would drop a constant `ready`): the testbenches observe the block at
  // these ports inside the top (instance `block`, tb/xlat_tb/axi.py). No logic changes.
  (memReq ++ memResp ++ csrReq ++ csrResp).foreach(dontTouch(_))

  /** The block's other ports, under their names (FlatIO: `req` prints as `req_valid`, ...). */
  private val wrapped = Set("mem_req", "mem_resp", "csr_req", "csr_resp", "perf")
  for ((name, port) <- DataMirror.modulePorts(block) if !wrapped(name) && name != "clock" && name != "reset") {
    val outer = IO(chiselTypeOf(port)).suggestName(name)
    outer <> port
  }

  private val mem = memReq.map { req =>
    val m = Module(new AxiMemMaster(req.bits.idBits, req.bits.addrBits))
    m.io.req <> req
    memResp.get <> m.io.resp
    val axi = IO(new Axi4Master(m.p)).suggestName("m_axi")
    axi <> m.io.axi
    m
  }

  private val lite = Module(new AxiLiteSlave(AxiTop.liteAddrBits))
  private val s_axil = IO(new AxiLiteSlavePort(AxiTop.liteAddrBits))
  s_axil <> lite.io.axil

  private val names = perfIn.names ++ (if (mem.isDefined) AxiTop.memCounters else Seq()) ++ AxiTop.liteCounters
  val perf = IO(Output(new PerfCounters(names)))
  perfIn.names.foreach(n => perf(n) := perfIn(n))
  mem.foreach { m =>
    perf("axiSlvErrs") := m.io.slvErrs
    perf("axiDecErrs") := m.io.decErrs
    perf("axiNoLast") := m.io.noLast
  }
  perf("axilErrors") := lite.io.errors

  (csrReq, csrResp) match {
    case (Some(req), Some(resp)) =>
      req.valid := lite.io.access.valid
      lite.io.access.ready := req.ready
      req.bits.elements("addr") := lite.io.access.bits.addr
      req.bits.elements("write") := lite.io.access.bits.write
      req.bits.elements("wdata") := lite.io.access.bits.wdata
      lite.io.answer.valid := resp.valid
      lite.io.answer.bits.rdata := resp.bits.elements("rdata")
      lite.io.answer.bits.error := resp.bits.elements("error")
      info("registers") = "csr"
    case _ =>
      val regs = Module(new AxiLiteCounters(names, AxiTop.liteAddrBits))
      regs.io.counters := VecInit(names.map(perf(_)))
      regs.io.access <> lite.io.access
      lite.io.answer := regs.io.answer
      info("registers") = "counters"
      info("counters") = ujson.Obj.from(names.zipWithIndex.map { case (n, i) => n -> ujson.Num(8 * i) })
  }
  info("inner") = inner.module
  info("instance") = "block"
  info("memory") = (if (mem.isDefined) ujson.Str("m_axi_") else ujson.Null): ujson.Value
  info("idBits") = memReq.map(r => ujson.Num(r.bits.idBits): ujson.Value).getOrElse(ujson.Null)
  info("addrBits") = memReq.map(r => ujson.Num(r.bits.addrBits): ujson.Value).getOrElse(ujson.Null)
  info("dataBits") = Axi.dataBits
  info("lite") = "s_axil_"
  info("liteAddrBits") = AxiTop.liteAddrBits
  info("wrapperCounters") = names.filterNot(perfIn.names.contains)
}

object AxiTop {
  /** The CSR ports' address width (PmlLogger, XlatMmu: 16-bit byte addresses). */
  val liteAddrBits = 16

  /** The wrapper's own counters (`perf_<name>`, PerfCounter): SLVERR and DECERR responses and
    * R beats without RLAST on `m_axi` (tops with a memory port only), SLVERR answers on `s_axil`.
    */
  val memCounters = Seq("axiSlvErrs", "axiDecErrs", "axiNoLast")
  val liteCounters = Seq("axilErrors")

  /** `d` as an `*_axi` top: the same configuration (parameters, derived values, register map and
    * files), module `<module>Axi`. The manifest's `axi` entry is filled while the top
    * elaborates (it names the counters, known only then), before [[xlat.Emit]] writes it.
    */
  def wrap(d: Design): Design = {
    val info = ujson.Obj()
    Design(d.config, d.block, d.module + "Axi", d.params, d.derived)(
      () => new AxiTop(d, info), d.extraManifest :+ ("axi" -> info), d.extraFiles)
  }
}
