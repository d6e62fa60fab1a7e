// xlat_chk_rule: one rule of a port contract, checked as an assertion or used as an assumption.
//
// Every rule of the xlat checkers (docs/checkers.md) goes through this module, so that a
// checker's IN_ASSUME / OUT_ASSUME parameters choose the side of an assume-guarantee proof in
// one place: ASSUME = 1 makes `ok` an assumption (the rule's owner is the environment of the
// proof), ASSUME = 0 an assertion (the rule's owner is being checked), ASSUME = 2 leaves the
// rule out (a simulation that drives bad input on purpose, as the blocks' random tests do:
// a simulator checks an assumption like an assertion). `ok` is sampled on the
// rising clock edge; a rule that does not apply in a cycle drives `ok` high. Immediate
// assertions only: the subset Yosys 0.70 (`read_verilog -formal -sv`) and Verilator 5.048
// (`--assert`; an assumption is checked like an assertion there) both accept.
`default_nettype none

module xlat_chk_rule #(
  parameter ASSUME = 0
) (
  input wire clock,
  input wire ok
);
  generate
    if (ASSUME == 2) begin : g_off
      wire unused_ok = ok;
    end else if (ASSUME != 0) begin : g_assume
      always @(posedge clock) assume (ok);
    end else begin : g_assert
      always @(posedge clock) assert (ok);
    end
  endgenerate
endmodule

`default_nettype wire
