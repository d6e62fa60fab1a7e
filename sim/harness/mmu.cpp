// xlat sim: trace-driven Verilator harness for the composed MMU, XlatMmu (docs/xlat-mmu.md).
//
// Loads a memory image (the page tables of both stages, sim/memimage.py) and a request trace
// (sim/mmuio.py; formats in sim/README.md), then:
//   * sets PmlLogger up through the CSR port as tb/mmu does (per context of --pml-mask: a log
//     buffer, PML_INDEX entries-1, CTRL.pml) and CTRL's level enables (--ctrl);
//   * a core: offers the trace's requests in order, one at a time (the MMU serves one request
//     at a time), the next one in the cycle after the previous response;
//   * answers every `mem_req` after --latency cycles (+ --jitter), one `mem_resp` a cycle,
//     earliest due first (the walker's latency memory, xlat::Responses); reads return the word
//     as it is at acceptance, writes are applied then under their byte mask;
//   * a hypervisor: takes every `exit` (a full PML buffer) and, --pml-service cycles later,
//     gives the context the next buffer (PML_ADDR, PML_INDEX, ACK STATUS.full); the vCPU is
//     out of the guest meanwhile: no request is offered until those writes are answered;
//   * counts per response source, memory reads and writes per source (id top bit: 0 walker,
//     1 PmlLogger), cycles; checks the port protocol; at the end reads every counter of the
//     CSR map and checks its own counts equal the RTL's (exit status 3 otherwise);
//   * writes statistics as JSON (--out) and, with --log, one 32-byte record per response.
// Idle cycles (a walk waiting for memory) are skipped exactly (CountingFixedPoint, below) unless
// --exact-idle. Widths, register offsets and counter names come from xlat_params.h, generated
// from the configuration's manifest.json by sim/harness_build.py.
#include <chrono>
#include <deque>

#include "Vdut.h"
#include "Vdut___024root.h"
#include "common.h"
#include "verilated.h"
#include "xlat_params.h"

using xlat::die;
using xlat::mask;

static_assert(P_PA_BITS <= 64 && P_MEM_ID_BITS <= 16, "ports the harness drives");

namespace {

constexpr uint64_t SETTLE = 64;   // quiet cycles of the memory port before the counters are read

struct Trace {
    std::vector<uint64_t> va, s1Root, s2Root;
    std::vector<uint32_t> asid, vmid, ccid;
    std::vector<uint8_t> cmd, priv, mode, pcIdx, pcIdxValid, flags;
    uint64_t pmlBase = 0;
    size_t size() const { return va.size(); }
};

Trace load_trace(const char* path) {
    FILE* f = xlat::open_input(path, "XLATMT01");
    uint64_t h[2];
    if (std::fread(h, 8, 2, f) != 2) die("short header in %s", path);
    const uint64_t n = h[0];
    Trace t;
    t.pmlBase = h[1];
    xlat::read_columns(f, n, "va", t.va, "s1Root", t.s1Root, "s2Root", t.s2Root, "asid", t.asid, "vmid",
                       t.vmid, "ccid", t.ccid, "cmd", t.cmd, "priv", t.priv, "mode", t.mode, "pcIdx", t.pcIdx,
                       "pcIdxValid", t.pcIdxValid, "flags", t.flags);
    std::fclose(f);
    return t;
}

// One response record of --log (little-endian, 32 bytes; sim/mmuio.py LOG_DTYPE).
#pragma pack(push, 1)
struct Rec {
    uint32_t index;  // trace index of the request
    uint8_t source, fault, faultStage, pageSize;
    uint64_t pa, faultGpa;
    uint32_t latency;    // cycles from the request's acceptance to its response
    uint16_t memReads;   // walker reads while it was in flight
    uint16_t adWrites;   // walker writes (A/D) while it was in flight
};
#pragma pack(pop)
static_assert(sizeof(Rec) == 32, "log record is 32 bytes");

struct Stats {
    uint64_t requests = 0, src[3] = {0, 0, 0}, fault[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint64_t walkReads = 0, adWrites = 0, pmlWrites = 0, exits = 0, guestIrqs = 0;
    uint64_t latencySum = 0, srcLatency[3] = {0, 0, 0}, readsOfWalks = 0, stallCycles = 0;
};

// Exact idle skipping while a request waits for memory. XlatMmu's perf_busyCycles counts every
// cycle it is not idle, so a waiting MMU is never at a fixed point (xlat::FixedPoint): one 32-bit
// register (and its port's copy) grows by one a cycle. Nothing reads that counter but its own
// increment and the CSR map's read path (an access makes the cycle loud), so a state whose only
// change over two quiet cycles in a row is +1 in the same words, each holding perf_busyCycles'
// value, is a counting fixed point: k more quiet cycles add k to those words and change nothing
// else (the counter saturates at 2^32-1: no skip near it). A state with no change at all (the
// vCPU out for a PML exit) is the plain fixed point.
template <class Root>
class CountingFixedPoint {
  public:
    explicit CountingFixedPoint(Root* root) : root_(root), snap_(sizeof(Root)) {}
    // Called once per cycle after the edge with this cycle's quietness and the counter's value.
    bool settled(bool quiet, uint32_t counter) {
        if (!quiet) {
            seen_ = 0;
            return false;
        }
        const unsigned char* cur = (const unsigned char*)root_;
        if (seen_ == 0) {
            take();
            return false;
        }
        std::vector<size_t> w;
        bool ok = diff(cur, counter, w);
        if (seen_ == 1 || !ok || w != words_) {
            // a first step (or not the same one as before): remember it and look once more
            words_ = w;
            take();
            seen_ = ok ? 2 : 1;
            return false;
        }
        seen_ = 0;
        return true;
    }
    // applies k skipped quiet cycles to the state (settled() returned true)
    void advance(uint64_t k) {
        for (size_t off : words_) {
            uint32_t v;
            std::memcpy(&v, (unsigned char*)root_ + off, 4);
            v += (uint32_t)k;
            std::memcpy((unsigned char*)root_ + off, &v, 4);
        }
    }
    // the largest skip that keeps every counted word below saturation
    uint64_t room(uint32_t counter) const {
        if (words_.empty()) return UINT64_MAX;
        return counter >= 0xFFFFFFF0u ? 0 : 0xFFFFFFF0ULL - counter;
    }

