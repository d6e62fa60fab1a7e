// xlat sim: hyper-tenant link-utilization harness for DevTlb (docs/devtlb.md, "Evaluation").
//
// Loads a workload written by sim/devtlbio.py (format in sim/README.md, "DevTlb harness
// files"): packets of a multi-tenant SR-IOV device, each needing `reqsPerPacket` translations
// (SID, 4 KiB gIOVA page, write, the page size of its mapping). Then it is:
//   * the device: it offers the translations on `req` in workload order, one a cycle, only in
//     a cycle in which `req_ready` is high (req_ready does not depend on req_valid, so this
//     changes no acceptance cycle; it keeps perf_ptbFullCycles at 0 and lets idle cycles be
//     skipped; the harness counts the cycles it was held itself: blockedCycles), with at most
//     --window packets between the offer of their first translation and the end of their
//     transmission (the device's packet buffer), each request with a free tag;
//   * the link: a packet whose translations are all answered is ready; ready packets are
//     transmitted one after another in the order they became ready, each taking --packet-ps
//     picoseconds (1542 bytes at 200 Gb/s = 61 680 ps); one clock cycle is --cycle-ps
//     picoseconds (500: the RTL's 4-cycle lookup is HyperSIO's 2 ns DevTLB hit);
//   * the IOMMU, as a latency model: every `ats_req` is accepted at once and answered
//     --latency cycles later (PCIe round trip + DRAM accesses of the IOMMU's walk; plus an
//     optional uniform --jitter), one `ats_resp` per cycle, earliest due first (so out of
//     order; a completion refused by ats_resp_ready stays presented until taken); the translation is a fixed function of (SID, page): ppn = (sid + 1) << 20 |
//     (page & 0xFFFFF), aligned down to the mapping's size, perm_r = perm_w = 1, no faults;
//   * `resp` and `ats_req` are always ready; no invalidations.
// It checks every response (a tag in flight, no fault, the translation's ppn for the request's
// page, source 0..2) and, at the end, that its own counts equal the RTL's perf_* counters
// (exit status 3 otherwise). With --log it writes every port transaction of the cycles before
// the --log-requests'th request was accepted (the whole run by default) for the replay on
// tb/models/devtlb.py (sim/devtlbio.py). Idle cycles (every request waiting for the IOMMU, or
// the window waiting for the link) are skipped exactly (xlat::FixedPoint) unless --exact-idle.
#include <sys/resource.h>

#include <chrono>
#include <deque>
#include <memory>
#include <unordered_map>

#include "Vdut.h"
#include "Vdut___024root.h"
#include "common.h"
#include "verilated.h"
#include "xlat_params.h"

using xlat::die;
using xlat::mask;

