// xlat sim: workload-driven Verilator harness for PmlLogger (docs/pml-logger.md).
//
// Loads a workload written by sim/pmlio.py (format in sim/README.md): the set-up of each
// context (CTRL, buffer addresses, TRACK_ASID, IRQ_VECTOR) and a stream of dirty events, each
// with the cycle it arrives (bursts). Then:
//   * programs every context through `csr_req` (buffers armed at index entries-1), then offers
//     the events on `dirty` in order, each from its arrival cycle (or as soon as the previous
//     one was accepted, whichever is later);
//   * is the memory: every `mem_req` is accepted at once and answered --latency cycles later
//     (plus an optional random --jitter; one `mem_resp` per cycle, earliest due first); no
//     errors;
//   * is the software (a hypervisor for `exit`, the guest for `guestIrq`, both always ready):
//     each exit / guest interrupt is serviced --exit-service / --irq-service cycles after it was
//     taken, once that buffer's writes are all answered: read INDEX (must be out of range),
//     read STATUS (the full bit must be set), write INDEX = entries-1, write ACK (the doc's
//     protocol: drain, write the index, write ACK). CSR requests go out one a cycle;
//   * checks every write as it is issued: a write, wmask 0xFF, a free id, the address of a
//     configured buffer at exactly ADDR + 8 * (the harness's own next index of that buffer), data
//     = the GPA (PML) / the sign-extended GVA (guest buffer) of the oldest event that buffer
//     still owes (events the dedup filter dropped are skipped there and counted as deduped; a
//     skip in a configuration without the filter is an error); each exit / guest interrupt must
//     be for a buffer the harness sees full, with reason 62 / the programmed vector;
//   * at the end, that its own counts equal the RTL's perf_* counters (exit status 3 otherwise);
//   * writes statistics as JSON (--out), one 32-byte record per event (--events: cycles offered,
//     accepted, last part written; sim/pmlio.py EVENT_DTYPE) and, with --log, every port
//     transaction of the first --log-cycles cycles for the check against tb/models/pml.py.
// Idle cycles (every context held waiting for software, or every write waiting for memory, or
// nothing arriving) are skipped exactly (xlat::FixedPoint) unless --exact-idle.
#include <chrono>
#include <deque>
#include <map>
#include <memory>

#include "Vdut.h"
#include "Vdut___024root.h"
#include "common.h"
#include "verilated.h"
#include "xlat_params.h"

using xlat::die;
using xlat::mask;

static_assert(P_ID_BITS <= 8, "ids index a table");