  private:
    void take() {
        std::memcpy(snap_.data(), (const void*)root_, sizeof(Root));
        if (!seen_) seen_ = 1;
    }
    // the aligned 32-bit words that changed since the snapshot; false unless each grew by one
    // and holds the counter's value or the next one (the register, its port's copy, the next
    // value Verilator keeps), at most four
    bool diff(const unsigned char* cur, uint32_t counter, std::vector<size_t>& w) const {
        const size_t n8 = sizeof(Root) / 8;
        for (size_t q = 0; q < n8; q++) {
            uint64_t a8, b8;
            std::memcpy(&a8, snap_.data() + 8 * q, 8);
            std::memcpy(&b8, cur + 8 * q, 8);
            if (a8 == b8) continue;
            for (size_t off = 8 * q; off < 8 * q + 8; off += 4) {
                uint32_t a, b;
                std::memcpy(&a, snap_.data() + off, 4);
                std::memcpy(&b, cur + off, 4);
                if (a == b) continue;
                if (b != a + 1 || (b != counter && b != counter + 1) || w.size() >= 4) return false;
                w.push_back(off);
            }
        }
        return std::memcmp(snap_.data() + 8 * n8, cur + 8 * n8, sizeof(Root) - 8 * n8) == 0;
    }
    Root* root_;
    std::vector<unsigned char> snap_;
    std::vector<size_t> words_;
    int seen_ = 0;
};

struct Options : xlat::CommonOptions {  // (--latency defaults to 100)
    std::string mem, trace;
    uint64_t warmup = 0, pmlMask = 0, pmlService = 0, ctrl = 3;
    template <class Next>
    bool parse(const std::string& s, Next next) {
        if (parse_common(s, next)) return true;
        std::string* str = s == "--mem" ? &mem : s == "--trace" ? &trace : nullptr;
        uint64_t* num = s == "--warmup" ? &warmup : s == "--pml-mask" ? &pmlMask
                      : s == "--pml-service" ? &pmlService : s == "--ctrl" ? &ctrl : nullptr;
        if (str) *str = next();
        else if (num) *num = std::stoull(next(), nullptr, 0);
        return str || num;
    }
};

struct Csr {
    uint64_t addr, wdata, due;
    bool write;
    int tag;          // -1 setup / service write, >= 0 index of a counter read
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    xlat::Args(argc, argv).parse([&](const std::string& s, auto next) { return o.parse(s, next); },
        "usage: mmu_harness --mem M.bin --trace T.bin --out stats.json [--log resp.bin]\n"
        "  [--latency 100] [--jitter 0] [--warmup N] [--pml-mask M] [--pml-service C] [--ctrl 3]\n"
        "  [--seed S] [--exact-idle] [--label S]");
    if (o.mem.empty() || o.trace.empty() || o.out.empty()) die("--mem, --trace and --out are required");
    if (o.latency < 1) die("--latency must be at least 1");
    if (o.pmlMask >> P_PML_CONTEXTS) die("--pml-mask names a context beyond the %d of PmlLogger", (int)P_PML_CONTEXTS);