namespace {

struct Workload {
    uint64_t packets = 0, reqsPerPacket = 0;
    std::vector<uint32_t> sid;
    std::vector<uint64_t> iova;
    std::vector<uint8_t> write, size;
    size_t size_() const { return sid.size(); }
};

Workload load_workload(const char* path) {
    FILE* f = xlat::open_input(path, "XLATDT01");
    Workload w;
    if (std::fread(&w.packets, 8, 1, f) != 1 || std::fread(&w.reqsPerPacket, 8, 1, f) != 1)
        die("short header in %s", path);
    if (w.reqsPerPacket < 1 || w.reqsPerPacket > 16) die("reqsPerPacket %llu out of 1..16",
                                                         (unsigned long long)w.reqsPerPacket);
    const uint64_t n = w.packets * w.reqsPerPacket;
    xlat::readv(f, w.sid, n, "sid");
    xlat::readv(f, w.iova, n, "iova");
    xlat::readv(f, w.write, n, "write");
    xlat::readv(f, w.size, n, "size");
    std::fclose(f);
    for (uint64_t k = 0; k < n; k++) {
        if (w.size[k] > 2) die("request %llu: page size %u", (unsigned long long)k, w.size[k]);
        if (w.sid[k] > mask(P_SID_BITS)) die("request %llu: sid %u wider than %d bits",
                                             (unsigned long long)k, w.sid[k], P_SID_BITS);
    }
    return w;
}

#pragma pack(push, 1)
// One record of --log (32 bytes; sim/devtlbio.py LOG_DTYPE): a port transaction.
struct LogRec {
    uint64_t cycle;
    uint32_t kind;  // LOG_* below
    uint32_t x;
    uint64_t y, z;
};
#pragma pack(pop)
static_assert(sizeof(LogRec) == 32, "record size");
enum : uint32_t {
    LOG_REQ = 0,   // accepted request: x tag | write << 16, y sid, z iova
    LOG_COMP = 1,  // accepted completion: x tag | perm_r << 8 | perm_w << 9 | pageSize << 10 | fault << 12, y ppn
    LOG_RESP = 2,  // resp handshake: x tag | perm_r << 8 | perm_w << 9 | fault << 10 | source << 11, y ppn
    LOG_ATS = 3,   // ats_req handshake: x tag | prefetch << 16, y sid, z iova
    LOG_PERF = 7,  // x counter index (order of P_PERF_PORTS), y value at the end of the run
};

struct Options : xlat::CommonOptions {
    std::string work;
    uint64_t window = 64, packetPs = 61680, cyclePs = 500, warmup = 0, logRequests = UINT64_MAX;
    Options() { latency = 2000; }
};

// the IOMMU's translation of (sid, page) for a mapping of this size (0 4 KiB, 1 2 MiB, 2 1 GiB)
uint64_t translate(uint32_t sid, uint64_t page, int size) {
    static const int low[3] = {0, 9, 18};
    const uint64_t ppn = ((uint64_t)(sid + 1) << 20 | (page & 0xFFFFF)) & mask(P_PPN_BITS);
    return ppn & ~mask(low[size]);
}

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    xlat::Args(argc, argv).parse(
        [&](const std::string& s, auto next) {
            if (o.parse_common(s, next)) return true;
            if (s == "--work") o.work = next();
            else if (s == "--window") o.window = std::stoull(next());
            else if (s == "--packet-ps") o.packetPs = std::stoull(next());
            else if (s == "--cycle-ps") o.cyclePs = std::stoull(next());
            else if (s == "--warmup") o.warmup = std::stoull(next());
            else if (s == "--log-requests") o.logRequests = std::stoull(next());
            else return false;
            return true;
        },
        "usage: devtlb_harness --work W.bin --out stats.json [--latency 2000] [--jitter 0]\n"
        "  [--window 64] [--packet-ps 61680] [--cycle-ps 500] [--warmup PACKETS]\n"
        "  [--log log.bin [--log-requests N]] [--seed S] [--exact-idle] [--label S]");
    if (o.work.empty() || o.out.empty()) die("--work and --out are required");
    if (o.latency < 1) die("--latency must be at least 1");
    if (o.window < 1 || o.cyclePs < 1 || o.packetPs < 1) die("--window, --cycle-ps, --packet-ps must be positive");

    auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    const Workload wk = load_workload(o.work.c_str());
    const uint64_t nReq = wk.size_(), nPkt = wk.packets, R = wk.reqsPerPacket;
    const uint32_t nTags = 1u << P_TAG_BITS;
    if (o.window * R > nTags) die("--window %llu x %llu translations exceeds the %u request tags",
                                  (unsigned long long)o.window, (unsigned long long)R, nTags);
    if (o.warmup >= nPkt && nPkt) o.warmup = nPkt - 1;
    xlat::Rng rng(o.seed);
    // page size of every (sid, page) the workload asks for: the IOMMU answers with it
    std::unordered_map<uint64_t, uint8_t> sizeOf;
    auto key = [](uint32_t sid, uint64_t page) { return (uint64_t)sid << 52 | (page & mask(52)); };
    for (uint64_t k = 0; k < nReq; k++) {
        auto it = sizeOf.emplace(key(wk.sid[k], wk.iova[k] & mask(P_PAGE_BITS)), wk.size[k]);
        if (it.first->second != wk.size[k]) die("request %llu: two page sizes for one page", (unsigned long long)k);
    }

    xlat::Model<Vdut> model(argc, argv);
    Vdut& d = model.dut();
    auto& fp = model.fp;

    d.req_valid = 0;
    d.resp_ready = 1;
    d.ats_req_ready = 1;
    d.ats_resp_valid = 0;
    d.inval_valid = 0;
    xlat::reset_cycles(d);

