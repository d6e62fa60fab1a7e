// perforated_l2tlb_chk: PerforatedL2Tlb's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec perforated-l2tlb.md "Ports" and "Properties to prove", README.md "Interface
// conventions"):
//   inputs  (IN_ASSUME):  `req`, `inval` and `mem_resp` hold valid and payload while not
//                         ready; memory answers only ids it was asked
//   outputs (OUT_ASSUME): `resp` and `mem_req` hold while not ready; a response only for an id
//                         with a request outstanding, one per accepted request (counted per
//                         id: "`id` is not interpreted, two requests in flight may share one",
//                         docs/perforated-l2tlb.md); memory requests carry ids not
//                         outstanding; `invalDone` pulses only for an accepted `inval` not
//                         yet done
// Parameters: the widths of the named ports in the configuration's manifest.json.
`default_nettype none

module perforated_l2tlb_chk #(
  parameter ID_BITS    = 4,   // req_bits_id, resp_bits_id
  parameter REQ_BITS   = 1,   // every req_bits_* field but id, concatenated
  parameter RESP_BITS  = 1,   // every resp_bits_* field but id
  parameter MID_BITS   = 1,   // mem_req_bits_id, mem_resp_bits_id
  parameter ADDR_BITS  = 52,  // mem_req_bits_addr
  parameter INVAL_BITS = 1,   // every inval_bits_* field
  parameter CW         = 3,   // outstanding requests per id the checker counts
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  input wire                  clock,
  input wire                  reset,
  `XLAT_CHK_REQRESP_PORTS(id, ID_BITS)   // req / resp: payload = every field but id
  `XLAT_CHK_MEM_PORTS
  input wire                  inval_valid,
  input wire                  inval_ready,
  input wire [INVAL_BITS-1:0] inval_payload,   // connect {inval_bits_*}
  input wire                  invalDone_valid
);
  xlat_chk_channel #(.W(INVAL_BITS), .ASSUME(IN_ASSUME)) c_inval (
    .clock(clock), .reset(reset), .valid(inval_valid), .ready(inval_ready), .payload(inval_payload));
  `XLAT_CHK_REQRESP(i_req, id, ID_BITS, CW, 0)
  xlat_chk_mem #(.MID_BITS(MID_BITS), .ADDR_BITS(ADDR_BITS), .IN_ASSUME(IN_ASSUME),
                 .OUT_ASSUME(OUT_ASSUME)) m_mem (.*);

  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_inval (
    .clock(clock), .reset(reset), .req_fire(inval_valid && inval_ready), .req_id(1'b0),
    .rsp_valid(invalDone_valid), .rsp_fire(invalDone_valid), .rsp_id(1'b0));
endmodule

`default_nettype wire
