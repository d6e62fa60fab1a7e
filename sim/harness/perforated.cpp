// xlat sim: trace-driven Verilator harness for PerforatedL2Tlb (docs/perforated-l2tlb.md).
//
// Loads a memory image (the page tables, hole bitmap, shadow nodes and hole tables written by
// the testbenches' builder tb/xlat_tb/perforated_tables.py, through sim/memimage.py) and a
// request trace (sim/perforatedio.py; formats in sim/README.md), then:
//   * drives `req` in trace order, each with a free id (at most 2^idBits requests accepted and
//     not yet answered, capped by --inflight); `bitmapBase` from the trace;
//   * answers every `mem_req` after a fixed latency (--latency, default 100 cycles, plus an
//     optional random --jitter) with the image's word (the block only reads); one `mem_resp`
//     per cycle, earliest due first; a response refused by `mem_resp_ready` (the block takes
//     one operation a cycle, docs "Acceptance") stays on the channel until taken;
//   * holds `resp_ready` and `mem_req_ready` high, sends no invalidation;
//   * checks every response against what the builder's records say the request must get
//     (fault, ppn, pageSize, permissions: carried in the trace), the port protocol (ids in
//     flight, one read outstanding per slot, aligned reads, reads only), and at the end that
//     its own counts equal the RTL's perf_* counters (exit status 3 otherwise). The counters a
//     port cannot show are counted from each request's page kind (the trace's info bits) and
//     its response's source: filterSkips, bitmapLookups, bitmapHits, holes, fills4k, fills2m,
//     perforatedFills. pwcHits and the evictions depend on the caches' contents: they are
//     compared with the reference model when the log covers the whole run (perforatedio);
//     walkerFullCycles is 0 (a request is offered only when req_ready is high; the harness
//     counts the cycles it held one back itself, reqWaitCycles);
//   * writes per-run statistics as JSON (--out) and, with --log, every handshake of the run up
//     to the --log-responses-th response (32-byte records, perforatedio.LOG_DTYPE) for the
//     replay on the reference model tb/models/perforated.py.
// Idle cycles (every walk waiting for memory) are skipped exactly (xlat::FixedPoint) unless
// --exact-idle. Widths come from xlat_params.h (sim/harness_build.py, from manifest.json).
#include <chrono>
#include <deque>
#include <memory>
#include <optional>

#include "Vdut.h"
#include "Vdut___024root.h"
#include "common.h"
#include "verilated.h"
#include "xlat_params.h"

using xlat::die;
using xlat::mask;

static_assert(P_ID_BITS <= 8 && P_MEM_ID_BITS <= 8, "ids index tables");
static_assert(P_PA_BITS <= 64 && P_PPN_BITS <= 64 && P_ROOT_BITS <= 64, "64-bit ports");