    // ---- run state
    struct TagState { bool busy; uint64_t req; };
    std::vector<TagState> tags(nTags, TagState{false, 0});
    std::vector<uint32_t> freeTags;
    for (uint32_t t = nTags; t-- > 0;) freeTags.push_back(t);
    std::vector<uint8_t> answered(nPkt, 0);
    // ps: transmission ends of the transmitted packets still in the window; packets enter the
    // link in the order they become ready and linkFree only grows, so this is in end order
    std::deque<uint64_t> windowEnds;
    std::vector<uint64_t> latency;     // cycles from acceptance to response, per request
    latency.reserve(nReq);
    std::vector<uint64_t> acceptedAt(nReq, 0);
    struct AtsOut { uint32_t sid; uint64_t page; bool prefetch; };
    std::vector<AtsOut> atsSlot(1u << P_ATS_TAG_BITS);
    std::vector<bool> atsBusy(1u << P_ATS_TAG_BITS, false);
    xlat::Responses pend;
    std::vector<LogRec> logv;
    uint64_t nextReq = 0, cycle = 0, simulated = 0, skipped = 0, lastProgress = 0;
    uint64_t linkFree = 0, linkBusy = 0, pktsDone = 0, inWindow = 0, blocked = 0, windowFull = 0;
    uint64_t warmStartPs = 0, lastEndPs = 0, firstOfferCycle = UINT64_MAX;
    struct Counts {
        uint64_t requests = 0, hits = 0, pbHits = 0, atsSrc = 0, ats = 0, prefetches = 0, completions = 0;
    } st;
    // prefetch usefulness: per (sid, translation) the latest prefetch completion and whether a
    // PB hit used it before the next prefetch completion of the same translation
    struct PfUse { bool used; };
    std::unordered_map<uint64_t, PfUse> pfLatest;
    uint64_t pfCompleted = 0, pfUsed = 0;
    auto transKey = [&](uint32_t sid, uint64_t page) {
        auto it = sizeOf.find(key(sid, page));
        const int sz = it == sizeOf.end() ? 0 : it->second;
        static const int low[3] = {0, 9, 18};
        return key(sid, page & ~mask(low[sz])) ^ (uint64_t)sz << 62;
    };
    xlat::Protocol protocol(cycle);
    bool logOn = !o.log.empty();
    auto logrec = [&](uint32_t kind, uint32_t x, uint64_t y, uint64_t z) {
        if (logOn) logv.push_back(LogRec{cycle, kind, x, y, z});
    };

    bool held = false;            // a completion presented and not yet accepted
    xlat::Responses::Item heldItem{};
    uint64_t compRefused = 0;
    struct In { bool req; bool comp; };
    In prev{false, false};
    auto tRun = std::chrono::steady_clock::now();
    uint64_t drainCycles = 0;