    auto t0 = std::chrono::steady_clock::now();
    auto mem = xlat::load_memory(o.mem.c_str());
    const Trace tr = load_trace(o.trace.c_str());
    const uint64_t n = tr.size();
    const uint64_t nMemIds = 1ULL << P_MEM_ID_BITS;
    const uint32_t srcBit = 1u << (P_MEM_ID_BITS - 1);
    xlat::Rng rng(o.seed);

    xlat::Model<Vdut> model(argc, argv);
    Vdut& d = model.dut();
    CountingFixedPoint<std::remove_pointer_t<decltype(d.rootp)>> fp(d.rootp);

    // ---- reset: every valid and ready low (no fence is ever sent)
    d.req_valid = d.fence_valid = d.mem_resp_valid = d.csr_req_valid = 0;
    d.resp_ready = d.mem_req_ready = d.exit_ready = d.guestIrq_ready = 0;
    d.fence_bits_kind = 0;
    xlat::reset_cycles(d);

    uint64_t cycle = 0, simulated = 0, skipped = 0, lastProgressCycle = 0;
    std::deque<Csr> csrq;        // offered in order, each from its due cycle
    uint64_t csrOutstanding = 0; // accepted, not answered
    std::deque<int> csrTags;     // tags of the accepted accesses, in order
    uint64_t serviceWrites = 0;  // hypervisor writes not yet answered (the vCPU is out)
    uint64_t nextBuffer = 0;
    const uint64_t nBuffers = (2u << 20) / (P_PML_ENTRIES * 8);   // the 2 MiB block's buffers
    auto buffer = [&]() { return tr.pmlBase + (nextBuffer++ % nBuffers) * P_PML_ENTRIES * 8; };
    auto reg = [](uint64_t ctx, uint64_t off) { return ctx * P_PML_STRIDE + off; };
    // the hypervisor's set-up (tb/mmu/tests_random.py): a buffer, its first index, PML on
    for (uint64_t c = 0; c < (uint64_t)P_PML_CONTEXTS; c++) {
        if (!(o.pmlMask >> c & 1)) continue;
        csrq.push_back(Csr{reg(c, P_REG_PML_ADDR), buffer(), 0, true, -1});
        csrq.push_back(Csr{reg(c, P_REG_PML_INDEX), P_PML_ENTRIES - 1, 0, true, -1});
        csrq.push_back(Csr{reg(c, P_REG_CTRL), P_CTRL_PML, 0, true, -1});
    }
    csrq.push_back(Csr{P_MMU_CTRL, o.ctrl, 0, true, -1});
    uint64_t setupWrites = csrq.size();
    uint64_t csrErrors = 0;

    struct MemOut { bool busy; };
    std::vector<MemOut> mo(nMemIds, MemOut{false});
    xlat::Responses pend;
    bool inFlight = false;
    uint64_t nextReq = 0, responses = 0, accepted = 0, curReads = 0, curWrites = 0;
    Stats st, warm;
    uint64_t warmCycle = 0;
    std::vector<uint64_t> latencies;
    latencies.reserve(n);
    xlat::RecordLog<Rec> log(o.log);
    xlat::Protocol protocol(cycle);
    std::vector<uint64_t> counters(P_N_COUNTERS, 0);
    bool countersRead = false;

    struct In { bool reqValid; uint64_t reqIndex; bool memResp; bool csrValid; };
    In prev{false, 0, true, true};
    auto tRun = std::chrono::steady_clock::now();