namespace {

constexpr int PML = 0, GUEST = 1;

struct Workload {
    std::vector<uint32_t> ctrl, trackAsid, irqVector;
    std::vector<uint64_t> pmlAddr, gpmlAddr;
    std::vector<uint64_t> gpa, gva, arrive;
    std::vector<uint32_t> vmid, asid;
    size_t size() const { return gpa.size(); }
};

Workload load_workload(const char* path) {
    FILE* f = xlat::open_input(path, "XLATPE01");
    uint64_t nctx, n;
    Workload w;
    if (std::fread(&nctx, 8, 1, f) != 1) die("short header in %s", path);
    if (nctx > (uint64_t)P_CONTEXTS) die("%s configures %llu contexts, the logger has %d", path,
                                         (unsigned long long)nctx, P_CONTEXTS);
    xlat::readv(f, w.ctrl, nctx, "ctrl");
    xlat::readv(f, w.pmlAddr, nctx, "pmlAddr");
    xlat::readv(f, w.gpmlAddr, nctx, "gpmlAddr");
    xlat::readv(f, w.trackAsid, nctx, "trackAsid");
    xlat::readv(f, w.irqVector, nctx, "irqVector");
    if (std::fread(&n, 8, 1, f) != 1) die("short event header in %s", path);
    xlat::readv(f, w.gpa, n, "gpa");
    xlat::readv(f, w.gva, n, "gva");
    xlat::readv(f, w.vmid, n, "vmid");
    xlat::readv(f, w.asid, n, "asid");
    xlat::readv(f, w.arrive, n, "arrive");
    std::fclose(f);
    for (uint64_t k = 1; k < n; k++)
        if (w.arrive[k] < w.arrive[k - 1]) die("event %llu arrives before event %llu", (unsigned long long)k,
                                               (unsigned long long)(k - 1));
    return w;
}

// One record of --events (little-endian, 32 bytes; sim/pmlio.py EVENT_DTYPE).
#pragma pack(push, 1)
struct EventRec {
    uint64_t offered;   // first cycle dirty_valid carried it
    uint64_t accepted;  // cycle of the dirty handshake
    uint64_t written;   // cycle its last part's write was taken by memory (0: none)
    uint32_t vmid;
    uint8_t parts;      // parts owed at acceptance: 1 PML, 2 guest
    uint8_t deduped, ignored, pad;
};
// One record of --log (32 bytes; sim/pmlio.py LOG_DTYPE): a port transaction.
struct LogRec {
    uint64_t cycle;
    uint32_t kind;  // LOG_* below
    uint32_t x;
    uint64_t y, z;
};
#pragma pack(pop)
static_assert(sizeof(EventRec) == 32 && sizeof(LogRec) == 32, "record sizes");
enum : uint32_t {
    LOG_WRITE = 0,  // x id, y addr, z wdata (taken by memory the cycle it is first presented)
    LOG_CSR = 1,    // x addr | write << 16 | error << 17, y wdata, z rdata (of the next cycle's csr_resp)
    LOG_RESP = 2,   // x id | error << 16
    LOG_EVENT = 3,  // x vmid | asid << 16, y gpa, z gva
    LOG_EXIT = 4,   // x vmid, y reason
    LOG_IRQ = 5,    // x vmid, y vector
    LOG_STALL = 6,  // x vmid of the event dirty_ready refused
    LOG_PERF = 7,   // x counter index (order of P_PERF_PORTS), y value after the last logged cycle
};

struct Buffer {          // one context's PML or guest buffer, as software armed it
    bool on = false;
    uint64_t base = 0;
    int64_t next = 0;    // index of the next entry; < 0: full
    std::deque<uint32_t> owed;  // events owing an entry here, in acceptance order
    uint64_t outstanding = 0;   // writes issued and not answered
    bool serviceQueued = false;
};

struct Job {  // software servicing one exit / guest interrupt
    uint64_t due;
    uint32_t ctx;
    int part;
};

struct CsrOp {
    uint64_t addr, wdata;
    bool write;
    int check;  // 0 none, 1 rdata == value, 2 rdata & value != 0
    uint64_t value;
    int64_t arm = -1;  // a write of an INDEX: (ctx * 2 + part) re-armed at acceptance
};

struct Options : xlat::CommonOptions {
    std::string work, events;
    uint64_t exitService = 2000, irqService = 500, logCycles = 0;
    Options() { latency = 10; }
};

uint64_t sign_extend_va(uint64_t gvpn) {
    const uint64_t va = (gvpn << 12) & mask(P_VA_BITS);
    return (P_VA_BITS < 64 && (va >> (P_VA_BITS - 1) & 1)) ? va | ~mask(P_VA_BITS) : va;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    xlat::Args(argc, argv).parse(
        [&](const std::string& s, auto next) {
            if (o.parse_common(s, next)) return true;
            if (s == "--work") o.work = next();
            else if (s == "--events") o.events = next();
            else if (s == "--log-cycles") o.logCycles = std::stoull(next());
            else if (s == "--exit-service") o.exitService = std::stoull(next());
            else if (s == "--irq-service") o.irqService = std::stoull(next());
            else return false;
            return true;
        },
        "usage: pml_harness --work W.bin --out stats.json [--events ev.bin] [--log log.bin\n"
        "  --log-cycles N] [--latency 10] [--jitter 0] [--exit-service 2000] [--irq-service 500]\n"
        "  [--seed S] [--exact-idle] [--label S]");
    if (o.work.empty() || o.out.empty()) die("--work and --out are required");
    if (o.latency < 1) die("--latency must be at least 1");

    auto t0 = std::chrono::steady_clock::now();
    const Workload wk = load_workload(o.work.c_str());
    const uint64_t n = wk.size();
    const uint32_t nIds = 1u << P_ID_BITS;
    xlat::Rng rng(o.seed);

    xlat::Model<Vdut> model(argc, argv);
    Vdut& d = model.dut();
    auto& fp = model.fp;

    // ---- reset
    d.dirty_valid = 0;
    d.csr_req_valid = 0;
    d.mem_req_ready = 0;
    d.mem_resp_valid = 0;
    d.exit_ready = 0;
    d.guestIrq_ready = 0;
    xlat::reset_cycles(d);

    // ---- software state
    const uint64_t nctx = wk.ctrl.size();
    std::vector<Buffer> buf(2 * P_CONTEXTS);
    std::map<uint64_t, uint32_t> bufOfPage;  // 4 KiB page -> buffer
    std::deque<CsrOp> csrq;
    auto reg = [](uint64_t c, uint64_t off) { return c * P_STRIDE + off; };
    for (uint64_t c = 0; c < nctx; c++) {
        const bool pml = wk.ctrl[c] & P_CTRL_PML, epml = wk.ctrl[c] & P_CTRL_EPML;
        for (int part : {PML, GUEST}) {
            Buffer& b = buf[2 * c + part];
            b.on = part == PML ? pml : epml;
            b.base = (part == PML ? wk.pmlAddr[c] : wk.gpmlAddr[c]) & ~0xFFFULL & mask(P_PA_BITS);
            b.next = P_ENTRIES - 1;
            if (b.on && !bufOfPage.emplace(b.base >> 12, 2 * c + part).second)
                die("two buffers share page %#llx", (unsigned long long)b.base);
        }
        auto w = [&](uint64_t off, uint64_t v) { csrq.push_back(CsrOp{reg(c, off), v, true, 0, 0}); };
        w(P_REG_PML_ADDR, wk.pmlAddr[c]);
        w(P_REG_PML_INDEX, P_ENTRIES - 1);
        w(P_REG_GPML_ADDR, wk.gpmlAddr[c]);
        w(P_REG_GPML_INDEX, P_ENTRIES - 1);
        w(P_REG_TRACK_ASID, wk.trackAsid[c]);
        w(P_REG_IRQ_VECTOR, wk.irqVector[c]);
        w(P_REG_CTRL, wk.ctrl[c]);
    }

    // ---- run state
    std::vector<EventRec> ev(n, EventRec{0, 0, 0, 0, 0, 0, 0, 0});
    std::vector<uint8_t> partsLeft(n, 0);
    struct Tag { bool busy; uint32_t buffer; };
    std::vector<Tag> tags(nIds, Tag{false, 0});
    xlat::Responses pend;
    std::vector<Job> jobs;
    std::vector<LogRec> logv;
    uint64_t nextEv = 0, cycle = 0, simulated = 0, skipped = 0, lastProgress = 0;
    uint64_t setupEnd = 0;
    bool setupDone = false;
    struct Counts {
        uint64_t accepted = 0, logged = 0, guestLogged = 0, exits = 0, guestIrqs = 0, stallCycles = 0;
        uint64_t ignored = 0, deduped = 0, writes = 0, csrReqs = 0, serviced = 0;
    } st;
    uint64_t serviceWaitSum = 0;  // cycles from an exit / interrupt to its buffer's re-arm
    std::vector<uint64_t> raisedAt(2 * P_CONTEXTS, 0);
    xlat::Protocol protocol(cycle);
    auto logging = [&]() { return !o.log.empty() && cycle < o.logCycles; };
    auto logrec = [&](uint32_t kind, uint32_t x, uint64_t y, uint64_t z) {
        if (logging()) logv.push_back(LogRec{cycle, kind, x, y, z});
    };
    int64_t csrLogAt = -1;  // log record of last cycle's CSR request (its rdata comes now)
    CsrOp csrLast{};
    bool csrLastValid = false;

    // event e is accepted: which parts does it owe (the doc's classification, minus the filter)
    auto owes = [&](uint32_t vm, uint32_t asid) -> uint8_t {
        if (vm >= nctx) return 0;
        uint8_t p = 0;
        if (buf[2 * vm + PML].on) p |= 1;
        if (buf[2 * vm + GUEST].on && (asid & mask(P_ASID_BITS)) == (wk.trackAsid[vm] & mask(P_ASID_BITS))) p |= 2;
        return p;
    };
    // an event the filter dropped: it owes nothing anywhere
    auto drop_owed = [&](uint32_t e) {
        if (ev[e].deduped) return;
        ev[e].deduped = 1;
        st.deduped++;
        if (!P_DEDUP) protocol("an owed entry was skipped (no dedup filter)", e, ev[e].vmid);
        for (int part : {PML, GUEST}) {
            if (!(ev[e].parts >> part & 1)) continue;
            auto& q = buf[2 * ev[e].vmid + part].owed;
            for (auto it = q.begin(); it != q.end(); ++it)
                if (*it == e) { q.erase(it); break; }
        }
        partsLeft[e] = 0;
    };

    struct In { bool evValid; uint64_t evIdx; bool csrValid; bool memResp; };
    In prev{false, 0, false, true};
    auto tRun = std::chrono::steady_clock::now();
    bool finished = false;

    while (!finished) {
        // ---- software: start the service of buffers whose time has come and whose writes landed
        for (size_t k = 0; k < jobs.size();) {
            Job& j = jobs[k];
            Buffer& b = buf[2 * j.ctx + j.part];
            if (j.due <= cycle && b.outstanding == 0) {
                const bool g = j.part == GUEST;
                const uint64_t idx = g ? P_REG_GPML_INDEX : P_REG_PML_INDEX;
                csrq.push_back(CsrOp{reg(j.ctx, idx), 0, false, 1, (uint64_t)b.next & 0xFFFF});
                csrq.push_back(CsrOp{reg(j.ctx, P_REG_STATUS), 0, false, 2, g ? 2ULL : 1ULL});
                CsrOp arm{reg(j.ctx, idx), P_ENTRIES - 1, true, 0, 0};
                arm.arm = 2 * j.ctx + j.part;
                csrq.push_back(arm);
                csrq.push_back(CsrOp{reg(j.ctx, P_REG_ACK), g ? 2ULL : 1ULL, true, 0, 0});
                jobs[k] = jobs.back();
                jobs.pop_back();
            } else {
                k++;
            }
        }
        if (!setupDone && csrq.empty() && !csrLastValid) {
            setupDone = true;
            setupEnd = cycle;
        }

        // ---- inputs of this cycle
        In in{};
        in.evValid = setupDone && nextEv < n && cycle >= setupEnd + wk.arrive[nextEv];
        if (in.evValid) {
            in.evIdx = nextEv;
            d.dirty_bits_gpa = wk.gpa[nextEv] & mask(P_GPA_BITS);
            d.dirty_bits_gva = wk.gva[nextEv] & mask(P_GVA_BITS);
            d.dirty_bits_vmid = wk.vmid[nextEv] & mask(P_VMID_BITS);
            d.dirty_bits_asid = wk.asid[nextEv] & mask(P_ASID_BITS);
            if (!ev[nextEv].offered) ev[nextEv].offered = cycle;
        }
        d.dirty_valid = in.evValid;
        in.csrValid = !csrq.empty();
        if (in.csrValid) {
            d.csr_req_bits_addr = csrq.front().addr;
            d.csr_req_bits_write = csrq.front().write;
            d.csr_req_bits_wdata = csrq.front().wdata;
        }
        d.csr_req_valid = in.csrValid;
        xlat::Responses::Item cur{};
        in.memResp = pend.due(cycle);
        if (in.memResp) {
            cur = pend.pop();
            d.mem_resp_bits_id = cur.id;
            d.mem_resp_bits_error = 0;
        }
        d.mem_resp_valid = in.memResp;
        d.mem_req_ready = 1;
        d.exit_ready = 1;
        d.guestIrq_ready = 1;

        // ---- settle (clock low): this cycle's valids and readies
        d.clock = 0;
        d.eval();
        const bool evFire = in.evValid && d.dirty_ready;
        const bool csrFire = in.csrValid && d.csr_req_ready;
        const bool memFire = d.mem_req_valid;
        const bool exitFire = d.exit_valid;
        const bool irqFire = d.guestIrq_valid;
        if (in.memResp && !d.mem_resp_ready) protocol("mem_resp_ready low", cur.id, 0);
        if (in.csrValid && !d.csr_req_ready) protocol("csr_req_ready low", csrq.front().addr, 0);
        // the response to last cycle's CSR request
        if (csrLastValid) {
            if (!d.csr_resp_valid) protocol("no csr_resp the cycle after a request", csrLast.addr, 0);
            const uint64_t rdata = d.csr_resp_bits_rdata;
            const bool err = d.csr_resp_bits_error;
            if (err) protocol("csr_resp error for a register access", csrLast.addr, rdata);
            if (csrLast.check == 1 && rdata != csrLast.value) protocol("INDEX read differs", csrLast.addr, rdata);
            if (csrLast.check == 2 && !(rdata & csrLast.value)) protocol("STATUS lacks the full bit", csrLast.addr, rdata);
            if (csrLogAt >= 0) {
                logv[csrLogAt].z = csrLast.write ? 0 : rdata;
                logv[csrLogAt].x |= (uint32_t)err << 17;
            }
            csrLastValid = false;
            csrLogAt = -1;
        } else if (d.csr_resp_valid) {
            protocol("csr_resp without a request", 0, 0);
        }
        // sample what fires
        const uint32_t mId = memFire ? (uint32_t)d.mem_req_bits_id : 0;
        const uint64_t mAddr = memFire ? (uint64_t)d.mem_req_bits_addr : 0;
        const uint64_t mData = memFire ? (uint64_t)d.mem_req_bits_wdata : 0;
        if (memFire && (!d.mem_req_bits_write || d.mem_req_bits_wmask != 0xFF))
            protocol("mem_req is not a full 8-byte write", mAddr, d.mem_req_bits_wmask);
        const uint32_t exVm = exitFire ? (uint32_t)d.exit_bits_vmid : 0;
        const uint32_t exReason = exitFire ? (uint32_t)d.exit_bits_reason : 0;
        const uint32_t irqVm = irqFire ? (uint32_t)d.guestIrq_bits_vmid : 0;
        const uint32_t irqVec = irqFire ? (uint32_t)d.guestIrq_bits_vector : 0;
        const bool stall = in.evValid && !d.dirty_ready;

        // ---- edge
        d.clock = 1;
        d.eval();
        simulated++;

        // ---- bookkeeping, in the order tb/pml/pml_env.py's scoreboard takes a cycle
        if (memFire) {
            st.writes++;
            lastProgress = cycle;
            logrec(LOG_WRITE, mId, mAddr, mData);
            auto it = bufOfPage.find(mAddr >> 12);
            if (mId >= nIds || tags[mId].busy) protocol("write with an id in use", mId, mAddr);
            if (it == bufOfPage.end()) {
                protocol("write outside every buffer", mAddr, mData);
            } else {
                const uint32_t bi = it->second;
                Buffer& b = buf[bi];
                const int part = bi & 1;
                if (b.next < 0 || mAddr != b.base + 8 * (uint64_t)b.next)
                    protocol("write address is not ADDR + 8 * INDEX", mAddr, (uint64_t)b.next);
                // the oldest event this buffer owes with this data; the ones before it were
                // dropped by the filter
                bool found = false;
                while (!b.owed.empty()) {
                    const uint32_t e = b.owed.front();
                    const uint64_t want = part == PML ? (wk.gpa[e] & mask(P_GPA_BITS)) << 12
                                                      : sign_extend_va(wk.gva[e] & mask(P_GVA_BITS));
                    if (want == mData) {
                        b.owed.pop_front();
                        if (--partsLeft[e] == 0) ev[e].written = cycle;
                        found = true;
                        break;
                    }
                    drop_owed(e);
                }
                if (!found) protocol("write of an entry no event owes", mAddr, mData);
                b.next--;
                b.outstanding++;
                if (mId < nIds) tags[mId] = Tag{true, bi};
            }
            pend.push(cycle + o.latency + (o.jitter ? rng.below(o.jitter + 1) : 0), mId);
        }
        if (csrFire) {
            const CsrOp& op = csrq.front();
            st.csrReqs++;
            if (logging()) csrLogAt = (int64_t)logv.size();
            logrec(LOG_CSR, (uint32_t)(op.addr & 0xFFFF) | (uint32_t)(op.write ? 1 : 0) << 16, op.wdata, 0);
        }
        if (in.memResp) {
            logrec(LOG_RESP, cur.id, 0, 0);
            if (cur.id < nIds && tags[cur.id].busy) {
                Buffer& b = buf[tags[cur.id].buffer];
                b.outstanding--;
                (tags[cur.id].buffer & 1 ? st.guestLogged : st.logged)++;
                tags[cur.id].busy = false;
            }
        }
        if (stall) {
            st.stallCycles++;
            logrec(LOG_STALL, wk.vmid[in.evIdx], 0, 0);
        }
        if (evFire) {
            const uint64_t e = in.evIdx;
            const uint32_t vm = wk.vmid[e] & mask(P_VMID_BITS);
            logrec(LOG_EVENT, vm | (wk.asid[e] & 0xFFFF) << 16, wk.gpa[e] & mask(P_GPA_BITS),
                   wk.gva[e] & mask(P_GVA_BITS));
            ev[e].accepted = cycle;
            ev[e].vmid = vm;
            st.accepted++;
            lastProgress = cycle;
            const uint8_t p = owes(vm, wk.asid[e]);
            ev[e].parts = p;
            if (!p) {
                ev[e].ignored = 1;
                st.ignored++;
            }
            for (int part : {PML, GUEST})
                if (p >> part & 1) {
                    buf[2 * vm + part].owed.push_back((uint32_t)e);
                    partsLeft[e]++;
                }
            nextEv++;
        }
        if (csrFire) {
            const CsrOp op = csrq.front();
            csrq.pop_front();
            if (op.arm >= 0) {   // INDEX written: the buffer is drained and armed again
                buf[op.arm].next = P_ENTRIES - 1;
                buf[op.arm].serviceQueued = false;
                serviceWaitSum += cycle - raisedAt[op.arm];
                st.serviced++;
            }
            csrLast = op;       // answered on csr_resp next cycle
            csrLastValid = true;
        }
        for (int part : {PML, GUEST}) {
            const bool fire = part == PML ? exitFire : irqFire;
            if (!fire) continue;
            const uint32_t vm = part == PML ? exVm : irqVm;
            logrec(part == PML ? LOG_EXIT : LOG_IRQ, vm, part == PML ? exReason : irqVec, 0);
            (part == PML ? st.exits : st.guestIrqs)++;
            lastProgress = cycle;
            if (vm >= nctx) {
                protocol(part == PML ? "exit for an unconfigured context" : "guestIrq for an unconfigured context", vm, 0);
                continue;
            }
            Buffer& b = buf[2 * vm + part];
            if (part == PML && exReason != P_EXIT_REASON) protocol("exit reason", vm, exReason);
            if (part == GUEST && irqVec != (wk.irqVector[vm] & mask(P_IRQ_VECTOR_BITS)))
                protocol("guestIrq vector", vm, irqVec);
            if (b.next >= 0) protocol(part == PML ? "exit while the PML buffer has room" : "guestIrq while the guest buffer has room", vm, (uint64_t)b.next);
            if (b.serviceQueued) protocol("second exit / guestIrq before the software re-armed the buffer", vm, part);
            b.serviceQueued = true;
            raisedAt[2 * vm + part] = cycle;
            jobs.push_back(Job{cycle + (part == PML ? o.exitService : o.irqService), vm, part});
        }
        cycle++;
        // counters after the last logged cycle: read one cycle later, since a counter shows an
        // event one cycle after it happened (xlat.common.PerfCounter)
        if (!o.log.empty() && cycle == o.logCycles + 1) {
            uint32_t k = 0;
#define X(name) logv.push_back(LogRec{cycle - 2, LOG_PERF, k++, (uint64_t)d.perf_##name, 0});
            P_PERF_PORTS(X)
#undef X
        }

        // ---- done: every event taken, every write answered, software idle, logger at rest
        const bool fired = evFire || csrFire || memFire || exitFire || irqFire || in.memResp || prev.memResp;
        // (not while an event waits on dirty: perf_stallCycles counts those cycles)
        const bool quiet = !fired && !in.evValid && !prev.evValid && !in.csrValid && !prev.csrValid &&
                           !csrLastValid;
        prev = in;
        if (!fp.settled(quiet)) continue;
        // a fixed point: nothing changes until the next memory response, service or arrival
        uint64_t due = UINT64_MAX;
        if (!pend.empty()) due = std::min(due, pend.next_due());
        for (const Job& j : jobs)
            if (buf[2 * j.ctx + j.part].outstanding == 0) due = std::min(due, j.due);
        if (setupDone && nextEv < n) due = std::min(due, setupEnd + wk.arrive[nextEv]);
        if (due == UINT64_MAX) {
            if (nextEv < n || !jobs.empty())
                die("logger stuck at cycle %llu: %llu of %llu events accepted, %zu services waiting",
                    (unsigned long long)cycle, (unsigned long long)nextEv, (unsigned long long)n, jobs.size());
            finished = true;
        } else if (!o.exactIdle && due > cycle && (o.log.empty() || cycle > o.logCycles)) {
            skipped += due - cycle;
            cycle = due;
        }
        if (cycle - lastProgress > 2000000 + 4 * (o.latency + o.jitter + o.exitService + o.irqService))
            die("no progress for %llu cycles (%llu of %llu events accepted)",
                (unsigned long long)(cycle - lastProgress), (unsigned long long)nextEv, (unsigned long long)n);
    }
    // trailing events the filter dropped (no later write of their buffer skipped them)
    for (int k = 0; k < 2 * P_CONTEXTS; k++)
        while (!buf[k].owed.empty()) drop_owed(buf[k].owed.front());
    if (!o.log.empty() && cycle <= o.logCycles) {   // the run ended inside the logged window
        uint32_t k = 0;
#define X(name) logv.push_back(LogRec{cycle - 1, LOG_PERF, k++, (uint64_t)d.perf_##name, 0});
        P_PERF_PORTS(X)
#undef X
    }
    auto t1 = std::chrono::steady_clock::now();
    const double runSec = std::chrono::duration<double>(t1 - tRun).count();
    const double totSec = std::chrono::duration<double>(t1 - t0).count();
    if (d.mem_req_valid) protocol("mem_req valid at the end", 0, 0);

    // ---- cross-check against the RTL's own counters (32-bit saturating)
    const bool ok = xlat::counters_agree({
        {"logged", d.perf_logged, st.logged},
        {"guestLogged", d.perf_guestLogged, st.guestLogged},
        {"exits", d.perf_exits, st.exits},
        {"guestIrqs", d.perf_guestIrqs, st.guestIrqs},
        {"stallCycles", d.perf_stallCycles, st.stallCycles},
        {"writeErrors", d.perf_writeErrors, 0},
        {"ignored", d.perf_ignored, st.ignored},
        {"deduped", d.perf_deduped, st.deduped},
        {"badCsrs", d.perf_badCsrs, 0},
        {"badMemResps", d.perf_badMemResps, 0},
        {"writes(responses)", st.logged + st.guestLogged, st.writes},
    }) && protocol.errors == 0;

    if (!o.events.empty()) {
        FILE* f = std::fopen(o.events.c_str(), "wb");
        if (!f) die("cannot write %s", o.events.c_str());
        if (n) std::fwrite(ev.data(), sizeof(EventRec), n, f);
        std::fclose(f);
    }
    if (!o.log.empty()) {
        FILE* f = std::fopen(o.log.c_str(), "wb");
        if (!f) die("cannot write %s", o.log.c_str());
        if (!logv.empty()) std::fwrite(logv.data(), sizeof(LogRec), logv.size(), f);
        std::fclose(f);
    }
    FILE* of = std::fopen(o.out.c_str(), "w");
    if (!of) die("cannot write %s", o.out.c_str());
    xlat::Json j(of);
    j.open();
    j.s("label", o.label).s("config", P_CONFIG);
    j.u("contexts", P_CONTEXTS).u("entries", P_ENTRIES).u("queueDepth", P_QUEUE_DEPTH);
    j.u("tags", nIds).u("dedupEntries", P_DEDUP);
    j.u("latency", o.latency).u("jitter", o.jitter).u("exitService", o.exitService);
    j.u("irqService", o.irqService).u("configuredContexts", nctx);
    j.u("events", n).u("accepted", st.accepted).u("writes", st.writes);
    j.u("logged", st.logged).u("guestLogged", st.guestLogged).u("exits", st.exits);
    j.u("guestIrqs", st.guestIrqs).u("stallCycles", st.stallCycles).u("ignored", st.ignored);
    j.u("deduped", st.deduped).u("csrRequests", st.csrReqs).u("serviced", st.serviced);
    j.d("meanServiceCycles", st.serviced ? (double)serviceWaitSum / st.serviced : 0.0);
    j.u("setupCycles", setupEnd).u("cycles", cycle);
    j.open("perf");
#define X(name) j.u(#name, (uint64_t)d.perf_##name);
    P_PERF_PORTS(X)
#undef X
    j.close();
    xlat::json_verdict(j, protocol.errors, ok, simulated, skipped, runSec, totSec);
    j.close();
    std::fclose(of);
    d.final();
    return xlat::exit_status(ok);
}
