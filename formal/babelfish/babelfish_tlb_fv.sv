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
//           fill.ppn[PPN-1 -: TAG_W] = {global, own, pcid, ccid, pc}
//         The tag sits above bit 18, so superpage responses (which replace only the low 9/18
//         bits by the VPN offset) keep it: a hit's returned PPN names the kind of entry that
//         served it. Nothing else about fills, lookups or invalidations is constrained (bad
//         page sizes, unaligned superpage PPNs, out-of-range pcIdx, cmd 3, inval kinds 6/7 are
//         all allowed).
//   * The accepted lookup request is kept in a shadow pipeline for P_LATENCY cycles, together
//     with the expected response computed from the storage (dbg_* ports) at acceptance.
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
//   R   response consistency: one response per accepted lookup, P_LATENCY cycles later;
//       shared / crossHit / permFault agree with the served entry and the returned permissions
//   F   functional: hit, ppn (incl. superpage offset), pageSize, shared and crossHit equal the
//       doc's match rule + priority (private > global > shared, 4 KiB array first, then lowest
//       superpage index) evaluated on the storage at acceptance
//   T   timing: at most one operation accepted per cycle; flops: readies follow the priority rule
// Strengthening invariants on the storage (asserted, so proven too):
//   I1  a valid entry's PPN tag equals its identity (stored global/pcid/ccid; own and pc with
//       sharing on: sharing off stores own = 1 and does not keep pc)
//   I2  4 KiB entries have pageSize 0 and sit in set vpn % sets
//   I3  superpage entries have pageSize 1 or 2 and VPN/PPN low 9/18 bits zero
//   I4  no two valid entries of one array have the same key
//   I5  sharing off: every valid non-global entry is stored with own = 1
//   I6  while K's flag is set, no valid entry has K's identity, size and page
//   I7  sharing on: a valid entry's stored ORPC bit (dbg_orpc) is the OR of its pc
// Covers (cover tasks, end of file): private / global / 2 MiB / 1 GiB hits, an eviction, a kind-5
// invalidation removing a valid entry, a lookup after an invalidation that removed K's entry;
// sharing on: shared hit, cross-process shared hit, kind 5 removing a shared entry, an
// out-of-range pcIdx rejecting a shared entry, a PC-bit rejection and a private hit in one
// request, and a PC-bit miss followed by a private hit for the same request; sharing off: a hit
// across ccids, and a fill with own = 0 serving as a private entry.
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

  // PPN tag layout, MSB first: {global, own, pcid, ccid, pc}
  localparam TAG_W   = 2 + PI + CI + PB;
  localparam TAG_LO  = PP - TAG_W;
  localparam T_PC    = TAG_LO;
  localparam T_CCID  = T_PC + PB;
  localparam T_PCID  = T_CCID + CI;
  localparam T_OWN   = T_PCID + PI;
  localparam T_GLOB  = T_OWN + 1;

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
  (* anyseq *) reg [PB-1:0] fill_bits_pc;
  (* anyseq *) reg          inval_valid;
  (* anyseq *) reg [2:0]    inval_bits_kind;
  (* anyseq *) reg [V-1:0]  inval_bits_vpn;
  (* anyseq *) reg [PI-1:0] inval_bits_pcid;
  (* anyseq *) reg [CI-1:0] inval_bits_ccid;

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

  BabelFishTlb dut (
    .clock(clock), .reset(reset),
    .lookup_req_valid(lookup_req_valid), .lookup_req_ready(lookup_req_ready),
    .lookup_req_bits_vpn(lookup_req_bits_vpn), .lookup_req_bits_pcid(lookup_req_bits_pcid),
    .lookup_req_bits_ccid(lookup_req_bits_ccid), .lookup_req_bits_pcIdx(lookup_req_bits_pcIdx),
    .lookup_req_bits_pcIdxValid(lookup_req_bits_pcIdxValid), .lookup_req_bits_cmd(lookup_req_bits_cmd),
    .lookup_req_bits_user(lookup_req_bits_user),
    .lookup_resp_valid(lookup_resp_valid), .lookup_resp_bits_hit(lookup_resp_bits_hit),
    .lookup_resp_bits_ppn(lookup_resp_bits_ppn), .lookup_resp_bits_pageSize(lookup_resp_bits_pageSize),
    .lookup_resp_bits_perm_r(lookup_resp_bits_perm_r), .lookup_resp_bits_perm_w(lookup_resp_bits_perm_w),
    .lookup_resp_bits_perm_x(lookup_resp_bits_perm_x), .lookup_resp_bits_perm_u(lookup_resp_bits_perm_u),
    .lookup_resp_bits_dirty(lookup_resp_bits_dirty), .lookup_resp_bits_shared(lookup_resp_bits_shared),
    .lookup_resp_bits_crossHit(lookup_resp_bits_crossHit),
    .lookup_resp_bits_permFault(lookup_resp_bits_permFault),
    .fill_valid(fill_valid), .fill_ready(fill_ready),
    .fill_bits_vpn(fill_bits_vpn), .fill_bits_ppn(fill_bits_ppn), .fill_bits_pageSize(fill_bits_pageSize),
    .fill_bits_perm_r(fill_bits_perm_r), .fill_bits_perm_w(fill_bits_perm_w),
    .fill_bits_perm_x(fill_bits_perm_x), .fill_bits_perm_u(fill_bits_perm_u),
    .fill_bits_dirty(fill_bits_dirty), .fill_bits_global(fill_bits_global),
    .fill_bits_pcid(fill_bits_pcid), .fill_bits_ccid(fill_bits_ccid), .fill_bits_own(fill_bits_own),
    .fill_bits_pc(fill_bits_pc),
    .inval_valid(inval_valid), .inval_ready(inval_ready), .inval_bits_kind(inval_bits_kind),
    .inval_bits_vpn(inval_bits_vpn), .inval_bits_pcid(inval_bits_pcid), .inval_bits_ccid(inval_bits_ccid),
    .perf_evictions(perf_evictions),
    .dbg_valid(dbg_valid), .dbg_vpn(dbg_vpn), .dbg_ppn(dbg_ppn), .dbg_pageSize(dbg_pageSize),
    .dbg_global(dbg_global), .dbg_own(dbg_own), .dbg_pcid(dbg_pcid), .dbg_ccid(dbg_ccid), .dbg_pc(dbg_pc), .dbg_orpc(dbg_orpc)
  );

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
      assume (fill_bits_ppn[PP-1:TAG_LO] ==
              {fill_bits_global, fill_bits_own, fill_bits_pcid, fill_bits_ccid, fill_bits_pc});
  end

  wire lk_fire = lookup_req_valid && lookup_req_ready;
  wire fl_fire = fill_valid && fill_ready;
  wire iv_fire = inval_valid && inval_ready;

  // ------------------------------------------------------------------ symbolic key K
  localparam [1:0] C_SHARED = 2'd0, C_GLOBAL = 2'd1, C_PRIVATE = 2'd2;
  (* anyconst *) reg [1:0]    k_class;
  (* anyconst *) reg [V-1:0]  k_vpn;
  (* anyconst *) reg [1:0]    k_size;
  (* anyconst *) reg [PI-1:0] k_pcid;
  (* anyconst *) reg [CI-1:0] k_ccid;
  always @* begin
    assume (k_size <= 2'd2);
    assume (k_class <= C_PRIVATE);
    if (!SH) assume (k_class != C_SHARED);
  end

  // an entry / fill / response tag with these fields has K's identity
  function automatic k_ident(input g, input own, input [PI-1:0] pcid, input [CI-1:0] ccid);
    case (k_class)
      C_GLOBAL:  k_ident = g;
      C_PRIVATE: k_ident = !g && (own || !SH) && pcid == k_pcid && ccid == k_ccid;
      default:   k_ident = !g && !own && SH && ccid == k_ccid;
    endcase
  endfunction

  // invalidation accepted this cycle removes entries with K's attributes (doc kind table)
  reg inv_removes_k;
  always @* begin
    case (inval_bits_kind)
      3'd1:    inv_removes_k = k_class != C_GLOBAL;
      3'd2:    inv_removes_k = k_class == C_PRIVATE && k_pcid == inval_bits_pcid;
      3'd3:    inv_removes_k = k_class != C_GLOBAL && k_ccid == inval_bits_ccid;
      3'd4:    inv_removes_k = k_class == C_PRIVATE && k_pcid == inval_bits_pcid
                               && same_page(k_vpn, inval_bits_vpn, k_size);
      3'd5:    inv_removes_k = k_class != C_GLOBAL && k_ccid == inval_bits_ccid
                               && same_page(k_vpn, inval_bits_vpn, k_size);
      default: inv_removes_k = 1'b1;   // 0 all; 6, 7 act as 0
    endcase
  end

  wire fill_is_k = fill_bits_pageSize == k_size && same_page(fill_bits_vpn, k_vpn, k_size)
                   && k_ident(fill_bits_global, fill_bits_own, fill_bits_pcid, fill_bits_ccid);

  // ------------------------------------------------------------------ per-entry view of the storage
  wire [N-1:0] e_priv, e_glob, e_shr;      // class (valid or not)
  wire [N-1:0] e_match;                    // valid and matches the lookup request on the inputs
  wire [N-1:0] e_k;                        // valid with K's identity, size and page
  wire [N-1:0] e_rej;                      // valid shared entry of the request's page+ccid, rejected by the PC bit
  wire [N-1:0] e_rm5;                      // valid entry that kind 5 with the inval inputs removes
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

      assign e_glob[gi] = eg;
      assign e_priv[gi] = !eg && (eown || !SH);
      assign e_shr[gi]  = !eg && !eown && SH;

      wire vm = ev && same_page(evpn, lookup_req_bits_vpn, esz);
      wire rej = pc_reject(lookup_req_bits_pcIdxValid, lookup_req_bits_pcIdx, epc);
      assign e_match[gi] = vm && (eg ||
                                  (!SH  ? epcid == lookup_req_bits_pcid :
                                   eown ? epcid == lookup_req_bits_pcid && eccid == lookup_req_bits_ccid :
                                          eccid == lookup_req_bits_ccid && !rej));
      assign e_rej[gi] = vm && e_shr[gi] && eccid == lookup_req_bits_ccid && rej;
      assign e_rppn[gi*PP +: PP] = (eppn & pmask(esz)) | ({{PP{1'b0}}, lookup_req_bits_vpn} & ~pmask(esz));
      assign e_k[gi] = ev && esz == k_size && same_page(evpn, k_vpn, k_size) && k_ident(eg, eown, epcid, eccid);
      assign e_rm5[gi] = ev && !eg && eccid == inval_bits_ccid && same_page(evpn, inval_bits_vpn, esz);

      // ---- invariants
      always @* if (f_past_valid && ev) begin
        // I1: the PPN tag is the entry's identity. Sharing off: own is stored as 1 whatever the
        //     fill said, and pc is not kept (dbg_pc reads 0), so neither is compared.
        assert (eppn[T_GLOB] == eg);
        assert (eppn[T_PCID +: PI] == epcid);
        assert (eppn[T_CCID +: CI] == eccid);
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

    // I4: no two valid entries of one array share a key
    for (gi = 0; gi < N; gi = gi + 1) begin : g_k1
      for (gj = gi + 1; gj < N; gj = gj + 1) begin : g_k2
        if ((gi < NA) == (gj < NA)) begin : g_same_array
          wire same_key =
            dbg_pageSize[gi*2 +: 2] == dbg_pageSize[gj*2 +: 2] &&
            same_page(dbg_vpn[gi*V +: V], dbg_vpn[gj*V +: V], dbg_pageSize[gi*2 +: 2]) &&
            ((e_glob[gi] && e_glob[gj]) ||
             (e_priv[gi] && e_priv[gj] && dbg_pcid[gi*PI +: PI] == dbg_pcid[gj*PI +: PI]) ||
             (e_shr[gi]  && e_shr[gj]  && dbg_ccid[gi*CI +: CI] == dbg_ccid[gj*CI +: CI]));
          always @* if (f_past_valid) assert (!(dbg_valid[gi] && dbg_valid[gj] && same_key));
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
        x_cross  = x_cross | (e_shr[i] && dbg_pcid[i*PI +: PI] != lookup_req_bits_pcid);
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
  always @* if (f_past_valid && k_flag) assert (e_k == 0);   // I6

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
  localparam SW = V + PI + CI + XI + 1 + 2 + 1 + 2 + 1 + PP + 2 + 1 + 1 + 1;
  wire [SW-1:0] s_in = {lookup_req_bits_vpn, lookup_req_bits_pcid, lookup_req_bits_ccid,
                        lookup_req_bits_pcIdx, lookup_req_bits_pcIdxValid, lookup_req_bits_cmd,
                        lookup_req_bits_user, k_flag, k_flag_rm,
                        x_hit, x_ppn, x_size, x_shared, x_cross, x_rej};
  reg [L-1:0]    s_v;
  reg [L*SW-1:0] s_d;
  always @(posedge clock) begin
    s_v <= reset ? {L{1'b0}} : {s_v, lk_fire};
    s_d <= {s_d, s_in};
  end
  wire          s_valid = s_v[L-1];
  wire [V-1:0]  s_vpn;
  wire [PI-1:0] s_pcid;
  wire [CI-1:0] s_ccid;
  wire [XI-1:0] s_pcIdx;
  wire          s_pcIdxValid, s_user, s_flag, s_flag_rm, s_hit, s_shared, s_cross, s_rej;
  wire [1:0]    s_cmd, s_size;
  wire [PP-1:0] s_ppn;
  assign {s_vpn, s_pcid, s_ccid, s_pcIdx, s_pcIdxValid, s_cmd, s_user, s_flag, s_flag_rm,
          s_hit, s_ppn, s_size, s_shared, s_cross, s_rej} = s_d[(L-1)*SW +: SW];

  // ------------------------------------------------------------------ response checks
  wire          r_hit   = lookup_resp_bits_hit;
  wire          r_g     = lookup_resp_bits_ppn[T_GLOB];
  wire          r_own   = lookup_resp_bits_ppn[T_OWN];
  wire [PI-1:0] r_pcid  = lookup_resp_bits_ppn[T_PCID +: PI];
  wire [CI-1:0] r_ccid  = lookup_resp_bits_ppn[T_CCID +: CI];
  wire [PB-1:0] r_pc    = lookup_resp_bits_ppn[T_PC +: PB];
  wire          r_priv  = !r_g && (r_own || !SH);
  wire          r_shr   = !r_g && !r_own && SH;
  wire          r_fault = (s_cmd == 2'd0 && !lookup_resp_bits_perm_r) ||
                          (s_cmd == 2'd1 && (!lookup_resp_bits_perm_w || !lookup_resp_bits_dirty)) ||
                          (s_cmd == 2'd2 && !lookup_resp_bits_perm_x) ||
                          (s_cmd == 2'd3) ||
                          (s_user && !lookup_resp_bits_perm_u);
  wire          r_k     = r_hit && lookup_resp_bits_pageSize == k_size && same_page(s_vpn, k_vpn, k_size)
                          && k_ident(r_g, r_own, r_pcid, r_ccid);

  always @* if (f_past_valid) begin
    // R: exactly one response per accepted lookup, P_LATENCY cycles later
    assert (lookup_resp_valid == s_valid);
    // T: one operation per cycle; flops: readies are high except for the priority rule
    assert (!(iv_fire && fl_fire) && !(iv_fire && lk_fire) && !(fl_fire && lk_fire));
    if (L == 1 && !reset) begin
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
      end
      if (SH && r_hit && r_shr) begin                        // P2
        assert (r_ccid == s_ccid);
        assert (!pc_reject(s_pcIdxValid, s_pcIdx, r_pc));
      end
      if (SH && r_hit && !r_g) assert (r_ccid == s_ccid);    // P3
      if (!SH && r_hit && !r_g) assert (r_pcid == s_pcid);   // P5
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
  reg [N-1:0] c_rm5_q;        // entries a kind-5 invalidation accepted last cycle should remove
  reg [N-1:0] c_rm5_shr_q;
  reg c_rej_seen;             // a lookup missed because of a PC-bit rejection ...
  reg [V-1:0] c_rej_vpn; reg [PI-1:0] c_rej_pcid; reg [CI-1:0] c_rej_ccid;
  reg [XI-1:0] c_rej_pcIdx;   // ... with this request
  always @(posedge clock) begin
    c_evict_q   <= perf_evictions;
    c_evict_ok  <= f_past_valid && !reset;
    c_rm5_q     <= (iv_fire && inval_bits_kind == 3'd5) ? e_rm5 : {N{1'b0}};
    c_rm5_shr_q <= (iv_fire && inval_bits_kind == 3'd5) ? (e_rm5 & e_shr) : {N{1'b0}};
    if (reset) c_rej_seen <= 1'b0;
    else if (s_valid && s_rej && !r_hit && s_pcIdxValid && !c_rej_seen) begin
      c_rej_seen <= 1'b1;
      c_rej_vpn <= s_vpn; c_rej_pcid <= s_pcid; c_rej_ccid <= s_ccid; c_rej_pcIdx <= s_pcIdx;
    end
  end
  wire r_valid_hit = f_past_valid && lookup_resp_valid && r_hit;
  wire c_req_could_hit_k = same_page(s_vpn, k_vpn, k_size) &&
                           (k_class == C_GLOBAL ||
                            (k_class == C_PRIVATE && s_pcid == k_pcid && (!SH || s_ccid == k_ccid)) ||
                            (k_class == C_SHARED && s_ccid == k_ccid));

  always @* if (f_past_valid && !reset) begin
    cover (r_valid_hit && r_priv);                                  // private hit
    cover (r_valid_hit && r_g);                                     // global hit
    cover (r_valid_hit && lookup_resp_bits_pageSize == 2'd1);       // 2 MiB hit
    cover (r_valid_hit && lookup_resp_bits_pageSize == 2'd2);       // 1 GiB hit
    cover (c_evict_ok && perf_evictions != c_evict_q);                           // an eviction
    cover (c_rm5_q != 0 && (c_rm5_q & dbg_valid) == 0);             // kind 5 removed a valid entry
    cover (lookup_resp_valid && s_flag && s_flag_rm && c_req_could_hit_k);  // lookup after removing inval
    if (!SH) begin
      cover (r_valid_hit && r_priv && r_ccid != s_ccid);            // PCID-tagged: hit ignores ccid
      cover (r_valid_hit && !r_g && !r_own);                        // fill with own = 0 stored private
    end
    if (SH) begin
      cover (r_valid_hit && r_shr);                                 // shared hit
      cover (lookup_resp_valid && s_rej && !r_hit && s_pcIdx >= PB); // out-of-range pcIdx rejects
      cover (r_valid_hit && lookup_resp_bits_crossHit);             // cross-process shared hit
      cover (c_rm5_shr_q != 0 && (c_rm5_shr_q & dbg_valid) == 0);   // kind 5 removed a shared entry
      cover (r_valid_hit && r_priv && s_rej);                       // PC-bit rejection + private hit, one request
      cover (r_valid_hit && r_priv && c_rej_seen && s_vpn == c_rej_vpn && s_pcid == c_rej_pcid
             && s_ccid == c_rej_ccid && s_pcIdxValid && s_pcIdx == c_rej_pcIdx);  // ... then private hit
    end
  end
endmodule
