// split_tlb_fv: the proof harness of formal/checkers (checkers.sby): split_tlb (the user
// design) with every input free, under the environment rules of its own ports: reset high in
// the first cycle, no channel offered during reset, and each of its request channels holding
// while not ready (the same rule module the checkers use, as an assumption). The TLBs' port
// contracts are checked by the babelfish_tlb_chk instances inside split_tlb; which side they
// assert is the task's (checkers.sby defines XLAT_CHK_IN / XLAT_CHK_OUT).
`default_nettype none

module split_tlb_fv (
  input wire clock
);
`include "params.svh"
  localparam V = P_VPN_BITS, PP = P_PPN_BITS, PI = P_PCID_BITS, CI = P_CCID_BITS;
  localparam PB = P_PC_BITS, XI = P_PC_IDX_BITS;

  (* anyseq *) reg          reset;
  (* anyseq *) reg          lookup_valid, lookup_side, lookup_pcIdxValid, lookup_user;
  (* anyseq *) reg [V-1:0]  lookup_vpn;
  (* anyseq *) reg [PI-1:0] lookup_pcid;
  (* anyseq *) reg [CI-1:0] lookup_ccid;
  (* anyseq *) reg [XI-1:0] lookup_pcIdx;
  (* anyseq *) reg [1:0]    lookup_cmd;
  (* anyseq *) reg          fill_valid, fill_side, fill_dirty, fill_global, fill_own;
  (* anyseq *) reg [V-1:0]  fill_vpn;
  (* anyseq *) reg [PP-1:0] fill_ppn;
  (* anyseq *) reg [1:0]    fill_pageSize;
  (* anyseq *) reg [3:0]    fill_perm;
  (* anyseq *) reg [PI-1:0] fill_pcid;
  (* anyseq *) reg [CI-1:0] fill_ccid;
  (* anyseq *) reg [PB-1:0] fill_pc;
  (* anyseq *) reg          inval_valid;
  (* anyseq *) reg [2:0]    inval_kind;
  (* anyseq *) reg [V-1:0]  inval_vpn;
  (* anyseq *) reg [PI-1:0] inval_pcid;
  (* anyseq *) reg [CI-1:0] inval_ccid;
  wire lookup_ready, fill_ready, inval_ready;
  wire i_resp_valid, i_resp_hit, d_resp_valid, d_resp_hit;
  wire [PP-1:0] i_resp_ppn, d_resp_ppn;

  split_tlb #(
    .P_VPN_BITS(P_VPN_BITS), .P_PPN_BITS(P_PPN_BITS), .P_PCID_BITS(P_PCID_BITS),
    .P_CCID_BITS(P_CCID_BITS), .P_PC_BITS(P_PC_BITS), .P_PC_IDX_BITS(P_PC_IDX_BITS),
    .P_VMID_BITS(P_VMID_BITS), .P_SHARING(P_SHARING), .P_LATENCY(P_LATENCY),
    .CHK_IN_ASSUME(`XLAT_CHK_IN), .CHK_OUT_ASSUME(`XLAT_CHK_OUT)
  ) dut (.*);

  // the environment of split_tlb's own ports
  reg init = 1'b1;
  always @(posedge clock) init <= 1'b0;
  always @(*) begin
    if (init) assume (reset);
    if (reset) assume (!lookup_valid && !fill_valid && !inval_valid);
  end
  xlat_chk_channel #(.W(V + PI + CI + XI + 5), .ASSUME(1)) e_lookup (
    .clock(clock), .reset(reset), .valid(lookup_valid), .ready(lookup_ready),
    .payload({lookup_side, lookup_vpn, lookup_pcid, lookup_ccid, lookup_pcIdx, lookup_pcIdxValid,
              lookup_cmd, lookup_user}));
  xlat_chk_channel #(.W(V + PP + PI + CI + PB + 10), .ASSUME(1)) e_fill (
    .clock(clock), .reset(reset), .valid(fill_valid), .ready(fill_ready),
    .payload({fill_side, fill_vpn, fill_ppn, fill_pageSize, fill_perm, fill_dirty, fill_global,
              fill_pcid, fill_ccid, fill_own, fill_pc}));
  xlat_chk_channel #(.W(3 + V + PI + CI), .ASSUME(1)) e_inval (
    .clock(clock), .reset(reset), .valid(inval_valid), .ready(inval_ready),
    .payload({inval_kind, inval_vpn, inval_pcid, inval_ccid}));
endmodule

`default_nettype wire
