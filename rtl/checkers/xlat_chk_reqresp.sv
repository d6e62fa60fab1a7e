// xlat_chk_reqresp: a Decoupled request channel answered on a Decoupled response channel by id
// (or tag), out of order: both channels hold while not ready (the request is the user's rule:
// IN_ASSUME; the response the block's: OUT_ASSUME), and xlat_chk_ids's accounting (responses
// only for outstanding ids, one per request; UNIQUE = 1: the block takes a request only with
// an id not in flight). `*_payload` is every other field of the channel.
// XLAT_CHK_REQRESP_PORTS(id, IDW) is a block checker's port list for such a pair, with the
// block's names (`req_bits_<id>`, `resp_bits_<id>`) and the payload inputs `req_payload`,
// `resp_payload` (REQ_BITS, RESP_BITS: the including module's parameters);
// XLAT_CHK_REQRESP(...) this module's instance over them.
`default_nettype none

`define XLAT_CHK_REQRESP_PORTS(id, IDW) \
  input wire                 req_valid, \
  input wire                 req_ready, \
  input wire [IDW-1:0]       req_bits_``id, \
  input wire [REQ_BITS-1:0]  req_payload, \
  input wire                 resp_valid, \
  input wire                 resp_ready, \
  input wire [IDW-1:0]       resp_bits_``id, \
  input wire [RESP_BITS-1:0] resp_payload,

// ... and the instance `name` of this module over those ports (cw, uniq: CW, UNIQUE below)
`define XLAT_CHK_REQRESP(name, id, idw, cw, uniq) \
  xlat_chk_reqresp #(.IDW(idw), .REQ_W(REQ_BITS), .RESP_W(RESP_BITS), .CW(cw), .UNIQUE(uniq), \
                     .IN_ASSUME(IN_ASSUME), .OUT_ASSUME(OUT_ASSUME)) name ( \
    .clock(clock), .reset(reset), .req_valid(req_valid), .req_ready(req_ready), \
    .req_id(req_bits_``id), .req_payload(req_payload), .resp_valid(resp_valid), \
    .resp_ready(resp_ready), .resp_id(resp_bits_``id), .resp_payload(resp_payload));

module xlat_chk_reqresp #(
  parameter IDW        = 4,
  parameter REQ_W      = 1,
  parameter RESP_W     = 1,
  parameter CW         = 1,
  parameter UNIQUE     = 1,
  parameter IN_ASSUME  = 1,
  parameter OUT_ASSUME = 0
) (
  input wire              clock,
  input wire              reset,
  input wire              req_valid,
  input wire              req_ready,
  input wire [IDW-1:0]    req_id,
  input wire [REQ_W-1:0]  req_payload,
  input wire              resp_valid,
  input wire              resp_ready,
  input wire [IDW-1:0]    resp_id,
  input wire [RESP_W-1:0] resp_payload
);
  xlat_chk_channel #(.W(IDW + REQ_W), .ASSUME(IN_ASSUME)) c_req (
    .clock(clock), .reset(reset), .valid(req_valid), .ready(req_ready),
    .payload({req_id, req_payload}));
  xlat_chk_channel #(.W(IDW + RESP_W), .ASSUME(OUT_ASSUME)) c_resp (
    .clock(clock), .reset(reset), .valid(resp_valid), .ready(resp_ready),
    .payload({resp_id, resp_payload}));
  xlat_chk_ids #(.IDW(IDW), .CW(CW), .UNIQUE(UNIQUE), .UNIQ_ASSUME(OUT_ASSUME),
                 .RSP_ASSUME(OUT_ASSUME)) i_ids (
    .clock(clock), .reset(reset), .req_fire(req_valid && req_ready), .req_id(req_id),
    .rsp_valid(resp_valid), .rsp_fire(resp_valid && resp_ready), .rsp_id(resp_id));
endmodule

`default_nettype wire
