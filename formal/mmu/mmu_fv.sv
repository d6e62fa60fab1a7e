// Formal property wrapper for XlatMmu's glue (formal/mmu/mmu.sby), configuration mmu_formal
// (Sv39 over Sv39x4, idBits / asid / vmid / ccid 2 bits, paBits 41, dbg ports).
//
// Behaviour reference: docs/xlat-mmu.md ("Contexts in the TLBs", "Fences", "Ports", "Decided
// while building", "Proofs"); the property list, the assumptions and which proof guarantees each:
// formal/mmu/README.md. Sizes come from build/rtl/mmu_formal/params.svh.
//
// Method: assume-guarantee (docs/xlat-mmu.md "Proofs", decided). mmu.sby turns the four blocks
// (BabelFishTlb L1 and L2, NestedWalker, PmlLogger) into black boxes and cuts them (yosys
// `cutpoint -blackbox`): every output of a block is free in every cycle. The only state left is
// the glue's: the sequencer, its registers, MemMerge, the CSR window, the counters. The blocks'
// outputs are then constrained by exactly the blocks' proven guarantees (A*, below, each naming
// its proof), and the glue's properties (a)-(e) are proven by k-induction with the strengthening
// invariants I*. Every MMU input is free ($anyseq) in every cycle, except that reset is high in
// the first cycle (later it is free: mid-run resets) and no channel is valid while reset is high.
// The wrapper reads the blocks' channels on the dbg_* ports (XlatMmuDbg.scala: each channel's
// valid, ready and payload, whichever side drives them).
//
// Ghost state: the request in service (g_*: accepted, not yet answered) with its context
// spec_ctx; what each source gave this request (L1 hit, L2 hit, walk: frame, size, permissions,
// the context of the entry or walk it came from); the lookups and the walk in flight, with the
// context they were sent with and the fence epoch they were sent in; the fence in service (f_*)
// with what each block was sent and whether it has landed.
//
// Assumptions (the blocks' guarantees; formal/README.md names the proofs)
//   AT1 (BabelFishTlb R, prove_share / prove_noshare / prove_vmid): a lookup response only for
//       an accepted lookup, one per lookup (lookup_resp_valid only while a lookup is in flight;
//       the response ends it)
//   AT2 (BabelFishTlb P6 and F, prove_vmid): a hit is served by an entry of the lookup's vmid
//       tag (the MMU's ctx): tlb_hit_ctx, the context of the entry that served the hit (free),
//       equals the context the lookup was sent with
//   AW1 (NestedWalker P2 / P3, walker_prove_safety): a walk response only while a walk is in
//       flight, one per walk
//   AW2 (NestedWalker P6 (c) and P9, walker_prove_safety): a walk's translation comes from the
//       tables of its request and from cache entries of its vmid and mode class: walk_src_ctx,
//       the context the answer came from (free), equals spec_ctx(mode, vmid) of the walk request
//   (PmlLogger: nothing is assumed; its dirty / memory / CSR channels are free. The glue's
//   properties do not depend on it; its guarantee (every dirty event logged or counted,
//   pml_prove) holds behind the MMU unchanged.)
//
// Properties (asserted; proven by k-induction in mmu_prove)
//   (a) contexts
//     A1 the ctx the MMU keeps for a request (dbg_ctx) is spec_ctx(mode, vmid) = {mode, vmid}
//        with vmid 0 in mode 1 (docs "Contexts in the TLBs"), from acceptance to the response
//     A2 every TLB lookup carries the request's ctx, vpn (va[vpnBits+11:12]), pcid / ccid (0 in
//        mode 2), pcIdx, pcIdxValid, cmd and privilege; a lookup only for a request in a
//        translated mode whose va is in the mode's range (decided 6), never for bare / cmd 3
//     A3 spec_ctx is injective over the table: two (mode, vmid) pairs of modes 1-3 give one ctx
//        only when they are one context (both mode 1, or equal mode and vmid); symbolic pairs
//   (b) fills
//     B1 every fill (L1, L2) is offered only while a request is in service and carries its ctx,
//        vpn, pcid / ccid (0 and global in mode 2, else non-global), own 1
//     B2 an L2 fill only after a successful walk of this request; an L1 fill after a successful
//        walk or an L2 hit of it; the frame (aligned to the size), size and permissions are the
//        walk's if it walked (its size 3, a 512 GiB leaf, as 2: its 1 GiB part, docs M7), else
//        the L2 hit's; D is the command's write bit after a walk,
//        the L2 entry's after an L2 hit; never after a fault
//     B3 the walk request carries the request: gva, asid, vmid (0 in mode 1, decided 12), the
//        roots, cmd, privilege, mode, flags; only for a request in a translated mode, not cmd 3,
//        and only while no walk is in flight
//   (c) fences
//     C1 a fence is accepted only with nothing in flight: no request in service, no lookup, no
//        walk, no other fence (the drain); and before a request offered in the same cycle (a
//        request is never accepted while a fence is offered)
//     C2 while a fence is served nothing else moves: no request accepted, no lookup, fill or
//        walk request; invalidations and the walker flush only during a fence
//     C3 every invalidation sent to L1 / L2 and the walker flush are the fence's row of
//        docs/xlat-mmu.md "Fence kinds" (kind, ctx, vpn, pcid, ccid; flush kind, vmid, asid;
//        kinds 13-15 as 8), in its order (the second invalidation after the first)
//     C4 fenceDone only for a fence in service (one pulse per fence), and only when L1 and L2 were
//        each sent every invalidation of the row and have each shown inval_ready again after
//        the last one (landed: BabelFishTlb T and P4), and the walker accepted the row's flush
//        (NestedWalker P6)
//     C5 nothing from before a fence is used after it: every lookup response and walk response
//        the MMU takes belongs to a lookup / walk sent in the current fence epoch
//   (d) responses
//     D1 a response only for the request in service, with its id; the response ends it, so no
//        second response and no response without a request; one request at a time (decided 1)
//     D2 a response offered keeps valid and its bits until taken
//   (e) isolation end to end
//     E1 a successful response of a translated mode is from its source's answer for this
//        request: source L1 / L2 -> that TLB hit for this request, walk -> this request's walk;
//        pa, pageSize equal that answer's (a walk's 3 as 2, as in B2); the context that answer
//        came from (AT2 / AW2) is the
//        request's spec_ctx
//     E2 a fault response: cmd 3 -> fault 4 from L1 (decided 4); bare beyond paBits -> fault 3
//        (decided 5); otherwise only from this request's faulting walk, with its stage and
//        faultGpa and the kind of decided 7
//     E3 bare: pa = va[paBits-1:12], source L1, no lookup, walk or fill (and cmd 3 likewise)
// Strengthening invariants (asserted, so proven too)
//   I1 dbg_state is a legal MmuState; in service <-> Idle < state <= Resp; fence <-> FenceInv..
//   I2 a lookup is in flight exactly in L1Wait / L2Wait; the walk exactly in WalkWait
//   I3 dbg_req is the ghost request; resp_bits_id its id; in L1Req no source has answered yet,
//      in L2Req no L2 or walk answer, in WalkReq / WalkWait no walk answer
//   I4 in Fill and Resp the response register holds E1 / E2 / E3's answer (checked there, not
//      only when offered)
//   I5 the fence register and its plan are the ghost fence's row; the steps and sent flags
//      match what the ghost counted; no invalidation in flight outside a fence step
// Covers: end of the file (mmu_cover).
`default_nettype none

module mmu_fv (
  input wire clock
);
`include "params.svh"

  localparam IB   = P_ID_BITS;
  localparam AB   = P_ASID_BITS;
  localparam VB   = P_VMID_BITS;
  localparam CB   = P_CCID_BITS;
  localparam XB   = $clog2(P_PC_BITS) > 0 ? $clog2(P_PC_BITS) : 1;
  localparam PA   = P_PA_BITS;
  localparam PPN  = P_PA_BITS - 12;
  localparam VPN  = P_VPN_BITS;
  localparam CTX  = P_CTX_BITS;
  localparam S1R  = P_S1_ROOT_BITS;
  localparam S2R  = P_S2_ROOT_BITS;
  localparam MIB  = P_MEM_ID_BITS;
  localparam GVA  = 39;                       // Sv39: bits 63..38 equal
  localparam GPA  = P_GPA_BITS;

  generate
    if (P_FORMAL_PORTS == 0) begin : g_err_dbg
      $error("mmu_fv: the configuration has no dbg_* ports");
    end
    if (CTX != VB + 2 || P_GUEST_LEVELS != 3 || P_HOST_LEVELS != 3) begin : g_err_cfg
      $error("mmu_fv: written for Sv39 over Sv39x4 with ctx = {mode class, vmid} (mmu_formal)");
    end
  endgenerate

  // MmuState (rtl/src/main/scala/xlat/mmu/XlatMmu.scala, in declaration order)
  localparam [3:0] S_IDLE = 4'd0, S_L1REQ = 4'd1, S_L1WAIT = 4'd2, S_L2REQ = 4'd3, S_L2WAIT = 4'd4,
                   S_WALKREQ = 4'd5, S_WALKWAIT = 4'd6, S_FILL = 4'd7, S_RESP = 4'd8,
                   S_FENCEINV = 4'd9, S_FENCEWAIT = 4'd10, S_FENCEDONE = 4'd11;

  // ------------------------------------------------------------------ free inputs
  (* anyseq *) reg           reset;
  (* anyseq *) reg           req_valid;
  (* anyseq *) reg [IB-1:0]  req_bits_id;
  (* anyseq *) reg [63:0]    req_bits_va;
  (* anyseq *) reg [1:0]     req_bits_cmd;
  (* anyseq *) reg           req_bits_priv;
  (* anyseq *) reg [1:0]     req_bits_mode;
  (* anyseq *) reg [AB-1:0]  req_bits_asid;
  (* anyseq *) reg [VB-1:0]  req_bits_vmid;
  (* anyseq *) reg [CB-1:0]  req_bits_ccid;
  (* anyseq *) reg [XB-1:0]  req_bits_pcIdx;
  (* anyseq *) reg           req_bits_pcIdxValid;
  (* anyseq *) reg [S1R-1:0] req_bits_s1Root;
  (* anyseq *) reg [S2R-1:0] req_bits_s2Root;
  (* anyseq *) reg           req_bits_flags_sum, req_bits_flags_mxr, req_bits_flags_vmxr, req_bits_flags_wp,
                             req_bits_flags_smep, req_bits_flags_smap, req_bits_flags_nxe;
  (* anyseq *) reg           resp_ready;
  (* anyseq *) reg           fence_valid;
  (* anyseq *) reg [3:0]     fence_bits_kind;
  (* anyseq *) reg [VPN-1:0] fence_bits_vpn;
  (* anyseq *) reg [AB-1:0]  fence_bits_asid;
  (* anyseq *) reg [VB-1:0]  fence_bits_vmid;
  (* anyseq *) reg [CB-1:0]  fence_bits_ccid;
  (* anyseq *) reg           mem_req_ready;
  (* anyseq *) reg           mem_resp_valid;
  (* anyseq *) reg [MIB-1:0] mem_resp_bits_id;
  (* anyseq *) reg [63:0]    mem_resp_bits_rdata;
  (* anyseq *) reg           mem_resp_bits_error;
  (* anyseq *) reg           csr_req_valid;
  (* anyseq *) reg [15:0]    csr_req_bits_addr;
  (* anyseq *) reg           csr_req_bits_write;
  (* anyseq *) reg [63:0]    csr_req_bits_wdata;
  (* anyseq *) reg           exit_ready;
  (* anyseq *) reg           guestIrq_ready;
  // the abstract blocks' ghost outputs (constrained by AT2 / AW2)
  (* anyseq *) reg [CTX-1:0] l1_hit_ctx, l2_hit_ctx, walk_src_ctx;

  // ------------------------------------------------------------------ DUT (every port by name)
