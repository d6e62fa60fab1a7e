// Formal property wrapper for BabelFishTlb (formal/babelfish/babelfish.sby).
//
// Behaviour reference: docs/babelfish-tlb.md; properties: spec babelfish-tlb.md "Properties to
// prove". All sizes come from the configuration's params.svh (build/rtl/<config>/params.svh).
//
// Method
//   * Every DUT input is free ($anyseq) in every cycle, except that:
//       - reset is high in the first cycle (later it is free: mid-run resets are covered), and
//         no channel is valid while reset is high;
//       - a fill carries its own identity in the top bits of its PPN (the "tag"):
//           fill.ppn[PPN-1 -: TAG_W] = {vmid, global, own, pcid, ccid, pc}
//         (vmid only with a VMID tag, P_VMID_BITS > 0; without one the vmid inputs, K's vmid
//         and every entry's vmid are 0, so each vmid comparison below is true and the
//         wrapper checks what it checked before the tag existed)
//         The tag sits above bit 18, so superpage responses (which replace only the low 9/18
//         bits by the VPN offset) keep it: a hit's returned PPN names the kind of entry that
//         served it. Nothing else about fills, lookups or invalidations is constrained (bad
//         page sizes, unaligned superpage PPNs, out-of-range pcIdx, cmd 3, inval kinds 6/7 are
//         all allowed).
//   * The accepted lookup request is kept in a shadow pipeline for P_LATENCY cycles, together
//     with the expected response computed from the storage (dbg_* ports) at acceptance (with
//     the operation registered before the read, P_OP_REG: in the next cycle, when it reads).
//   * K is a symbolic ($anyconst) key (class, vpn, size, pcid, ccid) for the invalidation
//     property.
//
// Properties (asserted; proven by k-induction in the prove tasks)
//   P1  sharing on: a hit on a private entry (own = 1, non-global) has the request's pcid and ccid
//   P2  sharing on: a hit on a shared entry has the request's ccid and is not rejected by the
//       request's PC bit (pcIdxValid and (pcIdx >= pcBits or pc[pcIdx]))
//   P3  sharing on: every non-global hit has the request's ccid
//   P4  after an invalidation that removes K's entries (or a reset), a lookup accepted later
//       does not hit an entry of K's identity and size covering the request, until a fill of
//       K's identity (identity: global; or private pcid+ccid; or shared ccid)
//   P5  sharing off: every non-global hit has the request's pcid; no shared / crossHit response
//   P6  VM isolation: no hit on an entry of another vmid, whatever its class (global included);
//       P1-P5 compare the vmid too (P4 through K's identity, which includes its vmid)
//   P7  no over-invalidation: an invalidation whose kind does not remove K's identity (doc kind
//       table, with the vmid scoping) leaves a valid entry of K's identity, size and page valid
//       (checked when it has landed; a later fill may evict it, so a fill ends the check). This
//       is what catches a kind that removes too much, e.g. kind 6 not scoped to its vmid
//       (asserted in the tasks with a VMID tag only: prove_vmid, prove_vmid_sram4)
//   R   response consistency: one response per accepted lookup, P_LATENCY cycles later;
//       shared / crossHit / permFault agree with the served entry and the returned permissions
//   F   functional: hit, ppn (incl. superpage offset), pageSize, shared and crossHit equal the
//       doc's match rule + priority (private > global > shared, 4 KiB array first, then lowest
//       superpage index) evaluated on the storage at acceptance
//   T   timing: at most one operation accepted per cycle; in the write shadow (the L - 1 cycles
//       after an accepted fill or invalidation; 4 at L = 4) nothing is accepted and every ready
//       is low;
//       outside it the readies follow the priority rule (sram with more than one set: an
//       invalidation by PCID or CCID sweeps the sets and stays busy sets - 1 cycles longer)
// Strengthening invariants on the storage (asserted, so proven too):
//   I1  a valid entry's PPN tag equals its identity (stored global/pcid/ccid; own and pc with
//       sharing on: sharing off stores own = 1 and does not keep pc)
//   I2  4 KiB entries have pageSize 0 and sit in set vpn % sets
//   I3  superpage entries have pageSize 1 or 2 and VPN/PPN low 9/18 bits zero
//   I4  no two valid entries of one array have the same key (the vmid is part of the key)
//   I5  sharing off: every valid non-global entry is stored with own = 1
//   I6  while K's flag is set, no valid entry has K's identity, size and page (except while the
//       invalidation that set it is on its way to the storage)
//   I7  sharing on: a valid entry's stored ORPC bit (dbg_orpc) is the OR of its pc
// Covers (cover tasks, end of file): private / global / 2 MiB / 1 GiB hits, an eviction, a kind-5
// invalidation removing a valid entry, a lookup after an invalidation that removed K's entry;
// sharing on: shared hit, cross-process shared hit, kind 5 removing a shared entry, an
// out-of-range pcIdx rejecting a shared entry, a PC-bit rejection and a private hit in one
// request, and a PC-bit miss followed by a private hit for the same request; sharing off: a hit
// across ccids, and a fill with own = 0 serving as a private entry; with a VMID tag: a global hit
// in VM 1 while VM 0 holds a global entry of the same page, and a kind-6 and a kind-7
// invalidation removing entries while another VM's entries of the same keys survive. Pipeline (L > 1): L + 1
// lookups accepted back to back (every stage full), and a lookup accepted in the first cycle
// after a fill's write shadow that hits the entry that fill wrote.
//
// The same wrapper proves every latency (P_LATENCY 4 in the named formal configurations; 1, 2,
// 3 in the sby tasks *_lat1 / *_lat2 / *_lat3) and block-RAM storage (*_sram2 / 4 / 6: the
// memories feed the dbg view too), on test-only configurations generated by
// formal/test_formal.py.
`default_nettype none

module babelfish_tlb_fv (
  input wire clock
);
`include "params.svh"

  localparam N   = P_ENTRIES;
  localparam NA  = P_SETS * P_WAYS;          // 4 KiB array entries: index set*ways + way
  localparam NS  = P_SUPERPAGE_ENTRIES;      // superpage entries: index NA + j
  localparam V   = P_VPN_BITS;
  localparam PP  = P_PPN_BITS;
  localparam PI  = P_PCID_BITS;
  localparam CI  = P_CCID_BITS;
  localparam PB  = P_PC_BITS;
  localparam XI  = P_PC_IDX_BITS;
  localparam L   = P_LATENCY;
  localparam SH  = P_SHARING;
  localparam VM  = P_VMID_BITS;              // 0: no VMID tag
  localparam VW  = VM > 0 ? VM : 1;          // width of the wrapper's vmid signals

  // PPN tag layout, MSB first: {vmid, global, own, pcid, ccid, pc} (vmid: VM bits, none at 0)
  localparam TAG_W   = 2 + PI + CI + PB + VM;
  localparam TAG_LO  = PP - TAG_W;
  localparam T_PC    = TAG_LO;
  localparam T_CCID  = T_PC + PB;
  localparam T_PCID  = T_CCID + CI;
  localparam T_OWN   = T_PCID + PI;
  localparam T_GLOB  = T_OWN + 1;
  localparam T_VMID  = T_GLOB + 1;

  generate
    if (TAG_LO < 18) begin : g_err_tag
      $error("babelfish_tlb_fv: ppnBits too small for the identity tag above bit 18");
    end
    if (N != NA + NS) begin : g_err_entries
      $error("babelfish_tlb_fv: P_ENTRIES != sets*ways + superpageEntries");
    end
    if (P_FORMAL_PORTS == 0) begin : g_err_dbg
      $error("babelfish_tlb_fv: the configuration has no dbg_* ports");
    end
  endgenerate

  // ------------------------------------------------------------------ free inputs
  (* anyseq *) reg          reset;
  (* anyseq *) reg          lookup_req_valid;
  (* anyseq *) reg [V-1:0]  lookup_req_bits_vpn;
  (* anyseq *) reg [PI-1:0] lookup_req_bits_pcid;
  (* anyseq *) reg [CI-1:0] lookup_req_bits_ccid;
  (* anyseq *) reg [VW-1:0] lookup_req_bits_vmid;
  (* anyseq *) reg [XI-1:0] lookup_req_bits_pcIdx;
  (* anyseq *) reg          lookup_req_bits_pcIdxValid;
  (* anyseq *) reg [1:0]    lookup_req_bits_cmd;
  (* anyseq *) reg          lookup_req_bits_user;
  (* anyseq *) reg          fill_valid;
  (* anyseq *) reg [V-1:0]  fill_bits_vpn;
  (* anyseq *) reg [PP-1:0] fill_bits_ppn;
  (* anyseq *) reg [1:0]    fill_bits_pageSize;
  (* anyseq *) reg          fill_bits_perm_r, fill_bits_perm_w, fill_bits_perm_x, fill_bits_perm_u;
  (* anyseq *) reg          fill_bits_dirty, fill_bits_global, fill_bits_own;
  (* anyseq *) reg [PI-1:0] fill_bits_pcid;
  (* anyseq *) reg [CI-1:0] fill_bits_ccid;
  (* anyseq *) reg [VW-1:0] fill_bits_vmid;
  (* anyseq *) reg [PB-1:0] fill_bits_pc;
  (* anyseq *) reg          inval_valid;
  (* anyseq *) reg [2:0]    inval_bits_kind;
  (* anyseq *) reg [V-1:0]  inval_bits_vpn;
  (* anyseq *) reg [PI-1:0] inval_bits_pcid;
  (* anyseq *) reg [CI-1:0] inval_bits_ccid;
  (* anyseq *) reg [VW-1:0] inval_bits_vmid;

  // ------------------------------------------------------------------ DUT
  wire          lookup_req_ready, fill_ready, inval_ready;
  wire          lookup_resp_valid, lookup_resp_bits_hit;
  wire [PP-1:0] lookup_resp_bits_ppn;
  wire [1:0]    lookup_resp_bits_pageSize;
  wire          lookup_resp_bits_perm_r, lookup_resp_bits_perm_w, lookup_resp_bits_perm_x;
  wire          lookup_resp_bits_perm_u, lookup_resp_bits_dirty, lookup_resp_bits_shared;
  wire          lookup_resp_bits_crossHit, lookup_resp_bits_permFault;
  wire [31:0]   perf_evictions;
  wire [N-1:0]    dbg_valid, dbg_global, dbg_own;
  wire [N*V-1:0]  dbg_vpn;
  wire [N*PP-1:0] dbg_ppn;
  wire [N*2-1:0]  dbg_pageSize;
  wire [N*PI-1:0] dbg_pcid;
  wire [N*CI-1:0] dbg_ccid;
  wire [N*PB-1:0] dbg_pc;
  wire [N-1:0]    dbg_orpc;

  `define BF_FV_PORTS \
    .clock(clock), .reset(reset), \
    .lookup_req_valid(lookup_req_valid), .lookup_req_ready(lookup_req_ready), \
    .lookup_req_bits_vpn(lookup_req_bits_vpn), .lookup_req_bits_pcid(lookup_req_bits_pcid), \
    .lookup_req_bits_ccid(lookup_req_bits_ccid), .lookup_req_bits_pcIdx(lookup_req_bits_pcIdx), \
    .lookup_req_bits_pcIdxValid(lookup_req_bits_pcIdxValid), .lookup_req_bits_cmd(lookup_req_bits_cmd), \
    .lookup_req_bits_user(lookup_req_bits_user), \
    .lookup_resp_valid(lookup_resp_valid), .lookup_resp_bits_hit(lookup_resp_bits_hit), \
    .lookup_resp_bits_ppn(lookup_resp_bits_ppn), .lookup_resp_bits_pageSize(lookup_resp_bits_pageSize), \
    .lookup_resp_bits_perm_r(lookup_resp_bits_perm_r), .lookup_resp_bits_perm_w(lookup_resp_bits_perm_w), \
    .lookup_resp_bits_perm_x(lookup_resp_bits_perm_x), .lookup_resp_bits_perm_u(lookup_resp_bits_perm_u), \
    .lookup_resp_bits_dirty(lookup_resp_bits_dirty), .lookup_resp_bits_shared(lookup_resp_bits_shared), \
    .lookup_resp_bits_crossHit(lookup_resp_bits_crossHit), \
    .lookup_resp_bits_permFault(lookup_resp_bits_permFault), \
    .fill_valid(fill_valid), .fill_ready(fill_ready), \
    .fill_bits_vpn(fill_bits_vpn), .fill_bits_ppn(fill_bits_ppn), .fill_bits_pageSize(fill_bits_pageSize), \
    .fill_bits_perm_r(fill_bits_perm_r), .fill_bits_perm_w(fill_bits_perm_w), \
    .fill_bits_perm_x(fill_bits_perm_x), .fill_bits_perm_u(fill_bits_perm_u), \
    .fill_bits_dirty(fill_bits_dirty), .fill_bits_global(fill_bits_global), \
    .fill_bits_pcid(fill_bits_pcid), .fill_bits_ccid(fill_bits_ccid), .fill_bits_own(fill_bits_own), \
    .fill_bits_pc(fill_bits_pc), \
    .inval_valid(inval_valid), .inval_ready(inval_ready), .inval_bits_kind(inval_bits_kind), \
    .inval_bits_vpn(inval_bits_vpn), .inval_bits_pcid(inval_bits_pcid), .inval_bits_ccid(inval_bits_ccid), \
    .perf_evictions(perf_evictions), \
    .dbg_valid(dbg_valid), .dbg_vpn(dbg_vpn), .dbg_ppn(dbg_ppn), .dbg_pageSize(dbg_pageSize), \
    .dbg_global(dbg_global), .dbg_own(dbg_own), .dbg_pcid(dbg_pcid), .dbg_ccid(dbg_ccid), .dbg_pc(dbg_pc), .dbg_orpc(dbg_orpc)
  wire [N*VW-1:0] dbg_vmid;   // every entry's vmid (0 without a VMID tag)
  generate
    if (VM > 0) begin : g_vm_dut
      BabelFishTlb dut (
        `BF_FV_PORTS,
        .lookup_req_bits_vmid(lookup_req_bits_vmid), .fill_bits_vmid(fill_bits_vmid),
        .inval_bits_vmid(inval_bits_vmid), .dbg_vmid(dbg_vmid)
      );
    end else begin : g_dut
      BabelFishTlb dut (
        `BF_FV_PORTS
      );
      assign dbg_vmid = {N*VW{1'b0}};
    end
  endgenerate
  `undef BF_FV_PORTS

  // ------------------------------------------------------------------ helpers
  // VPN bits that name the page at a page size (size 3 is never stored: treated as 1 GiB)
  function automatic [V-1:0] vmask(input [1:0] s);
    vmask = (s == 2'd0) ? {V{1'b1}} : (s == 2'd1) ? ({V{1'b1}} << 9) : ({V{1'b1}} << 18);
  endfunction
  function automatic [PP-1:0] pmask(input [1:0] s);
    pmask = (s == 2'd0) ? {PP{1'b1}} : (s == 2'd1) ? ({PP{1'b1}} << 9) : ({PP{1'b1}} << 18);
  endfunction
  // page of size s containing a equals page of size s containing b
  function automatic same_page(input [V-1:0] a, input [V-1:0] b, input [1:0] s);
    same_page = ((a ^ b) & vmask(s)) == {V{1'b0}};
  endfunction
  // the request's PC bit rejects a shared entry whose bitmask is pc
  function automatic pc_reject(input valid_idx, input [XI-1:0] idx, input [PB-1:0] pc);
    pc_reject = valid_idx && ((idx >= PB) || ((pc >> idx) & 1'b1));
  endfunction

  // ------------------------------------------------------------------ environment
  reg f_past_valid = 1'b0;
  always @(posedge clock) f_past_valid <= 1'b1;

  always @* begin
    if (!f_past_valid) assume (reset);
    if (reset) assume (!lookup_req_valid && !fill_valid && !inval_valid);
    if (fill_valid)
      assume (fill_bits_ppn[T_GLOB:TAG_LO] ==
              {fill_bits_global, fill_bits_own, fill_bits_pcid, fill_bits_ccid, fill_bits_pc});
    // without a VMID tag the DUT has no vmid inputs: the wrapper's are 0
    if (VM == 0) assume (lookup_req_bits_vmid == 0 && fill_bits_vmid == 0 && inval_bits_vmid == 0);
  end
  generate if (VM > 0) begin : g_vm_tag
    always @* if (fill_valid) assume (fill_bits_ppn[T_VMID +: VW] == fill_bits_vmid);
  end endgenerate

  wire lk_fire = lookup_req_valid && lookup_req_ready;
  wire fl_fire = fill_valid && fill_ready;
  wire iv_fire = inval_valid && inval_ready;

  // The lookup as the storage sees it: with the operation registered before the read (P_OP_REG,
  // sram latency 6) a lookup reads the storage one cycle after its acceptance, and a fill
  // accepted shadow + 1 cycles before it lands in that cycle (doc "The write shadow"). The
  // expected response is computed from the storage in that cycle: q_* is the accepted lookup,
  // registered when P_OP_REG. (An operation accepted in the cycle after the lookup writes
  // later: the expected response never sees it.)
  localparam SL = P_OP_REG ? L - 1 : L;   // shadow stages from q to the response
  reg          q_fire_r;
  reg [V-1:0]  q_vpn_r;
  reg [PI-1:0] q_pcid_r;
  reg [CI-1:0] q_ccid_r;
  reg [VW-1:0] q_vmid_r;
  reg [XI-1:0] q_pcIdx_r;
  reg          q_pcIdxValid_r, q_user_r;
  reg [1:0]    q_cmd_r;
  always @(posedge clock) begin
    q_fire_r <= !reset && lk_fire;
    {q_vpn_r, q_pcid_r, q_ccid_r, q_vmid_r, q_pcIdx_r, q_pcIdxValid_r, q_cmd_r, q_user_r} <=
      {lookup_req_bits_vpn, lookup_req_bits_pcid, lookup_req_bits_ccid, lookup_req_bits_vmid,
       lookup_req_bits_pcIdx, lookup_req_bits_pcIdxValid, lookup_req_bits_cmd, lookup_req_bits_user};
  end
  wire          q_fire       = P_OP_REG ? q_fire_r : lk_fire;
  wire [V-1:0]  q_vpn        = P_OP_REG ? q_vpn_r : lookup_req_bits_vpn;
  wire [PI-1:0] q_pcid       = P_OP_REG ? q_pcid_r : lookup_req_bits_pcid;
  wire [CI-1:0] q_ccid       = P_OP_REG ? q_ccid_r : lookup_req_bits_ccid;
  wire [VW-1:0] q_vmid       = P_OP_REG ? q_vmid_r : lookup_req_bits_vmid;
  wire [XI-1:0] q_pcIdx      = P_OP_REG ? q_pcIdx_r : lookup_req_bits_pcIdx;
  wire          q_pcIdxValid = P_OP_REG ? q_pcIdxValid_r : lookup_req_bits_pcIdxValid;
  wire [1:0]    q_cmd        = P_OP_REG ? q_cmd_r : lookup_req_bits_cmd;
  wire          q_user       = P_OP_REG ? q_user_r : lookup_req_bits_user;

  // The write shadow (doc "Timing"): cycles left before the last accepted write has landed
  // (latency - 1; latency 4: 4, the fill's commit cycle). Written from the doc's rule, and the
  // generator's P_WRITE_SHADOW must agree with it.
  // (sram 5: 5; sram 6: 5, the operation registered before the read)
  localparam SHADOW = (L == 4 || L == 5) ? L : L - 1;
  // An invalidation by PCID or CCID with sram and more than one set sweeps the sets: busy
  // sets - 1 cycles more (doc "SRAM sweeps").
  localparam SWEEP = P_SWEEPS ? P_SETS - 1 : 0;
  // the kinds that sweep: 2 and 3; with a VMID tag also 1 and 6 (they compare every entry's vmid)
  function automatic sweep_kind(input [2:0] kind);
    sweep_kind = kind == 3'd2 || kind == 3'd3 || (VM > 0 && (kind == 3'd1 || kind == 3'd6));
  endfunction
  generate if (SHADOW != P_WRITE_SHADOW) begin : g_err_shadow
    $error("babelfish_tlb_fv: P_WRITE_SHADOW differs from the doc's write shadow");
  end endgenerate
  reg [3:0] f_shadow;
  always @(posedge clock)
    if (reset) f_shadow <= 4'd0;
    else if (iv_fire && sweep_kind(inval_bits_kind)) f_shadow <= SHADOW + SWEEP;
    else if (iv_fire || fl_fire) f_shadow <= SHADOW;
    else if (f_shadow != 4'd0) f_shadow <= f_shadow - 4'd1;

  // ------------------------------------------------------------------ symbolic key K
  localparam [1:0] C_SHARED = 2'd0, C_GLOBAL = 2'd1, C_PRIVATE = 2'd2;
  (* anyconst *) reg [1:0]    k_class;
  (* anyconst *) reg [V-1:0]  k_vpn;
  (* anyconst *) reg [1:0]    k_size;
  (* anyconst *) reg [PI-1:0] k_pcid;
  (* anyconst *) reg [CI-1:0] k_ccid;
  (* anyconst *) reg [VW-1:0] k_vmid;
  always @* begin
    assume (k_size <= 2'd2);
    if (VM == 0) assume (k_vmid == 0);
    assume (k_class <= C_PRIVATE);
    if (!SH) assume (k_class != C_SHARED);
  end

  // an entry / fill / response tag with these fields has K's identity
  // (the vmid is part of every identity: a global entry is global inside its VM)
  function automatic k_ident(input g, input own, input [PI-1:0] pcid, input [CI-1:0] ccid,
                             input [VW-1:0] vmid);
    case (k_class)
      C_GLOBAL:  k_ident = g && vmid == k_vmid;
      C_PRIVATE: k_ident = !g && (own || !SH) && pcid == k_pcid && ccid == k_ccid && vmid == k_vmid;
      default:   k_ident = !g && !own && SH && ccid == k_ccid && vmid == k_vmid;
    endcase
  endfunction

  // invalidation accepted this cycle removes entries with K's attributes (doc kind table):
  // every kind but 0 only inside inval.vmid (always K's without a VMID tag: both are 0)
  reg inv_removes_k;
  wire k_vm = k_vmid == inval_bits_vmid;
  always @* begin
    case (inval_bits_kind)
      3'd1:    inv_removes_k = k_vm && k_class != C_GLOBAL;
      3'd2:    inv_removes_k = k_vm && k_class == C_PRIVATE && k_pcid == inval_bits_pcid;
      3'd3:    inv_removes_k = k_vm && k_class != C_GLOBAL && k_ccid == inval_bits_ccid;
      3'd4:    inv_removes_k = k_vm && k_class == C_PRIVATE && k_pcid == inval_bits_pcid
                               && same_page(k_vpn, inval_bits_vpn, k_size);
      3'd5:    inv_removes_k = k_vm && k_class != C_GLOBAL && k_ccid == inval_bits_ccid
                               && same_page(k_vpn, inval_bits_vpn, k_size);
      // 6: K's VM; 7: K's VM and page, whatever the owner (without a VMID tag: act as 0)
      3'd6:    inv_removes_k = VM == 0 || k_vm;
      3'd7:    inv_removes_k = VM == 0 || (k_vm && same_page(k_vpn, inval_bits_vpn, k_size));
      default: inv_removes_k = 1'b1;   // 0 all
    endcase
  end

  wire fill_is_k = fill_bits_pageSize == k_size && same_page(fill_bits_vpn, k_vpn, k_size)
                   && k_ident(fill_bits_global, fill_bits_own, fill_bits_pcid, fill_bits_ccid, fill_bits_vmid);

  // ------------------------------------------------------------------ per-entry view of the storage
  wire [N-1:0] e_priv, e_glob, e_shr;      // class (valid or not)
  wire [N-1:0] e_match;                    // valid and matches the lookup request on the inputs
  wire [N-1:0] e_k;                        // valid with K's identity, size and page
  wire [N-1:0] e_rej;                      // valid shared entry of the request's page+ccid, rejected by the PC bit
  wire [N-1:0] e_rm5;                      // valid entry that kind 5 with the inval inputs removes
  wire [N-1:0] e_rm6, e_rm7, e_g0;         // (covers, see below)
  wire [N*N-1:0] key_eq;                   // I4 and the covers: same key but for the vmid
  wire [N*PP-1:0] e_rppn;                  // response PPN if this entry served the request

  genvar gi, gj;
  generate
    for (gi = 0; gi < N; gi = gi + 1) begin : g_e
      wire          ev    = dbg_valid[gi];
      wire [V-1:0]  evpn  = dbg_vpn[gi*V +: V];
      wire [PP-1:0] eppn  = dbg_ppn[gi*PP +: PP];
      wire [1:0]    esz   = dbg_pageSize[gi*2 +: 2];
      wire          eg    = dbg_global[gi];
      wire          eown  = dbg_own[gi];
      wire [PI-1:0] epcid = dbg_pcid[gi*PI +: PI];
      wire [CI-1:0] eccid = dbg_ccid[gi*CI +: CI];
      wire [PB-1:0] epc   = dbg_pc[gi*PB +: PB];
      wire [VW-1:0] evm   = dbg_vmid[gi*VW +: VW];

      assign e_glob[gi] = eg;
      assign e_priv[gi] = !eg && (eown || !SH);
      assign e_shr[gi]  = !eg && !eown && SH;

      wire vm = ev && same_page(evpn, q_vpn, esz) && evm == q_vmid;
      wire rej = pc_reject(q_pcIdxValid, q_pcIdx, epc);
      assign e_match[gi] = vm && (eg ||
                                  (!SH  ? epcid == q_pcid :
                                   eown ? epcid == q_pcid && eccid == q_ccid :
                                          eccid == q_ccid && !rej));
      assign e_rej[gi] = vm && e_shr[gi] && eccid == q_ccid && rej;
      assign e_rppn[gi*PP +: PP] = (eppn & pmask(esz)) | ({{PP{1'b0}}, q_vpn} & ~pmask(esz));
      assign e_k[gi] = ev && esz == k_size && same_page(evpn, k_vpn, k_size) && k_ident(eg, eown, epcid, eccid, evm);
      assign e_rm5[gi] = ev && !eg && eccid == inval_bits_ccid && same_page(evpn, inval_bits_vpn, esz)
                         && evm == inval_bits_vmid;
      // (covers) kind 6 / 7 with the inval inputs would remove this valid entry
      assign e_rm6[gi] = ev && evm == inval_bits_vmid;
      assign e_rm7[gi] = ev && evm == inval_bits_vmid && same_page(evpn, inval_bits_vpn, esz);

      // ---- invariants
      always @* if (f_past_valid && ev) begin
        // I1: the PPN tag is the entry's identity. Sharing off: own is stored as 1 whatever the
        //     fill said, and pc is not kept (dbg_pc reads 0), so neither is compared.
        assert (eppn[T_GLOB] == eg);
        assert (eppn[T_PCID +: PI] == epcid);
        assert (eppn[T_CCID +: CI] == eccid);
        if (VM > 0) assert (eppn[T_VMID +: VW] == evm);
        if (SH) assert (eppn[T_PC +: PB] == epc);
        if (SH && !eg) assert (eppn[T_OWN] == eown);
        // I5
        if (!SH && !eg) assert (eown);
      end
      if (gi < NA) begin : g_a4k
        // I2
        always @* if (f_past_valid && ev) begin
          assert (esz == 2'd0);
          assert ((evpn & (P_SETS - 1)) == gi / P_WAYS);
        end
      end else begin : g_asp
        // I3
        always @* if (f_past_valid && ev) begin
          assert (esz == 2'd1 || esz == 2'd2);
          assert ((evpn & ~vmask(esz)) == {V{1'b0}});
          assert ((eppn & ~pmask(esz)) == {PP{1'b0}});
        end
      end
    end

    // key_eq[i*N + j]: entries i and j of one array have the same key but for the vmid
    for (gi = 0; gi < N; gi = gi + 1) begin : g_k1
      for (gj = 0; gj < N; gj = gj + 1) begin : g_k2
        if (gi != gj && (gi < NA) == (gj < NA)) begin : g_same_array
          assign key_eq[gi*N + gj] =
            dbg_pageSize[gi*2 +: 2] == dbg_pageSize[gj*2 +: 2] &&
            same_page(dbg_vpn[gi*V +: V], dbg_vpn[gj*V +: V], dbg_pageSize[gi*2 +: 2]) &&
            ((e_glob[gi] && e_glob[gj]) ||
             (e_priv[gi] && e_priv[gj] && dbg_pcid[gi*PI +: PI] == dbg_pcid[gj*PI +: PI]) ||
             (e_shr[gi]  && e_shr[gj]  && dbg_ccid[gi*CI +: CI] == dbg_ccid[gj*CI +: CI]));
          // I4: no two valid entries of one array share a key (the vmid included)
          if (gi < gj) begin : g_i4
            always @* if (f_past_valid)
              assert (!(dbg_valid[gi] && dbg_valid[gj] && key_eq[gi*N + gj]
                        && dbg_vmid[gi*VW +: VW] == dbg_vmid[gj*VW +: VW]));
          end
        end else begin : g_other
          assign key_eq[gi*N + gj] = 1'b0;
        end
      end
    end
  endgenerate

  // ------------------------------------------------------------------ expected response (doc rule)
  wire [N-1:0] m_priv = e_match & e_priv;
  wire [N-1:0] m_glob = e_match & e_glob;
  wire [N-1:0] m_shr  = e_match & e_shr;
  wire [N-1:0] m_sel  = (m_priv != 0) ? m_priv : (m_glob != 0) ? m_glob : m_shr;
  wire [N-1:0] m_one  = m_sel & (~m_sel + 1'b1);   // lowest index: 4 KiB array first, then superpages

  reg [PP-1:0] x_ppn;
  reg [1:0]    x_size;
  reg          x_shared, x_cross;
  integer i;
  always @* begin
    x_ppn = 0; x_size = 0; x_shared = 0; x_cross = 0;
    for (i = 0; i < N; i = i + 1) begin
      if (m_one[i]) begin
        x_ppn    = x_ppn | e_rppn[i*PP +: PP];
        x_size   = x_size | dbg_pageSize[i*2 +: 2];
        x_shared = x_shared | e_shr[i];
        x_cross  = x_cross | (e_shr[i] && dbg_pcid[i*PI +: PI] != q_pcid);
      end
    end
  end
  wire x_hit = m_sel != 0;
  wire x_rej = e_rej != 0;

  // ------------------------------------------------------------------ K's flag (P4, I6)
  // Set by reset (removes everything) and by an accepted invalidation that removes K's entries;
  // cleared by an accepted fill of K's identity, size and page.
  reg k_flag, k_flag_rm;        // k_flag_rm: the setting invalidation removed a valid entry (cover)
  always @(posedge clock) begin
    if (reset) begin
      k_flag <= 1'b1; k_flag_rm <= 1'b0;
    end else if (iv_fire && inv_removes_k) begin
      k_flag <= 1'b1; k_flag_rm <= e_k != 0;
    end else if (fl_fire && fill_is_k) begin
      k_flag <= 1'b0; k_flag_rm <= 1'b0;
    end
  end
  // I6, in every cycle but those in which an invalidation that removes K's entries is still on
  // its way to the storage (its write shadow, a sweep's further sets, and with P_OP_REG the
  // cycle after the shadow, in which its write lands)
  reg [3:0] k_pend;
  always @(posedge clock)
    if (reset) k_pend <= 4'd0;
    else if (iv_fire && inv_removes_k)
      k_pend <= SHADOW + P_OP_REG + (sweep_kind(inval_bits_kind) ? SWEEP : 0);
    else if (k_pend != 4'd0) k_pend <= k_pend - 4'd1;
  always @* if (f_past_valid && k_flag && k_pend == 4'd0) assert (e_k == 0);
  // (k_pend runs with the write shadow it was set with: nothing is accepted before it ends)
  always @* if (f_past_valid) assert (k_pend <= f_shadow + P_OP_REG);

  // P7 is asserted with a VMID tag only (make test's budget: it made the flop and SRAM tasks
  // without a tag up to 1.7x slower, prove_share_sram6 74 -> 128 s; the kinds it guards
  // against removing too much are the VM-scoped ones)
  localparam P7_ON = P_VMID_BITS > 0;
  // P7: K's entry survives an invalidation that does not remove K. Sampled when the
  // invalidation reads the storage (with P_OP_REG the cycle after its acceptance, when a fill
  // accepted before it has landed), checked when it has landed (as k_pend); ended by reset or
  // by the next accepted fill (which may evict it) or invalidation (which samples again).
  reg iv_fire_r, inv_removes_k_r;
  reg [2:0] iv_kind_r;
  always @(posedge clock) begin
    iv_fire_r <= !reset && iv_fire;
    inv_removes_k_r <= inv_removes_k;
    iv_kind_r <= inval_bits_kind;
  end
  wire       iv_q      = P_OP_REG ? iv_fire_r : iv_fire;
  wire       iv_q_rmk  = P_OP_REG ? inv_removes_k_r : inv_removes_k;
  wire [2:0] iv_q_kind = P_OP_REG ? iv_kind_r : inval_bits_kind;
  reg k_keep;
  reg [3:0] k_keep_pend;
  always @(posedge clock)
    if (reset) begin
      k_keep <= 1'b0; k_keep_pend <= 4'd0;
    end else if (iv_q) begin
      k_keep <= !iv_q_rmk && e_k != 0;
      k_keep_pend <= SHADOW + (sweep_kind(iv_q_kind) ? SWEEP : 0);
    end else begin
      if (fl_fire || iv_fire) k_keep <= 1'b0;
      if (k_keep_pend != 4'd0) k_keep_pend <= k_keep_pend - 4'd1;
    end
  always @* if (P7_ON && f_past_valid && !reset && k_keep && k_keep_pend == 4'd0) assert (e_k != 0);   // P7
  // (k_keep_pend runs with the write shadow it was set with, as k_pend)
  always @* if (P7_ON && f_past_valid) assert (k_keep_pend <= f_shadow + P_OP_REG);

  // ------------------------------------------------------------------ stored ORPC
  // The shared match consults the stored ORPC bit before the pc mask, so induction must know it
  // is the OR of pc (I7); the formal configurations show it on dbg_orpc.
  generate
    for (gi = 0; gi < N; gi = gi + 1) begin : g_h
      if (SH) begin : g_orpc
        always @* if (f_past_valid && dbg_valid[gi])
          assert (dbg_orpc[gi] == |dbg_pc[gi*PB +: PB]);               // I7
      end
    end
  endgenerate

  // ------------------------------------------------------------------ shadow of accepted lookups
  localparam SW = V + PI + CI + VW + XI + 1 + 2 + 1 + 2 + 1 + PP + 2 + 1 + 1 + 1;
  // K's flag as the lookup's acceptance left it (P4: an invalidation accepted before the lookup)
  reg k_flag_r, k_flag_rm_r;
  always @(posedge clock) begin
    k_flag_r <= k_flag;
    k_flag_rm_r <= k_flag_rm;
  end
  wire q_flag = P_OP_REG ? k_flag_r : k_flag;
  wire q_flag_rm = P_OP_REG ? k_flag_rm_r : k_flag_rm;
  wire [SW-1:0] s_in = {q_vpn, q_pcid, q_ccid, q_vmid, q_pcIdx, q_pcIdxValid, q_cmd, q_user, q_flag, q_flag_rm,
                        x_hit, x_ppn, x_size, x_shared, x_cross, x_rej};
  reg [SL-1:0]    s_v;
  reg [SL*SW-1:0] s_d;
  always @(posedge clock) begin
    s_v <= reset ? {SL{1'b0}} : {s_v, q_fire};
    s_d <= {s_d, s_in};
  end
  wire          s_valid = s_v[SL-1];
  wire [V-1:0]  s_vpn;
  wire [PI-1:0] s_pcid;
  wire [CI-1:0] s_ccid;
  wire [VW-1:0] s_vmid;
  wire [XI-1:0] s_pcIdx;
  wire          s_pcIdxValid, s_user, s_flag, s_flag_rm, s_hit, s_shared, s_cross, s_rej;
  wire [1:0]    s_cmd, s_size;
  wire [PP-1:0] s_ppn;
  assign {s_vpn, s_pcid, s_ccid, s_vmid, s_pcIdx, s_pcIdxValid, s_cmd, s_user, s_flag, s_flag_rm,
          s_hit, s_ppn, s_size, s_shared, s_cross, s_rej} = s_d[(SL-1)*SW +: SW];

  // ------------------------------------------------------------------ response checks
  wire          r_hit   = lookup_resp_bits_hit;
  wire          r_g     = lookup_resp_bits_ppn[T_GLOB];
  wire          r_own   = lookup_resp_bits_ppn[T_OWN];
  wire [PI-1:0] r_pcid  = lookup_resp_bits_ppn[T_PCID +: PI];
  wire [CI-1:0] r_ccid  = lookup_resp_bits_ppn[T_CCID +: CI];
  wire [PB-1:0] r_pc    = lookup_resp_bits_ppn[T_PC +: PB];
  wire [VW-1:0] r_vmid  = VM > 0 ? lookup_resp_bits_ppn[T_VMID +: VW] : {VW{1'b0}};
  wire          r_priv  = !r_g && (r_own || !SH);
  wire          r_shr   = !r_g && !r_own && SH;
  wire          r_fault = (s_cmd == 2'd0 && !lookup_resp_bits_perm_r) ||
                          (s_cmd == 2'd1 && (!lookup_resp_bits_perm_w || !lookup_resp_bits_dirty)) ||
                          (s_cmd == 2'd2 && !lookup_resp_bits_perm_x) ||
                          (s_cmd == 2'd3) ||
                          (s_user && !lookup_resp_bits_perm_u);
  wire          r_k     = r_hit && lookup_resp_bits_pageSize == k_size && same_page(s_vpn, k_vpn, k_size)
                          && k_ident(r_g, r_own, r_pcid, r_ccid, r_vmid);

  always @* if (f_past_valid) begin
    // R: exactly one response per accepted lookup, P_LATENCY cycles later
    assert (lookup_resp_valid == s_valid);
    // T: one operation per cycle; nothing in the write shadow; otherwise readies are high
    // except for the priority rule
    assert (!(iv_fire && fl_fire) && !(iv_fire && lk_fire) && !(fl_fire && lk_fire));
    if (!reset && f_shadow != 0) begin
      assert (!inval_ready && !fill_ready && !lookup_req_ready);
    end
    if (!reset && f_shadow == 0) begin
      assert (inval_ready);
      assert (fill_ready == !inval_valid);
      assert (lookup_req_ready == !(inval_valid || fill_valid));
    end
    if (s_valid) begin
      // R: flags agree with the served entry and the returned permissions
      assert (lookup_resp_bits_permFault == (r_hit && r_fault));
      assert (lookup_resp_bits_shared == (r_hit && r_shr));
      assert (lookup_resp_bits_crossHit == (r_hit && r_shr && r_pcid != s_pcid));
      if (SH && r_hit && r_priv) begin                       // P1
        assert (r_pcid == s_pcid);
        assert (r_ccid == s_ccid);
        assert (r_vmid == s_vmid);
      end
      if (SH && r_hit && r_shr) begin                        // P2
        assert (r_ccid == s_ccid);
        assert (r_vmid == s_vmid);
        assert (!pc_reject(s_pcIdxValid, s_pcIdx, r_pc));
      end
      if (SH && r_hit && !r_g) assert (r_ccid == s_ccid && r_vmid == s_vmid);    // P3
      if (!SH && r_hit && !r_g) assert (r_pcid == s_pcid && r_vmid == s_vmid);   // P5
      if (r_hit) assert (r_vmid == s_vmid);                  // P6: every class, global included
      if (!SH) assert (!lookup_resp_bits_shared && !lookup_resp_bits_crossHit);
      if (s_flag) assert (!r_k);                             // P4
      // F: the response is the doc's match rule and priority on the storage at acceptance
      assert (r_hit == s_hit);
      if (s_hit) begin
        assert (lookup_resp_bits_ppn == s_ppn);
        assert (lookup_resp_bits_pageSize == s_size);
      end
      assert (lookup_resp_bits_shared == s_shared);
      assert (lookup_resp_bits_crossHit == s_cross);
    end
  end

  // ------------------------------------------------------------------ covers
  reg [31:0] c_evict_q;
  reg c_evict_ok;             // c_evict_q holds a post-reset value
  reg [N-1:0] c_rm5_q;        // entries the last kind-5 invalidation should remove, until it lands
  reg [N-1:0] c_rm5_shr_q;
  reg c_rej_seen;             // a lookup missed because of a PC-bit rejection ...
  reg [V-1:0] c_rej_vpn; reg [PI-1:0] c_rej_pcid; reg [CI-1:0] c_rej_ccid;
  reg [XI-1:0] c_rej_pcIdx; reg [VW-1:0] c_rej_vmid;   // ... with this request
  always @(posedge clock) begin
    c_evict_q   <= perf_evictions;
    c_evict_ok  <= f_past_valid && !reset;
    // held until the invalidation has landed (the end of its write shadow)
    if (iv_fire && inval_bits_kind == 3'd5) begin
      c_rm5_q <= e_rm5; c_rm5_shr_q <= e_rm5 & e_shr;
    end else if (f_shadow == 4'd0) begin
      c_rm5_q <= {N{1'b0}}; c_rm5_shr_q <= {N{1'b0}};
    end
    if (reset) c_rej_seen <= 1'b0;
    else if (s_valid && s_rej && !r_hit && s_pcIdxValid && !c_rej_seen) begin
      c_rej_seen <= 1'b1;
      c_rej_vpn <= s_vpn; c_rej_pcid <= s_pcid; c_rej_ccid <= s_ccid; c_rej_pcIdx <= s_pcIdx;
      c_rej_vmid <= s_vmid;
    end
  end
  wire r_valid_hit = f_past_valid && lookup_resp_valid && r_hit;
  wire c_req_could_hit_k = same_page(s_vpn, k_vpn, k_size) && s_vmid == k_vmid &&
                           (k_class == C_GLOBAL ||
                            (k_class == C_PRIVATE && s_pcid == k_pcid && (!SH || s_ccid == k_ccid)) ||
                            (k_class == C_SHARED && s_ccid == k_ccid));

  // pipeline covers: back-to-back lookups fill every stage; a lookup accepted the first cycle
  // after a fill's shadow hits that fill's entry (its PPN tag carries the fill's identity and
  // c_fl_ppn the fill's PPN)
  reg [7:0] c_run;            // consecutive cycles with an accepted lookup
  reg [7:0] c_since_fill;     // cycles since the last accepted fill
  reg [PP-1:0] c_fl_ppn;
  reg c_fl_lk;                // the lookup accepted right after the shadow: its response is due
  reg [V-1:0] c_fl_vpn;
  always @(posedge clock) begin
    c_run <= (reset || !lk_fire) ? 8'd0 : (c_run == 8'hff ? c_run : c_run + 8'd1);
    if (reset) c_since_fill <= 8'hff;
    else if (fl_fire) begin c_since_fill <= 8'd0; c_fl_ppn <= fill_bits_ppn; c_fl_vpn <= fill_bits_vpn; end
    else if (c_since_fill != 8'hff) c_since_fill <= c_since_fill + 8'd1;
  end
  wire c_first_after_fill = lk_fire && c_since_fill == SHADOW && lookup_req_bits_vpn == c_fl_vpn;
  reg [L-1:0] c_fl_lk_q;
  always @(posedge clock) c_fl_lk_q <= reset ? {L{1'b0}} : {c_fl_lk_q, c_first_after_fill};

  always @* if (f_past_valid && !reset) begin
    if (L > 1) cover (c_run == L + 1);                              // every stage holds a lookup
    cover (s_valid && c_fl_lk_q[L-1] && r_hit &&
           lookup_resp_bits_ppn[PP-1:TAG_LO] == c_fl_ppn[PP-1:TAG_LO]);  // first lookup after a fill sees it
    cover (r_valid_hit && r_priv);                                  // private hit
    cover (r_valid_hit && r_g);                                     // global hit
    cover (r_valid_hit && lookup_resp_bits_pageSize == 2'd1);       // 2 MiB hit
    cover (r_valid_hit && lookup_resp_bits_pageSize == 2'd2);       // 1 GiB hit
    cover (c_evict_ok && perf_evictions != c_evict_q);                           // an eviction
    cover (f_shadow == 0 && c_rm5_q != 0 && (c_rm5_q & dbg_valid) == 0);    // kind 5 removed a valid entry
    cover (lookup_resp_valid && s_flag && s_flag_rm && c_req_could_hit_k);  // lookup after removing inval
    if (!SH) begin
      cover (r_valid_hit && r_priv && r_ccid != s_ccid);            // PCID-tagged: hit ignores ccid
      cover (r_valid_hit && !r_g && !r_own);                        // fill with own = 0 stored private
    end
    if (SH) begin
      cover (r_valid_hit && r_shr);                                 // shared hit
      cover (lookup_resp_valid && s_rej && !r_hit && s_pcIdx >= PB); // out-of-range pcIdx rejects
      cover (r_valid_hit && lookup_resp_bits_crossHit);             // cross-process shared hit
      cover (f_shadow == 0 && c_rm5_shr_q != 0 && (c_rm5_shr_q & dbg_valid) == 0);  // kind 5 removed a shared entry
      cover (r_valid_hit && r_priv && s_rej);                       // PC-bit rejection + private hit, one request
      cover (r_valid_hit && r_priv && c_rej_seen && s_vpn == c_rej_vpn && s_pcid == c_rej_pcid
             && s_ccid == c_rej_ccid && s_vmid == c_rej_vmid && s_pcIdxValid
             && s_pcIdx == c_rej_pcIdx);                                   // ... then private hit
    end
  end

  // ------------------------------------------------------------------ VM isolation covers (VM > 0)
  // e_g0: a valid global entry of VM 0 covering the request whose response is due now;
  // c_twin6 / c_twin7: valid entries of another VM than inval.vmid with the key (but for the
  // vmid) of an entry that kind 6 / 7 with the inval inputs removes
  generate
    for (gi = 0; gi < N; gi = gi + 1) begin : g_c0
      assign e_g0[gi] = dbg_valid[gi] && dbg_global[gi] && dbg_vmid[gi*VW +: VW] == {VW{1'b0}}
                        && same_page(dbg_vpn[gi*V +: V], s_vpn, dbg_pageSize[gi*2 +: 2]);
    end
  endgenerate
  reg [N-1:0] c_twin6, c_twin7;
  integer ci, cj;
  always @* begin
    c_twin6 = {N{1'b0}}; c_twin7 = {N{1'b0}};
    for (ci = 0; ci < N; ci = ci + 1)
      for (cj = 0; cj < N; cj = cj + 1)
        if (key_eq[ci*N + cj] && dbg_valid[cj] && dbg_vmid[cj*VW +: VW] != inval_bits_vmid) begin
          if (e_rm6[ci]) c_twin6[cj] = 1'b1;
          if (e_rm7[ci]) c_twin7[cj] = 1'b1;
        end
  end
  // held until the invalidation has landed, as c_rm5_q
  reg [N-1:0] c_rm6_q, c_keep6_q, c_rm7_q, c_keep7_q;
  always @(posedge clock) begin
    if (iv_fire && inval_bits_kind == 3'd6) begin
      c_rm6_q <= e_rm6; c_keep6_q <= c_twin6;
    end else if (f_shadow == 4'd0) begin
      c_rm6_q <= {N{1'b0}}; c_keep6_q <= {N{1'b0}};
    end
    if (iv_fire && inval_bits_kind == 3'd7) begin
      c_rm7_q <= e_rm7; c_keep7_q <= c_twin7;
    end else if (f_shadow == 4'd0) begin
      c_rm7_q <= {N{1'b0}}; c_keep7_q <= {N{1'b0}};
    end
  end
  generate if (VM > 0) begin : g_vm_cover
    always @* if (f_past_valid && !reset) begin
      // a global hit in VM 1 while VM 0 holds a global entry of the same page
      cover (r_valid_hit && r_g && r_vmid == 1 && e_g0 != 0);
      // kind 6 removed entries of its VM; another VM's entries of the same keys survive
      cover (f_shadow == 0 && c_rm6_q != 0 && (c_rm6_q & dbg_valid) == 0
             && c_keep6_q != 0 && (c_keep6_q & ~dbg_valid) == 0);
      // kind 7 likewise for its page
      cover (f_shadow == 0 && c_rm7_q != 0 && (c_rm7_q & dbg_valid) == 0
             && c_keep7_q != 0 && (c_keep7_q & ~dbg_valid) == 0);
    end
  end endgenerate
endmodule
