// xlat_chk_latency: a Valid response channel with a fixed latency (BabelFishTlb's lookup,
// PmlLogger's CSR port): `resp_valid` is high exactly LATENCY cycles after a cycle with an
// accepted request. That is both rules of spec README.md "Interface conventions" for a channel
// without `ready`: one response per accepted request, and none without one. A reset clears the
// requests in flight (the block's pipeline is reset with them).
//
// The rule is the responder's (the block's): ASSUME = OUT_ASSUME of the block checker.
`default_nettype none

module xlat_chk_latency #(
  parameter LATENCY = 1,
  parameter ASSUME  = 0
) (
  input wire clock,
  input wire reset,
  input wire accept,
  input wire resp_valid
);
  // inflight[i]: a request was accepted i + 1 cycles ago
  reg [LATENCY-1:0] inflight;
  generate
    if (LATENCY == 1) begin : g_one
      always @(posedge clock) inflight <= reset ? 1'b0 : accept;
    end else begin : g_more
      always @(posedge clock)
        inflight <= reset ? {LATENCY{1'b0}} : {inflight[LATENCY-2:0], accept};
    end
  endgenerate

  xlat_chk_rule #(.ASSUME(ASSUME)) r_exact (
    .clock(clock), .ok(reset || resp_valid == inflight[LATENCY-1]));
endmodule

`default_nettype wire