    uint64_t lastMemCycle = 0;
    for (;;) {
        // the end: every request answered, every exit serviced, the memory port quiet for
        // SETTLE cycles (PmlLogger writes the last events' entries after the last response)
        const bool drained = responses == n && !inFlight && serviceWrites == 0 && pend.empty();
        const bool done = drained && cycle > lastMemCycle + SETTLE;
        if (done && !countersRead && csrq.empty() && csrOutstanding == 0) {
            // every counter of the CSR map, read in order (a counter shows an event one cycle
            // after it: the reads start two cycles later)
            for (int k = 0; k < P_N_COUNTERS; k++)
                csrq.push_back(Csr{P_COUNTER_ADDRS[k], 0, cycle + 2, false, k});
            countersRead = true;
        }
        if (done && countersRead && csrq.empty() && csrOutstanding == 0) break;

        // ---- inputs of this cycle
        In in{};
        in.reqValid = !inFlight && nextReq < n && setupWrites == 0 && serviceWrites == 0;
        if (in.reqValid) {
            const uint64_t i = nextReq;
            in.reqIndex = i;
            d.req_bits_id = i & mask(P_ID_BITS);
            d.req_bits_va = tr.va[i];
            d.req_bits_cmd = tr.cmd[i] & 3;
            d.req_bits_priv = tr.priv[i] & 1;
            d.req_bits_mode = tr.mode[i] & 3;
            d.req_bits_asid = tr.asid[i] & mask(P_ASID_BITS);
            d.req_bits_vmid = tr.vmid[i] & mask(P_VMID_BITS);
            d.req_bits_ccid = tr.ccid[i] & mask(P_CCID_BITS);
            d.req_bits_pcIdx = tr.pcIdx[i] & mask(P_PC_IDX_BITS);
            d.req_bits_pcIdxValid = tr.pcIdxValid[i] & 1;
            d.req_bits_s1Root = tr.s1Root[i] & mask(P_S1_ROOT_BITS);
            d.req_bits_s2Root = tr.s2Root[i] & mask(P_S2_ROOT_BITS);
            const uint8_t f = tr.flags[i];   // sim/workloads/mmu.py FLAGS order
            d.req_bits_flags_sum = f & 1;
            d.req_bits_flags_mxr = f >> 1 & 1;
            d.req_bits_flags_vmxr = f >> 2 & 1;
            d.req_bits_flags_wp = f >> 3 & 1;
            d.req_bits_flags_smep = f >> 4 & 1;
            d.req_bits_flags_smap = f >> 5 & 1;
            d.req_bits_flags_nxe = f >> 6 & 1;
        }
        d.req_valid = in.reqValid;
        in.csrValid = !csrq.empty() && csrq.front().due <= cycle;
        const Csr& head = in.csrValid ? csrq.front() : Csr{};
        d.csr_req_valid = in.csrValid;
        d.csr_req_bits_addr = head.addr;
        d.csr_req_bits_write = head.write;
        d.csr_req_bits_wdata = head.wdata;
        xlat::Responses::Item cur{};
        in.memResp = xlat::present_response<true>(d, pend, cycle, cur);
        // the core, the memory and the hypervisor take whatever the MMU offers
        d.resp_ready = d.mem_req_ready = d.exit_ready = d.guestIrq_ready = 1;

        // ---- settle (clock low): this cycle's valids and readies
        d.clock = 0;
        d.eval();
        const bool reqFire = in.reqValid && d.req_ready;
        const bool respFire = d.resp_valid;
        const bool memFire = d.mem_req_valid;
        const bool csrFire = in.csrValid && d.csr_req_ready;
        const bool csrResp = d.csr_resp_valid;
        const bool exitFire = d.exit_valid;
        const bool irqFire = d.guestIrq_valid;
        if (in.memResp && !d.mem_resp_ready) protocol("mem_resp_ready low", cur.id, 0);
        // the response's fields (index, latency and the walker's accesses filled in below)
        Rec rec = respFire ? Rec{0, (uint8_t)d.resp_bits_source, (uint8_t)d.resp_bits_fault,
                                 (uint8_t)d.resp_bits_faultStage, (uint8_t)d.resp_bits_pageSize,
                                 (uint64_t)d.resp_bits_pa, (uint64_t)d.resp_bits_faultGpa, 0, 0, 0}
                           : Rec{};
        if (respFire && (uint64_t)d.resp_bits_id != ((accepted - 1) & mask(P_ID_BITS)))
            protocol("response id is not the request's", d.resp_bits_id, accepted - 1);
        const xlat::MemReq mr = memFire ? xlat::MemReq::of(d) : xlat::MemReq{};
        uint64_t csrRdata = csrResp ? (uint64_t)d.csr_resp_bits_rdata : 0;
        bool csrErr = csrResp && d.csr_resp_bits_error;
        uint32_t exitVmid = exitFire ? (uint32_t)d.exit_bits_vmid : 0;
        uint32_t exitReason = exitFire ? (uint32_t)d.exit_bits_reason : 0;

        // ---- edge
        d.clock = 1;
        d.eval();
        simulated++;

        // ---- bookkeeping of what fired
        if (reqFire) {
            inFlight = true;
            nextReq++;
            accepted++;
            st.requests++;
            curReads = curWrites = 0;
            lastProgressCycle = cycle;
            latencies.push_back(cycle);   // acceptance cycle until the response
        }
        if (in.memResp) mo[cur.id].busy = false;
        if (memFire) {
            lastMemCycle = cycle;
            if (mr.id >= nMemIds) protocol("mem_req id out of range", mr.id, mr.addr);
            else if (mo[mr.id].busy) protocol("mem_req id already outstanding", mr.id, mr.addr);
            if (mr.addr & 7) protocol("unaligned mem_req", mr.id, mr.addr);
            const bool pml = mr.id & srcBit;
            if (!mr.write && mr.wmask) protocol("read with nonzero wmask", mr.id, mr.wmask);
            if (!mr.write && pml) protocol("PmlLogger read", mr.id, mr.addr);
            if (mr.write) (pml ? st.pmlWrites : st.adWrites)++;
            else st.walkReads++;
            (mr.write ? curWrites : curReads) += !pml;
            if (mr.id < nMemIds) mo[mr.id].busy = true;
            pend.push(cycle + o.latency + (o.jitter ? rng.below(o.jitter + 1) : 0), mr.id, mr.apply(mem));
        }
        if (csrFire) {
            csrTags.push_back(csrq.front().tag);
            csrq.pop_front();
            csrOutstanding++;
        }
        if (csrResp) {
            if (csrTags.empty()) protocol("csr_resp with no access outstanding", csrRdata, 0);
            else {
                const int tag = csrTags.front();
                csrTags.pop_front();
                csrOutstanding--;
                if (csrErr) csrErrors++;
                if (tag >= 0) counters[tag] = csrRdata;
                else if (setupWrites) setupWrites--;
                else if (serviceWrites) serviceWrites--;
            }
        }
        if (exitFire) {
            st.exits++;
            if (exitReason != P_EXIT_REASON) protocol("exit reason", exitReason, exitVmid);
            if (exitVmid >= (uint32_t)P_PML_CONTEXTS || !(o.pmlMask >> exitVmid & 1))
                protocol("exit of a context without PML", exitVmid, 0);
            // the hypervisor's answer: the next buffer, its first index, STATUS.full acknowledged
            const uint64_t due = cycle + 1 + o.pmlService;
            csrq.push_back(Csr{reg(exitVmid, P_REG_PML_ADDR), buffer(), due, true, -1});
            csrq.push_back(Csr{reg(exitVmid, P_REG_PML_INDEX), P_PML_ENTRIES - 1, due, true, -1});
            csrq.push_back(Csr{reg(exitVmid, P_REG_ACK), P_ST_FULL, due, true, -1});
            serviceWrites += 3;
        }
        if (irqFire) st.guestIrqs++;
        if (respFire) {
            if (!inFlight) protocol("response with no request in flight", rec.pa, 0);
            else {
                const uint64_t i = accepted - 1;
                inFlight = false;
                rec.index = (uint32_t)i;
                rec.latency = (uint32_t)(cycle + 1 - latencies.back());
                latencies.back() = rec.latency;
                rec.memReads = (uint16_t)curReads;
                rec.adWrites = (uint16_t)curWrites;
                if (rec.source < 3) {
                    st.src[rec.source]++;
                    st.srcLatency[rec.source] += rec.latency;
                } else {
                    protocol("response source", rec.source, i);
                }
                if (rec.source == 2) st.readsOfWalks += curReads;
                st.fault[rec.fault & 7]++;
                st.latencySum += rec.latency;
                log.push(rec);
                lastProgressCycle = cycle;
                if (++responses == o.warmup) {   // the window starts after this response
                    warm = st;
                    warmCycle = cycle + 1;
                }
            }
        }
        if (serviceWrites && !inFlight && nextReq < n) st.stallCycles++;   // the vCPU is out
        cycle++;

        // ---- exact idle skipping: nothing fired, inputs as in the previous cycle
        const bool csrWaiting = !csrq.empty();   // a due access is offered (not quiet) or waits for its cycle
        const bool quiet = !reqFire && !respFire && !memFire && !csrFire && !csrResp && !exitFire &&
                           !irqFire && !in.memResp && !prev.memResp && in.reqValid == prev.reqValid &&
                           (!in.reqValid || in.reqIndex == prev.reqIndex) && !in.csrValid &&
                           !prev.csrValid && csrOutstanding == 0;
        prev = in;
        if (fp.settled(quiet && !o.exactIdle, (uint32_t)d.perf_busyCycles)) {
            // fixed point: nothing changes until the next memory response or CSR access is due
            uint64_t due = UINT64_MAX;
            if (!pend.empty()) due = pend.next_due();
            if (csrWaiting) due = std::min(due, csrq.front().due);
            if (due == UINT64_MAX && drained) due = lastMemCycle + SETTLE + 1;
            if (due == UINT64_MAX)
                die("MMU stuck: %llu of %llu requests answered, no memory access or CSR access pending",
                    (unsigned long long)responses, (unsigned long long)n);
            const uint64_t room = fp.room((uint32_t)d.perf_busyCycles);
            if (room != UINT64_MAX) due = std::min(due, cycle + room);
            if (due > cycle) {
                fp.advance(due - cycle);
                skipped += due - cycle;
                if (serviceWrites && !inFlight && nextReq < n) st.stallCycles += due - cycle;
                cycle = due;
            }
        }
        if (cycle - lastProgressCycle > 1000000 + 4 * o.latency + o.pmlService)
            die("no response for %llu cycles (%llu of %llu requests answered)",
                (unsigned long long)(cycle - lastProgressCycle), (unsigned long long)responses,
                (unsigned long long)n);
    }
    log.close();
    auto t1 = std::chrono::steady_clock::now();
    const double runSec = std::chrono::duration<double>(t1 - tRun).count();
    const double totSec = std::chrono::duration<double>(t1 - t0).count();
    if (d.mem_req_valid) protocol("mem_req valid after the last request", 0, 0);
    if (csrErrors) protocol("CSR accesses answered with error", csrErrors, 0);

