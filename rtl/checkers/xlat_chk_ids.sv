// xlat_chk_ids: request / response accounting by id, for channels whose responses may return
// out of order (spec README.md "Interface conventions": "every accepted request gets exactly one
// response", "a response is produced only for an accepted request"; the memory port's "`id`
// matches them"). The checker counts the outstanding requests of every id value (a counter of
// CW bits each; IDW = 0 is a channel without id, e.g. `inval` -> `invalDone`, whose id inputs
// are then tied to 0):
//
//   * uniqueness (UNIQUE = 1): a request is accepted only with an id that is not outstanding,
//     so a response names one request. Who keeps it differs per channel: a block's memory port
//     issues distinct ids (the requester's rule), NestedWalker holds a request whose id is in
//     flight (the acceptor's rule, its `perf_idStalls`): UNIQ_ASSUME says which side it is on.
//     An id whose response is taken in the cycle is free again in that cycle.
//   * no response without a request: a response is offered only with an outstanding id; the
//     response taken decrements it (exactly one response per request). The responder's rule:
//     RSP_ASSUME.
//
// A response never answers a request accepted in its own cycle (the counts are of requests
// accepted in earlier cycles). Liveness (every request is eventually answered) is not a bounded
// rule and is not checked here. When more than 2^CW - 1 requests of one id are outstanding the
// checker stops checking that id until reset (a limit of the checker, not of the block: choose
// CW from the block's requests in flight). Reset clears the counts.
`default_nettype none

module xlat_chk_ids #(
  parameter IDW         = 1,
  parameter CW          = 1,
  parameter UNIQUE      = 1,
  parameter UNIQ_ASSUME = 0,
  parameter RSP_ASSUME  = 0
) (
  input wire             clock,
  input wire             reset,
  input wire             req_fire,    // valid && ready of the request channel
  input wire [IW-1:0]    req_id,
  input wire             rsp_valid,   // a response offered
  input wire             rsp_fire,    // ... and taken (valid && ready; = rsp_valid without ready)
  input wire [IW-1:0]    rsp_id
);
  localparam IW = IDW > 0 ? IDW : 1;
  localparam N  = 1 << IDW;
  localparam [CW-1:0] FULL = {CW{1'b1}};

  reg [CW-1:0] cnt  [0:N-1];
  reg [N-1:0]  lost;           // counter overflowed: not checked until reset

  genvar g;
  generate
    for (g = 0; g < N; g = g + 1) begin : g_id
      wire up   = req_fire && (IDW == 0 || req_id == g);
      wire down = rsp_fire && (IDW == 0 || rsp_id == g) && cnt[g] != {CW{1'b0}};
      always @(posedge clock) begin
        if (reset) begin
          cnt[g]  <= {CW{1'b0}};
          lost[g] <= 1'b0;
        end else begin
          if (up && !down && cnt[g] == FULL) lost[g] <= 1'b1;
          if (up && !down && cnt[g] != FULL) cnt[g] <= cnt[g] + {{(CW-1){1'b0}}, 1'b1};
          if (down && !up) cnt[g] <= cnt[g] - {{(CW-1){1'b0}}, 1'b1};
        end
      end
    end
  endgenerate

  wire [IW-1:0] rs = IDW > 0 ? rsp_id : {IW{1'b0}};
  generate
    if (UNIQUE != 0) begin : g_unique
      wire [IW-1:0] rq = IDW > 0 ? req_id : {IW{1'b0}};
      xlat_chk_rule #(.ASSUME(UNIQ_ASSUME)) r_unique (
        .clock(clock),
        .ok(reset || !req_fire || cnt[rq] == {CW{1'b0}} || (rsp_fire && rs == rq)));
    end
  endgenerate
  xlat_chk_rule #(.ASSUME(RSP_ASSUME)) r_known (
    .clock(clock), .ok(reset || !rsp_valid || lost[rs] || cnt[rs] != {CW{1'b0}}));
endmodule

`default_nettype wire
