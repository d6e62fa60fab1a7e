// xlat sim: trace-driven Verilator harness for NestedWalker (docs/nested-walker.md).
//
// Loads a memory image (sparse 64-bit words holding the guest and host page tables) and a
// request trace, both written by sim/walkerio.py (formats in sim/README.md), then:
//   * drives `req` in trace order, each with a free id (at most 2^idBits walks accepted and not
//     yet answered, capped by --inflight; the walker's own req_ready limits it to `walkers`);
//   * answers every `mem_req` after a fixed latency (--latency, default 100 cycles, plus an
//     optional random --jitter): the memory is a serialisation point at acceptance (a read
//     returns the word as it is then, a write is applied then under its byte mask); one
//     `mem_resp` per cycle, earliest due first, so responses to different ids may overtake;
//   * holds `resp_ready`, `dirty_ready`, `mem_req_ready` high (or high with probability P:
//     --resp-ready P, --dirty-ready P, --mem-req-ready P; deterministic by --seed);
//   * counts everything, checks the port protocol (one access outstanding per id, ids in
//     flight, 8-byte alignment, sums of memReads/memWrites) and at the end that its own counts
//     equal the RTL's perf_* counters (exit status 3 otherwise);
//   * writes per-run statistics as JSON (--out) and, with --log, one 40-byte record per response.
// Idle cycles (every walk waiting for memory) are skipped exactly (xlat::FixedPoint) unless
// --exact-idle. Widths and parameters come from xlat_params.h, generated from the
// configuration's manifest.json by sim/harness_build.py.
#include <chrono>
#include <deque>
#include <memory>
#include <queue>
#include <unordered_map>

#include "Vdut.h"
#include "Vdut___024root.h"
#include "common.h"
#include "verilated.h"
#include "xlat_params.h"

using xlat::die;
using xlat::mask;

static_assert(P_PA_BITS <= 64 && P_GPA_BITS <= 64, "addresses must fit in 64-bit ports");
static_assert(P_ID_BITS <= 16, "ids index a table");

namespace {

struct Trace {
    std::vector<uint64_t> gva, gRoot, hRoot;
    std::vector<uint32_t> asid, vmid;
    std::vector<uint8_t> cmd, user;
    size_t size() const { return gva.size(); }
};

Trace load_trace(const char* path) {
    FILE* f = xlat::open_input(path, "XLATWT01");
    uint64_t n;
    if (std::fread(&n, 8, 1, f) != 1) die("short header in %s", path);
    Trace t;
    xlat::readv(f, t.gva, n, "gva");
    xlat::readv(f, t.asid, n, "asid");
    xlat::readv(f, t.vmid, n, "vmid");
    xlat::readv(f, t.gRoot, n, "gRoot");
    xlat::readv(f, t.hRoot, n, "hRoot");
    xlat::readv(f, t.cmd, n, "cmd");
    xlat::readv(f, t.user, n, "user");
    std::fclose(f);
    return t;
}

// One response record of --log (little-endian, 40 bytes; sim/walkerio.py LOG_DTYPE).
#pragma pack(push, 1)
struct Rec {
    uint32_t index;  // trace index of the request
    uint8_t fault, faultLevel, faultStage, pageSize, guestPageSize, hostPageSize;
    uint8_t perm;  // r | w << 1 | x << 2 | u << 3
    uint8_t memReads, memWrites, pad0, pad1, pad2;
    uint64_t ppn, faultGpa;
    uint32_t latency;  // cycles from the request's acceptance to its response
    uint32_t pad3;
};
#pragma pack(pop)
static_assert(sizeof(Rec) == 40, "log record is 40 bytes");

struct Stats {
    uint64_t walks = 0, memReads = 0, memWrites = 0, respReads = 0, respWrites = 0, faults = 0;
    uint64_t dirtyEvents = 0, dirtyPageTable = 0, hugeGuest = 0, hugeAligned = 0, splintered = 0;
    uint64_t coldWalks = 0;   // successful walks that read exactly P_COLD_READS words
    uint64_t latencySum = 0, maxReads = 0;
    uint64_t size[4] = {0, 0, 0, 0};  // successful walks per effective page size
    uint64_t faultKind[8] = {0, 0, 0, 0, 0, 0, 0, 0};
};

struct Options : xlat::CommonOptions {  // (--latency defaults to 100)
    std::string mem, trace;
    uint64_t warmup = 0, progress = 0;
    uint64_t inflight = 0;  // 0: 2^idBits
    double respReady = 1.0, dirtyReady = 1.0, memReqReady = 1.0;
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    xlat::Args(argc, argv).parse(
        [&](const std::string& s, auto next) {
            if (o.parse_common(s, next)) return true;
            if (s == "--mem") o.mem = next();
            else if (s == "--trace") o.trace = next();
            else if (s == "--warmup") o.warmup = std::stoull(next());
            else if (s == "--progress") o.progress = std::stoull(next());
            else if (s == "--inflight") o.inflight = std::stoull(next());
            else if (s == "--resp-ready") o.respReady = std::stod(next());
            else if (s == "--dirty-ready") o.dirtyReady = std::stod(next());
            else if (s == "--mem-req-ready") o.memReqReady = std::stod(next());
            else return false;
            return true;
        },
        "usage: walker_harness --mem M.bin --trace T.bin --out stats.json [--log resp.bin]\n"
        "  [--latency 100] [--jitter 0] [--warmup N] [--inflight N] [--resp-ready P]\n"
        "  [--dirty-ready P] [--mem-req-ready P] [--seed S] [--exact-idle] [--progress N]\n"
        "  [--label S]");
    if (o.mem.empty() || o.trace.empty() || o.out.empty()) die("--mem, --trace and --out are required");
    if (o.latency < 1) die("--latency must be at least 1");