    while (true) {
        if (logOn && st.requests >= o.logRequests) logOn = false;
        // window: packets whose transmission has ended leave it
        const uint64_t nowPs = cycle * o.cyclePs;
        while (!windowEnds.empty() && windowEnds.front() <= nowPs) {
            windowEnds.pop_front();
            inWindow--;
        }
        // ---- inputs of this cycle
        In in{};
        xlat::Responses::Item cur{};
        in.comp = held || pend.due(cycle);
        if (in.comp) {
            if (!held) cur = pend.pop(), held = true, heldItem = cur;   // held until accepted
            cur = heldItem;
            const AtsOut& a = atsSlot[cur.id];
            const int sz = sizeOf.count(key(a.sid, a.page)) ? sizeOf[key(a.sid, a.page)] : 0;
            d.ats_resp_bits_tag = cur.id;
            d.ats_resp_bits_ppn = translate(a.sid, a.page, sz);
            d.ats_resp_bits_perm_r = 1;
            d.ats_resp_bits_perm_w = 1;
            d.ats_resp_bits_pageSize = sz;
            d.ats_resp_bits_fault = 0;
        }
        d.ats_resp_valid = in.comp;
        d.req_valid = 0;
        d.clock = 0;
        d.eval();
        // the device's next request: a new packet needs room in the window
        const bool newPkt = nextReq < nReq && nextReq % R == 0;
        const bool want = nextReq < nReq && !freeTags.empty() && (!newPkt || inWindow < o.window);
        const bool winFullNow = nextReq < nReq && newPkt && inWindow >= o.window;
        if (winFullNow) windowFull++;
        in.req = want && d.req_ready;
        const bool blockedNow = want && !d.req_ready;
        if (blockedNow) blocked++;
        uint32_t tag = 0;
        if (in.req) {
            tag = freeTags.back();
            d.req_bits_tag = tag;
            d.req_bits_sid = wk.sid[nextReq];
            d.req_bits_iova = wk.iova[nextReq] & mask(P_PAGE_BITS);
            d.req_bits_write = wk.write[nextReq];
            d.req_valid = 1;
            d.eval();
            if (!d.req_ready) die("req_ready fell when req_valid rose (cycle %llu)", (unsigned long long)cycle);
        }
        // ats_resp_ready is low in the write shadow of the previous completion (and during the
        // Prefetch Unit's reset sweep): the completion stays on the channel until taken
        const bool compFire = in.comp && d.ats_resp_ready;
        if (in.comp && !d.ats_resp_ready) compRefused++;
        if (compFire) held = false;
        const bool respFire = d.resp_valid;
        const uint32_t rTag = (uint32_t)d.resp_bits_tag;
        const uint64_t rPpn = (uint64_t)d.resp_bits_ppn;
        const uint32_t rSrc = (uint32_t)d.resp_bits_source;
        const uint32_t rFlags = (uint32_t)d.resp_bits_perm_r | (uint32_t)d.resp_bits_perm_w << 1 |
                                (uint32_t)d.resp_bits_fault << 2;
        const bool atsFire = d.ats_req_valid;
        const uint32_t aTag = (uint32_t)d.ats_req_bits_tag;
        const uint32_t aSid = (uint32_t)d.ats_req_bits_sid;
        const uint64_t aIova = (uint64_t)d.ats_req_bits_iova;
        const bool aPf = d.ats_req_bits_prefetch;

        // ---- edge
        d.clock = 1;
        d.eval();
        simulated++;

        // ---- bookkeeping (log order: acceptances, responses, ATS requests)
        if (in.req) {
            const uint64_t k = nextReq;
            if (firstOfferCycle == UINT64_MAX) firstOfferCycle = cycle;
            logrec(LOG_REQ, tag | (uint32_t)wk.write[k] << 16, wk.sid[k], wk.iova[k] & mask(P_PAGE_BITS));
            freeTags.pop_back();
            tags[tag] = TagState{true, k};
            acceptedAt[k] = cycle;
            if (k % R == 0) inWindow++;
            st.requests++;
            nextReq++;
            lastProgress = cycle;
        }
        if (compFire) {
            const AtsOut& a = atsSlot[cur.id];
            const int sz = sizeOf.count(key(a.sid, a.page)) ? sizeOf[key(a.sid, a.page)] : 0;
            logrec(LOG_COMP, cur.id | 1u << 8 | 1u << 9 | (uint32_t)sz << 10, translate(a.sid, a.page, sz), 0);
            atsBusy[cur.id] = false;
            st.completions++;
            if (a.prefetch) {
                pfCompleted++;
                auto& u = pfLatest[transKey(a.sid, a.page)];
                u.used = false;
            }
            lastProgress = cycle;
        }
        if (respFire) {
            logrec(LOG_RESP, rTag | (rFlags & 1) << 8 | (rFlags >> 1 & 1) << 9 | (rFlags >> 2 & 1) << 10 | rSrc << 11,
                   rPpn, 0);
            lastProgress = cycle;
            if (rTag >= nTags || !tags[rTag].busy) {
                protocol("resp for a tag not in flight", rTag, rSrc);
            } else {
                const uint64_t k = tags[rTag].req;
                tags[rTag].busy = false;
                freeTags.push_back(rTag);
                const uint64_t page = wk.iova[k] & mask(P_PAGE_BITS);
                const int sz = wk.size[k];
                static const int low[3] = {0, 9, 18};
                const uint64_t want_ppn = (translate(wk.sid[k], page, sz) + (page & mask(low[sz]))) & mask(P_PPN_BITS);
                if (rFlags != 3 || rPpn != want_ppn)
                    protocol("resp differs from the IOMMU's translation (ppn, flags)", rPpn, want_ppn << 3 | rFlags);
                if (rSrc > 2) protocol("resp source", rTag, rSrc);
                (rSrc == 0 ? st.hits : rSrc == 1 ? st.pbHits : st.atsSrc)++;
                if (rSrc == 1) {
                    auto it = pfLatest.find(transKey(wk.sid[k], page));
                    if (it != pfLatest.end() && !it->second.used) {
                        it->second.used = true;
                        pfUsed++;
                    }
                }
                latency.push_back(cycle - acceptedAt[k]);
                const uint64_t p = k / R;
                if (++answered[p] == R) {   // the packet is ready: onto the link
                    const uint64_t readyPs = (cycle + 1) * o.cyclePs;
                    const uint64_t start = std::max(linkFree, readyPs);
                    linkFree = start + o.packetPs;
                    linkBusy += o.packetPs;
                    windowEnds.push_back(linkFree);
                    lastEndPs = linkFree;
                    if (++pktsDone == o.warmup) warmStartPs = linkFree;
                }
            }
        }
        if (atsFire) {
            logrec(LOG_ATS, aTag | (uint32_t)aPf << 16, aSid, aIova);
            (aPf ? st.prefetches : st.ats)++;
            lastProgress = cycle;
            if (aTag >= atsBusy.size() || atsBusy[aTag]) {
                protocol("ats_req with a tag already outstanding", aTag, aIova);
            } else {
                atsBusy[aTag] = true;
                atsSlot[aTag] = AtsOut{aSid, aIova, aPf};
                if (!sizeOf.count(key(aSid, aIova)))
                    sizeOf[key(aSid, aIova)] = 0;   // a prefetch of a page not in the workload: 4 KiB
                pend.push(cycle + o.latency + (o.jitter ? rng.below(o.jitter + 1) : 0), aTag);
            }
        }
        cycle++;

        // ---- done: every packet answered, nothing in flight; then 3 cycles for the counters
        if (pktsDone == nPkt && pend.empty() && !held) {
            if (++drainCycles > 3) break;
            continue;
        }
        const bool fired = in.req || compFire || respFire || atsFire || prev.comp || prev.req;
        prev = in;
        if (!fp.settled(!(fired || d.resp_valid || d.ats_req_valid))) continue;
        // a fixed point: nothing changes until the next completion or a window place
        uint64_t due = UINT64_MAX;
        if (held) due = cycle;
        if (!pend.empty()) due = std::min(due, pend.next_due());
        if (nextReq < nReq && inWindow >= o.window && !windowEnds.empty())
            due = std::min(due, (windowEnds.front() + o.cyclePs - 1) / o.cyclePs);
        if (due == UINT64_MAX)
            die("DevTlb stuck at cycle %llu: %llu of %llu requests accepted, %llu packets done, req_ready %d",
                (unsigned long long)cycle, (unsigned long long)nextReq, (unsigned long long)nReq,
                (unsigned long long)pktsDone, (int)d.req_ready);
        if (!o.exactIdle && due > cycle) {   // the skipped cycles repeat this one's inputs
            skipped += due - cycle;
            if (blockedNow) blocked += due - cycle;
            if (winFullNow) windowFull += due - cycle;
            cycle = due;
        }
        if (cycle - lastProgress > 1000000 + 4 * (o.latency + o.jitter))
            die("no progress for %llu cycles (%llu of %llu requests accepted)",
                (unsigned long long)(cycle - lastProgress), (unsigned long long)nextReq, (unsigned long long)nReq);
    }
    auto t1 = std::chrono::steady_clock::now();
    const double runSec = std::chrono::duration<double>(t1 - tRun).count();
    const double totSec = std::chrono::duration<double>(t1 - t0).count();
    const double cpuSec = cpu_seconds() - cpu0;
    if (logOn) {   // the log covers the whole run: the counters at its end
        uint32_t k = 0;
#define X(name) logv.push_back(LogRec{cycle, LOG_PERF, k++, (uint64_t)d.perf_##name, 0});
        P_PERF_PORTS(X)
#undef X
    }
    for (uint32_t t = 0; t < nTags; t++)
        if (tags[t].busy) protocol("request never answered", t, tags[t].req);

