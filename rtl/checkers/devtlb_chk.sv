// devtlb_chk: DevTlb's port contract as a bindable checker (docs/checkers.md).
//
// Rules (spec devtlb.md "Ports" and "Properties", README.md "Interface conventions"):
//   inputs  (IN_ASSUME):  `req`, `ats_resp` and `inval` hold valid and payload while not
//                         ready; the ATS side completes only tags it was asked (an unknown
//                         tag is bad input the block ignores and counts: perf_badCompletions)
//   outputs (OUT_ASSUME): `resp` and `ats_req` hold while not ready; a response only for a tag
//                         outstanding, one per accepted request (counted per tag: the device's
//                         tags are passed through, not required distinct); `invalDone` pulses
//                         only for an accepted `inval` not yet done
// Parameters: the widths of the named ports in the configuration's manifest.json.
`default_nettype none

module devtlb_chk #(
  parameter TAG_BITS      = 8,   // req_bits_tag, resp_bits_tag
  parameter REQ_BITS      = 1,   // every req_bits_* field but tag, concatenated
  parameter RESP_BITS     = 1,   // every resp_bits_* field but tag
  parameter ATS_TAG_BITS  = 1,   // ats_req_bits_tag, ats_resp_bits_tag
  parameter ATS_REQ_BITS  = 1,   // every ats_req_bits_* field but tag
  parameter ATS_RESP_BITS = 1,   // every ats_resp_bits_* field but tag
  parameter INVAL_BITS    = 1,   // every inval_bits_* field
  parameter CW            = 3,   // outstanding requests per tag the checker counts
  parameter IN_ASSUME     = 1,
  parameter OUT_ASSUME    = 0
) (
  input wire                     clock,
  input wire                     reset,
  `XLAT_CHK_REQRESP_PORTS(tag, TAG_BITS)   // req / resp: payload = every field but tag
  input wire                     ats_req_valid,
  input wire                     ats_req_ready,
  input wire [ATS_TAG_BITS-1:0]  ats_req_bits_tag,
  input wire [ATS_REQ_BITS-1:0]  ats_req_payload,   // connect {ats_req_bits_*} but tag
  input wire                     ats_resp_valid,
  input wire                     ats_resp_ready,
  input wire [ATS_TAG_BITS-1:0]  ats_resp_bits_tag,
  input wire [ATS_RESP_BITS-1:0] ats_resp_payload,  // connect {ats_resp_bits_*} but tag
  input wire                     inval_valid,
  input wire                     inval_ready,
  input wire [INVAL_BITS-1:0]    inval_payload,     // connect {inval_bits_*}
  input wire                     invalDone
);
  xlat_chk_channel #(.W(ATS_TAG_BITS + ATS_RESP_BITS), .ASSUME(IN_ASSUME)) c_ats_resp (
    .clock(clock), .reset(reset), .valid(ats_resp_valid), .ready(ats_resp_ready),
    .payload({ats_resp_bits_tag, ats_resp_payload}));
  xlat_chk_channel #(.W(INVAL_BITS), .ASSUME(IN_ASSUME)) c_inval (
    .clock(clock), .reset(reset), .valid(inval_valid), .ready(inval_ready), .payload(inval_payload));
  `XLAT_CHK_REQRESP(i_req, tag, TAG_BITS, CW, 0)
  xlat_chk_channel #(.W(ATS_TAG_BITS + ATS_REQ_BITS), .ASSUME(OUT_ASSUME)) c_ats_req (
    .clock(clock), .reset(reset), .valid(ats_req_valid), .ready(ats_req_ready),
    .payload({ats_req_bits_tag, ats_req_payload}));

  xlat_chk_ids #(.IDW(ATS_TAG_BITS), .CW(CW), .UNIQUE(0), .RSP_ASSUME(IN_ASSUME)) i_ats (
    .clock(clock), .reset(reset), .req_fire(ats_req_valid && ats_req_ready),
    .req_id(ats_req_bits_tag), .rsp_valid(ats_resp_valid),
    .rsp_fire(ats_resp_valid && ats_resp_ready), .rsp_id(ats_resp_bits_tag));
  xlat_chk_ids #(.IDW(0), .CW(CW), .UNIQUE(0), .RSP_ASSUME(OUT_ASSUME)) i_inval (
    .clock(clock), .reset(reset), .req_fire(inval_valid && inval_ready), .req_id(1'b0),
    .rsp_valid(invalDone), .rsp_fire(invalDone), .rsp_id(1'b0));
endmodule

`default_nettype wire
