package xlat.common

import chisel3._
import chisel3.util._

/** An AXI4-Lite slave (64-bit data) in front of a register port shaped like the library's CSR
  * ports: [[RegAccess]] out (Decoupled), [[RegAnswer]] back (Valid, any number of cycles later).
  * The `*_axi` tops put it before PmlLogger's and XlatMmu's `csr_req` / `csr_resp`, and before
  * [[AxiLiteCounters]] for blocks that have counters but no CSR port.
  *
  * **Decided** (docs/packaging.md, "AXI"):
  *  - one transaction at a time: an AW + W pair (taken together, in the cycle both are valid:
  *    AXI lets a slave wait for both) or an AR, then its B or R, then the next; a CSR port
  *    answers in a cycle or two, so overlap would buy nothing a register interface needs;
  *  - a write and a read valid in the same idle cycle alternate, the read first after reset
  *    (the one that waited goes next), so neither starves;
  *  - SLVERR, never DECERR (the slave exists; DECERR is an interconnect's "no slave here"),
  *    for every access the port answers with `error`: unmapped, not 8-byte aligned, a write
  *    to a read-only register (the block decides and counts it, as on its plain top);
  *  - one refusal of its own: a write to an 8-byte aligned address whose `wstrb` is not all
  *    ones (the port writes whole registers, so it cannot take part of one) is answered
  *    SLVERR here and never reaches the port; a misaligned write goes to the port whatever
  *    its strobes (no register is there: the port's error, the port's counter);
  *  - `errors` counts every SLVERR answered, whatever its cause.
  */
class AxiLiteSlave(addrBits: Int) extends Module {
  val io = IO(new Bundle {
    val axil = new AxiLiteSlavePort(addrBits)
    val access = Decoupled(new RegAccess(addrBits))
    val answer = Flipped(Valid(new RegAnswer))
    val errors = Output(UInt(PerfCounter.width.W))
  })
  private val s = io.axil
  private object State extends ChiselEnum { val idle, access, await, respond = Value }
  private val state = RegInit(State.idle)
  private val write = Reg(Bool())
  private val addr = Reg(UInt(addrBits.W))
  private val wdata = Reg(UInt(Axi.dataBits.W))
  private val rdata = Reg(UInt(Axi.dataBits.W))
  private val error = Reg(Bool())
  private val readFirst = RegInit(true.B)

  private val idle = state === State.idle
  private val wantW = s.awvalid && s.wvalid
  private val pickW = wantW && !(s.arvalid && readFirst)
  private val pickR = s.arvalid && !pickW
  s.awready := idle && pickW
  s.wready := idle && pickW
  s.arready := idle && pickR
  when(idle && (pickW || pickR)) {
    val a = Mux(pickW, s.awaddr, s.araddr)
    val reject = pickW && a(2, 0) === 0.U && !s.wstrb.andR
    write := pickW
    addr := a
    wdata := s.wdata
    rdata := 0.U
    error := reject
    state := Mux(reject, State.respond, State.access)
    when(wantW && s.arvalid) { readFirst := pickW }
  }

  io.access.valid := state === State.access
  io.access.bits.addr := addr
  io.access.bits.write := write
  io.access.bits.wdata := wdata
  when(io.access.fire) { state := State.await }
  // An answer in the cycle its access is taken (a port that answers at once) counts too.
  when((state === State.access || state === State.await) && io.answer.valid) {
    rdata := io.answer.bits.rdata
    error := io.answer.bits.error
    state := State.respond
  }

  private val respond = state === State.respond
  private val code = Mux(error, Axi.slvErr.U, Axi.okay.U)
  s.bvalid := respond && write
  s.bresp := code
  s.rvalid := respond && !write
  s.rresp := code
  s.rdata := rdata
  private val done = (s.bvalid && s.bready) || (s.rvalid && s.rready)
  when(done) { state := State.idle }
  io.errors := PerfCounter(done && error)
}