    // ---- cross-check against the RTL's own counters (32-bit saturating)
    const uint64_t misses = st.requests - st.hits - st.pbHits;
    const bool ok = xlat::counters_agree({
        {"requests", d.perf_requests, st.requests},
        {"hits", d.perf_hits, st.hits},
        {"pbHits", d.perf_pbHits, st.pbHits},
        {"misses", d.perf_misses, misses},
        {"merged", d.perf_merged, misses - st.ats},   // every demand slot sends one ATS request
        {"atsRequests", d.perf_atsRequests, st.ats},
        {"prefetches", d.perf_prefetches, st.prefetches},
        {"ptbFullCycles", d.perf_ptbFullCycles, 0},   // req_valid only with req_ready
        {"invalidations", d.perf_invalidations, 0},
        {"badCompletions", d.perf_badCompletions, 0},
        {"badAlign", d.perf_badAlign, 0},
        {"badInvals", d.perf_badInvals, 0},
        {"faults", d.perf_faults, 0},
        {"staleCompletions", d.perf_staleCompletions, 0},
        {"respStallCycles", d.perf_respStallCycles, 0},
        {"atsStallCycles", d.perf_atsStallCycles, 0},
        {"completions(ats requests)", st.ats + st.prefetches, st.completions},
    }) && protocol.errors == 0;

