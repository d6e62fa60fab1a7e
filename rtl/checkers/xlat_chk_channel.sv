// xlat_chk_channel: the Decoupled channel rule of spec README.md "Interface conventions"
// ("Channels must hold when `ready` is low"): once `valid` is high without `ready`, the sender
// keeps `valid` high and `payload` unchanged until the cycle `ready` is high. A synchronous
// reset ends the obligation (the sender is reset too).
//
// ASSUME selects the side (xlat_chk_rule): the rule is the sender's. `payload` is the
// concatenation of the channel's `bits_*` fields, in any fixed order.
`default_nettype none

module xlat_chk_channel #(
  parameter W      = 1,
  parameter ASSUME = 0
) (
  input wire         clock,
  input wire         reset,
  input wire         valid,
  input wire         ready,
  input wire [W-1:0] payload
);
  // a stalled offer of the previous cycle, and what it carried
  reg         stalled;
  reg [W-1:0] held;
  always @(posedge clock) begin
    stalled <= !reset && valid && !ready;
    held    <= payload;
  end

  xlat_chk_rule #(.ASSUME(ASSUME)) r_hold (
    .clock(clock), .ok(reset || !stalled || (valid && payload == held)));
endmodule

`default_nettype wire
