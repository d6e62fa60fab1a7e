// xlat_chk_ids: request / response accounting by id, for channels whose responses may return
// out of order (spec README.md "Interface conventions": "every accepted request gets exactly one
// response", "a response is produced only for an accepted request"; the memory port's "`id`
// matches them"). The checker keeps one outstanding bit per id value:
//
//   * uniqueness: a request is accepted only with an id that is not outstanding (so a response
//     names one request). Who keeps it differs per channel: a block's memory port issues
//     distinct ids (the requester's rule), NestedWalker holds a request whose id is in flight
//     (the acceptor's rule, its `perf_idStalls`); UNIQ_ASSUME says which side it is on,
//     UNIQUE = 0 leaves it out. An id whose response is taken in the cycle is free again in that
//     cycle.
//   * no response without a request: a response is offered only with an outstanding id; the
//     response accepted clears it (exactly one response). The responder's rule: RSP_ASSUME.
//
// A request and the response to it are never in one cycle (a response cannot precede its
// request's acceptance; the outstanding bits count requests accepted in earlier cycles).
// Liveness (every request is eventually answered) is not a bounded rule and is not checked
// here: the blocks' own proofs show bounded response where they state it. Reset clears the
// outstanding set.
`default_nettype none

module xlat_chk_ids #(
  parameter IDW         = 1,
  parameter UNIQUE      = 1,
  parameter UNIQ_ASSUME = 0,
  parameter RSP_ASSUME  = 0
) (
  input wire           clock,
  input wire           reset,
  input wire           req_fire,    // valid && ready of the request channel
  input wire [IDW-1:0] req_id,
  input wire           rsp_valid,   // a response offered
  input wire           rsp_fire,    // ... and taken (valid && ready; = rsp_valid without ready)
  input wire [IDW-1:0] rsp_id
);
  localparam N = 1 << IDW;
  reg [N-1:0] out;
  wire [N-1:0] req_bit = req_fire ? ({{(N-1){1'b0}}, 1'b1} << req_id) : {N{1'b0}};
  wire [N-1:0] rsp_bit = rsp_fire ? ({{(N-1){1'b0}}, 1'b1} << rsp_id) : {N{1'b0}};
  always @(posedge clock) out <= reset ? {N{1'b0}} : ((out & ~rsp_bit) | req_bit);

  generate
    if (UNIQUE != 0) begin : g_unique
      xlat_chk_rule #(.ASSUME(UNIQ_ASSUME)) r_unique (
        .clock(clock), .ok(reset || !req_fire || !out[req_id] || (rsp_fire && rsp_id == req_id)));
    end
  endgenerate
  xlat_chk_rule #(.ASSUME(RSP_ASSUME)) r_known (
    .clock(clock), .ok(reset || !rsp_valid || out[rsp_id]));
endmodule

`default_nettype wire