    if (!o.log.empty()) {
        FILE* f = std::fopen(o.log.c_str(), "wb");
        if (!f) die("cannot write %s", o.log.c_str());
        if (!logv.empty()) std::fwrite(logv.data(), sizeof(LogRec), logv.size(), f);
        std::fclose(f);
    }
    // link utilization: after the warm-up packets, busy time over elapsed time
    const uint64_t firstPs = firstOfferCycle == UINT64_MAX ? 0 : firstOfferCycle * o.cyclePs;
    const double utilAll = lastEndPs > firstPs ? (double)linkBusy / (double)(lastEndPs - firstPs) : 0.0;
    const uint64_t wStart = o.warmup ? warmStartPs : firstPs;
    const double utilWin = lastEndPs > wStart ? (double)(nPkt - o.warmup) * o.packetPs / (double)(lastEndPs - wStart) : 0.0;
    FILE* of = std::fopen(o.out.c_str(), "w");
    if (!of) die("cannot write %s", o.out.c_str());
    xlat::Json j(of);
    j.open();
    j.s("label", o.label).s("config", P_CONFIG);
    j.u("ptbEntries", P_PTB_ENTRIES).u("pbEntries", P_PB_ENTRIES).u("partitioned", P_PARTITIONED);
    j.u("sets", P_SETS).u("ways", P_WAYS).u("lookupLatency", P_LATENCY);
    j.u("atsLatency", o.latency).u("jitter", o.jitter).u("window", o.window);
    j.u("packetPs", o.packetPs).u("cyclePs", o.cyclePs).u("warmupPackets", o.warmup);
    j.u("packets", nPkt).u("reqsPerPacket", R).u("requests", st.requests);
    j.u("hits", st.hits).u("pbHits", st.pbHits).u("atsAnswered", st.atsSrc).u("misses", misses);
    j.u("atsRequests", st.ats).u("prefetches", st.prefetches).u("completions", st.completions);
    j.u("prefetchCompleted", pfCompleted).u("prefetchUsed", pfUsed);
    j.u("completionRefusedCycles", compRefused).u("blockedCycles", blocked).u("windowFullCycles", windowFull);
    j.u("cycles", cycle).u("firstOfferCycle", firstOfferCycle == UINT64_MAX ? 0 : firstOfferCycle);
    j.u("linkBusyPs", linkBusy).u("lastEndPs", lastEndPs).u("warmStartPs", wStart);
    j.d("utilization", utilWin).d("utilizationAll", utilAll);
    double lsum = 0;
    for (uint64_t v : latency) lsum += (double)v;
    j.d("latencyMean", latency.empty() ? 0.0 : lsum / latency.size());
    j.d("latencyP50", xlat::pct(latency, 0.5)).d("latencyP99", xlat::pct(latency, 0.99));
    j.open("perf");
#define X(name) j.u(#name, (uint64_t)d.perf_##name);
    P_PERF_PORTS(X)
#undef X
    j.close();
    xlat::json_verdict(j, protocol.errors, ok, simulated, skipped, runSec, totSec);
    j.d("cpu_seconds", cpuSec);
    j.d("requests_per_cpu_second", st.requests / std::max(cpuSec, 1e-9));
    j.d("requests_per_simulated_cycle", (double)st.requests / std::max<uint64_t>(simulated, 1));
    j.close();
    std::fclose(of);
    d.final();
    return xlat::exit_status(ok);
}
