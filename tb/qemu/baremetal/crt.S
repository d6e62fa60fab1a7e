/* Start-up, the M-mode trap entry and the two stub pages of the cross-check program
   (docs/qemu-crosscheck.md).  Every trap is taken in M-mode (no delegation); a trap from the
   stub ends the case: run_case returns to the C driver as a function would. */
    .option norvc
    .section .text.init
    .globl _start
_start:
    la      sp, stack_top
    la      t0, trap_entry
    csrw    mtvec, t0
    call    main
1:  j       1b

/* uint64_t run_case(uint64_t pc, uint64_t va, uint64_t value): mret to pc (mstatus, satp,
   vsatp, hgatp, hstatus already set by the caller) with a1 = va, a2 = value; returns when the
   stub traps (its access faulted, or its ecall).  trap_rec receives mcause, mtval, mtval2
   and the stub's a0 (the loaded value). */
    .text
    .globl  run_case
run_case:
    la      t0, ctx
    sd      sp, 0(t0)
    sd      ra, 8(t0)
    sd      s0, 16(t0)
    sd      s1, 24(t0)
    sd      s2, 32(t0)
    sd      s3, 40(t0)
    sd      s4, 48(t0)
    sd      s5, 56(t0)
    sd      s6, 64(t0)
    sd      s7, 72(t0)
    sd      s8, 80(t0)
    sd      s9, 88(t0)
    sd      s10, 96(t0)
    sd      s11, 104(t0)
    sd      gp, 112(t0)
    sd      tp, 120(t0)
    csrw    mepc, a0
    li      a0, 0
    mret

    .align  4
    .globl  trap_entry
trap_entry:
    csrr    t1, mstatus
    srli    t1, t1, 11
    andi    t1, t1, 3
    li      t2, 3
    beq     t1, t2, m_fault            /* a trap from M-mode itself: the program is broken */
    la      t0, trap_rec
    csrr    t1, mcause
    sd      t1, 0(t0)
    csrr    t1, mtval
    sd      t1, 8(t0)
    csrr    t1, 0x34b                  /* mtval2: GPA >> 2 of a guest-page fault */
    sd      t1, 16(t0)
    sd      a0, 24(t0)
    la      t0, ctx
    ld      sp, 0(t0)
    ld      ra, 8(t0)
    ld      s0, 16(t0)
    ld      s1, 24(t0)
    ld      s2, 32(t0)
    ld      s3, 40(t0)
    ld      s4, 48(t0)
    ld      s5, 56(t0)
    ld      s6, 64(t0)
    ld      s7, 72(t0)
    ld      s8, 80(t0)
    ld      s9, 88(t0)
    ld      s10, 96(t0)
    ld      s11, 104(t0)
    ld      gp, 112(t0)
    ld      tp, 120(t0)
    ret
m_fault:
    csrr    a0, mcause
    csrr    a1, mepc
    csrr    a2, mtval
    la      sp, stack_top
    call    fatal
2:  j       2b

/* The stubs: op k at offset 8k (the access, then ecall back to M-mode).  Two copies: the
   supervisor page (U = 0 in stage-1 tables) and the user page (U = 1). */
    .macro  STUB
    ld      a0, 0(a1)
    ecall
    sd      a2, 0(a1)
    ecall
    .word   0x6C05C573                 /* hlv.d a0, (a1) (GCC 12 knows no H mnemonics) */
    ecall
    .word   0x6EC5C073                 /* hsv.d a2, (a1) */
    ecall
    .endm
    .section .stub.s, "ax"
    STUB
    .section .stub.u, "ax"
    STUB

    .bss
    .align  3
ctx:        .skip 128
    .globl  trap_rec
trap_rec:   .skip 32
