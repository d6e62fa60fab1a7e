/* Driver of the cross-check program (docs/qemu-crosscheck.md): writes the memory image the
   Python side laid out (page tables, data words), runs every case of the blob and prints one
   result line per case on the UART; ends through the virt machine's test finisher. */
#include <stdint.h>

#define BLOB      ((volatile uint64_t *)0x80100000UL)   /* -device loader,addr=... */
#define BLOB_MAGIC 0x78716d7531000000UL                  /* "xqmu1" */
#define UART      ((volatile uint8_t *)0x10000000UL)
#define FINISHER  ((volatile uint32_t *)0x100000UL)

/* case flags (tb/xlat_tb/qemu.py writes the same layout) */
#define F_OP(f)    ((f) & 3)              /* 0 ld, 1 sd, 2 hlv.d, 3 hsv.d */
#define F_PRIV_S   (1UL << 2)             /* mret to S (else U) */
#define F_V        (1UL << 3)             /* mret with MPV = 1 (VS / VU) */
#define F_SUM      (1UL << 4)             /* mstatus.SUM */
#define F_VSSUM    (1UL << 5)             /* vsstatus.SUM */
#define F_SPVP     (1UL << 6)             /* hstatus.SPVP: HLV/HSV as VS (else VU) */
#define F_HU       (1UL << 7)             /* hstatus.HU: HLV/HSV allowed in U-mode */
#define F_USTUB    (1UL << 8)             /* run the stub of the user page */
#define F_MXR      (1UL << 9)             /* mstatus.MXR */
#define F_VSMXR    (1UL << 10)            /* vsstatus.MXR */
#define CASE_WORDS 8

extern uint64_t run_case(uint64_t pc, uint64_t va, uint64_t value);
extern volatile uint64_t trap_rec[4];
extern char stub_s[], stub_u[];

#define CSRW(csr, v) __asm__ volatile("csrw " #csr ", %0" :: "r"(v))
#define CSRR(csr) ({ uint64_t _v; __asm__ volatile("csrr %0, " #csr : "=r"(_v)); _v; })

static void putc_(char c) {
    while (!(UART[5] & 0x20)) {}          /* LSR.THRE */
    UART[0] = c;
}
static void puts_(const char *s) { while (*s) putc_(*s++); }
static void hex(uint64_t v) {
    for (int i = 60; i >= 0; i -= 4) putc_("0123456789abcdef"[(v >> i) & 15]);
}

static void finish(uint32_t code) {       /* 0 pass, else QEMU exits with that code */
    *FINISHER = code ? ((code << 16) | 0x3333) : 0x5555;
    for (;;) {}
}

void fatal(uint64_t cause, uint64_t epc, uint64_t tval) {
    puts_("FATAL "); hex(cause); putc_(' '); hex(epc); putc_(' '); hex(tval); putc_('\n');
    finish(3);
}

int main(void) {
    /* PMP entry 0: all of memory RWX, so S/U/VS/VU accesses pass PMP (QEMU 7.2 denies S/U
       accesses that match no entry once an entry is written); no delegation: every trap
       lands in M-mode. */
    CSRW(pmpaddr0, ~0UL >> 10);
    CSRW(pmpcfg0, 0x1fUL);                /* NAPOT, R W X */
    CSRW(medeleg, 0UL);
    CSRW(mideleg, 0UL);
    CSRW(0x602, 0UL);                     /* hedeleg */
    CSRW(0x603, 0UL);                     /* hideleg */
    CSRW(mie, 0UL);
    CSRW(0x30a, 0UL);                     /* menvcfg: no Svpbmt / Svnapot behaviour */

    if (BLOB[0] != BLOB_MAGIC) { puts_("BADBLOB\n"); finish(4); }
    uint64_t nwords = BLOB[1], ncases = BLOB[2];
    volatile uint64_t *w = BLOB + 4;
    for (uint64_t i = 0; i < nwords; i++)
        *(volatile uint64_t *)w[2 * i] = w[2 * i + 1];
    volatile uint64_t *c = w + 2 * nwords;
    puts_("BEGIN "); hex(ncases); putc_('\n');
    for (uint64_t i = 0; i < ncases; i++, c += CASE_WORDS) {
        uint64_t f = c[0], va = c[1], probe = c[5], value = c[6];
        CSRW(satp, c[2]);
        CSRW(0x280, c[3]);                /* vsatp */
        CSRW(0x680, c[4]);                /* hgatp */
        uint64_t hs = CSRR(0x600) & ~((1UL << 8) | (1UL << 9));
        if (f & F_SPVP) hs |= 1UL << 8;
        if (f & F_HU) hs |= 1UL << 9;
        CSRW(0x600, hs);
        uint64_t vs = CSRR(0x200) & ~((1UL << 18) | (1UL << 19));
        if (f & F_VSSUM) vs |= 1UL << 18;
        if (f & F_VSMXR) vs |= 1UL << 19;
        CSRW(0x200, vs);                  /* vsstatus */
        uint64_t ms = CSRR(mstatus) & ~((3UL << 11) | (1UL << 17) | (1UL << 18) | (1UL << 19)
                                        | (1UL << 39));
        if (f & F_PRIV_S) ms |= 1UL << 11;
        if (f & F_V) ms |= 1UL << 39;
        if (f & F_SUM) ms |= 1UL << 18;
        if (f & F_MXR) ms |= 1UL << 19;
        CSRW(mstatus, ms);
        /* a fresh walk for every case: QEMU's TLB forgets everything */
        __asm__ volatile("sfence.vma\n .word 0x62000073\n .word 0x22000073" ::: "memory");
        uint64_t before = probe ? *(volatile uint64_t *)probe : 0;
        uint64_t pc = (uint64_t)((f & F_USTUB) ? stub_u : stub_s) + 8 * F_OP(f);
        run_case(pc, va, value);
        uint64_t after = probe ? *(volatile uint64_t *)probe : 0;
        if (probe) *(volatile uint64_t *)probe = before;
        puts_("R "); hex(i); putc_(' '); hex(trap_rec[0]); putc_(' '); hex(trap_rec[1]);
        putc_(' '); hex(trap_rec[2]); putc_(' '); hex(trap_rec[3]); putc_(' '); hex(after);
        putc_('\n');
    }
    /* the page-table words the cases changed (hardware A/D updates), for the comparison of
       the memory with the model's */
    for (uint64_t i = 0; i < nwords; i++) {
        uint64_t now = *(volatile uint64_t *)w[2 * i];
        if (now != w[2 * i + 1]) {
            puts_("M "); hex(w[2 * i]); putc_(' '); hex(now); putc_('\n');
        }
    }
    puts_("END\n");
    finish(0);
    return 0;
}
