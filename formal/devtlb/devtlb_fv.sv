// Formal property wrapper for DevTlb (formal/devtlb/devtlb.sby), configuration devtlb_formal
// (partitioned, sets 2, ways 2, PTB 2, PB 2, sidBits 2, iovaBits 22, ppnBits 21, tagBits 2,
// dbg ports). Behaviour reference: docs/devtlb.md; properties: spec devtlb.md "Properties to
// prove" and the channel rules of the spec README.
//
// Method
//   * Every DUT input is free ($anyseq) in every cycle, except: reset is high in the first cycle,
//     no channel is valid while reset is high, and a request's tag is not one of a request still
//     waiting for its response (the testbench-visible tag must name one request).
//   * Data independence for isolation: a completion for an ATS tag whose request was sent (and
//     not yet completed) carries, in the top sidBits of its ppn, the SID of that request. A
//     translation installed for SID s therefore has s in its top ppn bits wherever it is kept
//     (1 GiB pieces keep the bits above 18), and a response that carries another SID's bits
//     carries another SID's translation. Completions for other tags (never sent, already
//     completed) are free: the DUT must ignore them.
//
// Properties (asserted)
//   P1  isolation: a response without fault to the request with tag t carries t's SID in its
//       top ppn bits (DevTLB hit, PB hit and completion alike).
//   P2  no response for a tag that is not outstanding; at most one response per request.
//   P3  the PTB never holds two outstanding (valid, not done) slots for one {SID, page}.
//   P4  partitioned rows: every valid DevTLB entry of a row has the row's valid PTag as SID, so
//       a fill never evicts another SID's entry without claiming the row.
//   T   resp and ats_req keep valid and bits while ready is low.
// Invariants (asserted, what the proofs above rest on; devtlb_prove closes by k-induction at
// k = 3 since 2026-11-28 (k = 6 before J2 / J3), formal/devtlb/README.md): I1-I6, Q, J below; I3 the drain register answers its waiter,
// I3b the drain's pick register holds one valid ready waiter not in it; since 2026-11-28 (the
// per-waiter response copies and the pick register) I5b a demand slot always has a waiter,
// I7 a ready waiter's response copy is its slot's translation, I8 the drain register's one-hot,
// slot and response are its waiter's, I9 the free-slot and free-waiter counts and the room the
// acceptance rule reserves, I10 the send queues' SID and page are their slot's.
// Covers (cover task, checked at step 39): every response source (the PB hit included), a PB
// fill, a merge, a claim, a stale completion, a bad completion, an invalDone, a prefetch.
`default_nettype none

module devtlb_fv (
  input wire clock
);
`include "params.svh"

  localparam SB = P_SID_BITS;
  localparam PG = P_PAGE_BITS;
  localparam PP = P_PPN_BITS;
  localparam TB = P_TAG_BITS;
  localparam AB = P_ATS_TAG_BITS;
  localparam NS = P_SLOTS;
  localparam NT = 1 << TB;
  localparam NA = 1 << AB;
  localparam E  = P_SETS * P_WAYS;
  localparam NB = P_PB_ENTRIES > 0 ? P_PB_ENTRIES : 1;
  localparam NW = P_WAITERS;

  generate
    if (P_FORMAL_PORTS == 0) begin : g_err_dbg
      $error("devtlb_fv: the configuration has no dbg_* ports");
    end
    if (PP < 19 + SB) begin : g_err_ppn
      $error("devtlb_fv: ppnBits must hold the SID above a 1 GiB page's 18 offset bits");
    end
  endgenerate

  // ------------------------------------------------------------------ free inputs
  (* anyseq *) reg          reset;
  (* anyseq *) reg          req_valid;
  (* anyseq *) reg [TB-1:0] req_bits_tag;
  (* anyseq *) reg [SB-1:0] req_bits_sid;
  (* anyseq *) reg [PG-1:0] req_bits_iova;
  (* anyseq *) reg          req_bits_write;
  (* anyseq *) reg          resp_ready;
  (* anyseq *) reg          ats_req_ready;
  (* anyseq *) reg          ats_resp_valid;
  (* anyseq *) reg [AB-1:0] ats_resp_bits_tag;
  (* anyseq *) reg [PP-1:0] ats_resp_bits_ppn;
  (* anyseq *) reg          ats_resp_bits_perm_r;
  (* anyseq *) reg          ats_resp_bits_perm_w;
  (* anyseq *) reg [1:0]    ats_resp_bits_pageSize;
  (* anyseq *) reg          ats_resp_bits_fault;
  (* anyseq *) reg          inval_valid;
  (* anyseq *) reg [1:0]    inval_bits_kind;
  (* anyseq *) reg [SB-1:0] inval_bits_sid;
  (* anyseq *) reg [PG-1:0] inval_bits_iova;
  (* anyseq *) reg [5:0]    inval_bits_sizeLog2;

  // ------------------------------------------------------------------ DUT
  wire          req_ready, resp_valid, ats_req_valid, ats_resp_ready, inval_ready, invalDone;
  wire [TB-1:0] resp_bits_tag;
  wire [PP-1:0] resp_bits_ppn;
  wire          resp_bits_perm_r, resp_bits_perm_w, resp_bits_fault;
  wire [1:0]    resp_bits_source;
  wire [AB-1:0] ats_req_bits_tag;
  wire [SB-1:0] ats_req_bits_sid;
  wire [PG-1:0] ats_req_bits_iova;
  wire          ats_req_bits_prefetch;
  wire [31:0]   perf_requests, perf_hits, perf_pbHits, perf_misses, perf_merged, perf_atsRequests,
                perf_prefetches, perf_ptbFullCycles, perf_invalidations, perf_badCompletions,
                perf_badAlign, perf_badInvals, perf_faults, perf_claims, perf_prefetchDropped,
                perf_prefetchUnused, perf_staleCompletions, perf_respStallCycles, perf_atsStallCycles;
  wire [E-1:0]      dbg_tlbValid, dbg_tlbBig;
  wire [E*SB-1:0]   dbg_tlbSid;
  wire [E*PG-1:0]   dbg_tlbPage;
  wire [P_SETS-1:0] dbg_ptagValid;
  wire [P_SETS*SB-1:0] dbg_ptag;
  wire [NB-1:0]     dbg_pbValid, dbg_pbBig;
  wire [NB*SB-1:0]  dbg_pbSid;
  wire [NB*PG-1:0]  dbg_pbPage;
  wire [NS-1:0]     dbg_slotValid, dbg_slotDone, dbg_slotSent, dbg_slotStale;
  wire [NS*SB-1:0]  dbg_slotSid;
  wire [NS*PG-1:0]  dbg_slotPage;
  wire [NW-1:0]     dbg_waiterValid;
  wire              dbg_pipeEmpty;
  wire [E*PP-1:0]   dbg_tlbPpn;
  wire [NB*PP-1:0]  dbg_pbPpn;
  wire [NS-1:0]     dbg_slotCompleting, dbg_slotFault;
  wire [NS*PP-1:0]  dbg_slotFrame;
  wire [NW*TB-1:0]  dbg_waiterTag;
  wire [NW*AB-1:0]  dbg_waiterSlot;
  wire [NW-1:0]     dbg_waiterOut, dbg_waiterReady;
  wire              dbg_drainValid, dbg_atsValid;
  wire [$clog2(NW)-1:0] dbg_drainWaiter;
  wire              dbg_pickValid;
  wire [NW-1:0]     dbg_waiterPicked;
  localparam WB = $clog2(NW + 1);
  wire [NS*WB-1:0]  dbg_slotWaiters;

  DevTlb dut (.*);

  // ------------------------------------------------------------------ environment
  reg past_valid = 1'b0;
  always @(posedge clock) past_valid <= 1'b1;
  always @* begin
    if (!past_valid) assume (reset);
    if (reset) assume (!req_valid && !ats_resp_valid && !inval_valid);
  end

  wire req_fire  = req_valid && req_ready;
  wire resp_fire = resp_valid && resp_ready;
  wire ats_fire  = ats_req_valid && ats_req_ready;
  wire comp_fire = ats_resp_valid && ats_resp_ready;

  // requests waiting for their response, with their SID
  reg [NT-1:0] outstanding;
  reg [SB-1:0] req_sid [0:NT-1];
  // ATS requests sent and not completed, with their SID
  reg [NA-1:0] sent;
  reg [SB-1:0] ats_sid [0:NA-1];
  integer i;
  always @(posedge clock) begin
    if (reset) begin
      outstanding <= 0;
      sent <= 0;
    end else begin
      if (resp_fire) outstanding[resp_bits_tag] <= 1'b0;
      if (req_fire) begin
        outstanding[req_bits_tag] <= 1'b1;
        req_sid[req_bits_tag] <= req_bits_sid;
      end
      if (comp_fire) sent[ats_resp_bits_tag] <= 1'b0;
      if (ats_fire) begin
        sent[ats_req_bits_tag] <= 1'b1;
        ats_sid[ats_req_bits_tag] <= ats_req_bits_sid;
      end
    end
  end
  always @* begin
    if (req_valid) assume (!outstanding[req_bits_tag]);
    if (ats_resp_valid && sent[ats_resp_bits_tag])
      assume (ats_resp_bits_ppn[PP-1 -: SB] == ats_sid[ats_resp_bits_tag]);
  end

  // ------------------------------------------------------------------ properties
  function automatic [SB-1:0] sid_of(input [NS*SB-1:0] v, input integer k);
    sid_of = v[k*SB +: SB];
  endfunction
  function automatic [PG-1:0] page_of(input [NS*PG-1:0] v, input integer k);
    page_of = v[k*PG +: PG];
  endfunction

  always @* if (past_valid && !reset) begin
    // P1 isolation
    if (resp_valid && !resp_bits_fault) assert (resp_bits_ppn[PP-1 -: SB] == req_sid[resp_bits_tag]);
    // P2 one response per request, only for an outstanding tag
    if (resp_valid) assert (outstanding[resp_bits_tag]);
  end
  generate
    genvar pa, pb, pr, pw;
    // P3 no two outstanding slots for one {SID, page}
    for (pa = 0; pa < NS; pa = pa + 1) begin : g_p3a
      for (pb = pa + 1; pb < NS; pb = pb + 1) begin : g_p3b
        always @* if (past_valid && !reset &&
                      dbg_slotValid[pa] && !dbg_slotDone[pa] && dbg_slotValid[pb] && !dbg_slotDone[pb])
          assert (!(sid_of(dbg_slotSid, pa) == sid_of(dbg_slotSid, pb) &&
                    page_of(dbg_slotPage, pa) == page_of(dbg_slotPage, pb)));
      end
    end
    // P4 partitioned rows
    if (P_PARTITIONED) begin : g_p4
      for (pr = 0; pr < P_SETS; pr = pr + 1) begin : g_row
        for (pw = 0; pw < P_WAYS; pw = pw + 1) begin : g_way
          always @* if (past_valid && !reset && dbg_tlbValid[pr * P_WAYS + pw])
            assert (dbg_ptagValid[pr] && dbg_tlbSid[(pr * P_WAYS + pw) * SB +: SB] == dbg_ptag[pr * SB +: SB]);
        end
      end
    end
  endgenerate

  // ------------------------------------------------------------------ strengthening invariants
  // Views without a dbg port, connected by devtlb.sby after `flatten` to the generated
  // registers: the pipeline's stage registers and the hit queue. A renamed register makes the
  // script stop, it cannot silently disconnect.
  wire          pk_c_valid, pk_k_valid, pk_s_valid;
  wire [1:0]    pk_c_kind, pk_k_kind, pk_s_kind;
  wire [TB-1:0] pk_c_tag, pk_k_tag, pk_s_tag;
  wire [SB-1:0] pk_c_sid, pk_k_sid, pk_s_sid;
  wire [AB-1:0] pk_c_ctag, pk_k_ctag, pk_s_ctag;
  wire [PP-1:0] pk_c_cppn, pk_k_cppn, pk_s_cppn;
  wire [TB-1:0] pk_q0_tag, pk_q1_tag;
  wire [PP-1:0] pk_q0_ppn, pk_q1_ppn;
  wire          pk_q0_fault, pk_q1_fault;
  wire [TB-1:0] pk_q_tag [0:1];
  wire [PP-1:0] pk_q_ppn [0:1];
  wire          pk_q_fault [0:1];
  assign pk_q_tag[0] = pk_q0_tag;     assign pk_q_tag[1] = pk_q1_tag;
  assign pk_q_ppn[0] = pk_q0_ppn;     assign pk_q_ppn[1] = pk_q1_ppn;
  assign pk_q_fault[0] = pk_q0_fault; assign pk_q_fault[1] = pk_q1_fault;
  wire          pk_q_head;
  wire [1:0]    pk_q_count;
  wire [TB-1:0] pk_out_tag;
  wire [PP-1:0] pk_out_ppn;
  wire          pk_out_fault;

  localparam [1:0] K_REQ = 2'd0, K_COMP = 2'd1;
  wire          st_valid [0:2];
  wire [1:0]    st_kind  [0:2];
  wire [TB-1:0] st_tag   [0:2];
  wire [SB-1:0] st_sid   [0:2];
  wire [AB-1:0] st_ctag  [0:2];
  wire [PP-1:0] st_cppn  [0:2];
  assign st_valid[0] = pk_c_valid; assign st_kind[0] = pk_c_kind; assign st_tag[0] = pk_c_tag;
  assign st_sid[0] = pk_c_sid; assign st_ctag[0] = pk_c_ctag; assign st_cppn[0] = pk_c_cppn;
  assign st_valid[1] = pk_k_valid; assign st_kind[1] = pk_k_kind; assign st_tag[1] = pk_k_tag;
  assign st_sid[1] = pk_k_sid; assign st_ctag[1] = pk_k_ctag; assign st_cppn[1] = pk_k_cppn;
  assign st_valid[2] = pk_s_valid; assign st_kind[2] = pk_s_kind; assign st_tag[2] = pk_s_tag;
  assign st_sid[2] = pk_s_sid; assign st_ctag[2] = pk_s_ctag; assign st_cppn[2] = pk_s_cppn;

  function automatic [SB-1:0] top_sid(input [PP-1:0] ppn);
    top_sid = ppn[PP-1 -: SB];
  endfunction
  wire [SB-1:0] slot_sid [0:NS-1];
  genvar gi, gj;
  generate
    for (gi = 0; gi < NS; gi = gi + 1) begin : g_slot_sid
      assign slot_sid[gi] = dbg_slotSid[gi*SB +: SB];
    end
  endgenerate

  // I1: every outstanding tag is in exactly one place (a stage, the hit queue, a waiter)
  generate
    for (gi = 0; gi < NT; gi = gi + 1) begin : g_tag
      wire [3:0] places =
        (st_valid[0] && st_kind[0] == K_REQ && st_tag[0] == gi) +
        (st_valid[1] && st_kind[1] == K_REQ && st_tag[1] == gi) +
        (st_valid[2] && st_kind[2] == K_REQ && st_tag[2] == gi) +
        (pk_q_count > 0 && pk_q_tag[pk_q_head] == gi) +
        (pk_q_count > 1 && pk_q_tag[!pk_q_head] == gi) +
        (dbg_waiterValid[0] && dbg_waiterTag[0*TB +: TB] == gi) +
        (dbg_waiterValid[1] && dbg_waiterTag[1*TB +: TB] == gi) +
        (dbg_waiterValid[2] && dbg_waiterTag[2*TB +: TB] == gi) +
        (dbg_waiterValid[3] && dbg_waiterTag[3*TB +: TB] == gi);
      always @* if (past_valid && !reset) assert (places == {3'd0, outstanding[gi]});
    end
  endgenerate

  // I2: SIDs and translations on their way to a response
  generate
    for (gi = 0; gi < 3; gi = gi + 1) begin : g_stage
      always @* if (past_valid && !reset && st_valid[gi]) begin
        if (st_kind[gi] == K_REQ) assert (req_sid[st_tag[gi]] == st_sid[gi]);
        // I6: a completion in flight: its slot is completing, its data carries the slot's SID
        if (st_kind[gi] == K_COMP) begin
          assert (dbg_slotValid[st_ctag[gi]] && dbg_slotCompleting[st_ctag[gi]] && !dbg_slotDone[st_ctag[gi]]);
          assert (st_sid[gi] == slot_sid[st_ctag[gi]] && top_sid(st_cppn[gi]) == st_sid[gi]);
        end
      end
    end
    for (gi = 0; gi < 2; gi = gi + 1) begin : g_hitq
      always @* if (past_valid && !reset && pk_q_count > (gi == pk_q_head ? 0 : 1) && !pk_q_fault[gi])
        assert (top_sid(pk_q_ppn[gi]) == req_sid[pk_q_tag[gi]]);
    end
    for (gi = 0; gi < NW; gi = gi + 1) begin : g_waiter
      wire [AB-1:0] ws = dbg_waiterSlot[gi*AB +: AB];
      always @* if (past_valid && !reset) begin
        if (dbg_waiterValid[gi]) begin
          assert (ws < NS && dbg_slotValid[ws] && slot_sid[ws] == req_sid[dbg_waiterTag[gi*TB +: TB]]);
        end
        if (dbg_waiterValid[gi] && dbg_waiterOut[gi]) assert (dbg_drainValid && dbg_drainWaiter == gi);
        // a waiter is ready exactly when its slot is done; only a ready waiter is in the drain
        if (dbg_waiterValid[gi]) assert (dbg_waiterReady[gi] == dbg_slotDone[ws]);
        if (dbg_waiterValid[gi] && dbg_waiterOut[gi]) assert (dbg_waiterReady[gi]);
      end
    end
  endgenerate
  // I3: the drain register answers its waiter
  always @* if (past_valid && !reset && dbg_drainValid) begin
    assert (dbg_waiterValid[dbg_drainWaiter] && dbg_waiterOut[dbg_drainWaiter]);
    assert (pk_out_tag == dbg_waiterTag[dbg_drainWaiter*TB +: TB]);
    if (!pk_out_fault) assert (top_sid(pk_out_ppn) == req_sid[pk_out_tag]);
  end
  // I3b: the drain's pick register (docs/devtlb.md "Timing": the drain's first stage) holds at
  // most one waiter, a valid and ready one that is not in the drain register (so no waiter is
  // answered twice), and nothing when it is empty
  always @* if (past_valid && !reset) begin
    assert ((dbg_waiterPicked & (dbg_waiterPicked - 1'b1)) == {NW{1'b0}});
    assert (dbg_pickValid == (dbg_waiterPicked != {NW{1'b0}}));
    assert ((dbg_waiterPicked & ~(dbg_waiterValid & dbg_waiterReady & ~dbg_waiterOut)) == {NW{1'b0}});
  end
  // I4: cached translations carry their SID; I5: slots and the ghost ATS state agree
  generate
    for (gi = 0; gi < E; gi = gi + 1) begin : g_tlb
      always @* if (past_valid && !reset && dbg_tlbValid[gi])
        assert (top_sid(dbg_tlbPpn[gi*PP +: PP]) == dbg_tlbSid[gi*SB +: SB]);
    end
    for (gi = 0; gi < NB; gi = gi + 1) begin : g_pb
      always @* if (past_valid && !reset && dbg_pbValid[gi])
        assert (top_sid(dbg_pbPpn[gi*PP +: PP]) == dbg_pbSid[gi*SB +: SB]);
    end
    for (gi = 0; gi < NS; gi = gi + 1) begin : g_slot
      wire [2:0] comps = (st_valid[0] && st_kind[0] == K_COMP && st_ctag[0] == gi) +
                         (st_valid[1] && st_kind[1] == K_COMP && st_ctag[1] == gi) +
                         (st_valid[2] && st_kind[2] == K_COMP && st_ctag[2] == gi);
      wire [WB-1:0] mine = (dbg_waiterValid[0] && dbg_waiterSlot[0*AB +: AB] == gi) +
                           (dbg_waiterValid[1] && dbg_waiterSlot[1*AB +: AB] == gi) +
                           (dbg_waiterValid[2] && dbg_waiterSlot[2*AB +: AB] == gi) +
                           (dbg_waiterValid[3] && dbg_waiterSlot[3*AB +: AB] == gi);
      always @* if (past_valid && !reset) begin
        // the slot's waiter count is the number of waiters that name it (none for a free slot)
        assert (mine == (dbg_slotValid[gi] ? dbg_slotWaiters[gi*WB +: WB] : {WB{1'b0}}));
        // a done slot with no waiter left is freed (a prefetch at its completion)
        if (dbg_slotValid[gi] && dbg_slotDone[gi]) assert (mine != 0);
        // I5b: a demand slot has a waiter from its allocation (its request) until it is freed
        // (no waiter is answered before the slot's completion has acted)
        if (gi < P_PTB_ENTRIES && dbg_slotValid[gi]) assert (mine != 0);
        assert (sent[gi] == (dbg_slotValid[gi] && dbg_slotSent[gi] && !dbg_slotCompleting[gi]));
        if (sent[gi]) assert (ats_sid[gi] == slot_sid[gi]);
        assert (comps == {2'd0, dbg_slotValid[gi] && dbg_slotCompleting[gi] && !dbg_slotDone[gi]});
        if (dbg_slotValid[gi] && dbg_slotDone[gi]) assert (dbg_slotCompleting[gi] && dbg_slotSent[gi]);
        if (dbg_slotValid[gi] && dbg_slotCompleting[gi]) assert (dbg_slotSent[gi]);
        if (dbg_slotValid[gi] && dbg_slotDone[gi] && !dbg_slotFault[gi])
          assert (top_sid(dbg_slotFrame[gi*PP +: PP]) == slot_sid[gi]);
      end
    end
    for (gi = NS; gi < NA; gi = gi + 1) begin : g_no_slot
      always @* if (past_valid && !reset) assert (!sent[gi]);
    end
  endgenerate
  // Q: a valid slot whose ATS request is not sent is in exactly one place: the demand queue,
  // the prefetch queue or the ats_req register (so each request is sent once)
  wire [AB-1:0] pk_dq0, pk_dq1, pk_pq0, pk_pq1;
  wire          pk_dq_head, pk_pq_head;
  wire [1:0]    pk_dq_count, pk_pq_count;
  generate
    for (gi = 0; gi < NS; gi = gi + 1) begin : g_unsent
      wire [2:0] places =
        (pk_dq_count > 0 && (pk_dq_head ? pk_dq1 : pk_dq0) == gi) +
        (pk_dq_count > 1 && (pk_dq_head ? pk_dq0 : pk_dq1) == gi) +
        (pk_pq_count > 0 && (pk_pq_head ? pk_pq1 : pk_pq0) == gi) +
        (pk_pq_count > 1 && (pk_pq_head ? pk_pq0 : pk_pq1) == gi) +
        (dbg_atsValid && ats_req_bits_tag == gi);
      always @* if (past_valid && !reset) assert (places == {2'd0, dbg_slotValid[gi] && !dbg_slotSent[gi]});
    end
  endgenerate
  // RegQueue shape (depth 2): tail = head + count
  wire pk_dq_tail, pk_q_tail;
  always @* if (past_valid && !reset) begin
    assert (pk_q_count <= 2 && pk_q_tail == (pk_q_head ^ pk_q_count[0]));
    assert (pk_dq_tail == (pk_dq_head ^ pk_dq_count[0]));
    assert (pk_dq_count <= 2 && pk_pq_count <= 2);
    if (pk_dq_count > 0) assert ((pk_dq_head ? pk_dq1 : pk_dq0) < P_PTB_ENTRIES);
    if (pk_dq_count > 1) assert ((pk_dq_head ? pk_dq0 : pk_dq1) < P_PTB_ENTRIES);
    if (pk_pq_count > 0) assert ((pk_pq_head ? pk_pq1 : pk_pq0) >= P_PTB_ENTRIES && (pk_pq_head ? pk_pq1 : pk_pq0) < NS);
    if (pk_pq_count > 1) assert ((pk_pq_head ? pk_pq0 : pk_pq1) >= P_PTB_ENTRIES && (pk_pq_head ? pk_pq0 : pk_pq1) < NS);
  end
  always @* if (past_valid && !reset && dbg_atsValid) begin
    assert (ats_req_bits_tag < NS && dbg_slotValid[ats_req_bits_tag] && !dbg_slotSent[ats_req_bits_tag]);
    assert (ats_req_bits_sid == slot_sid[ats_req_bits_tag]);
  end

  // J: the hit path. A write (a completion's fill, an invalidation) lands only in its respond
  // stage and nothing is accepted behind it until it has landed (the write shadow), so the row a
  // request read is the row in storage until it responds, and its registered hit vectors name
  // valid entries of its own SID.
  wire [2:0]    pk_left;
  wire          pk_cm_tlb;        // the fill commit register (dut.cmTlb)
  wire          pk_c_ptv, pk_k_ptok, pk_s_ptok, pk_cm_claim, pk_cm_row;
  wire [SB-1:0] pk_c_ptag, pk_cm_sid;
  wire          pk_c_row, pk_k_row, pk_s_row;
  wire [SB-1:0] pk_rd_sid [0:1];
  wire [PP-1:0] pk_k_rowppn [0:1];
  wire [PP-1:0] pk_s_rowppn [0:1];
  wire          pk_k_hit [0:1];
  wire          pk_k_pbhit [0:1];
  wire          pk_s_won [0:1];
  wire          pk_s_wonpb [0:1];
  wire [SB-1:0] pk_rd0_sid, pk_rd1_sid;
  wire [PP-1:0] pk_k_rowppn0, pk_k_rowppn1, pk_s_rowppn0, pk_s_rowppn1;
  wire          pk_k_hit0, pk_k_hit1, pk_k_pbhit0, pk_k_pbhit1, pk_s_won0, pk_s_won1, pk_s_wonpb0, pk_s_wonpb1;
  assign pk_rd_sid[0] = pk_rd0_sid;     assign pk_rd_sid[1] = pk_rd1_sid;
  assign pk_k_rowppn[0] = pk_k_rowppn0; assign pk_k_rowppn[1] = pk_k_rowppn1;
  assign pk_s_rowppn[0] = pk_s_rowppn0; assign pk_s_rowppn[1] = pk_s_rowppn1;
  assign pk_k_hit[0] = pk_k_hit0;       assign pk_k_hit[1] = pk_k_hit1;
  assign pk_k_pbhit[0] = pk_k_pbhit0;   assign pk_k_pbhit[1] = pk_k_pbhit1;
  assign pk_s_won[0] = pk_s_won0;       assign pk_s_won[1] = pk_s_won1;
  assign pk_s_wonpb[0] = pk_s_wonpb0;   assign pk_s_wonpb[1] = pk_s_wonpb1;
  wire st_row [0:2];
  assign st_row[0] = pk_c_row; assign st_row[1] = pk_k_row; assign st_row[2] = pk_s_row;
  function automatic writer(input v, input [1:0] kind);
    writer = v && kind != K_REQ;
  endfunction
  always @* if (past_valid && !reset) begin
    // the write shadow: where a writer is, by the shadow's count; nothing behind it
    assert (pk_left <= 3'd4);
    if (pk_left == 3'd4) assert (writer(st_valid[0], st_kind[0]));
    if (pk_left == 3'd3) assert (writer(st_valid[1], st_kind[1]) && !st_valid[0]);
    if (pk_left == 3'd2) assert (writer(st_valid[2], st_kind[2]) && !st_valid[0] && !st_valid[1]);
    if (pk_left == 3'd1) assert (!st_valid[0] && !st_valid[1] && !st_valid[2]);
    if (pk_left == 3'd0) assert (!writer(st_valid[0], st_kind[0]) && !writer(st_valid[1], st_kind[1]) &&
                                 !writer(st_valid[2], st_kind[2]));
    // J2 (2026-11-28) a fill in the commit register (one cycle after respond) is the last cycle
    // of its write shadow: no other writer in the stages, nothing accepted behind it
    if (pk_cm_tlb) assert (pk_left == 3'd1);
    // J3 (2026-11-28) the PTag check on its way to the commit: the row's PTag registered at
    // acceptance (read stage), the "PTag ok" bit in match and pick, the claim in the commit
    // register are the storage's (nothing changes a PTag behind a writer: the write shadow)
    if (st_valid[0]) assert (pk_c_ptv == dbg_ptagValid[st_row[0]] && pk_c_ptag == dbg_ptag[st_row[0] * SB +: SB]);
    if (st_valid[1]) assert (pk_k_ptok == (dbg_ptagValid[st_row[1]] && dbg_ptag[st_row[1] * SB +: SB] == st_sid[1]));
    if (st_valid[2]) assert (pk_s_ptok == (dbg_ptagValid[st_row[2]] && dbg_ptag[st_row[2] * SB +: SB] == st_sid[2]));
    if (pk_cm_tlb) assert (pk_cm_claim == !(dbg_ptagValid[pk_cm_row] && dbg_ptag[pk_cm_row * SB +: SB] == pk_cm_sid));
  end
  generate
    for (gi = 0; gi < P_WAYS; gi = gi + 1) begin : g_hitpath
      always @* if (past_valid && !reset) begin
        // the read register holds the request's row as it is in storage (the keys; the
        // translations are read in match and registered in pick, pk_k_rowppn)
        if (st_valid[0])
          assert (pk_rd_sid[gi] == dbg_tlbSid[(st_row[0] * P_WAYS + gi) * SB +: SB]);
        if (st_valid[1] && st_kind[1] == K_REQ) begin
          assert (pk_k_rowppn[gi] == dbg_tlbPpn[(st_row[1] * P_WAYS + gi) * PP +: PP]);
          if (pk_k_hit[gi]) assert (dbg_tlbValid[st_row[1] * P_WAYS + gi] &&
                                    dbg_tlbSid[(st_row[1] * P_WAYS + gi) * SB +: SB] == st_sid[1]);
        end
        if (st_valid[2] && st_kind[2] == K_REQ) begin
          assert (pk_s_rowppn[gi] == dbg_tlbPpn[(st_row[2] * P_WAYS + gi) * PP +: PP]);
          if (pk_s_won[gi]) assert (dbg_tlbValid[st_row[2] * P_WAYS + gi] &&
                                    dbg_tlbSid[(st_row[2] * P_WAYS + gi) * SB +: SB] == st_sid[2]);
        end
      end
    end
    for (gi = 0; gi < NB; gi = gi + 1) begin : g_pbpath
      always @* if (past_valid && !reset) begin
        if (st_valid[1] && st_kind[1] == K_REQ && pk_k_pbhit[gi])
          assert (dbg_pbValid[gi] && dbg_pbSid[gi*SB +: SB] == st_sid[1]);
        if (st_valid[2] && st_kind[2] == K_REQ && pk_s_wonpb[gi])
          assert (dbg_pbValid[gi] && dbg_pbSid[gi*SB +: SB] == st_sid[2]);
      end
    end
  endgenerate


  // ------------------------------------------------------------------ the waiters' response copies,
  // the drain register, the free counts, the send queues' keys (2026-11-28: the per-waiter
  // response copies and the pick register of SlotTable.copyResp; views connected by devtlb.sby)
  wire [PP-1:0] pk_w0_ppn, pk_w1_ppn, pk_w2_ppn, pk_w3_ppn;
  wire          pk_w0_fault, pk_w1_fault, pk_w2_fault, pk_w3_fault;
  wire [PP-1:0] pk_w_ppn [0:3];
  wire          pk_w_fault [0:3];
  assign pk_w_ppn[0] = pk_w0_ppn; assign pk_w_ppn[1] = pk_w1_ppn;
  assign pk_w_ppn[2] = pk_w2_ppn; assign pk_w_ppn[3] = pk_w3_ppn;
  assign pk_w_fault[0] = pk_w0_fault; assign pk_w_fault[1] = pk_w1_fault;
  assign pk_w_fault[2] = pk_w2_fault; assign pk_w_fault[3] = pk_w3_fault;
  wire [AB-1:0] pk_out_slot;
  wire [1:0]    pk_demand_free;
  wire [2:0]    pk_wait_free;
  wire [SB-1:0] pk_dq0_sid, pk_dq1_sid, pk_pq0_sid, pk_pq1_sid;
  wire [PG-1:0] pk_dq0_page, pk_dq1_page, pk_pq0_page, pk_pq1_page;
  generate
    if (NW != 4 || P_PTB_ENTRIES != 2) begin : g_err_views
      $error("devtlb_fv: the pk_* views are written for 4 waiters and 2 demand slots");
    end
  endgenerate
  // I7: a ready waiter's response copy is its slot's translation (written with `ready` at the
  // completion; the slot stays done until its last waiter is answered); no fault in the copy
  // means none in the slot (the copy adds the waiter's permission check)
  generate
    for (gi = 0; gi < NW; gi = gi + 1) begin : g_copy
      wire [AB-1:0] ws = dbg_waiterSlot[gi*AB +: AB];
      always @* if (past_valid && !reset && dbg_waiterValid[gi] && dbg_waiterReady[gi]) begin
        assert (pk_w_ppn[gi] == dbg_slotFrame[ws*PP +: PP]);
        assert (pk_w_fault[gi] || !dbg_slotFault[ws]);
      end
    end
  endgenerate
  // I8: the drain register: its one-hot is its waiter's bit (zero when empty), its slot the
  // waiter's slot, its response the waiter's copy
  always @* if (past_valid && !reset) begin
    assert (dbg_waiterOut == (dbg_drainValid ? ({{(NW-1){1'b0}}, 1'b1} << dbg_drainWaiter) : {NW{1'b0}}));
    if (dbg_drainValid) begin
      assert (pk_out_slot == dbg_waiterSlot[dbg_drainWaiter*AB +: AB]);
      assert (pk_out_ppn == pk_w_ppn[dbg_drainWaiter] && pk_out_fault == pk_w_fault[dbg_drainWaiter]);
    end
  end
  // I9: the free counts are the free demand slots and the free waiters, and cover the requests
  // in flight that may still take one (the acceptance rule, "Acceptance"); the hit queue has a
  // place for every request in flight
  wire [2:0] free_demand = !dbg_slotValid[0] + !dbg_slotValid[1];
  wire [2:0] free_waiters = !dbg_waiterValid[0] + !dbg_waiterValid[1] + !dbg_waiterValid[2] + !dbg_waiterValid[3];
  wire [2:0] may_alloc = (st_valid[0] && st_kind[0] == K_REQ) +
                         (st_valid[1] && st_kind[1] == K_REQ && !(pk_k_hit[0] || pk_k_hit[1] || pk_k_pbhit[0] || pk_k_pbhit[1])) +
                         (st_valid[2] && st_kind[2] == K_REQ && !(pk_s_won[0] || pk_s_won[1] || pk_s_wonpb[0] || pk_s_wonpb[1]));
  wire [2:0] reqs_in_flight = (st_valid[0] && st_kind[0] == K_REQ) + (st_valid[1] && st_kind[1] == K_REQ) +
                              (st_valid[2] && st_kind[2] == K_REQ);
  always @* if (past_valid && !reset) begin
    assert ({1'b0, pk_demand_free} == free_demand);
    assert (pk_wait_free == free_waiters);
    assert (free_demand >= may_alloc && free_waiters >= may_alloc);
    assert ({1'b0, pk_q_count} + reqs_in_flight <= 3'd2);
  end
  // I10: a queued slot's SID and page (carried beside its number) are the slot's
  wire [AB-1:0] q_tag  [0:3];
  wire [SB-1:0] q_sid  [0:3];
  wire [PG-1:0] q_page [0:3];
  wire          q_in   [0:3];
  assign q_tag[0] = pk_dq0; assign q_sid[0] = pk_dq0_sid; assign q_page[0] = pk_dq0_page;
  assign q_tag[1] = pk_dq1; assign q_sid[1] = pk_dq1_sid; assign q_page[1] = pk_dq1_page;
  assign q_tag[2] = pk_pq0; assign q_sid[2] = pk_pq0_sid; assign q_page[2] = pk_pq0_page;
  assign q_tag[3] = pk_pq1; assign q_sid[3] = pk_pq1_sid; assign q_page[3] = pk_pq1_page;
  assign q_in[0] = pk_dq_count > (pk_dq_head ? 1 : 0);
  assign q_in[1] = pk_dq_count > (pk_dq_head ? 0 : 1);
  assign q_in[2] = pk_pq_count > (pk_pq_head ? 1 : 0);
  assign q_in[3] = pk_pq_count > (pk_pq_head ? 0 : 1);
  generate
    for (gi = 0; gi < 4; gi = gi + 1) begin : g_qkey
      always @* if (past_valid && !reset && q_in[gi])
        assert (q_sid[gi] == slot_sid[q_tag[gi]] && q_page[gi] == page_of(dbg_slotPage, q_tag[gi]));
    end
  endgenerate
  always @* if (past_valid && !reset && dbg_atsValid)
    assert (ats_req_bits_iova == page_of(dbg_slotPage, ats_req_bits_tag));

  // T channel rules
  reg              p_resp_stall, p_ats_stall;
  reg [TB+PP+5-1:0] p_resp_bits;
  reg [AB+SB+PG:0] p_ats_bits;
  always @(posedge clock) begin
    p_resp_stall <= !reset && resp_valid && !resp_ready;
    p_ats_stall  <= !reset && ats_req_valid && !ats_req_ready;
    p_resp_bits  <= {resp_bits_tag, resp_bits_ppn, resp_bits_perm_r, resp_bits_perm_w, resp_bits_fault, resp_bits_source};
    p_ats_bits   <= {ats_req_bits_tag, ats_req_bits_sid, ats_req_bits_iova, ats_req_bits_prefetch};
  end
  always @* if (past_valid && !reset) begin
    if (p_resp_stall) assert (resp_valid && p_resp_bits ==
      {resp_bits_tag, resp_bits_ppn, resp_bits_perm_r, resp_bits_perm_w, resp_bits_fault, resp_bits_source});
    if (p_ats_stall) assert (ats_req_valid && p_ats_bits ==
      {ats_req_bits_tag, ats_req_bits_sid, ats_req_bits_iova, ats_req_bits_prefetch});
  end

`ifdef COVER
  always @* if (past_valid && !reset) begin
    cover (resp_fire && resp_bits_source == 2'd0);
    cover (resp_fire && resp_bits_source == 2'd1);
    cover (resp_fire && resp_bits_source == 2'd2);
    // a prefetch's completion filled the PB
    cover (dbg_pbValid != 0);
    cover (perf_merged != 0);
    cover (perf_claims != 0);
    cover (perf_staleCompletions != 0);
    cover (perf_badCompletions != 0);
    cover (invalDone);
    cover (ats_fire && ats_req_bits_prefetch);
  end
`endif
endmodule
