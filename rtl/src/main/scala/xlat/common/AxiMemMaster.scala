package xlat.common

import chisel3._
import chisel3.util._

/** The library's memory port ([[MemReq]] / [[MemResp]]) as an AXI4 master: the adapter of the
  * `*_axi` tops (docs/packaging.md, "AXI").
  *
  * Every request is one single-beat transaction (`len` 0, `size` 3: 8 bytes, INCR) with the
  * request's `id` as its AXI id, so the AXI ordering rules (same id: in order) are the memory
  * port's, and responses return out of order across ids, matched by id as the block expects.
  * A write's `wstrb` is its `wmask`.
  *
  * Requests: one register stage. A read presents AR; a write presents AW and W in the same cycle
  * and holds each until its own handshake (**decided**: neither waits for the other, so a slave
  * that wants W before AW, or AW before W, or both at once, is served: no dependency, no
  * deadlock). The next request is taken in the cycle the last of its channels completes.
  *
  * Responses: R and B both go to `mem_resp`. When both are valid in one cycle (**decided**, the
  * written order of docs/packaging.md), they alternate: the one that waited at the last such
  * cycle goes first, R at the first after reset; the other is held by its `ready` low, so
  * neither is dropped and neither starves. `xRESP` SLVERR and DECERR set `error` (OKAY and
  * EXOKAY do not), each counted; an R beat without `rlast` (a burst the adapter never asks for)
  * is answered as an error too and counted as `axiNoLast`.
  */
class AxiMemMaster(idBits: Int, addrBits: Int) extends Module {
  val p = AxiParams(idBits, addrBits)
  val io = IO(new Bundle {
    val req = Flipped(Decoupled(new MemReq(idBits, addrBits)))
    val resp = Decoupled(new MemResp(idBits))
    val axi = new Axi4Master(p)
    /** Counters (PerfCounter): responses with SLVERR, with DECERR, R beats without RLAST. */
    val slvErrs = Output(UInt(PerfCounter.width.W))
    val decErrs = Output(UInt(PerfCounter.width.W))
    val noLast = Output(UInt(PerfCounter.width.W))
  })
  private val a = io.axi

  private val held = Reg(new MemReq(idBits, addrBits))
  private val arPending = RegInit(false.B)
  private val awPending = RegInit(false.B)
  private val wPending = RegInit(false.B)
  io.req.ready := (!arPending || a.bool("arready")) && (!awPending || a.bool("awready")) && (!wPending || a.bool("wready"))
  when(io.req.fire) {
    held := io.req.bits
    arPending := !io.req.bits.write
    awPending := io.req.bits.write
    wPending := io.req.bits.write
  }.otherwise {
    when(a.bool("arready")) { arPending := false.B }
    when(a.bool("awready")) { awPending := false.B }
    when(a.bool("wready")) { wPending := false.B }
  }

  a("arvalid") := arPending
  a("arid") := held.id
  a("araddr") := held.addr
  a("awvalid") := awPending
  a("awid") := held.id
  a("awaddr") := held.addr
  for ((len, size, burst, lock, cache, prot, qos) <- Seq(
      (a("arlen"), a("arsize"), a("arburst"), a("arlock"), a("arcache"), a("arprot"), a("arqos")),
      (a("awlen"), a("awsize"), a("awburst"), a("awlock"), a("awcache"), a("awprot"), a("awqos")))) {
    len := 0.U
    size := Axi.size8.U
    burst := Axi.burstIncr.U
    lock := false.B
    cache := Axi.cacheNormal.U
    prot := 0.U
    qos := 0.U
  }
  a("wvalid") := wPending
  a("wdata") := held.wdata
  a("wstrb") := held.wmask
  a("wlast") := true.B

  // R / B arbitration: `bFirst` names the one that goes first when both are valid.
  private val bFirst = RegInit(false.B)
  private val takeR = a.bool("rvalid") && (!a.bool("bvalid") || !bFirst)
  when(a.bool("rvalid") && a.bool("bvalid") && io.resp.ready) { bFirst := takeR }
  io.resp.valid := a.bool("rvalid") || a.bool("bvalid")
  a("rready") := io.resp.ready && takeR
  a("bready") := io.resp.ready && !takeR
  private val code = Mux(takeR, a("rresp"), a("bresp"))
  private val noLast = takeR && !a.bool("rlast")
  io.resp.bits.id := Mux(takeR, a("rid"), a("bid"))
  io.resp.bits.rdata := Mux(takeR, a("rdata"), 0.U)
  io.resp.bits.error := code(1) || noLast

  io.slvErrs := PerfCounter(io.resp.fire && code === Axi.slvErr.U)
  io.decErrs := PerfCounter(io.resp.fire && code === Axi.decErr.U)
  io.noLast := PerfCounter(io.resp.fire && noLast)
}