    auto t0 = std::chrono::steady_clock::now();
    auto mem = xlat::load_memory(o.mem.c_str());
    const Trace tr = load_trace(o.trace.c_str());
    const uint64_t n = tr.size();
    const uint64_t nIds = 1ULL << P_ID_BITS;
    const uint64_t maxInflight = o.inflight ? std::min(o.inflight, nIds) : nIds;
    const bool constReadies = o.respReady >= 1.0 && o.dirtyReady >= 1.0 && o.memReqReady >= 1.0;
    xlat::Rng rng(o.seed);

    xlat::Model<Vdut> model(argc, argv);
    Vdut& d = model.dut();
    auto& fp = model.fp;

    // ---- reset
    d.req_valid = 0;
    d.resp_ready = 0;
    d.mem_req_ready = 0;
    d.mem_resp_valid = 0;
    d.dirty_ready = 0;
    d.flush_valid = 0;
    d.flush_bits_kind = 0;
    d.flush_bits_vmid = 0;
    d.flush_bits_asid = 0;
    xlat::reset_cycles(d);

    std::deque<uint32_t> freeIds;
    for (uint32_t k = 0; k < nIds; k++) freeIds.push_back(k);
    struct Flight { uint64_t index, accepted; bool outstanding; bool busy; };
    std::vector<Flight> fl(nIds, Flight{0, 0, false, false});
    std::vector<uint64_t> walkReads(nIds, 0), walkWrites(nIds, 0);  // accesses seen per id
    xlat::Responses pend;
    uint64_t inflight = 0, nextReq = 0, responses = 0;
    uint64_t cycle = 0, simulated = 0, skipped = 0, lastProgressCycle = 0;
    Stats st, warm;
    uint64_t warmCycle = 0;  // cycle of the last warm-up response (start of the window)
    std::vector<uint64_t> latencies;
    latencies.reserve(n);
    xlat::RecordLog<Rec> log(o.log);
    xlat::Protocol protocol(cycle);

    // inputs of the previous cycle, for the idle check
    struct In { bool reqValid; uint32_t reqId; uint64_t reqIndex; bool memResp; bool rr, dr, mr; };
    In prev{false, 0, 0, true, false, false, false};
    auto tRun = std::chrono::steady_clock::now();

