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
  * Requests: a two-entry skid queue ([[RegQueue]] with registered flags) in front of the AXI
  * channels. The block's `mem_req_ready` is the queue's registered "not full" (**decided**: no
  * AXI `ready` reaches the block's request logic combinationally, which was the routed critical
  * path of `pml_default_axi`), and the AXI channels are driven from the queue's head, so a
  * request still reaches AR / AW the cycle after it is taken and back-to-back requests keep one
  * per cycle. A read presents AR; a write presents AW and W in the same cycle and holds each until
  * its own handshake (**decided**: neither waits for the other, so a slave that wants W before AW,
  * or AW before W, or both at once, is served: no dependency, no deadlock); the head leaves the
  * queue in the cycle the last of its channels completes.
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

  private val q = Module(new RegQueue(new MemReq(idBits, addrBits), 2, flagRegs = true))
  q.io.enq <> io.req
  private val head = q.io.deq.bits
  // the head's write channels already taken (a write's AW and W complete independently)
  private val awDone = RegInit(false.B)
  private val wDone = RegInit(false.B)
  private val awOk = awDone || a.bool("awready")
  private val wOk = wDone || a.bool("wready")
  q.io.deq.ready := Mux(head.write, awOk && wOk, a.bool("arready"))
  when(q.io.deq.fire) {
    awDone := false.B
    wDone := false.B
  }.otherwise {
    when(a.bool("awvalid") && a.bool("awready")) { awDone := true.B }
    when(a.bool("wvalid") && a.bool("wready")) { wDone := true.B }
  }

  a("arvalid") := q.io.deq.valid && !head.write
  a("arid") := head.id
  a("araddr") := head.addr
  a("awvalid") := q.io.deq.valid && head.write && !awDone
  a("awid") := head.id
  a("awaddr") := head.addr
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
  a("wvalid") := q.io.deq.valid && head.write && !wDone
  a("wdata") := head.wdata
  a("wstrb") := head.wmask
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
