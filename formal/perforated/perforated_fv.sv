// Formal property wrapper for PerforatedL2Tlb (formal/perforated/perforated.sby).
//
// Behaviour reference: docs/perforated-l2tlb.md; properties: spec perforated-l2tlb.md
// "Properties to prove"; README.md beside this file says how each is proved. Sizes come from
// the configuration's params.svh (build/rtl/perforated_formal/params.svh); the port list of the
// instance below is the formal configuration's (2 walk slots, 2 x 2 entries per array, 2
// bitmap words, a response queue of 6). With `SETS` (tasks perforated_sets_*, 2026-11-30) the
// instance is perforated_formal_sets' (the same but the bitmap cache: 2 sets x 1 way, block
// RAM, VA-indexed, PA-tagged; dbg_bitmap_i is set i): every property and invariant below reads
// the same ports, so they are stated once for both caches.
//
// Method
//   * Every DUT input is free ($anyseq) every cycle, except:
//       - reset is high in the first cycle (free later: mid-run resets are covered), and no
//         channel is valid while reset is high;
//       - `bitmapBase` is a constant (software changes it only with the TLB quiet: not modelled);
//       - the tracked frame F ($anyconst, a 4 KiB physical frame number) is never the target of
//         a 4 KiB mapping: no memory read returns a word whose bits PA-1:12 equal F (a PTE, a
//         hole's PTE or a pointer to F). So a response with ppn F can only come through a large
//         page (a 2 MiB entry, a perforated decision, a walk's PD leaf);
//       - the "hole epoch" `hole` (wrapper state): F is a hole while it is set. It is free at
//         reset and is set by an accepted `inval` of kind 3 for F's 2 MiB frame (software made F
//         a hole, then invalidated the frame). A memory read issued (mem_req handshake) while
//         `hole` is set returns data of the hole epoch: the bitmap word at
//         bitmapBase + 8 * (F >> 6) has bit F % 64 set, and every present PD-level leaf
//         (bits 0 and 7) whose 2 MiB frame is F's is perforated (bit 52) with the filter bit of
//         F's 64-page region (bit 13 + F[8:6]) set. The other 7 filter bits, every other word,
//         every other leaf are free (in particular 0: P2). Reads issued before the epoch began
//         answer anything (they may see the old tables);
//       - a request accepted in the hole epoch has id[ID-1] = 1, before it id[ID-1] = 0: the
//         id's top bit names the epoch of acceptance (the datapath only carries ids).
//
// Properties (asserted; proven by k-induction in perforated_prove)
//   P1  a hole is never translated through its large page: no response to a request accepted
//       in the hole epoch maps a page to F without a fault (ap_hole);
//   P2  a filter bit of 0 is trusted only for its 64 pages: ap_hole with the other 7 filter
//       bits free (the filter is indexed by the page's region);
//   P3  after `inval` kind 3 for F's frame nothing cached before it is used: ap_hole for the
//       requests accepted after that invalidation (hole set by the invalidation, not by reset);
//   P4  one response per accepted request: per id v, cnt[v] (accepted - answered) equals the
//       requests of id v held in the pipeline, in a walk slot, in the miss queue and in the
//       response queue (ap_cons), and no response leaves for an id with cnt = 0 (ap_noextra).
//   T   while an invalidation of F's frame is landing (pend) nothing but it is accepted.
// Strengthening invariants (asserted, so proven too)
//   I1  a valid 4 KiB entry does not map F
//   I2  hole epoch, landed: a valid 2 MiB entry of F's frame is perforated with F's filter bit
//   I3  hole epoch, landed: a valid bitmap word of F's index has F's bit set
//   I4  a walk slot waiting for a bitmap word reads bitmapBase + 8 * index of its large page
//   I5  hole epoch: a slot of a hole-epoch request (id[ID-1] = 1, stale or not) waiting for a
//       bitmap word holds a large page that obeys I2
//   I6  hole epoch: such a slot's read was issued in the hole epoch (so its data obeys it)
//   I7  ids: before the hole epoch every slot and queued response has id[ID-1] = 0, in it
//       every live slot has id[ID-1] = 1; while landing (pend) every valid slot is stale
//   I8  every queued response to a hole-epoch request that maps a page maps it elsewhere than F
//   I9  queue shape: count <= depth, tail = head + count, count + answers in flight <= depth
//   I10 a walk step in a stage register is its slot's only one: the slot is valid, sent, stepping
//   I11 the acceptance registers computed a cycle ahead equal what they stand for, and a write
//       in stage register j keeps at least 4 - j cycles of the write shadow (dbg_accOk)
//   I12 miss queue (docs "Acceptance", 2026-11-28): count <= depth and pointers agree; while it
//       holds a request every slot is busy (live or being handed to its head), a hand-over only
//       with a queued head; requests in the pipeline + queued <= queue places + free slots (the
//       acceptance rule: each request in flight has a slot or a place); empty while an
//       invalidation of F lands; its entries obey I4, I5 and I7 as the slots do
`default_nettype none

module perforated_fv (
  input wire clock
);
`include "params.svh"

  localparam ID = P_ID_BITS;
  localparam PA = P_PA_BITS;
  localparam PP = P_PPN_BITS;
  localparam V  = P_VPN_BITS;
  localparam AS = P_ASID_BITS;
  localparam NW = P_WALKERS;
  localparam RQ = P_RESP_QUEUE;
  localparam MQ = P_MISS_QUEUE;

  // ---- free inputs ---------------------------------------------------------------------------
  (* anyseq *) wire        reset_free;
  (* anyseq *) wire        req_valid;
  (* anyseq *) wire [ID-1:0] req_bits_id;
  (* anyseq *) wire [V-1:0]  req_bits_vpn;
  (* anyseq *) wire [AS-1:0] req_bits_asid;
  (* anyseq *) wire [PP-1:0] req_bits_root;
  (* anyseq *) wire [1:0]  req_bits_cmd;
  (* anyseq *) wire        req_bits_user;
  (* anyseq *) wire        resp_ready;
  (* anyseq *) wire        mem_req_ready;
  (* anyseq *) wire        mem_resp_valid;
  (* anyseq *) wire        mem_resp_bits_id;
  (* anyseq *) wire [63:0] mem_resp_bits_rdata;
  (* anyseq *) wire        mem_resp_bits_error;
  (* anyseq *) wire        inval_valid;
  (* anyseq *) wire [1:0]  inval_bits_kind;
  (* anyseq *) wire [AS-1:0] inval_bits_asid;
  (* anyseq *) wire [V-1:0]  inval_bits_vpn;
  (* anyseq *) wire [PA-22:0] inval_bits_frame;
  (* anyseq *) wire        hole_rst;
  (* anyconst *) wire [PA-1:0] bitmapBase;
  (* anyconst *) wire [PP-1:0] F;

  reg init = 1'b1;
  always @(posedge clock) init <= 1'b0;
  wire reset = init | reset_free;