    while (responses < n) {
        // ---- inputs of this cycle
        In in{};
        in.reqValid = nextReq < n && !freeIds.empty() && inflight < maxInflight;
        if (in.reqValid) {
            in.reqId = freeIds.front();
            in.reqIndex = nextReq;
            d.req_bits_id = in.reqId;
            d.req_bits_gva = tr.gva[nextReq];
            d.req_bits_asid = tr.asid[nextReq] & mask(P_ASID_BITS);
            d.req_bits_vmid = tr.vmid[nextReq] & mask(P_VMID_BITS);
            d.req_bits_gRoot = tr.gRoot[nextReq] & mask(P_GROOT_BITS);
            d.req_bits_hRoot = tr.hRoot[nextReq] & mask(P_HROOT_BITS);
            d.req_bits_cmd = tr.cmd[nextReq] & 3;
            d.req_bits_user = tr.user[nextReq] & 1;
            d.req_bits_mode = 3;   // both stages (TransMode): the traces are 2D walks
        }
        d.req_valid = in.reqValid;
        xlat::Responses::Item cur{};
        in.memResp = xlat::present_response<true>(d, pend, cycle, cur);
        in.rr = rng.chance(o.respReady);
        in.dr = rng.chance(o.dirtyReady);
        in.mr = rng.chance(o.memReqReady);
        d.resp_ready = in.rr;
        d.dirty_ready = in.dr;
        d.mem_req_ready = in.mr;

        // ---- settle (clock low): this cycle's valids and readies
        d.clock = 0;
        d.eval();
        const bool reqFire = in.reqValid && d.req_ready;
        const bool respFire = d.resp_valid && in.rr;
        const bool memFire = d.mem_req_valid && in.mr;
        const bool dirtyFire = d.dirty_valid && in.dr;
        if (in.memResp && !d.mem_resp_ready) protocol("mem_resp_ready low", cur.id, 0);
        Rec rec{};
        uint32_t respId = 0;
        if (respFire) {
            respId = (uint32_t)d.resp_bits_id;
            rec.fault = (uint8_t)d.resp_bits_fault;
            rec.faultLevel = (uint8_t)d.resp_bits_faultLevel;
            rec.faultStage = (uint8_t)d.resp_bits_faultStage;
            rec.pageSize = (uint8_t)d.resp_bits_pageSize;
            rec.guestPageSize = (uint8_t)d.resp_bits_guestPageSize;
            rec.hostPageSize = (uint8_t)d.resp_bits_hostPageSize;
            rec.perm = (uint8_t)(d.resp_bits_perm_r | (d.resp_bits_perm_w << 1) |
                                 (d.resp_bits_perm_x << 2) | (d.resp_bits_perm_u << 3));
            rec.memReads = (uint8_t)d.resp_bits_memReads;
            rec.memWrites = (uint8_t)d.resp_bits_memWrites;
            rec.ppn = (uint64_t)d.resp_bits_ppn;
            rec.faultGpa = (uint64_t)d.resp_bits_faultGpa;
        }
        const xlat::MemReq mr = memFire ? xlat::MemReq::of(d) : xlat::MemReq{};
        const uint32_t dPt = dirtyFire ? (uint32_t)d.dirty_bits_pageTable : 0;

        // ---- edge
        d.clock = 1;
        d.eval();
        simulated++;

        // ---- bookkeeping of what fired
        if (reqFire) {
            freeIds.pop_front();
            fl[in.reqId] = Flight{nextReq, cycle, false, true};
            walkReads[in.reqId] = walkWrites[in.reqId] = 0;
            inflight++;
            nextReq++;
        }
        if (in.memResp) fl[cur.id].outstanding = false;
        if (memFire) {
            if (mr.id >= nIds || !fl[mr.id].busy) protocol("mem_req id not in flight", mr.id, mr.addr);
            else if (fl[mr.id].outstanding) protocol("second outstanding access of one walk", mr.id, mr.addr);
            if (mr.addr & 7) protocol("unaligned mem_req", mr.id, mr.addr);
            if (!mr.write && mr.wmask) protocol("read with nonzero wmask", mr.id, mr.wmask);
            (mr.write ? st.memWrites : st.memReads)++;
            if (mr.id < nIds) {
                (mr.write ? walkWrites : walkReads)[mr.id]++;
                fl[mr.id].outstanding = true;
            }
            pend.push(cycle + o.latency + (o.jitter ? rng.below(o.jitter + 1) : 0), mr.id, mr.apply(mem));
        }
        if (dirtyFire) {
            st.dirtyEvents++;
            st.dirtyPageTable += dPt;
        }
        if (respFire) {
            if (respId >= nIds || !fl[respId].busy) {
                protocol("response id not in flight", respId, 0);
            } else {
                Flight& f = fl[respId];
                if (f.outstanding) protocol("response with an access outstanding", respId, 0);
                if (rec.memReads != walkReads[respId] || rec.memWrites != walkWrites[respId])
                    protocol("memReads/memWrites differ from the accesses seen", rec.memReads,
                             walkReads[respId]);
                f.busy = false;
                freeIds.push_back(respId);
                inflight--;
                rec.index = (uint32_t)f.index;
                rec.latency = (uint32_t)(cycle + 1 - f.accepted);
                st.walks++;
                st.respReads += rec.memReads;
                st.respWrites += rec.memWrites;
                st.maxReads = std::max<uint64_t>(st.maxReads, rec.memReads);
                st.latencySum += rec.latency;
                latencies.push_back(rec.latency);
                if (rec.fault) {
                    st.faults++;
                    st.faultKind[rec.fault & 7]++;
                } else {
                    st.size[rec.pageSize & 3]++;
                    if (rec.memReads == P_COLD_READS) st.coldWalks++;
                    if (rec.guestPageSize) {
                        st.hugeGuest++;
                        if (rec.hostPageSize >= rec.guestPageSize) st.hugeAligned++;
                        else st.splintered++;
                    }
                }
                log.push(rec);
                responses++;
                lastProgressCycle = cycle;
                if (responses == o.warmup) {
                    warm = st;
                    warmCycle = cycle + 1;
                }
                if (o.progress && responses % o.progress == 0) {
                    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - tRun).count();
                    std::fprintf(stderr, "progress %s %llu/%llu walks, %.0f walks/s\n", o.label.c_str(),
                                 (unsigned long long)responses, (unsigned long long)n,
                                 responses / std::max(el, 1e-9));
                }
            }
        }
        cycle++;