    // ---- cross-check against the RTL's counters: its perf_* ports and the CSR map
    auto c = [&](const char* name) -> uint64_t {
        for (int k = 0; k < P_N_COUNTERS; k++)
            if (!std::strcmp(P_COUNTER_NAMES[k], name)) return counters[k];
        die("no counter %s in the CSR map", name);
    };
    // one request at a time: XlatMmu is busy from the cycle after an acceptance to its response,
    // `latency` - 1 cycles of each (the counter saturates at 32 bits)
    const uint64_t responded = st.src[0] + st.src[1] + st.src[2];
    const uint64_t busy = std::min<uint64_t>(st.latencySum - responded, 0xffffffffull);
    const bool ok = xlat::counters_agree({
        {"requests", d.perf_requests, st.requests},
        {"busyCycles", d.perf_busyCycles, busy},
        {"l1Hits", d.perf_l1Hits, st.src[0]},
        {"l2Hits", d.perf_l2Hits, st.src[1]},
        {"walks", d.perf_walks, st.src[2]},
        {"bare", d.perf_bare, 0},
        {"pageFaults", d.perf_pageFaults, st.fault[1]},
        {"guestPageFaults", d.perf_guestPageFaults, st.fault[2]},
        {"accessFaults", d.perf_accessFaults, st.fault[3]},
        {"reservedFaults", d.perf_reservedFaults, st.fault[4]},
        {"fences", d.perf_fences, 0},
        {"badFences", d.perf_badFences, 0},
        {"badCmds", d.perf_badCmds, 0},
        {"badMemResps", d.perf_badMemResps, 0},
        {"badCsrs", d.perf_badCsrs, 0},
        {"PERF_requests", c("requests"), st.requests},
        {"PERF_walks", c("walks"), st.src[2]},
        {"PERF_walker_walks", c("walker_walks"), st.src[2]},
        {"PERF_walker_memReads", c("walker_memReads"), st.walkReads},
        {"PERF_walker_memWrites", c("walker_memWrites"), st.adWrites},
        {"PERF_walker_busErrors", c("walker_busErrors"), 0},
        {"PERF_walker_flushes", c("walker_flushes"), 0},
        {"PERF_walker_badMemResps", c("walker_badMemResps"), 0},
        {"PERF_pml_logged", c("pml_logged"), st.pmlWrites},
        {"PERF_pml_guestLogged", c("pml_guestLogged"), 0},
        {"PERF_pml_exits", c("pml_exits"), st.exits},
        {"PERF_pml_guestIrqs", c("pml_guestIrqs"), st.guestIrqs},
        {"PERF_pml_writeErrors", c("pml_writeErrors"), 0},
        {"PERF_pml_badCsrs", c("pml_badCsrs"), 0},
        {"PERF_pml_badMemResps", c("pml_badMemResps"), 0},
        {"PERF_l1_invals", c("l1_invals"), 0},
        {"PERF_l2_invals", c("l2_invals"), 0},
        {"PERF_l1_badFills", c("l1_badFills"), 0},
        {"PERF_l2_badFills", c("l2_badFills"), 0},
    }) && protocol.errors == 0;

