package xlat.common

import chisel3._
import chisel3.util._

/** Several users of the library's memory port ([[MemReq]] / [[MemResp]]) merged onto one:
  * requests chosen round robin ([[RoundRobin]], with hold, so the merged channel keeps its
  * valid and bits until `ready`), the source's index put in the top bits of the id, responses
  * routed back by those bits with the source's own id below them.
  *
  * A response whose id names no source, or carries bits above the source's id width, is
  * dropped (accepted and not forwarded) and shown in `badResp` for the owner's counter; a
  * source that gets a response it has nothing outstanding for drops and counts it itself, as
  * each block does alone.
  *
  * @param idBits   each source's id width
  * @param addrBits the merged port's address width (every source's address is zero-extended)
  */
class MemMerge(idBits: Seq[Int], addrBits: Int) {
  private val n = idBits.size
  require(n >= 2, s"MemMerge: needs at least 2 sources, got $n")
  private val srcBits = log2Ceil(n)
  private val lowBits = idBits.max
  /** Id width of the merged port. */
  val mergedIdBits: Int = lowBits + srcBits

  /** A response dropped this cycle (no such source, or id bits beyond the source's width). */
  val badResp: Bool = Wire(Bool())

  /** Connects the sources' ports to the merged port `req` / `resp`. */
  def connect(srcReq: Seq[DecoupledIO[MemReq]], srcResp: Seq[DecoupledIO[MemResp]],
              req: DecoupledIO[MemReq], resp: DecoupledIO[MemResp]): Unit = {
    require(srcReq.size == n && srcResp.size == n)
    val rr = new RoundRobin(n).apply(srcReq.map(_.valid))
    req.valid := rr.valid
    req.bits.id := Cat(rr.index(srcBits - 1, 0), Mux1H(rr.oneHot, srcReq.map(_.bits.id.pad(lowBits))))
    req.bits.addr := Mux1H(rr.oneHot, srcReq.map(_.bits.addr.pad(addrBits)))
    req.bits.write := Mux1H(rr.oneHot, srcReq.map(_.bits.write))
    req.bits.wdata := Mux1H(rr.oneHot, srcReq.map(_.bits.wdata))
    req.bits.wmask := Mux1H(rr.oneHot, srcReq.map(_.bits.wmask))
    for (i <- 0 until n) srcReq(i).ready := req.ready && rr.valid && rr.oneHot(i)
    when(req.fire) { rr.granted() }

    val src = resp.bits.id(mergedIdBits - 1, lowBits)
    val low = resp.bits.id(lowBits - 1, 0)
    val fits = (0 until n).map { i =>
      src === i.U && (if (idBits(i) < lowBits) !low(lowBits - 1, idBits(i)).orR else true.B)
    }
    for (i <- 0 until n) {
      srcResp(i).valid := resp.valid && fits(i)
      srcResp(i).bits.id := low(idBits(i) - 1, 0)
      srcResp(i).bits.rdata := resp.bits.rdata
      srcResp(i).bits.error := resp.bits.error
    }
    val good = fits.reduce(_ || _)
    resp.ready := !good || Mux1H(fits, srcResp.map(_.ready))
    badResp := resp.valid && !good
  }
}