        // ---- exact idle skipping: nothing fired, inputs as in the previous cycle
        const bool quiet = !reqFire && !respFire && !memFire && !dirtyFire && !in.memResp &&
                           !prev.memResp && in.reqValid == prev.reqValid &&
                           (!in.reqValid || (in.reqId == prev.reqId && in.reqIndex == prev.reqIndex)) &&
                           constReadies;
        prev = in;
        if (fp.settled(quiet && !o.exactIdle)) {
            // fixed point: nothing changes until the next memory response is due
            if (pend.empty()) die("walker stuck: %llu of %llu walks answered, no memory access outstanding",
                                  (unsigned long long)responses, (unsigned long long)n);
            const uint64_t due = pend.next_due();
            if (due > cycle) {
                skipped += due - cycle;
                cycle = due;
            }
        }
        if (cycle - lastProgressCycle > 1000000 + 4 * o.latency)
            die("no response for %llu cycles (%llu of %llu walks answered)",
                (unsigned long long)(cycle - lastProgressCycle), (unsigned long long)responses,
                (unsigned long long)n);
    }
    log.close();
    // settle the counters of the last cycle: two idle cycles, since a counter shows an event one
    // cycle after it happened (xlat.common.PerfCounter); idle inputs add no event
    d.req_valid = 0; d.mem_resp_valid = 0; d.resp_ready = 1; d.dirty_ready = 1; d.mem_req_ready = 1;
    for (int i = 0; i < 2; i++) {
        d.clock = 0;
        d.eval();
        d.clock = 1;
        d.eval();
    }
    d.clock = 0;
    d.eval();
    auto t1 = std::chrono::steady_clock::now();
    const double runSec = std::chrono::duration<double>(t1 - tRun).count();
    const double totSec = std::chrono::duration<double>(t1 - t0).count();
    if (!pend.empty()) protocol("memory responses left after the last walk", pend.size(), 0);
    if (d.mem_req_valid) protocol("mem_req valid after the last walk", 0, 0);