`ifdef SETS
`include "perforated_sets_ports.svh"
`else
`include "perforated_ports.svh"
`endif

  // ---- wrapper state -------------------------------------------------------------------------
  wire req_fire = req_valid && req_ready;
  wire resp_fire = resp_valid && resp_ready;
  wire mem_req_fire = mem_req_valid && mem_req_ready;
  wire mem_resp_fire = mem_resp_valid && mem_resp_ready;
  wire inval_fire = inval_valid && inval_ready;
  wire inv3F = inval_fire && inval_bits_kind == 2'd3 && inval_bits_frame == F[PP-1:9];

  reg hole;            // F is a hole (see header)
  reg hole_by_inval;   // the epoch began with an invalidation (P3), not at reset
  reg [2:0] pend;      // cycles until that invalidation's removal has landed
  reg [NW-1:0] issued; // the slot's read was issued in the hole epoch
  reg [4:0] cnt [0:(1<<ID)-1];
  integer v;
  always @(posedge clock) begin
    if (reset) begin
      hole <= hole_rst;
      hole_by_inval <= 1'b0;
      pend <= 3'd0;
      issued <= {NW{1'b0}};
      for (v = 0; v < (1 << ID); v = v + 1) cnt[v] <= 5'd0;
    end else begin
      if (inv3F) begin
        hole <= 1'b1;
        hole_by_inval <= 1'b1;
        pend <= 3'd5;
      end else if (pend != 3'd0) begin
        pend <= pend - 3'd1;
      end
      if (mem_req_fire) issued[mem_req_bits_id] <= hole;
      for (v = 0; v < (1 << ID); v = v + 1)
        cnt[v] <= cnt[v] + (req_fire && req_bits_id == v) - (resp_fire && resp_bits_id == v);
    end
  end

  // ---- environment ---------------------------------------------------------------------------
  wire [PA-1:0] bmAddrF = {bitmapBase[PA-1:3] + F[PP-1:6], 3'b000};
  wire [5:0] fbit = F[5:0];
  wire [2:0] freg = F[8:6];
  wire [PA-1:0] slotAddr [0:NW-1];
  assign slotAddr[0] = dbg_slots_0_addr;
  assign slotAddr[1] = dbg_slots_1_addr;
  wire leafOfF = mem_resp_bits_rdata[0] && mem_resp_bits_rdata[7]
                 && mem_resp_bits_rdata[PA-1:21] == F[PP-1:9];
  always @* begin
    if (reset) begin
      assume (!req_valid);
      assume (!mem_resp_valid);
      assume (!inval_valid);
    end
    if (req_fire) assume (req_bits_id[ID-1] == hole);
    if (mem_resp_valid) begin
      assume (mem_resp_bits_rdata[PA-1:12] != F);
      if (issued[mem_resp_bits_id]) begin
        if (slotAddr[mem_resp_bits_id] == bmAddrF) assume (mem_resp_bits_rdata[fbit]);
        if (leafOfF) assume (mem_resp_bits_rdata[52] && mem_resp_bits_rdata[13 + freg]);
      end
    end
  end

  // ---- views ---------------------------------------------------------------------------------
  wire [PP-1:0] e4ppn [0:3];
  assign e4ppn[0] = dbg_entries4k_0_ppn;
  assign e4ppn[1] = dbg_entries4k_1_ppn;
  assign e4ppn[2] = dbg_entries4k_2_ppn;
  assign e4ppn[3] = dbg_entries4k_3_ppn;
  wire [PP-1:0] e2ppn [0:3];
  wire [3:0] e2perf;
  wire [7:0] e2filt [0:3];
  assign e2ppn[0] = dbg_entries2m_0_ppn;
  assign e2ppn[1] = dbg_entries2m_1_ppn;
  assign e2ppn[2] = dbg_entries2m_2_ppn;
  assign e2ppn[3] = dbg_entries2m_3_ppn;
  assign e2perf = {dbg_entries2m_3_perforated, dbg_entries2m_2_perforated,
                   dbg_entries2m_1_perforated, dbg_entries2m_0_perforated};
  assign e2filt[0] = dbg_entries2m_0_filter;
  assign e2filt[1] = dbg_entries2m_1_filter;
  assign e2filt[2] = dbg_entries2m_2_filter;
  assign e2filt[3] = dbg_entries2m_3_filter;
  wire [PA-19:0] bmIdx [0:1];
  wire [63:0] bmWord [0:1];
  assign bmIdx[0] = dbg_bitmap_0_index;
  assign bmIdx[1] = dbg_bitmap_1_index;
  assign bmWord[0] = dbg_bitmap_0_word;
  assign bmWord[1] = dbg_bitmap_1_word;
  wire [ID-1:0] sId [0:NW-1];
  wire [V-1:0] sVpn [0:NW-1];
  wire [2:0] sKind [0:NW-1];
  wire [PP-1:0] sLppn [0:NW-1];
  wire [NW-1:0] sLperf;
  wire [7:0] sLfilt [0:NW-1];
  assign sId[0] = dbg_slots_0_id;       assign sId[1] = dbg_slots_1_id;
  assign sVpn[0] = dbg_slots_0_vpn;     assign sVpn[1] = dbg_slots_1_vpn;
  assign sKind[0] = dbg_slots_0_kind;   assign sKind[1] = dbg_slots_1_kind;
  assign sLppn[0] = dbg_slots_0_large_ppn; assign sLppn[1] = dbg_slots_1_large_ppn;
  assign sLperf = {dbg_slots_1_large_perforated, dbg_slots_0_large_perforated};
  assign sLfilt[0] = dbg_slots_0_large_filter; assign sLfilt[1] = dbg_slots_1_large_filter;
  wire [3:0] hValid = {dbg_heldValid_3, dbg_heldValid_2, dbg_heldValid_1, dbg_heldValid_0};
  wire [1:0] hKind [0:3];
  wire [ID-1:0] hId [0:3];
  assign hKind[0] = dbg_heldKind_0; assign hKind[1] = dbg_heldKind_1; assign hKind[2] = dbg_heldKind_2;
  assign hKind[3] = dbg_heldKind_3;
  assign hId[0] = dbg_heldId_0;     assign hId[1] = dbg_heldId_1;     assign hId[2] = dbg_heldId_2;
  assign hId[3] = dbg_heldId_3;
  wire hSlot [0:3];
  assign hSlot[0] = dbg_heldSlot_0; assign hSlot[1] = dbg_heldSlot_1;
  assign hSlot[2] = dbg_heldSlot_2; assign hSlot[3] = dbg_heldSlot_3;
  wire [ID-1:0] qId [0:RQ-1];
  wire [2:0] qFault [0:RQ-1];
  wire [PP-1:0] qPpn [0:RQ-1];
  assign qId[0] = dbg_respq_0_id; assign qFault[0] = dbg_respq_0_fault; assign qPpn[0] = dbg_respq_0_ppn;
  assign qId[1] = dbg_respq_1_id; assign qFault[1] = dbg_respq_1_fault; assign qPpn[1] = dbg_respq_1_ppn;
  assign qId[2] = dbg_respq_2_id; assign qFault[2] = dbg_respq_2_fault; assign qPpn[2] = dbg_respq_2_ppn;
  assign qId[3] = dbg_respq_3_id; assign qFault[3] = dbg_respq_3_fault; assign qPpn[3] = dbg_respq_3_ppn;
  assign qId[4] = dbg_respq_4_id; assign qFault[4] = dbg_respq_4_fault; assign qPpn[4] = dbg_respq_4_ppn;
  assign qId[5] = dbg_respq_5_id; assign qFault[5] = dbg_respq_5_fault; assign qPpn[5] = dbg_respq_5_ppn;
  // the miss queue, head first (entry j queued when j < dbg_mqCount)
  wire [ID-1:0] mId [0:MQ-1];
  wire [V-1:0] mVpn [0:MQ-1];
  wire [2:0] mKind [0:MQ-1];
  wire [PA-1:0] mAddr [0:MQ-1];
  wire [PP-1:0] mLppn [0:MQ-1];
  wire [MQ-1:0] mLperf;
  wire [7:0] mLfilt [0:MQ-1];
  assign mId[0] = dbg_mq_0_id; assign mVpn[0] = dbg_mq_0_vpn; assign mKind[0] = dbg_mq_0_kind; assign mAddr[0] = dbg_mq_0_addr;
  assign mId[1] = dbg_mq_1_id; assign mVpn[1] = dbg_mq_1_vpn; assign mKind[1] = dbg_mq_1_kind; assign mAddr[1] = dbg_mq_1_addr;
  assign mId[2] = dbg_mq_2_id; assign mVpn[2] = dbg_mq_2_vpn; assign mKind[2] = dbg_mq_2_kind; assign mAddr[2] = dbg_mq_2_addr;
  assign mId[3] = dbg_mq_3_id; assign mVpn[3] = dbg_mq_3_vpn; assign mKind[3] = dbg_mq_3_kind; assign mAddr[3] = dbg_mq_3_addr;
  assign mLppn[0] = dbg_mq_0_large_ppn; assign mLppn[1] = dbg_mq_1_large_ppn;
  assign mLppn[2] = dbg_mq_2_large_ppn; assign mLppn[3] = dbg_mq_3_large_ppn;
  assign mLperf = {dbg_mq_3_large_perforated, dbg_mq_2_large_perforated, dbg_mq_1_large_perforated,
                   dbg_mq_0_large_perforated};
  assign mLfilt[0] = dbg_mq_0_large_filter; assign mLfilt[1] = dbg_mq_1_large_filter;
  assign mLfilt[2] = dbg_mq_2_large_filter; assign mLfilt[3] = dbg_mq_3_large_filter;
  // every slot busy: live, or being handed to the queue's head this cycle
  wire [NW-1:0] handMask = dbg_handValid ? (1 << dbg_handSlot) : {NW{1'b0}};
  wire [NW-1:0] busy = dbg_slotBusy;

  localparam K_REQ = 2'd0, K_STEP = 2'd1;
  localparam RD_BITMAP = 3'd4;
  wire landed = hole && pend == 3'd0;

  // ---- properties ----------------------------------------------------------------------------
  integer j, n, m;
  reg [4:0] held_n [0:(1<<ID)-1];
  reg [2:0] answers;
  reg [2:0] heldReqs;
  reg [2:0] freeSlots;
  always @* begin
    for (v = 0; v < (1 << ID); v = v + 1) begin
      n = 0;
      for (j = 0; j < 4; j = j + 1) if (hValid[j] && hKind[j] == K_REQ && hId[j] == v) n = n + 1;
      for (j = 0; j < NW; j = j + 1) if (dbg_slotValid[j] && sId[j] == v) n = n + 1;
      for (j = 0; j < RQ; j = j + 1) if (j < dbg_respCount && qId[j] == v) n = n + 1;
      for (j = 0; j < MQ; j = j + 1) if (j < dbg_mqCount && mId[j] == v) n = n + 1;
      held_n[v] = n;
    end
    n = 0;
    for (j = 0; j < 4; j = j + 1) if (hValid[j] && (hKind[j] == K_REQ || hKind[j] == K_STEP)) n = n + 1;
    answers = n;
    n = 0;
    for (j = 0; j < 4; j = j + 1) if (hValid[j] && hKind[j] == K_REQ) n = n + 1;
    heldReqs = n;
    n = 0;
    for (j = 0; j < NW; j = j + 1) if (!busy[j]) n = n + 1;
    freeSlots = n;
  end

  always @* begin
    if (!reset) begin
      // P1 / P2 / P3
      if (resp_valid && resp_bits_id[ID-1] && resp_bits_fault == 3'd0) ap_hole: assert (resp_bits_ppn != F);
      // P4
      if (resp_valid) ap_noextra: assert (cnt[resp_bits_id] != 5'd0);
      for (v = 0; v < (1 << ID); v = v + 1) assert /* ap_cons */ (cnt[v] == held_n[v]);
      // T
      if (pend != 3'd0) at_pend: assert (!req_ready && !mem_resp_ready);
      // I1 - I6
      for (j = 0; j < 4; j = j + 1) begin
        if (dbg_valid4k[j]) assert /* ai_4k */ (e4ppn[j] != F);
        if (landed && dbg_valid2m[j] && e2ppn[j][PP-1:9] == F[PP-1:9])
          assert /* ai_2m */ (e2perf[j] && e2filt[j][freg]);
      end
      for (j = 0; j < 2; j = j + 1)
        if (landed && dbg_bitmapValid[j] && bmIdx[j] == F[PP-1:6]) assert /* ai_bm */ (bmWord[j][fbit]);
      for (j = 0; j < NW; j = j + 1) begin
        if (dbg_slotValid[j] && sKind[j] == RD_BITMAP)
          assert /* ai_saddr */ (slotAddr[j] == {bitmapBase[PA-1:3] + {sLppn[j][PP-1:9], sVpn[j][8:6]}, 3'b000});
        if (hole && dbg_slotValid[j] && sId[j][ID-1] && sKind[j] == RD_BITMAP && sLppn[j][PP-1:9] == F[PP-1:9])
          assert /* ai_slarge */ (sLperf[j] && sLfilt[j][freg]);
        if (hole && dbg_slotValid[j] && sId[j][ID-1] && dbg_slotSent[j]) assert /* ai_issued */ (issued[j]);
        // I7
        if (!hole && dbg_slotValid[j]) assert /* ai_id0 */ (!sId[j][ID-1]);
        if (hole && dbg_slotValid[j] && !dbg_slotStale[j]) assert /* ai_id1 */ (sId[j][ID-1]);
        if (pend != 3'd0 && dbg_slotValid[j]) assert /* ai_pstale */ (dbg_slotStale[j]);
      end
      for (j = 0; j < RQ; j = j + 1) if (j < dbg_respCount) begin
        if (!hole) assert /* ai_qid0 */ (!qId[j][ID-1]);
        // I8
        if (qId[j][ID-1] && qFault[j] == 3'd0) assert /* ai_qhole */ (qPpn[j] != F);
      end
      // I9
      ai_qcount: assert (dbg_respCount <= RQ && dbg_respPtrOk && dbg_respCount + answers <= RQ);
      // I10 a walk step in the pipeline is its slot's one step: the slot is valid, its read
      // was sent and answered (slotStep); two steps in the pipeline are of different slots
      for (j = 0; j < 4; j = j + 1) if (hValid[j] && hKind[j] == K_STEP) begin
        assert /* ai_step */ (dbg_slotValid[hSlot[j]] && dbg_slotStep[hSlot[j]] && dbg_slotSent[hSlot[j]]);
        for (m = 0; m < 4; m = m + 1)
          if (m != j && hValid[m] && hKind[m] == K_STEP) assert /* ai_step1 */ (hSlot[m] != hSlot[j]);
      end
      // I11 the acceptance registers computed a cycle ahead (idle, not busy) equal their
      // functions; a write in the stage registers has its write shadow left
      ai_acc: assert (dbg_accOk);
      // I12 the miss queue
      ai_mq: assert (dbg_mqCount <= MQ && dbg_mqPtrOk);
      if (dbg_mqCount != 0) ai_mqbusy: assert (&busy);
      // (the handed slot still holds the ended walk, its step flag set: no read is sent for it
      // and no memory response accepted until its head is written in)
      if (dbg_handValid) ai_hand: assert (dbg_mqCount != 0 && busy[dbg_handSlot] && dbg_slotStep[dbg_handSlot]);
      ai_live: assert (dbg_slotValid == (busy & ~handMask));
      // (a hand-over is the cycle after the step's respond: its write shadow kept every stage
      // behind it empty)
      if (dbg_handValid) ai_handpipe: assert (dbg_pipeEmpty);
      ai_mqroom: assert (heldReqs + dbg_mqCount <= MQ + freeSlots);
      if (pend != 3'd0) ai_pmq: assert (dbg_mqCount == 0);
      for (j = 0; j < MQ; j = j + 1) if (j < dbg_mqCount) begin
        if (mKind[j] == RD_BITMAP)
          assert /* ai_mqaddr */ (mAddr[j] == {bitmapBase[PA-1:3] + {mLppn[j][PP-1:9], mVpn[j][8:6]}, 3'b000});
        if (hole && mId[j][ID-1] && mKind[j] == RD_BITMAP && mLppn[j][PP-1:9] == F[PP-1:9])
          assert /* ai_mqlarge */ (mLperf[j] && mLfilt[j][freg]);
        assert /* ai_mqid */ (mId[j][ID-1] == hole);
      end
    end
  end

  // ---- covers --------------------------------------------------------------------------------
`ifdef COVER
  // The cover task narrows the environment to reach the deep cases (a hole needs six memory
  // reads, about five cycles each) within its depth: one memory read at a time answered the
  // next cycle without error, mem_req_ready high, requests of one address space and root with
  // cmd read, invalidations only of kind 3 for F's frame. The proof task keeps every input free.
  reg mem_req_q, mem_req_id_q;
  always @(posedge clock) begin
    mem_req_q <= mem_req_fire && !reset;
    mem_req_id_q <= mem_req_bits_id;
  end
  (* anyconst *) wire [PP-1:0] cover_root;
  always @* begin
    assume (mem_resp_valid == mem_req_q);
    if (mem_resp_valid) assume (mem_resp_bits_id == mem_req_id_q && !mem_resp_bits_error);
    assume (mem_req_ready);
    if (req_valid) assume (req_bits_asid == 0 && req_bits_root == cover_root && req_bits_cmd == 2'd0 && !req_bits_user);
    if (inval_valid) assume (inval_bits_kind == 2'd3 && inval_bits_frame == F[PP-1:9]);
    if (!init) assume (!reset_free);
  end
  // counter increments are compared from the second cycle after reset on (the counters' reset)
  reg [31:0] fs_q, bh_q, pf_q, ho_q, h2_q;
  reg [1:0] age = 2'd0;
  always @(posedge clock) begin
    age <= reset ? 2'd0 : (age == 2'd3 ? age : age + 2'd1);
    fs_q <= perf_filterSkips;
    bh_q <= perf_bitmapHits;
    pf_q <= perf_perforatedFills;
    ho_q <= perf_holes;
    h2_q <= perf_hits2m;
  end
  wire v2F = |{dbg_valid2m[0] && e2ppn[0][PP-1:9] == F[PP-1:9], dbg_valid2m[1] && e2ppn[1][PP-1:9] == F[PP-1:9],
               dbg_valid2m[2] && e2ppn[2][PP-1:9] == F[PP-1:9], dbg_valid2m[3] && e2ppn[3][PP-1:9] == F[PP-1:9]};
  always @(posedge clock) begin
    if (age >= 2'd2 && !reset) begin
      // a request hits a perforated 2 MiB entry and its page is a hole (its own walk begins)
      c_hole_2mhit: cover (perf_holes != ho_q && perf_hits2m != h2_q);
      c_perf_nonhole: cover (resp_valid && resp_bits_source == 3'd2 && resp_bits_fault == 3'd0);
      c_filter_skip: cover (perf_filterSkips != fs_q);
      c_bitmap_hit: cover (perf_bitmapHits != bh_q);
      c_bitmap_hit_hole: cover (perf_bitmapHits != bh_q && perf_holes != ho_q);
      c_perf_fill: cover (perf_perforatedFills != pf_q);
      c_bmF_read: cover (mem_resp_fire && issued[mem_resp_bits_id] && slotAddr[mem_resp_bits_id] == bmAddrF
                         && sKind[mem_resp_bits_id] == RD_BITMAP);
      c_ppnF_before: cover (resp_valid && !hole && resp_bits_fault == 3'd0 && resp_bits_ppn == F);
      c_inv3F_entry: cover (inv3F && v2F);
      c_inv_beside_walk: cover (inval_fire && dbg_slotValid != 0);
      c_stale_resp: cover (resp_valid && hole_by_inval && !resp_bits_id[ID-1] && resp_bits_source == 3'd4 && resp_bits_fault == 3'd0);
      c_after_inv3F: cover (resp_valid && hole_by_inval && pend == 0 && resp_bits_id[ID-1] && resp_bits_fault == 3'd0);
      c_invalDone: cover (invalDone_valid && hole_by_inval && pend == 3'd0);
      c_queue_full: cover (dbg_respCount == RQ);
      // a request that needs memory waits in the miss queue (every slot busy), and a walk that
      // ends hands its slot to it
      c_miss_queued: cover (dbg_mqCount != 0);
      c_miss_handed: cover (dbg_handValid);
    end
  end
`ifdef SETS
  // The set-associative bitmap cache (perforated_formal_sets: 2 sets x 1 way, entry i = set i;
  // dbg_bmEvents: a lookup's hit and a fill in respond, the set of the operation there).
  wire bmHit = dbg_bmEvents_hit;
  wire bmFill = dbg_bmEvents_fill;
  wire bmSet = dbg_bmEvents_set;
  wire [PA-22:0] bmFrame0 = bmIdx[0][PA-19:3];
  wire [PA-22:0] bmFrame1 = bmIdx[1][PA-19:3];
  // F's invalidation accepted while a bitmap word was valid
  reg invWithWord;
  always @(posedge clock) begin
    if (reset) invWithWord <= 1'b0;
    else if (inv3F) invWithWord <= dbg_bitmapValid != 2'b00;
  end
  always @(posedge clock) begin
    if (age >= 2'd2 && !reset) begin
      // a lookup hits in set 1 (the set is the VA's, not always 0)
      c_bm_hit_set1: cover (bmHit && bmSet == 1'b1);
      // ... while set 0 holds a word of another frame (PA tags of different large pages)
      c_bm_hit_set1_other: cover (bmHit && bmSet == 1'b1 && dbg_bitmapValid == 2'b11 && bmFrame0 != bmFrame1);
      // ... and of the same frame (two regions of one large page in two sets)
      c_bm_hit_set1_same: cover (bmHit && bmSet == 1'b1 && dbg_bitmapValid == 2'b11 && bmFrame0 == bmFrame1);
      // a miss fills set 1 while set 0 holds a word; a fill replaces a valid word (its one way)
      c_bm_fill_set1: cover (bmFill && bmSet == 1'b1 && dbg_bitmapValid[0]);
      c_bm_fill_evict: cover (bmFill && dbg_bitmapValid[bmSet]);
      // kind 3 while a word is valid: every word is gone once it landed
      c_bm_inv_clear: cover (hole_by_inval && pend == 3'd0 && invWithWord && dbg_bitmapValid == 2'b00);
      // (a stale walk's bitmap step answering, its word not cached, `staleBm_q[3] && !bmFill`,
      // is not reached within depth 46: README.md; mutation sets_stale_fills shows the proof
      // needs it not cached)
    end
  end
`endif
`endif
endmodule