namespace {

// per-request info bits (sim/workloads/perforated.py INFO_*)
enum : uint16_t {
    I_PERF = 1, I_FILTER = 2, I_HOLE = 4, I_LARGE = 8, I_LEAF4K = 16, I_FAULT = 32,
    I_PAGE2M = 64, I_W = 128, I_U = 256, I_X = 512,
};

struct Trace {
    uint64_t bitmapBase = 0;
    std::vector<uint64_t> vpn, root, expPpn;
    std::vector<uint32_t> asid;
    std::vector<uint8_t> cmd, user;
    std::vector<uint16_t> info;
    size_t size() const { return vpn.size(); }
};

Trace load_trace(const char* path) {
    FILE* f = xlat::open_input(path, "XLATPT01");
    uint64_t n;
    Trace t;
    if (std::fread(&n, 8, 1, f) != 1 || std::fread(&t.bitmapBase, 8, 1, f) != 1)
        die("short header in %s", path);
    xlat::readv(f, t.vpn, n, "vpn");
    xlat::readv(f, t.asid, n, "asid");
    xlat::readv(f, t.root, n, "root");
    xlat::readv(f, t.cmd, n, "cmd");
    xlat::readv(f, t.user, n, "user");
    xlat::readv(f, t.info, n, "info");
    xlat::readv(f, t.expPpn, n, "expPpn");
    std::fclose(f);
    return t;
}

// One handshake record of --log (little-endian, 32 bytes; sim/perforatedio.py LOG_DTYPE).
#pragma pack(push, 1)
struct Rec {
    uint64_t cycle;
    uint32_t kind, x;
    uint64_t y, z;
};
#pragma pack(pop)
static_assert(sizeof(Rec) == 32, "log record is 32 bytes");
enum : uint32_t { L_REQ = 0, L_MEMREQ = 1, L_MEMRESP = 2, L_RESP = 3, L_COUNTER = 7 };

struct Stats {
    uint64_t requests = 0, responses = 0, src[5] = {0, 0, 0, 0, 0};
    uint64_t memReads = 0, bitmapReads = 0, respReads = 0, misses = 0, faults = 0;
    uint64_t filterSkips = 0, bitmapLookups = 0, holes = 0, fills4k = 0, fills2m = 0, perfFills = 0;
    uint64_t latencySum = 0, maxReads = 0;
};

struct Options : xlat::CommonOptions {  // (--latency defaults to 100)
    std::string mem, trace;
    uint64_t warmup = 0, inflight = 0, logResponses = ~0ULL;
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
            else if (s == "--inflight") o.inflight = std::stoull(next());
            else if (s == "--log-responses") o.logResponses = std::stoull(next());
            else return false;
            return true;
        },
        "usage: perforated_harness --mem M.bin --trace T.bin --out stats.json\n"
        "  [--log log.bin [--log-responses N]] [--latency 100] [--jitter 0] [--warmup N]\n"
        "  [--inflight N] [--seed S] [--exact-idle] [--label S]");
    if (o.mem.empty() || o.trace.empty() || o.out.empty()) die("--mem, --trace and --out are required");
    if (o.latency < 1) die("--latency must be at least 1");

    auto t0 = std::chrono::steady_clock::now();
    const auto mem = xlat::load_memory(o.mem.c_str());
    const Trace tr = load_trace(o.trace.c_str());
    const uint64_t n = tr.size();
    const uint64_t nIds = 1ULL << P_ID_BITS, nSlots = 1ULL << P_MEM_ID_BITS;
    const uint64_t maxInflight = o.inflight ? std::min(o.inflight, nIds) : nIds;
    xlat::Rng rng(o.seed);

    xlat::Model<Vdut> model(argc, argv);
    Vdut& d = model.dut();
    auto& fp = model.fp;

    d.req_valid = 0;
    d.resp_ready = 0;
    d.mem_req_ready = 0;
    d.mem_resp_valid = 0;
    d.inval_valid = 0;
    d.inval_bits_kind = 0;
    d.inval_bits_asid = 0;
    d.inval_bits_vpn = 0;
    d.inval_bits_frame = 0;
    d.bitmapBase = tr.bitmapBase & mask(P_PA_BITS);
    xlat::reset_cycles(d);

    std::deque<uint32_t> freeIds;
    for (uint32_t k = 0; k < nIds; k++) freeIds.push_back(k);
    struct Flight { uint64_t index, accepted; bool busy; };
    std::vector<Flight> fl(nIds, Flight{0, 0, false});
    std::vector<bool> outstanding(nSlots, false);
    xlat::Responses pend;
    std::optional<xlat::Responses::Item> held;  // the memory response on the channel
    uint64_t inflight = 0, nextReq = 0;
    uint64_t cycle = 0, simulated = 0, skipped = 0, lastProgressCycle = 0;
    uint64_t mismatches = 0, reqWaitCycles = 0, memRespRefused = 0;
    Stats st, warm;
    uint64_t warmCycle = 0;
    std::vector<uint64_t> latencies;
    latencies.reserve(n);
    FILE* logf = nullptr;
    std::vector<Rec> logbuf;
    bool logging = false;
    if (!o.log.empty()) {
        logf = std::fopen(o.log.c_str(), "wb");
        if (!logf) die("cannot write %s", o.log.c_str());
        logging = o.logResponses > 0;
    }
    auto logrec = [&](uint32_t kind, uint32_t x, uint64_t y, uint64_t z) {
        logbuf.push_back(Rec{cycle, kind, x, y, z});
        if (logbuf.size() >= 4096) {
            std::fwrite(logbuf.data(), sizeof(Rec), logbuf.size(), logf);
            logbuf.clear();
        }
    };
    xlat::Protocol protocol(cycle);

    struct In { bool reqValid; uint32_t reqId; uint64_t reqIndex; bool memResp; };
    In prev{false, 0, 0, true};
    auto tRun = std::chrono::steady_clock::now();

    while (st.responses < n) {
        // ---- inputs of this cycle
        // a request is offered only in a cycle in which req_ready is high (req_ready does not
        // depend on req_valid, docs "Timing": this changes no acceptance cycle); so
        // perf_walkerFullCycles stays 0, the harness counts the cycles it held a request
        // itself (reqWaitCycles), and a wait for memory is a fixed point (idle skipping)
        In in{};
        const bool want = nextReq < n && !freeIds.empty() && inflight < maxInflight;
        d.req_valid = 0;
        if (!held && pend.due(cycle)) held = pend.pop();
        in.memResp = held.has_value();
        if (in.memResp) {
            d.mem_resp_bits_id = held->id;
            d.mem_resp_bits_rdata = held->rdata;
            d.mem_resp_bits_error = 0;
        }
        d.mem_resp_valid = in.memResp;
        d.resp_ready = 1;
        d.mem_req_ready = 1;

        // ---- settle (clock low): this cycle's valids and readies, then the request
        d.clock = 0;
        d.eval();
        if (want && d.req_ready) {
            in.reqValid = true;
            in.reqId = freeIds.front();
            in.reqIndex = nextReq;
            d.req_bits_id = in.reqId;
            d.req_bits_vpn = tr.vpn[nextReq] & mask(36);
            d.req_bits_asid = tr.asid[nextReq] & mask(P_ASID_BITS);
            d.req_bits_root = tr.root[nextReq] & mask(P_ROOT_BITS);
            d.req_bits_cmd = tr.cmd[nextReq] & 3;
            d.req_bits_user = tr.user[nextReq] & 1;
            d.req_valid = 1;
            d.eval();
            if (!d.req_ready) protocol("req_ready depends on req_valid", nextReq, 0);
        }
        const bool reqFire = in.reqValid && d.req_ready;
        const bool respFire = d.resp_valid;
        const bool memFire = d.mem_req_valid;
        const bool memRespFire = in.memResp && d.mem_resp_ready;
        if (want && !in.reqValid) reqWaitCycles++;
        if (in.memResp && !memRespFire) memRespRefused++;
        uint32_t respId = 0, fault = 0, source = 0, reads = 0, pageSize = 0, perm = 0;
        uint64_t ppn = 0;
        if (respFire) {
            respId = (uint32_t)d.resp_bits_id;
            fault = d.resp_bits_fault;
            source = d.resp_bits_source;
            reads = d.resp_bits_memReads;
            pageSize = d.resp_bits_pageSize;
            perm = d.resp_bits_perm_r | d.resp_bits_perm_w << 1 | d.resp_bits_perm_x << 2 |
                   d.resp_bits_perm_u << 3;
            ppn = (uint64_t)d.resp_bits_ppn;
        }
        uint32_t mId = 0;
        uint64_t mAddr = 0;
        if (memFire) {
            mId = (uint32_t)d.mem_req_bits_id;
            mAddr = (uint64_t)d.mem_req_bits_addr;
            if (d.mem_req_bits_write || d.mem_req_bits_wmask) protocol("mem_req write", mId, mAddr);
        }

        // ---- edge
        d.clock = 1;
        d.eval();
        simulated++;

        // ---- bookkeeping, logged in the replay's order: resp, the operation, mem_req
        if (respFire) {
            if (respId >= nIds || !fl[respId].busy) {
                protocol("response id not in flight", respId, 0);
            } else {
                Flight& f = fl[respId];
                const uint64_t i = f.index;
                const uint16_t info = tr.info[i];
                f.busy = false;
                freeIds.push_back(respId);
                inflight--;
                // against the builder's records
                const uint32_t expFault = info & I_FAULT ? 1 : 0;
                bool bad = fault != expFault || source > 4;
                if (!fault && !bad) {
                    const uint32_t expPerm = 1 | (info & I_W ? 2 : 0) | (info & I_X ? 4 : 0) | (info & I_U ? 8 : 0);
                    bad = ppn != tr.expPpn[i] || perm != expPerm || pageSize != (info & I_PAGE2M ? 1u : 0u);
                }
                if (bad && mismatches++ < 10)
                    std::fprintf(stderr, "harness: MISMATCH request %llu vpn %#llx: fault %u ppn %#llx "
                                 "pageSize %u perm %#x source %u; the tables say fault %u ppn %#llx "
                                 "(info %#x)\n", (unsigned long long)i, (unsigned long long)tr.vpn[i],
                                 fault, (unsigned long long)ppn, pageSize, perm, source, expFault,
                                 (unsigned long long)tr.expPpn[i], info);
                st.responses++;
                st.src[source <= 4 ? source : 4]++;
                st.respReads += reads;
                st.maxReads = std::max<uint64_t>(st.maxReads, reads);
                if (reads) st.misses++;
                if (fault) st.faults++;
                const bool decided = source >= 2 && source <= 4 && (info & I_PERF);
                if (decided && !(info & I_FILTER) && source != 3) st.filterSkips++;
                if (decided && (info & I_FILTER)) st.bitmapLookups++;
                if ((source == 3 || source == 4) && (info & I_HOLE)) st.holes++;
                if (source == 4 && (info & I_LARGE)) st.fills2m++;
                if (source == 4 && (info & I_PERF)) st.perfFills++;
                if ((source == 3 || source == 4) && (info & I_LEAF4K)) st.fills4k++;
                const uint64_t lat = cycle + 1 - f.accepted;
                st.latencySum += lat;
                latencies.push_back(lat);
                if (logging)
                    logrec(L_RESP, respId | fault << 8 | source << 12 | reads << 16 | pageSize << 20 |
                                       perm << 24, ppn, i);
                lastProgressCycle = cycle;
                if (st.responses == o.warmup) {
                    warm = st;
                    warmCycle = cycle + 1;
                }
            }
        }
        if (memRespFire) {
            if (held->id < nSlots) outstanding[held->id] = false;
            if (logging) logrec(L_MEMRESP, held->id, held->rdata, 0);
            held.reset();
        }
        if (reqFire) {
            freeIds.pop_front();
            fl[in.reqId] = Flight{nextReq, cycle, true};
            inflight++;
            st.requests++;
            if (logging) logrec(L_REQ, (uint32_t)nextReq, in.reqId, 0);
            nextReq++;
        }
        if (memFire) {
            if (mId >= nSlots) protocol("mem_req id is not a walk slot", mId, mAddr);
            else if (outstanding[mId]) protocol("second outstanding read of one slot", mId, mAddr);
            if (mAddr & 7) protocol("unaligned mem_req", mId, mAddr);
            auto it = mem.find(mAddr & ~7ULL);
            const uint64_t rdata = it == mem.end() ? 0 : it->second;
            st.memReads++;
            if (mAddr >= tr.bitmapBase) st.bitmapReads++;
            if (mId < nSlots) outstanding[mId] = true;
            pend.push(cycle + o.latency + (o.jitter ? rng.below(o.jitter + 1) : 0), mId, rdata);
            if (logging) logrec(L_MEMREQ, mId, mAddr, 0);
        }
        if (logging && st.responses >= o.logResponses) logging = false;
        cycle++;

        // ---- exact idle skipping: nothing fired, inputs as in the previous cycle
        const bool quiet = !reqFire && !respFire && !memFire && !in.memResp && !prev.memResp &&
                           in.reqValid == prev.reqValid &&
                           (!in.reqValid || (in.reqId == prev.reqId && in.reqIndex == prev.reqIndex));
        prev = in;
        if (fp.settled(quiet && !o.exactIdle)) {
            if (pend.empty()) die("stuck: %llu of %llu requests answered, no memory read outstanding",
                                  (unsigned long long)st.responses, (unsigned long long)n);
            const uint64_t due = pend.next_due();
            if (due > cycle) {
                skipped += due - cycle;
                if (want) reqWaitCycles += due - cycle;  // the request waited all along
                cycle = due;
            }
        }
        if (cycle - lastProgressCycle > 1000000 + 8 * o.latency)
            die("no response for %llu cycles (%llu of %llu requests answered)",
                (unsigned long long)(cycle - lastProgressCycle), (unsigned long long)st.responses,
                (unsigned long long)n);
    }
    // settle the counters of the last cycle: two idle cycles (a counter shows an event one
    // cycle after it happened, xlat.common.PerfCounter)
    d.req_valid = 0; d.mem_resp_valid = 0; d.resp_ready = 1; d.mem_req_ready = 1;
    for (int i = 0; i < 2; i++) {
        d.clock = 0; d.eval();
        d.clock = 1; d.eval();
    }
    d.clock = 0;
    d.eval();
    auto t1 = std::chrono::steady_clock::now();
    const double runSec = std::chrono::duration<double>(t1 - tRun).count();
    const double totSec = std::chrono::duration<double>(t1 - t0).count();
    if (!pend.empty() || held) protocol("memory responses left after the last response", pend.size(), 0);
    if (d.mem_req_valid) protocol("mem_req valid after the last response", 0, 0);
    if (logf) {
        if (o.logResponses >= n) {  // the log covers the whole run: the counters for the replay
            int k = 0;
#define X(name) logrec(L_COUNTER, k++, (uint64_t)d.perf_##name, 0);
            P_PERF_PORTS(X)
#undef X
        }
        std::fwrite(logbuf.data(), sizeof(Rec), logbuf.size(), logf);
        std::fclose(logf);
    }

    // ---- cross-check against the RTL's own counters (32-bit saturating)
    const bool ok = xlat::counters_agree({
        {"requests", d.perf_requests, st.requests},
        {"hits4k", d.perf_hits4k, st.src[0]},
        {"hits2m", d.perf_hits2m, st.src[1] + st.src[2] + st.src[3]},
        {"walks", d.perf_walks, st.src[4]},
        {"memReads", d.perf_memReads, st.memReads},
        {"bitmapReads", d.perf_bitmapReads, st.bitmapReads},
        {"bitmapLookups", d.perf_bitmapLookups, st.bitmapLookups},
        {"bitmapHits", d.perf_bitmapHits, st.bitmapLookups - st.bitmapReads},
        {"filterSkips", d.perf_filterSkips, st.filterSkips},
        {"holes", d.perf_holes, st.holes},
        {"fills4k", d.perf_fills4k, st.fills4k},
        {"fills2m", d.perf_fills2m, st.fills2m},
        {"perforatedFills", d.perf_perforatedFills, st.perfFills},
        {"faults", d.perf_faults, st.faults},
        {"busErrors", d.perf_busErrors, 0},
        {"badCmds", d.perf_badCmds, 0},
        {"badMemResps", d.perf_badMemResps, 0},
        {"invals", d.perf_invals, 0},
        {"staleWalks", d.perf_staleWalks, 0},
        {"respStallCycles", d.perf_respStallCycles, 0},
        {"walkerFullCycles", d.perf_walkerFullCycles, 0},  // req_valid only with req_ready
        {"memReads(responses)", st.respReads, st.memReads},
    }) && protocol.errors == 0 && mismatches == 0;

    FILE* of = std::fopen(o.out.c_str(), "w");
    if (!of) die("cannot write %s", o.out.c_str());
    xlat::Json j(of);
    auto window = [&](const Stats& s, const Stats& w, uint64_t cycles) {
        const uint64_t r = s.responses - w.responses;
        auto per = [&](uint64_t v) { return r ? (double)v / r : 0.0; };
        j.u("responses", r).u("cycles", cycles);
        j.u("hits4k", s.src[0] - w.src[0]).u("hits2m", s.src[1] - w.src[1]);
        j.u("perforatedHits", s.src[2] - w.src[2]).u("holeHits", s.src[3] - w.src[3]);
        j.u("walks", s.src[4] - w.src[4]).u("misses", s.misses - w.misses);
        j.u("memReads", s.respReads - w.respReads).u("bitmapReads", s.bitmapReads - w.bitmapReads);
        j.u("bitmapLookups", s.bitmapLookups - w.bitmapLookups);
        j.u("filterSkips", s.filterSkips - w.filterSkips).u("holes", s.holes - w.holes);
        j.u("faults", s.faults - w.faults);
        j.d("missesPerRequest", per(s.misses - w.misses));
        j.d("walksPerRequest", per(s.src[4] - w.src[4]));
        j.d("readsPerRequest", per(s.respReads - w.respReads));
        j.d("cyclesPerRequest", per(cycles));
        j.d("meanLatency", per(s.latencySum - w.latencySum));
    };
    j.open();
    j.s("label", o.label).s("config", P_CONFIG);
    j.u("walkers", P_WALKERS).u("bitmapEntries", P_BITMAP_ENTRIES).u("pwcEntries", P_PWC_ENTRIES);
    j.u("sets2m", P_SETS2M).u("ways2m", P_WAYS2M).u("sets4k", P_SETS4K).u("ways4k", P_WAYS4K);
    j.b("perforation", P_PERFORATION);
    j.u("latency", o.latency).u("jitter", o.jitter).u("inflight", maxInflight);
    j.u("requests", n).u("warmup", std::min<uint64_t>(o.warmup, n));
    window(st, Stats{}, cycle);
    j.u("maxReadsSeen", st.maxReads);
    j.u("reqWaitCycles", reqWaitCycles).u("memRespRefusedCycles", memRespRefused);
    j.u("mismatches", mismatches);
    j.d("latencyP50", xlat::pct(latencies, 0.5)).d("latencyP99", xlat::pct(latencies, 0.99));
    j.open("window");
    window(st, warm, o.warmup && o.warmup < n ? cycle - warmCycle : cycle);
    j.close();
    j.open("perf");
#define X(name) j.u(#name, (uint64_t)d.perf_##name);
    P_PERF_PORTS(X)
#undef X
    j.close();
    xlat::json_verdict(j, protocol.errors, ok, simulated, skipped, runSec, totSec);
    j.d("requests_per_second", st.responses / std::max(runSec, 1e-9));
    j.close();
    std::fclose(of);
    d.final();
    return xlat::exit_status(ok);
}