    // ---- cross-check against the RTL's own counters (32-bit saturating)
    const bool ok = xlat::counters_agree({
        {"walks", d.perf_walks, st.walks},
        {"memReads", d.perf_memReads, st.memReads},
        {"memWrites", d.perf_memWrites, st.memWrites},
        {"faults", d.perf_faults, st.faults},
        {"busErrors", d.perf_busErrors, 0},
        {"dirtyEvents", d.perf_dirtyEvents, st.dirtyEvents},
        {"hugeGuest", d.perf_hugeGuest, st.hugeGuest},
        {"hugeAligned", d.perf_hugeAligned, st.hugeAligned},
        {"splintered", d.perf_splintered, st.splintered},
        {"flushes", d.perf_flushes, 0},
        {"badFlushes", d.perf_badFlushes, 0},
        {"badMemResps", d.perf_badMemResps, 0},
        {"idStalls", d.perf_idStalls, 0},
        {"memReads(responses)", st.respReads, st.memReads},
        {"memWrites(responses)", st.respWrites, st.memWrites},
    }) && protocol.errors == 0;

    FILE* of = std::fopen(o.out.c_str(), "w");
    if (!of) die("cannot write %s", o.out.c_str());
    xlat::Json j(of);
    auto window = [&](const Stats& s, const Stats& w, uint64_t cycles) {
        const uint64_t walks = s.walks - w.walks;
        j.u("walks", walks).u("cycles", cycles);
        j.u("memReads", s.memReads - w.memReads).u("memWrites", s.memWrites - w.memWrites);
        j.u("respReads", s.respReads - w.respReads).u("respWrites", s.respWrites - w.respWrites);
        j.d("readsPerWalk", walks ? (double)(s.respReads - w.respReads) / walks : 0.0);
        j.d("writesPerWalk", walks ? (double)(s.respWrites - w.respWrites) / walks : 0.0);
        j.d("walksPer1000Cycles", cycles ? 1000.0 * walks / cycles : 0.0);
        j.d("meanWalkLatency", walks ? (double)(s.latencySum - w.latencySum) / walks : 0.0);
        j.u("faults", s.faults - w.faults);
        j.u("dirtyEvents", s.dirtyEvents - w.dirtyEvents);
        j.u("dirtyPageTable", s.dirtyPageTable - w.dirtyPageTable);
        j.u("hugeGuest", s.hugeGuest - w.hugeGuest);
        j.u("hugeAligned", s.hugeAligned - w.hugeAligned);
        j.u("splintered", s.splintered - w.splintered);
        j.u("coldWalks", s.coldWalks - w.coldWalks);
        j.u("size4K", s.size[0] - w.size[0]).u("size2M", s.size[1] - w.size[1]);
        j.u("size1G", s.size[2] - w.size[2]).u("size512G", s.size[3] - w.size[3]);
    };
    j.open();
    j.s("label", o.label).s("config", P_CONFIG);
    j.u("walkers", P_WALKERS).u("guestPwcEntries", P_GPWC).u("hostPwcEntries", P_HPWC);
    j.u("nestedTlbEntries", P_NTLB).u("coldReads", P_COLD_READS).u("maxReads", P_MAX_READS);
    j.u("latency", o.latency).u("jitter", o.jitter).u("inflight", maxInflight);
    j.d("respReady", o.respReady).d("dirtyReady", o.dirtyReady).d("memReqReady", o.memReqReady);
    j.u("requests", n).u("warmup", std::min<uint64_t>(o.warmup, n));
    // the whole run (the counters cross-checked against the RTL's)
    window(st, Stats{}, cycle);
    j.u("maxReadsSeen", st.maxReads);
    j.d("latencyP50", xlat::pct(latencies, 0.5)).d("latencyP95", xlat::pct(latencies, 0.95));
    j.open("faultKinds");
    for (int k = 1; k < 6; k++) j.u(std::to_string(k).c_str(), st.faultKind[k]);
    j.close();
    // the measured window: responses after the first --warmup ones
    j.open("window");
    window(st, warm, o.warmup && o.warmup < n ? cycle - warmCycle : cycle);
    j.close();
    j.open("perf");
#define X(name) j.u(#name, (uint64_t)d.perf_##name);
    P_PERF_PORTS(X)
#undef X
    j.close();
    xlat::json_verdict(j, protocol.errors, ok, simulated, skipped, runSec, totSec);
    j.d("walks_per_second", st.walks / std::max(runSec, 1e-9));
    j.close();
    std::fclose(of);
    d.final();
    return xlat::exit_status(ok);
}