`include "mmu_ports.svh"

  // ------------------------------------------------------------------ environment
  reg f_past_valid = 1'b0;
  always @(posedge clock) f_past_valid <= 1'b1;
  wire live = f_past_valid && !reset;

  always @* begin
    if (!f_past_valid) assume (reset);
    if (reset) assume (!req_valid && !fence_valid && !mem_resp_valid && !csr_req_valid);
  end

  wire req_fire   = req_valid && req_ready;
  wire resp_fire  = resp_valid && resp_ready;
  wire fence_fire = fence_valid && fence_ready;
  wire l1_lk_fire = dbg_l1_lookup_req_valid && dbg_l1_lookup_req_ready;
  wire l2_lk_fire = dbg_l2_lookup_req_valid && dbg_l2_lookup_req_ready;
  wire l1_rv      = dbg_l1_lookup_resp_valid;
  wire l2_rv      = dbg_l2_lookup_resp_valid;
  wire l1_fill_fire = dbg_l1_fill_valid && dbg_l1_fill_ready;
  wire l2_fill_fire = dbg_l2_fill_valid && dbg_l2_fill_ready;
  wire l1_inv_fire  = dbg_l1_inval_valid && dbg_l1_inval_ready;
  wire l2_inv_fire  = dbg_l2_inval_valid && dbg_l2_inval_ready;
  wire wk_fire      = dbg_walk_req_valid && dbg_walk_req_ready;
  wire wr_fire      = dbg_walk_resp_valid && dbg_walk_resp_ready;
  wire fl_fire      = dbg_walk_flush_valid && dbg_walk_flush_ready;

  // ------------------------------------------------------------------ the specification's functions
  // docs/xlat-mmu.md "Contexts in the TLBs": {mode class, vmid}, vmid 0 for stage 1 only
  function automatic [CTX-1:0] spec_ctx(input [1:0] mode, input [VB-1:0] vmid);
    spec_ctx = {mode, mode == 2'd1 ? {VB{1'b0}} : vmid};
  endfunction
  // the mode's address check (decided 6): Sv39 canonical (modes 1, 3), below 2^gpaBits (mode 2)
  function automatic in_range(input [1:0] mode, input [63:0] va);
    in_range = mode == 2'd2 ? va[63:GPA] == 0
                            : (va[63:GVA-1] == 0 || va[63:GVA-1] == {(64-GVA+1){1'b1}});
  endfunction
  function automatic [PPN-1:0] align(input [PPN-1:0] ppn, input [1:0] size);
    align = size == 2'd1 ? {ppn[PPN-1:9], 9'd0} : size == 2'd2 ? {ppn[PPN-1:18], 18'd0} : ppn;
  endfunction
  // the walker's fault -> the response's (decided 7)
  function automatic [2:0] map_fault(input [2:0] f, input stage);
    map_fault = f == 3'd1 ? 3'd1 : f == 3'd2 ? 3'd2 : f == 3'd3 ? 3'd3 :
                f == 3'd5 ? (stage ? 3'd2 : 3'd1) : 3'd4;
  endfunction
  // docs/xlat-mmu.md "Fence kinds": how many TLB invalidations (each to L1 and L2), and the
  // walker flush (kinds 13-15 act as 8)
  function automatic [3:0] eff_kind(input [3:0] k);
    eff_kind = k > 4'd12 ? 4'd8 : k;
  endfunction
  function automatic [1:0] inv_need(input [3:0] k);
    inv_need = (eff_kind(k) >= 4'd9 && eff_kind(k) <= 4'd12) ? 2'd2 : 2'd1;
  endfunction
  function automatic flush_need(input [3:0] k);
    flush_need = eff_kind(k) != 4'd11 && eff_kind(k) != 4'd12;
  endfunction
  // BabelFishTlb kind of invalidation `step` (0, 1)
  function automatic [2:0] inv_kind(input [3:0] k, input step);
    reg [3:0] e;
    begin
      e = eff_kind(k);
      if (e <= 4'd7)       inv_kind = e[1:0] == 2'd0 ? 3'd6 : e[1:0] == 2'd1 ? 3'd2 : e[1:0] == 2'd2 ? 3'd7 : 3'd4;
      else if (e == 4'd8)  inv_kind = 3'd0;
      else if (e <= 4'd10) inv_kind = 3'd6;
      else if (e == 4'd11) inv_kind = 3'd3;
      else                 inv_kind = 3'd5;
    end
  endfunction
  // the ctx an invalidation names (don't care for kind 0, all)
  function automatic [CTX-1:0] inv_ctx(input [3:0] k, input step, input [VB-1:0] v);
    reg [3:0] e;
    begin
      e = eff_kind(k);
      if (e <= 4'd3)       inv_ctx = spec_ctx(2'd1, v);
      else if (e <= 4'd7)  inv_ctx = spec_ctx(2'd3, v);
      else if (e <= 4'd10) inv_ctx = step ? spec_ctx(2'd2, v) : spec_ctx(2'd3, v);
      else if (e <= 4'd12) inv_ctx = step ? spec_ctx(2'd3, v) : spec_ctx(2'd1, v);
      else                 inv_ctx = {CTX{1'b0}};
    end
  endfunction
  // walker flush: kind (0 All, 1 Vmid, 2 VmidAsid) and vmid
  function automatic [1:0] fl_kind(input [3:0] k);
    reg [3:0] e;
    begin
      e = eff_kind(k);
      fl_kind = e <= 4'd7 ? (e[0] ? 2'd2 : 2'd1) : e == 4'd8 ? 2'd0 : 2'd1;
    end
  endfunction
  function automatic [VB-1:0] fl_vmid(input [3:0] k, input [VB-1:0] v);
    fl_vmid = eff_kind(k) <= 4'd3 ? {VB{1'b0}} : v;
  endfunction

  // ------------------------------------------------------------------ ghost: the request in service
  reg           g_busy;
  reg [IB-1:0]  g_id;
  reg [63:0]    g_va;
  reg [1:0]     g_cmd, g_mode;
  reg           g_priv;
  reg [AB-1:0]  g_asid;
  reg [VB-1:0]  g_vmid;
  reg [CB-1:0]  g_ccid;
  reg [XB-1:0]  g_pcIdx;
  reg           g_pcIdxValid;
  reg [S1R-1:0] g_s1;
  reg [S2R-1:0] g_s2;
  reg [6:0]     g_flags;
  wire [CTX-1:0] g_ctx = spec_ctx(g_mode, g_vmid);
  wire [VPN-1:0] g_vpn = g_va[VPN+11:12];
  wire           g_s2only = g_mode == 2'd2;
  wire           g_xlat = g_cmd != 2'd3 && g_mode != 2'd0;   // looked up or walked at all
  wire           g_bare_wide = g_va[63:PA] != 0;
  wire           g_inr = in_range(g_mode, g_va);

  // what each source answered this request (the latest answer; one of each in this design)
  reg           s1_hit, s2_hit, sw_got, sw_fault;
  reg [PPN-1:0] s1_ppn, s2_ppn, sw_ppn;
  reg [1:0]     s1_size, s2_size, sw_size;
  reg [3:0]     s1_perm, s2_perm, sw_perm;
  reg           s2_dirty;
  reg [CTX-1:0] s1_ctx, s2_ctx, sw_ctx;
  reg [2:0]     sw_fkind;
  reg           sw_fstage;
  reg [63:0]    sw_fgpa;

  wire [2:0]     wr_fkind = map_fault(dbg_walk_resp_bits_fault, dbg_walk_resp_bits_faultStage);

  // lookups / walk in flight, the ctx they were sent with, the fence epoch they were sent in
  reg [1:0]     l1_out, l2_out;
  reg [CTX-1:0] l1_lk_ctx, l2_lk_ctx;
  reg           l1_lk_ep, l2_lk_ep;
  reg           w_out, w_ep;
  reg [1:0]     w_mode;
  reg [VB-1:0]  w_vmid;
  reg           epoch;

  // the fence in service
  reg           f_busy;
  reg [3:0]     f_kind;
  reg [VPN-1:0] f_vpn;
  reg [AB-1:0]  f_asid;
  reg [VB-1:0]  f_vmid;
  reg [CB-1:0]  f_ccid;
  reg [1:0]     f_l1_cnt, f_l2_cnt;
  reg           f_l1_pend, f_l2_pend, f_fl_cnt;
  reg           f_s0;             // the first invalidation has landed in both TLBs
  wire          f_s0_now = f_s0 || (f_l1_cnt == 2'd1 && f_l2_cnt == 2'd1 && !f_l1_pend && !f_l2_pend);

  always @(posedge clock) begin
    if (reset) begin
      g_busy <= 1'b0;
      s1_hit <= 1'b0; s2_hit <= 1'b0; sw_got <= 1'b0; sw_fault <= 1'b0;
      l1_out <= 2'd0; l2_out <= 2'd0; w_out <= 1'b0; epoch <= 1'b0;
      f_busy <= 1'b0; f_l1_cnt <= 2'd0; f_l2_cnt <= 2'd0; f_l1_pend <= 1'b0; f_l2_pend <= 1'b0;
      f_fl_cnt <= 1'b0; f_s0 <= 1'b0;
    end else begin
      if (resp_fire) g_busy <= 1'b0;
      if (req_fire) begin
        g_busy <= 1'b1; g_id <= req_bits_id; g_va <= req_bits_va; g_cmd <= req_bits_cmd;
        g_mode <= req_bits_mode; g_priv <= req_bits_priv; g_asid <= req_bits_asid;
        g_vmid <= req_bits_vmid; g_ccid <= req_bits_ccid; g_pcIdx <= req_bits_pcIdx;
        g_pcIdxValid <= req_bits_pcIdxValid; g_s1 <= req_bits_s1Root; g_s2 <= req_bits_s2Root;
        g_flags <= {req_bits_flags_nxe, req_bits_flags_smap, req_bits_flags_smep, req_bits_flags_wp,
                    req_bits_flags_vmxr, req_bits_flags_mxr, req_bits_flags_sum};
        s1_hit <= 1'b0; s2_hit <= 1'b0; sw_got <= 1'b0; sw_fault <= 1'b0;
      end
      // answers (AT1 / AW1: only for what is in flight)
      if (l1_rv && dbg_l1_lookup_resp_bits_hit) begin
        s1_hit <= 1'b1; s1_ppn <= dbg_l1_lookup_resp_bits_ppn; s1_size <= dbg_l1_lookup_resp_bits_pageSize;
        s1_perm <= {dbg_l1_lookup_resp_bits_perm_u, dbg_l1_lookup_resp_bits_perm_x,
                    dbg_l1_lookup_resp_bits_perm_w, dbg_l1_lookup_resp_bits_perm_r};
        s1_ctx <= l1_hit_ctx;
      end
      if (l2_rv && dbg_l2_lookup_resp_bits_hit) begin
        s2_hit <= 1'b1; s2_ppn <= dbg_l2_lookup_resp_bits_ppn; s2_size <= dbg_l2_lookup_resp_bits_pageSize;
        s2_perm <= {dbg_l2_lookup_resp_bits_perm_u, dbg_l2_lookup_resp_bits_perm_x,
                    dbg_l2_lookup_resp_bits_perm_w, dbg_l2_lookup_resp_bits_perm_r};
        s2_dirty <= dbg_l2_lookup_resp_bits_dirty;
        s2_ctx <= l2_hit_ctx;
      end
      if (wr_fire) begin
        sw_got <= 1'b1; sw_fault <= dbg_walk_resp_bits_fault != 3'd0;
        // the size the MMU uses: a 512 GiB leaf (3) as its 1 GiB part (docs M7)
        sw_ppn <= dbg_walk_resp_bits_ppn;
        sw_size <= dbg_walk_resp_bits_pageSize == 2'd3 ? 2'd2 : dbg_walk_resp_bits_pageSize;
        sw_perm <= {dbg_walk_resp_bits_perm_u, dbg_walk_resp_bits_perm_x,
                    dbg_walk_resp_bits_perm_w, dbg_walk_resp_bits_perm_r};
        sw_ctx <= walk_src_ctx;
        sw_fkind <= wr_fkind;
        sw_fstage <= dbg_walk_resp_bits_faultStage; sw_fgpa <= dbg_walk_resp_bits_faultGpa;
      end
      // in flight
      l1_out <= l1_out + (l1_lk_fire ? 2'd1 : 2'd0) - (l1_rv ? 2'd1 : 2'd0);
      l2_out <= l2_out + (l2_lk_fire ? 2'd1 : 2'd0) - (l2_rv ? 2'd1 : 2'd0);
      if (l1_lk_fire) begin l1_lk_ctx <= dbg_l1_lookup_req_bits_vmid; l1_lk_ep <= epoch; end
      if (l2_lk_fire) begin l2_lk_ctx <= dbg_l2_lookup_req_bits_vmid; l2_lk_ep <= epoch; end
      if (wr_fire) w_out <= 1'b0;
      if (wk_fire) begin
        w_out <= 1'b1; w_ep <= epoch; w_mode <= dbg_walk_req_bits_mode; w_vmid <= dbg_walk_req_bits_vmid;
      end
      // fences
      if (fence_fire) begin
        epoch <= !epoch;
        f_busy <= 1'b1; f_kind <= fence_bits_kind; f_vpn <= fence_bits_vpn; f_asid <= fence_bits_asid;
        f_vmid <= fence_bits_vmid; f_ccid <= fence_bits_ccid;
        f_l1_cnt <= 2'd0; f_l2_cnt <= 2'd0; f_fl_cnt <= 1'b0; f_s0 <= 1'b0;
      end else if (f_s0_now) f_s0 <= 1'b1;
      if (fenceDone) f_busy <= 1'b0;
      if (l1_inv_fire) begin f_l1_cnt <= f_l1_cnt + 2'd1; f_l1_pend <= 1'b1; end
      else if (dbg_l1_inval_ready) f_l1_pend <= 1'b0;
      if (l2_inv_fire) begin f_l2_cnt <= f_l2_cnt + 2'd1; f_l2_pend <= 1'b1; end
      else if (dbg_l2_inval_ready) f_l2_pend <= 1'b0;
      if (fl_fire) f_fl_cnt <= 1'b1;
    end
  end

  wire [CTX-1:0] w_ctx = spec_ctx(w_mode, w_vmid);

  // ------------------------------------------------------------------ assumptions: the blocks' guarantees
  always @* begin
    if (live) begin
      // AT1 (BabelFishTlb R): a lookup response only for a lookup in flight
      if (l1_rv) assume (l1_out != 2'd0);
      if (l2_rv) assume (l2_out != 2'd0);
      // AT2 (BabelFishTlb P6): the entry that hit has the lookup's vmid tag
      if (l1_rv && dbg_l1_lookup_resp_bits_hit) assume (l1_hit_ctx == l1_lk_ctx);
      if (l2_rv && dbg_l2_lookup_resp_bits_hit) assume (l2_hit_ctx == l2_lk_ctx);
      // AW1 (NestedWalker P2 / P3): a walk response only for the walk in flight
      if (dbg_walk_resp_valid) assume (w_out);
      // AW2 (NestedWalker P6 (c), P9): the answer comes from the walk's own context
      if (dbg_walk_resp_valid) assume (walk_src_ctx == w_ctx);
    end
  end

  // ------------------------------------------------------------------ properties
  wire [3:0] st = dbg_state;
  wire in_service = st >= S_L1REQ && st <= S_RESP;
  wire in_fence   = st >= S_FENCEINV && st <= S_FENCEDONE;
  wire [6:0] d_flags = {dbg_req_flags_nxe, dbg_req_flags_smap, dbg_req_flags_smep, dbg_req_flags_wp,
                        dbg_req_flags_vmxr, dbg_req_flags_mxr, dbg_req_flags_sum};
  wire [6:0] w_flags = {dbg_walk_req_bits_flags_nxe, dbg_walk_req_bits_flags_smap,
                        dbg_walk_req_bits_flags_smep, dbg_walk_req_bits_flags_wp,
                        dbg_walk_req_bits_flags_vmxr, dbg_walk_req_bits_flags_mxr,
                        dbg_walk_req_bits_flags_sum};
  wire [3:0] l1f_perm = {dbg_l1_fill_bits_perm_u, dbg_l1_fill_bits_perm_x, dbg_l1_fill_bits_perm_w,
                         dbg_l1_fill_bits_perm_r};
  wire [3:0] l2f_perm = {dbg_l2_fill_bits_perm_u, dbg_l2_fill_bits_perm_x, dbg_l2_fill_bits_perm_w,
                         dbg_l2_fill_bits_perm_r};
  // the answer a fill must carry: the walk's if this request walked, else the L2 hit's
  wire [PPN-1:0] src_ppn  = sw_got ? sw_ppn : s2_ppn;
  wire [1:0]     src_size = sw_got ? sw_size : s2_size;
  wire [3:0]     src_perm = sw_got ? sw_perm : s2_perm;
  wire           src_dirty = sw_got ? g_cmd == 2'd1 : s2_dirty;

  // A3 (injectivity of spec_ctx over the table), on symbolic pairs
  (* anyconst *) reg [1:0]    a3_m1, a3_m2;
  (* anyconst *) reg [VB-1:0] a3_v1, a3_v2;
  wire a3_same = (a3_m1 == 2'd1 && a3_m2 == 2'd1) || (a3_m1 == a3_m2 && a3_v1 == a3_v2);
  wire [CTX-1:0] a3_c1 = spec_ctx(a3_m1, a3_v1), a3_c2 = spec_ctx(a3_m2, a3_v2);

  // the response register's answer (E1 - E3), checked in Fill and Resp (I4) and when offered
  wire answer_ok =
      resp_bits_id == g_id &&
      (g_cmd == 2'd3 ? (resp_bits_fault == 3'd4 && resp_bits_source == 2'd0)
     : g_mode == 2'd0 ? (resp_bits_source == 2'd0 &&
                         (g_bare_wide ? (resp_bits_fault == 3'd3 && resp_bits_pa == 0)
                                      : (resp_bits_fault == 3'd0 && resp_bits_pa == g_va[PA-1:12])))
     : resp_bits_fault == 3'd0 ?
         (resp_bits_source == 2'd0 ? (s1_hit && resp_bits_pa == s1_ppn && resp_bits_pageSize == s1_size && s1_ctx == g_ctx)
        : resp_bits_source == 2'd1 ? (s2_hit && resp_bits_pa == s2_ppn && resp_bits_pageSize == s2_size && s2_ctx == g_ctx)
        : resp_bits_source == 2'd2 ? (sw_got && !sw_fault && resp_bits_pa == sw_ppn && resp_bits_pageSize == sw_size
                                      && sw_ctx == g_ctx)
        : 1'b0)
     : (resp_bits_source == 2'd2 && sw_got && sw_fault && resp_bits_fault == sw_fkind &&
        resp_bits_faultStage == sw_fstage && resp_bits_faultGpa == sw_fgpa));

  // a fill's identity and answer (B1, B2), checked in Fill (I4) and when offered
  wire l1_fill_ok = dbg_l1_fill_bits_vmid == g_ctx && dbg_l1_fill_bits_vpn == g_vpn &&
      dbg_l1_fill_bits_pcid == (g_s2only ? {AB{1'b0}} : g_asid) &&
      dbg_l1_fill_bits_ccid == (g_s2only ? {CB{1'b0}} : g_ccid) &&
      dbg_l1_fill_bits_global == g_s2only && dbg_l1_fill_bits_own &&
      (sw_got ? !sw_fault : s2_hit) && dbg_l1_fill_bits_ppn == align(src_ppn, src_size) &&
      dbg_l1_fill_bits_pageSize == src_size && l1f_perm == src_perm && dbg_l1_fill_bits_dirty == src_dirty;
  wire l2_fill_ok = dbg_l2_fill_bits_vmid == g_ctx && dbg_l2_fill_bits_vpn == g_vpn &&
      dbg_l2_fill_bits_pcid == (g_s2only ? {AB{1'b0}} : g_asid) &&
      dbg_l2_fill_bits_ccid == (g_s2only ? {CB{1'b0}} : g_ccid) &&
      dbg_l2_fill_bits_global == g_s2only && dbg_l2_fill_bits_own &&
      sw_got && !sw_fault && dbg_l2_fill_bits_ppn == align(sw_ppn, sw_size) &&
      dbg_l2_fill_bits_pageSize == sw_size && l2f_perm == sw_perm && dbg_l2_fill_bits_dirty == (g_cmd == 2'd1);

  // the lookups' request fields (A2)
  wire l1_lk_ok = dbg_l1_lookup_req_bits_vmid == g_ctx && dbg_l1_lookup_req_bits_vpn == g_vpn &&
      dbg_l1_lookup_req_bits_pcid == (g_s2only ? {AB{1'b0}} : g_asid) &&
      dbg_l1_lookup_req_bits_ccid == (g_s2only ? {CB{1'b0}} : g_ccid) &&
      dbg_l1_lookup_req_bits_pcIdx == g_pcIdx && dbg_l1_lookup_req_bits_pcIdxValid == g_pcIdxValid &&
      dbg_l1_lookup_req_bits_cmd == g_cmd && dbg_l1_lookup_req_bits_user == g_priv;
  wire l2_lk_ok = dbg_l2_lookup_req_bits_vmid == g_ctx && dbg_l2_lookup_req_bits_vpn == g_vpn &&
      dbg_l2_lookup_req_bits_pcid == (g_s2only ? {AB{1'b0}} : g_asid) &&
      dbg_l2_lookup_req_bits_ccid == (g_s2only ? {CB{1'b0}} : g_ccid) &&
      dbg_l2_lookup_req_bits_pcIdx == g_pcIdx && dbg_l2_lookup_req_bits_pcIdxValid == g_pcIdxValid &&
      dbg_l2_lookup_req_bits_cmd == g_cmd && dbg_l2_lookup_req_bits_user == g_priv;
  // the walk request (B3)
  wire wk_ok = dbg_walk_req_bits_gva == g_va && dbg_walk_req_bits_asid == g_asid &&
      dbg_walk_req_bits_vmid == (g_mode == 2'd1 ? {VB{1'b0}} : g_vmid) &&
      dbg_walk_req_bits_gRoot == g_s1 && dbg_walk_req_bits_hRoot == g_s2 &&
      dbg_walk_req_bits_cmd == g_cmd && dbg_walk_req_bits_user == g_priv &&
      dbg_walk_req_bits_mode == g_mode && w_flags == g_flags;

  // an invalidation of step `s` of the fence (C3)
  wire [2:0]     f_kind0 = inv_kind(f_kind, 1'b0), f_kind1 = inv_kind(f_kind, 1'b1);
  wire [CTX-1:0] f_ctx0 = inv_ctx(f_kind, 1'b0, f_vmid), f_ctx1 = inv_ctx(f_kind, 1'b1, f_vmid);
  wire [1:0]     f_need = inv_need(f_kind);
  wire           f_fneed = flush_need(f_kind);
  wire [1:0]     f_flkind = fl_kind(f_kind);
  wire [VB-1:0]  f_flvmid = fl_vmid(f_kind, f_vmid);
  wire l1_inv_ok = dbg_l1_inval_bits_kind == (f_l1_cnt[0] ? f_kind1 : f_kind0) &&
      (dbg_l1_inval_bits_kind == 3'd0 || dbg_l1_inval_bits_vmid == (f_l1_cnt[0] ? f_ctx1 : f_ctx0)) &&
      dbg_l1_inval_bits_vpn == f_vpn && dbg_l1_inval_bits_pcid == f_asid && dbg_l1_inval_bits_ccid == f_ccid;
  wire l2_inv_ok = dbg_l2_inval_bits_kind == (f_l2_cnt[0] ? f_kind1 : f_kind0) &&
      (dbg_l2_inval_bits_kind == 3'd0 || dbg_l2_inval_bits_vmid == (f_l2_cnt[0] ? f_ctx1 : f_ctx0)) &&
      dbg_l2_inval_bits_vpn == f_vpn && dbg_l2_inval_bits_pcid == f_asid && dbg_l2_inval_bits_ccid == f_ccid;
  wire fl_ok = dbg_walk_flush_bits_kind == f_flkind &&
               (f_flkind == 2'd0 || dbg_walk_flush_bits_vmid == f_flvmid) && dbg_walk_flush_bits_asid == f_asid;
  // the plan register is the row (I5)
  wire plan_ok = dbg_fence_kind == f_kind && dbg_fence_vpn == f_vpn && dbg_fence_asid == f_asid &&
      dbg_fence_vmid == f_vmid && dbg_fence_ccid == f_ccid &&
      dbg_plan_inv_0_valid && dbg_plan_inv_0_kind == f_kind0 &&
      (f_kind0 == 3'd0 || dbg_plan_inv_0_ctx == f_ctx0) &&
      dbg_plan_inv_1_valid == (f_need == 2'd2) &&
      (f_need != 2'd2 || (dbg_plan_inv_1_kind == f_kind1 && dbg_plan_inv_1_ctx == f_ctx1)) &&
      dbg_plan_flushValid == f_fneed &&
      (!f_fneed || (dbg_plan_flushKind == f_flkind && (f_flkind == 2'd0 || dbg_plan_flushVmid == f_flvmid)));

  always @* begin
    if (live) begin
      // ---- (a) contexts
      if (g_busy && g_xlat) assert (dbg_ctx == g_ctx);                                       // A1
      if (dbg_l1_lookup_req_valid) assert (g_busy && g_xlat && g_inr && l1_lk_ok); // A2
      if (dbg_l2_lookup_req_valid) assert (g_busy && g_xlat && g_inr && l2_lk_ok); // A2
      if (a3_m1 != 2'd0 && a3_m2 != 2'd0)
        assert ((a3_c1 == a3_c2) == a3_same);               // A3
      // ---- (b) fills and the walk request
      if (dbg_l1_fill_valid) assert (g_busy && g_xlat && l1_fill_ok);                        // B1 B2
      if (dbg_l2_fill_valid) assert (g_busy && g_xlat && l2_fill_ok);                        // B1 B2
      if (dbg_walk_req_valid) assert (g_busy && g_xlat && !w_out && wk_ok);                  // B3
      // ---- (c) fences
      if (fence_fire) assert (!g_busy && !f_busy && l1_out == 0 && l2_out == 0 && !w_out);  // C1
      if (req_fire) assert (!fence_valid);                                                    // C1 order
      if (f_busy) assert (!req_fire && !dbg_l1_lookup_req_valid && !dbg_l2_lookup_req_valid &&
                          !dbg_l1_fill_valid && !dbg_l2_fill_valid && !dbg_walk_req_valid);  // C2
      if (dbg_l1_inval_valid) assert (f_busy && f_l1_cnt < f_need && l1_inv_ok);   // C2 C3
      if (dbg_l2_inval_valid) assert (f_busy && f_l2_cnt < f_need && l2_inv_ok);   // C2 C3
      // the second invalidation only after the first landed in both TLBs
      if ((dbg_l1_inval_valid && f_l1_cnt == 2'd1) || (dbg_l2_inval_valid && f_l2_cnt == 2'd1))
        assert (f_s0_now);                                                                    // C3 order
      if (dbg_walk_flush_valid) assert (f_busy && f_fneed && !f_fl_cnt && fl_ok); // C2 C3
      if (fenceDone) assert (f_busy && f_l1_cnt == f_need && f_l2_cnt == f_need &&
                             !f_l1_pend && !f_l2_pend && f_fl_cnt == f_fneed);    // C4
      if (l1_rv) assert (l1_lk_ep == epoch);                                            // C5
      if (l2_rv) assert (l2_lk_ep == epoch);                                            // C5
      if (wr_fire) assert (w_ep == epoch);                                                    // C5
      // ---- (d) responses
      if (resp_valid) assert (g_busy && answer_ok);                                           // D1 E1 E2
      if (req_fire) assert (!g_busy);                                                         // D1
      // ---- (e) bare and cmd 3 never look up, walk or fill
      if (g_busy && !g_xlat) assert (!dbg_l1_lookup_req_valid && !dbg_l2_lookup_req_valid &&
                                     !dbg_walk_req_valid && !dbg_l1_fill_valid && !dbg_l2_fill_valid); // E3

      // ---- strengthening invariants
      assert (st <= S_FENCEDONE);                                                             // I1
      assert (g_busy == in_service && f_busy == in_fence);                                    // I1
      assert (l1_out == (st == S_L1WAIT) && l2_out == (st == S_L2WAIT) && w_out == (st == S_WALKWAIT)); // I2
      if (l1_out != 0) assert (l1_lk_ep == epoch && l1_lk_ctx == g_ctx);                     // I2
      if (l2_out != 0) assert (l2_lk_ep == epoch && l2_lk_ctx == g_ctx);                     // I2
      if (w_out) assert (w_ep == epoch && w_mode == g_mode && w_vmid == (g_mode == 2'd1 ? {VB{1'b0}} : g_vmid)); // I2
      if (g_busy) assert (dbg_req_id == g_id && dbg_req_va == g_va && dbg_req_cmd == g_cmd &&
                          dbg_req_mode == g_mode && dbg_req_priv == g_priv && dbg_req_asid == g_asid &&
                          dbg_req_vmid == g_vmid && dbg_req_ccid == g_ccid && dbg_req_pcIdx == g_pcIdx &&
                          dbg_req_pcIdxValid == g_pcIdxValid && dbg_req_s1Root == g_s1 &&
                          dbg_req_s2Root == g_s2 && d_flags == g_flags && resp_bits_id == g_id); // I3
      if (st == S_L1REQ || st == S_L1WAIT) assert (!s1_hit && !s2_hit && !sw_got);            // I3
      if (st == S_L2REQ || st == S_L2WAIT) assert (!s2_hit && !sw_got);                      // I3
      if (st == S_WALKREQ || st == S_WALKWAIT) assert (!sw_got);                             // I3
      if (st >= S_L1REQ && st <= S_WALKWAIT) assert (g_xlat);                                // I3
      if (st >= S_L1REQ && st <= S_L2WAIT) assert (g_inr);                                   // I3
      if (st == S_FILL || st == S_RESP) assert (answer_ok);                                  // I4
      if (st == S_FILL) assert (g_xlat && resp_bits_fault == 3'd0 && l1_fill_ok &&
                                (resp_bits_source == 2'd2 ? sw_got : !sw_got) &&
                                (resp_bits_source != 2'd2 || l2_fill_ok) &&
                                (resp_bits_source == 2'd1 ? !dbg_l2_fill_valid : 1'b1));     // I4 B2
      if (f_busy) assert (plan_ok);                                                           // I5
      if (st == S_FENCEINV) assert (f_l1_cnt == dbg_fenceStep + dbg_l1Sent &&
                                    f_l2_cnt == dbg_fenceStep + dbg_l2Sent &&
                                    (dbg_l1Sent || !f_l1_pend) && (dbg_l2Sent || !f_l2_pend) &&
                                    (dbg_fenceStep == 1'b0 || f_need == 2'd2) &&
                                    (dbg_fenceStep == 1'b0 || dbg_flushSent == f_fneed)); // I5
      if (st == S_FENCEWAIT) assert (f_l1_cnt == dbg_fenceStep + 1 && f_l2_cnt == dbg_fenceStep + 1 &&
                                     (dbg_fenceStep == 1'b0 || f_need == 2'd2) &&
                                     dbg_flushSent == f_fneed);                   // I5
      if (in_fence) assert (f_fl_cnt == dbg_flushSent && (f_fneed || !dbg_flushSent));          // I5
      if ((st == S_FENCEINV || st == S_FENCEWAIT) && dbg_fenceStep) assert (f_s0_now);        // I5
      if (in_fence && f_s0) assert (f_l1_cnt != 0 && f_l2_cnt != 0);                          // I5
      if (!in_fence) assert (!f_l1_pend && !f_l2_pend && !dbg_l1_inval_valid && !dbg_l2_inval_valid &&
                             !dbg_walk_flush_valid);                                          // I5
    end
  end

  // D2: a response offered keeps valid and its bits until taken
  reg        p_hold;
  reg [IB-1:0] p_id;
  reg [PPN-1:0] p_pa;
  reg [2:0]  p_fault;
  reg [1:0]  p_src, p_size;
  always @(posedge clock) begin
    p_hold <= !reset && resp_valid && !resp_ready;
    p_id <= resp_bits_id; p_pa <= resp_bits_pa; p_fault <= resp_bits_fault; p_src <= resp_bits_source;
    p_size <= resp_bits_pageSize;
  end
  always @* if (live && p_hold)
    assert (resp_valid && resp_bits_id == p_id && resp_bits_pa == p_pa && resp_bits_fault == p_fault &&
            resp_bits_source == p_src && resp_bits_pageSize == p_size);                     // D2

`ifdef COVER
  // ------------------------------------------------------------------ covers (mmu_cover)
  reg c_fence_with_req;     // a fence accepted while a request was offered in the same cycle
  reg c_after_fence;        // a fence done, then a request accepted
  always @(posedge clock) begin
    if (reset) begin c_fence_with_req <= 1'b0; c_after_fence <= 1'b0; end
    else begin
      if (fence_fire && req_valid) c_fence_with_req <= 1'b1;
      if (fenceDone) c_after_fence <= 1'b1;
    end
  end
  always @* if (live) begin
    cover (resp_fire && g_xlat && resp_bits_fault == 0 && resp_bits_source == 2'd0);          // C1 L1 hit
    cover (resp_fire && g_xlat && resp_bits_fault == 0 && resp_bits_source == 2'd1);          // C2 L2 hit
    cover (resp_fire && g_xlat && resp_bits_fault == 0 && resp_bits_source == 2'd2);          // C3 walk
    cover (resp_fire && g_xlat && resp_bits_fault != 0);                                      // C4 walk fault
    cover (resp_fire && g_cmd == 2'd3);                                                       // C5 cmd 3
    cover (resp_fire && g_mode == 2'd0 && g_cmd != 2'd3 && !g_bare_wide);                     // C6 bare
    cover (resp_fire && g_mode == 2'd0 && g_cmd != 2'd3 && g_bare_wide);                      // C7 bare too wide
    cover (resp_fire && g_mode == 2'd1 && resp_bits_fault == 0 && resp_bits_source != 2'd2);  // C8 mode 1 hit
    cover (resp_fire && g_mode == 2'd2 && resp_bits_fault == 0 && resp_bits_source != 2'd2);  // C9 mode 2 hit
    cover (resp_fire && g_mode == 2'd3 && resp_bits_fault == 0 && resp_bits_source != 2'd2);  // C10 mode 3 hit
    cover (l1_fill_fire && !sw_got);                                                          // C11 L1 fill of an L2 hit
    cover (st == S_L2REQ && s1_hit);                                                          // C12 L1 hit refused
    cover (st == S_WALKREQ && s2_hit);                                                        // C13 L2 hit refused
    cover (dbg_walk_req_valid && !g_inr);                                    // C14 range walk
    cover (fenceDone && c_fence_with_req && req_valid);                                       // C15 fence, request waiting
    cover (fenceDone && f_need == 2'd2 && f_fneed);                      // C16 hfence.gvma vmid
    cover (fenceDone && !f_fneed);                                                 // C17 ccid fence
    cover (fenceDone && f_kind > 4'd12);                                                      // C18 bad kind
    cover (req_fire && c_after_fence);                                                        // C19 request after a fence
  end
`endif
endmodule