    FILE* of = std::fopen(o.out.c_str(), "w");
    if (!of) die("cannot write %s", o.out.c_str());
    xlat::Json j(of);
    auto window = [&](const Stats& s, const Stats& w, uint64_t cycles) {
        const uint64_t req = s.requests - w.requests, walks = s.src[2] - w.src[2];
        const uint64_t l1m = req - (s.src[0] - w.src[0]);
        j.u("requests", req).u("cycles", cycles);
        j.u("l1Hits", s.src[0] - w.src[0]).u("l2Hits", s.src[1] - w.src[1]).u("walks", walks);
        j.u("walkReads", s.walkReads - w.walkReads).u("readsOfWalks", s.readsOfWalks - w.readsOfWalks);
        j.u("adWrites", s.adWrites - w.adWrites).u("pmlWrites", s.pmlWrites - w.pmlWrites);
        j.u("exits", s.exits - w.exits).u("exitStallCycles", s.stallCycles - w.stallCycles);
        j.u("faults", req - (s.fault[0] - w.fault[0]));
        j.d("l1MissesPer1000", req ? 1000.0 * l1m / req : 0.0);
        j.d("l2MissesPer1000", req ? 1000.0 * walks / req : 0.0);
        j.d("l2HitRate", l1m ? (double)(s.src[1] - w.src[1]) / l1m : 0.0);
        j.d("readsPerWalk", walks ? (double)(s.readsOfWalks - w.readsOfWalks) / walks : 0.0);
        j.d("cyclesPerAccess", req ? (double)cycles / req : 0.0);
        j.d("latencyPerAccess", req ? (double)(s.latencySum - w.latencySum) / req : 0.0);
        for (int k = 0; k < 3; k++) {
            const uint64_t cnt = s.src[k] - w.src[k];
            static const char* nm[3] = {"latencyL1", "latencyL2", "latencyWalk"};
            j.d(nm[k], cnt ? (double)(s.srcLatency[k] - w.srcLatency[k]) / cnt : 0.0);
        }
        j.d("pmlWritesPer1000", req ? 1000.0 * (s.pmlWrites - w.pmlWrites) / req : 0.0);
    };
    j.open();
    j.s("label", o.label).s("config", P_CONFIG);
    j.u("latency", o.latency).u("jitter", o.jitter).u("pmlService", o.pmlService);
    j.u("pmlMask", o.pmlMask).u("ctrl", o.ctrl);
    j.u("warmup", std::min<uint64_t>(o.warmup, n));
    window(st, Stats{}, cycle);
    j.d("latencyP50", xlat::pct(latencies, 0.5)).d("latencyP99", xlat::pct(latencies, 0.99));
    j.open("window");
    window(st, warm, o.warmup && o.warmup < n ? cycle - warmCycle : cycle);
    j.close();
    j.d("requests_per_second", st.requests / std::max(runSec, 1e-9));
    xlat::json_verdict(j, protocol.errors, ok, simulated, skipped, runSec, totSec);
    j.open("counters");   // (the MMU's own are its perf_* ports: cross-checked above)
    for (int k = 0; k < P_N_COUNTERS; k++) j.u(P_COUNTER_NAMES[k], counters[k]);
    j.close().close();
    std::fclose(of);
    d.final();
    return xlat::exit_status(ok);
}
