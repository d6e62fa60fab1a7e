package xlat.mmu

import chisel3._
import xlat.babelfish.{BabelFishParams, FillReq, InvalReq, LookupReq, LookupResp}
import xlat.common.ChannelView
import xlat.walker.{WalkReq, WalkResp, WalkerFlush}

/** One BabelFishTlb's channels as the composed proofs see them. */
class MmuTlbDbg(p: BabelFishParams) extends Bundle {
  val lookup_req = new ChannelView(new LookupReq(p))
  val lookup_resp = new ChannelView(new LookupResp(p))
  val fill = new ChannelView(new FillReq(p))
  val inval = new ChannelView(new InvalReq(p))
}

/** The proofs' view of XlatMmu (`formalPorts`, mmu_formal only; formal/mmu/README.md): every
  * channel between the sequencer and the blocks (the proofs replace the blocks by abstract
  * models whose outputs are free, so these are the blocks' boundary), and the sequencer's
  * registers the strengthening invariants relate to the wrapper's ghost state.
  */
class MmuDbg(p: XlatMmuParams) extends Bundle {
  /** [[MmuState]] in declaration order. */
  val state = UInt(MmuState.getWidth.W)
  /** The accepted request and its TLB context (`rq`, `ctx`). */
  val req = new MmuReq(p)
  val ctx = UInt(p.ctxBits.W)
  val l1 = new MmuTlbDbg(p.l1)
  val l2 = new MmuTlbDbg(p.l2)
  val walk_req = new ChannelView(new WalkReq(p.walker))
  val walk_resp = new ChannelView(new WalkResp(p.walker))
  val walk_flush = new ChannelView(new WalkerFlush(p.walker))
  /** The fence being served: its request, plan, step (0 or 1) and what each block was sent. */
  val fence = new MmuFence(p)
  val plan = new FencePlan(p)
  val fenceStep = UInt(1.W)
  val l1Sent = Bool()
  val l2Sent = Bool()
  val flushSent = Bool()
}
