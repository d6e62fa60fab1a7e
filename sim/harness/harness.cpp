// xlat sim: trace-driven Verilator harness for BabelFishTlb.
//
// A blocking core replays a trace (one page access per row) through the generated TLB; the
// "other side" is an OS/page-walker model: a miss costs a walk of --walk-latency cycles and is
// followed by the fill the page map dictates; a write to a clean page refills with D set; a write
// to a copy-on-write page privatizes it (new frame, PC bit set for the writer, inval page+ccid
// with sharing on / page+pcid with sharing off, private fill). Context switches load
// pcid/ccid/pcIdx (no flush: PCID-tagged TLB). A process's private entries are flushed (inval
// kind 2) when its PCID is reused by a new process (only when more processes than PCIDs).
//
// The blocking core's lookups are simulated overlapped by default (issued back to back while
// they hit, squashed and re-simulated behind a miss or permission fault, nothing issued behind
// a lookup predicted to miss; exact, see Harness::lookupOverlapped and sim/README.md);
// --blocking simulates every cycle of every lookup.
//
// Input: the binary trace written by sim/traceio.py (format in sim/README.md, "harness input").
// Output: JSON statistics (--out), optional per-access flag log (--log, one byte per access).
// Widths and parameters come from xlat_params.h, generated from the configuration's
// manifest.json by sim/harness_build.py.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vdut.h"
#include "Vdut___024root.h"
#include "common.h"
#include "verilated.h"
#include "xlat_params.h"

static_assert(P_VPN_BITS <= 44, "harness keys pack vpn into 44 bits");
static_assert(P_PPN_BITS <= 63 && P_PC_BITS <= 64, "ppn/pc must fit in 64-bit ports");

namespace {

using xlat::die;  // sim/harness/common.h, shared with walker.cpp
using xlat::mask;
using xlat::pct;
using xlat::readv;

// ---- permission bits of the page map (same encoding as sim/traceio.py)
enum : uint8_t { PR = 1, PW = 2, PX = 4, PU = 8, PD = 16, PCOW = 32 };

struct MapEntry {
    uint64_t ppn;
    uint8_t perm;
    uint8_t size;
    uint8_t shared;
};

struct Proc {
    uint32_t group = 0;
    uint32_t pcid = 0;          // assigned at first access (0 = none yet)
    int64_t pcIdx = -1;         // position in the group's pid_list (first CoW), -1 = none
    bool hasPriv = false;       // has private copies -> pcIdxValid
    uint64_t last = 0;          // index of its last access
};

struct Trace {
    std::vector<uint32_t> procGroup;
    std::vector<uint32_t> mProc;
    std::vector<uint64_t> mVpn, mPpn;
    std::vector<uint8_t> mPerm, mSize, mShared;
    std::vector<uint32_t> aProc;
    std::vector<uint64_t> aVpn;
    std::vector<uint8_t> aCmd;
};

Trace load(const char* path) {
    FILE* f = xlat::open_input(path, "XLATBF01");
    uint64_t hdr[3];
    if (std::fread(hdr, 8, 3, f) != 3) die("short header in %s", path);
    Trace t;
    readv(f, t.procGroup, hdr[0], "procs");
    readv(f, t.mProc, hdr[1], "map.proc");
    readv(f, t.mVpn, hdr[1], "map.vpn");
    readv(f, t.mPpn, hdr[1], "map.ppn");
    readv(f, t.mPerm, hdr[1], "map.perm");
    readv(f, t.mSize, hdr[1], "map.size");
    readv(f, t.mShared, hdr[1], "map.shared");
    readv(f, t.aProc, hdr[2], "acc.proc");
    readv(f, t.aVpn, hdr[2], "acc.vpn");
    readv(f, t.aCmd, hdr[2], "acc.cmd");
    std::fclose(f);
    return t;
}

inline uint64_t key(uint64_t who, uint64_t vpn) { return (who << 44) | vpn; }
inline uint64_t alignOf(uint8_t size) { return size == 0 ? 0 : size == 1 ? 0x1FFULL : 0x3FFFFULL; }

struct Stats {
    uint64_t lookups = 0, hits = 0, misses = 0, sharedHits = 0, crossHits = 0, permFaults = 0;
    uint64_t walks = 0, dirtyWalks = 0, cowFaults = 0, protFaults = 0, fills = 0, invals = 0;
    uint64_t ctxSwitches = 0, pcidFlushes = 0, pcidRecycles = 0, badPcIdxProcs = 0;
    uint64_t badPcIdxLookups = 0;  // lookups with pcIdxValid and pcIdx >= pcBits
    uint64_t cycles = 0, idleCyclesSkipped = 0, stallCycles = 0;
    uint64_t sharedFills = 0, privateFills = 0;
};

// The lookup request of one access (what the core drives on lookup_req).
struct Req {
    uint64_t vpn;
    uint32_t pcid, ccid, pcIdx;
    bool pcIdxValid;
    uint8_t cmd;
    // not an input: the harness predicts this lookup misses (issue nothing behind it)
    bool likelyMiss = false;
    bool operator==(const Req& o) const {
        return vpn == o.vpn && pcid == o.pcid && ccid == o.ccid && pcIdx == o.pcIdx &&
               pcIdxValid == o.pcIdxValid && cmd == o.cmd;
    }
};

// A fixed-capacity FIFO (no allocation per lookup). Slots are reused: an element's own
// buffers (Ck::after) keep their capacity from one use to the next.
template <typename T, unsigned N>
class Ring {
  public:
    bool empty() const { return n_ == 0; }
    unsigned size() const { return n_; }
    T& operator[](unsigned k) { return a_[(h_ + k) % N]; }
    const T& operator[](unsigned k) const { return a_[(h_ + k) % N]; }
    T& front() { return (*this)[0]; }
    T& back() { return (*this)[n_ - 1]; }
    // the new last element (its old contents are left for the caller to reset)
    T& push_back() {
        if (n_ == N) die("ring of %s%u full", "", N);
        return (*this)[n_++];
    }
    void pop_front() { h_ = (h_ + 1) % N; n_--; }
    void pop_back() { n_--; }
    void clear() { n_ = 0; }

  private:
    T a_[N];
    unsigned h_ = 0, n_ = 0;
};

}  // namespace

// The model's evaluation function (generated into Vdut___024root__*.cpp). After the first
// Vdut::eval() (initial blocks, settle) the harness calls it directly: Vdut::eval_step() adds
// per call only the multi-threaded message-queue flush and the deleter, which this
// single-threaded model without $display never needs (about 300 instructions a cycle).
void Vdut___024root___eval(Vdut___024root* vlSelf);

namespace {

class Harness {
  public:
    // inputsOf(k, req): the request of access k if the core can issue it now assuming every
    // earlier access hits (false: not known yet, e.g. the process has no PCID).
    using InputsOf = std::function<bool(uint64_t, Req&)>;

    // checkpointEvery: overlapped mode, root copies every N lookups (0: by the root's size)
    Harness(VerilatedContext* ctx, uint32_t walkLat, bool exactIdle, bool blocking, uint64_t checkpointEvery)
        : dut_(new Vdut{ctx}), walkLat_(walkLat), exactIdle_(exactIdle), blocking_(blocking) {
        root_ = dut_->rootp;
        dut_->clock = 0;
        dut_->reset = 1;
        dut_->lookup_req_valid = 0;
        dut_->fill_valid = 0;
        dut_->inval_valid = 0;
        dut_->eval();  // initial blocks and settle, through the public API
        for (int i = 0; i < 4; i++) cycle();
        dut_->reset = 0;
        st.cycles = 0;
        for (auto& s : snaps_) s.resize(sizeof(*root_));
        // copying a small root (L1: 3.4 KB) at every lookup costs little next to its cycle; a
        // big one (L2: 40 KB, mostly SRAM arrays) is copied every root/4 KiB lookups (9 on L2:
        // about half the instructions per lookup of copying at every one, the re-simulation
        // behind a miss included)
        checkpointEvery_ = checkpointEvery ? checkpointEvery : std::max<uint64_t>(1, sizeof(*root_) / 4096);
    }
    ~Harness() { dut_->final(); }

    Stats st;
    uint64_t speculated = 0, rolledBack = 0;  // overlapped mode: lookups issued / squashed
    Vdut& dut() { return *dut_; }
    uint64_t simulatedCycles() const { return simCycles_; }
    uint64_t checkpointEvery() const { return checkpointEvery_; }

    // One clock cycle with the inputs as set now. The clock-low eval settles the combinational
    // logic on the new inputs (its readies are this cycle's readies: a channel fires when valid
    // and that ready are both high); the clock-high eval is the edge. Verilator re-evaluates the
    // input-combinational logic on every eval(), so the harness does exactly two per cycle.
    // Returns the readies seen before the edge (bit0 lookup, bit1 fill, bit2 inval).
    unsigned step() {
        Vdut& d = *dut_;
        simCycles_++;
        d.clock = 0;
        Vdut___024root___eval(root_);
        unsigned rdy = (d.lookup_req_ready ? 1u : 0u) | (d.fill_ready ? 2u : 0u) |
                       (d.inval_ready ? 4u : 0u);
        d.clock = 1;
        Vdut___024root___eval(root_);
        if (d.lookup_req_valid) drivenSinceAccept_ = true;
        return rdy;
    }
    // a cycle of the blocking core's timeline (counted)
    unsigned cycle() {
        st.cycles++;
        return step();
    }
    void tick() { cycle(); }

    // idle cycles (nothing valid, nothing in flight): the RTL state cannot change, so unless
    // --exact-idle they are only counted, not simulated.
    void idle(uint64_t n) {
        uint64_t sim = exactIdle_ ? n : std::min<uint64_t>(n, 1);
        for (uint64_t i = 0; i < sim; i++) cycle();
        st.cycles += n - sim;
        st.idleCyclesSkipped += n - sim;
    }

    struct Resp {
        bool hit, shared, crossHit, permFault, dirty;
        uint64_t ppn;
        uint8_t pageSize;
        bool operator==(const Resp& o) const {
            return hit == o.hit && shared == o.shared && crossHit == o.crossHit &&
                   permFault == o.permFault && dirty == o.dirty && ppn == o.ppn && pageSize == o.pageSize;
        }
    };

    // The response of access i's lookup, as the blocking core sees it (issue, wait for the
    // response; st.cycles advances by the stall cycles + P_LATENCY).
    Resp lookup(uint64_t i, const Req& q, const InputsOf& next) {
        return blocking_ ? lookupBlocking(q) : lookupOverlapped(i, q, next);
    }

    void fill(uint64_t vpn, uint64_t ppn, uint8_t size, uint8_t perm, bool dirty, uint32_t pcid,
              uint32_t ccid, bool own, uint64_t pc) {
        if (!fly_.empty()) die("fill with lookups in flight%s", "");
        Vdut& d = *dut_;
        d.fill_bits_vpn = vpn & mask(P_VPN_BITS);
        d.fill_bits_ppn = ppn & mask(P_PPN_BITS);
        d.fill_bits_pageSize = size;
        d.fill_bits_perm_r = !!(perm & PR);
        d.fill_bits_perm_w = !!(perm & PW);
        d.fill_bits_perm_x = !!(perm & PX);
        d.fill_bits_perm_u = !!(perm & PU);
        d.fill_bits_dirty = dirty;
        d.fill_bits_global = 0;
        d.fill_bits_pcid = pcid;
        d.fill_bits_ccid = ccid;
        d.fill_bits_own = own;
        d.fill_bits_pc = pc & mask(P_PC_BITS);
        d.fill_valid = 1;
        int guard = 0;
        while (!(cycle() & 2)) {
            st.stallCycles++;
            if (++guard > 100000) die("fill_ready stuck low%s", "");
        }
        d.fill_valid = 0;
        st.fills++;
        (own ? st.privateFills : st.sharedFills)++;
    }

    void inval(uint8_t kind, uint64_t vpn, uint32_t pcid, uint32_t ccid) {
        if (!fly_.empty()) die("inval with lookups in flight%s", "");
        Vdut& d = *dut_;
        d.inval_bits_kind = kind;
        d.inval_bits_vpn = vpn & mask(P_VPN_BITS);
        d.inval_bits_pcid = pcid;
        d.inval_bits_ccid = ccid;
        d.inval_valid = 1;
        int guard = 0;
        while (!(cycle() & 4)) {
            st.stallCycles++;
            if (++guard > 100000) die("inval_ready stuck low%s", "");
        }
        d.inval_valid = 0;
        st.invals++;
    }

    uint32_t walkLat() const { return walkLat_; }

  private:
    void drive(const Req& q) {
        Vdut& d = *dut_;
        d.lookup_req_bits_vpn = q.vpn & mask(P_VPN_BITS);
        d.lookup_req_bits_pcid = q.pcid;
        d.lookup_req_bits_ccid = q.ccid;
        d.lookup_req_bits_pcIdx = q.pcIdx & mask(P_PC_IDX_BITS);
        d.lookup_req_bits_pcIdxValid = q.pcIdxValid;
        d.lookup_req_bits_cmd = q.cmd;
        d.lookup_req_bits_user = 1;
        d.lookup_req_valid = 1;
    }
    Resp response() const {
        const Vdut& d = *dut_;
        return Resp{(bool)d.lookup_resp_bits_hit, (bool)d.lookup_resp_bits_shared,
                    (bool)d.lookup_resp_bits_crossHit, (bool)d.lookup_resp_bits_permFault,
                    (bool)d.lookup_resp_bits_dirty, (uint64_t)d.lookup_resp_bits_ppn,
                    (uint8_t)d.lookup_resp_bits_pageSize};
    }

    // --blocking: issue, then simulate every cycle until the response.
    Resp lookupBlocking(const Req& q) {
        Vdut& d = *dut_;
        drive(q);
        int guard = 0;
        while (!(cycle() & 1)) {
            st.stallCycles++;
            if (++guard > 100000) die("lookup_req_ready stuck low%s", "");
        }
        d.lookup_req_valid = 0;
        int waited = 1;
        while (!d.lookup_resp_valid) {
            if (++waited > P_LATENCY + 1) die("no lookup response after %s%lld cycles", "", (long long)waited);
            cycle();
        }
        st.lookups++;
        return response();
    }

    // Overlapped (default): the blocking core's lookups, issued back to back. The TLB is
    // sequential in acceptance order (docs/babelfish-tlb.md, "The write shadow"): a response
    // depends only on the operations accepted before it, never on the cycles between them. So
    // while the lookups in flight hit, the harness keeps issuing the next accesses' lookups,
    // one per cycle, and charges each the blocking core's cycles (its stalls + P_LATENCY).
    // When a response is a miss or a permission fault, the core would not have issued anything
    // behind it: the harness puts the model back in the state just after that lookup was
    // accepted (squashing the lookups behind it, their replacement touches and counter events
    // included), simulates the wait for the response cycle by cycle as the blocking core does,
    // and checks the response equals the one already seen. The state comes from a checkpoint
    // (a copy of the model's root object, which holds its whole state, as xlat::FixedPoint
    // relies on) taken at the first acceptance of a run of lookups and then every
    // `checkpointEvery` acceptances, plus the re-simulation of the lookups accepted since,
    // with the same inputs in the same cycles. Behind a lookup the caller predicts to miss
    // (Req::likelyMiss) nothing is issued until its response: if it misses, the cycles
    // simulated since its acceptance are already the blocking core's wait, and nothing is
    // restored (the same holds whenever nothing was offered after a missing lookup).
    Resp lookupOverlapped(uint64_t i, const Req& q, const InputsOf& next) {
        Vdut& d = *dut_;
        if (fly_.empty()) {
            nextIssue_ = i;
            nextReq_ = q;
            haveNext_ = true;
        } else if (fly_.front().idx != i || !(fly_.front().req == q)) {
            die("overlapped lookup out of step at access %s%llu", "", (unsigned long long)i);
        }
        uint64_t stalls = 0;  // of the lookup being offered
        while (fly_.empty() || !fly_.front().done) {
            // behind a lookup predicted to miss nothing is issued until its response
            if (!haveNext_ && fly_.size() < MAXFLY && !hold_) haveNext_ = next(nextIssue_, nextReq_);
            if (haveNext_) drive(nextReq_);
            else d.lookup_req_valid = 0;
            const unsigned rdy = step();
            sinceAccept_++;
            if (haveNext_ && (rdy & 1)) {
                accepted(stalls);
                stalls = 0;
            } else if (haveNext_) {
                // only the first lookup after a write (its shadow) or a sweep can stall;
                // lookups never wait for each other (docs/babelfish-tlb.md)
                if (!fly_.empty()) die("lookup_req_ready low behind a lookup%s", "");
                if (++stalls > 100000) die("lookup_req_ready stuck low%s", "");
            } else if (!ck_.empty()) {
                gap_++;  // an idle cycle between two lookups of this run: replayed as idle
            }
            if (d.lookup_resp_valid) {
                unsigned k = 0;
                while (k < fly_.size() && fly_[k].done) k++;
                if (k == fly_.size()) die("lookup response with no lookup in flight%s", "");
                fly_[k].done = true;
                fly_[k].resp = response();
            }
        }
        Flight f = fly_.front();
        fly_.pop_front();
        st.lookups++;
        st.stallCycles += f.stalls;
        if (hold_ && holdIdx_ == f.idx) hold_ = false;
        if (f.resp.hit && !f.resp.permFault) {  // what the blocking core saw: commit
            if (fly_.empty()) {
                d.lookup_req_valid = 0;
                if (!haveNext_) ck_.clear();  // the run ends here
            }
            // a checkpoint is needed only while a lookup at or after it can still be squashed
            while (ck_.size() > 1 && !fly_.empty() && ck_[1].idx <= fly_.front().idx) ck_.pop_front();
            st.cycles += f.stalls + P_LATENCY;
            return f.resp;
        }
        d.lookup_req_valid = 0;
        if (fly_.empty() && !drivenSinceAccept_) {
            // Nothing was offered after this lookup was accepted (it was predicted to miss, or
            // nothing could be issued): the cycles simulated since its acceptance are exactly
            // the blocking core's wait for its response, so the model is already where the
            // blocking core is and nothing is re-simulated.
            if (sinceAccept_ != (uint64_t)P_LATENCY - 1)
                die("lookup response of access %s%llu not after the configured latency", "",
                    (unsigned long long)f.idx);
            haveNext_ = false;
            ck_.clear();
            gap_ = 0;
            st.cycles += f.stalls + P_LATENCY;
            return f.resp;
        }
        // the core walks now: squash everything accepted after this lookup
        rolledBack += fly_.size();
        fly_.clear();
        haveNext_ = false;
        hold_ = false;
        rewindTo(f.idx);
        d.lookup_req_valid = 0;
        st.cycles += f.stalls + 1;  // its acceptance cycle; the wait is simulated as blocking
        for (int k = 1; k < P_LATENCY; k++) cycle();
        if (!d.lookup_resp_valid || !(response() == f.resp))
            die("re-simulated lookup response of access %s%llu differs", "", (unsigned long long)f.idx);
        return f.resp;
    }

    // the lookup offered (nextReq_ for access nextIssue_) was accepted in the cycle just simulated
    void accepted(uint64_t stalls) {
        Flight& fl = fly_.push_back();
        fl = Flight{nextIssue_, nextReq_, stalls, false, Resp{}};
        speculated++;
        sinceAccept_ = 0;
        drivenSinceAccept_ = false;
        if (nextReq_.likelyMiss) {
            hold_ = true;
            holdIdx_ = nextIssue_;
        }
        if (ck_.empty() && nextReq_.likelyMiss) {
            // the first lookup of a run, predicted to miss: nothing is issued behind it, so it
            // is never squashed or rewound to (a miss needs no re-simulation, above) and needs
            // no checkpoint; a hit ends the run
        } else if (ck_.empty() || ck_.back().since >= checkpointEvery_) {
            const unsigned slot = freeSlot();
            Ck& c = ck_.push_back();
            c.idx = nextIssue_;
            c.slot = slot;
            c.since = 0;
            c.after.clear();
            std::memcpy(snaps_[c.slot].data(), (const void*)root_, sizeof(*root_));
        } else {
            ck_.back().after.push_back(Replay{nextReq_, gap_});
            ck_.back().since++;
        }
        gap_ = 0;
        nextIssue_++;
        haveNext_ = false;
    }

    unsigned freeSlot() const {
        for (unsigned s = 0; s < NSNAP; s++) {
            bool used = false;
            for (unsigned k = 0; k < ck_.size(); k++) used |= ck_[k].slot == s;
            if (!used) return s;
        }
        die("no free checkpoint slot%s", "");
    }

    // the model's state just after access i's lookup was accepted: the newest checkpoint at or
    // before it, then the lookups accepted after the checkpoint up to i, in the same cycles
    void rewindTo(uint64_t i) {
        Vdut& d = *dut_;
        while (!ck_.empty() && ck_.back().idx > i) ck_.pop_back();
        if (ck_.empty()) die("no checkpoint for access %s%llu", "", (unsigned long long)i);
        const Ck& c = ck_.back();
        std::memcpy((void*)root_, snaps_[c.slot].data(), sizeof(*root_));
        for (uint64_t k = 0; k < i - c.idx; k++) {
            const Replay& r = c.after[k];
            d.lookup_req_valid = 0;
            for (uint64_t g = 0; g < r.gap; g++) step();
            drive(r.req);
            if (!(step() & 1)) die("replayed lookup not accepted%s", "");
        }
        ck_.clear();
        gap_ = 0;
    }

    struct Flight {
        uint64_t idx;
        Req req;
        uint64_t stalls;
        bool done;
        Resp resp;
    };
    struct Replay {
        Req req;
        uint64_t gap;  // idle cycles before it
    };
    struct Ck {  // a copy of the root just after access idx's lookup was accepted
        uint64_t idx = 0;
        unsigned slot = 0;
        uint64_t since = 0;         // lookups accepted after it
        std::vector<Replay> after;  // their inputs, in order (capacity kept between uses)
    };
    static constexpr unsigned MAXFLY = P_LATENCY + 2;  // lookups in flight (at most P_LATENCY)
    static constexpr unsigned NSNAP = MAXFLY + 2;
    uint64_t checkpointEvery_ = 1;
    Ring<Ck, NSNAP> ck_;
    uint64_t gap_ = 0;
    std::unique_ptr<Vdut> dut_;
    uint32_t walkLat_;
    bool exactIdle_, blocking_;
    Vdut___024root* root_ = nullptr;
    std::vector<unsigned char> snaps_[NSNAP];
    uint64_t simCycles_ = 0;
    Ring<Flight, MAXFLY> fly_;
    uint64_t nextIssue_ = 0;
    Req nextReq_{};
    bool haveNext_ = false;
    bool hold_ = false;               // a lookup predicted to miss is in flight: issue nothing
    uint64_t holdIdx_ = 0;            // its access
    uint64_t sinceAccept_ = 0;        // cycles simulated since the last acceptance
    bool drivenSinceAccept_ = false;  // lookup_req_valid was high in one of them
};

struct Args {
    std::string trace, out, log;
    uint32_t walkLat = 30;
    bool exactIdle = false, blocking = false;
    uint64_t progress = 0;
    uint64_t warmup = 0;
    uint64_t checkpointEvery = 0;
    int64_t predictWindow = -1;  // -1: 32 x the TLB's entries
    std::string label;
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; i++) {
        std::string s = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) die("%s needs a value", s.c_str());
            return argv[++i];
        };
        if (s == "--trace") a.trace = next();
        else if (s == "--out") a.out = next();
        else if (s == "--log") a.log = next();
        else if (s == "--walk-latency") a.walkLat = std::stoul(next());
        else if (s == "--exact-idle") a.exactIdle = true;
        else if (s == "--blocking") a.blocking = true;
        else if (s == "--checkpoint-every") a.checkpointEvery = std::stoull(next());
        else if (s == "--predict-window") a.predictWindow = std::stoll(next());
        else if (s == "--progress") a.progress = std::stoull(next());
        else if (s == "--warmup") a.warmup = std::stoull(next());
        else if (s == "--label") a.label = next();
        else if (s == "--help") {
            std::printf("usage: harness --trace T.bin --out stats.json [--walk-latency N] "
                        "[--log flags.u8] [--exact-idle] [--blocking] [--checkpoint-every N] [--predict-window N] [--progress N] [--warmup N] [--label S]\n");
            std::exit(0);
        } else if (s.rfind("+verilator", 0) == 0) {
        } else die("unknown argument %s", s.c_str());
    }
    if (a.trace.empty() || a.out.empty()) die("--trace and --out are required%s", "");
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    Args args = parse(argc, argv);
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(argc, argv);

    auto t0 = std::chrono::steady_clock::now();
    Trace t = load(args.trace.c_str());
    const uint64_t nProc = t.procGroup.size(), nAcc = t.aProc.size();

    // ---- page map: per (proc, aligned vpn); the group's shared view per (group, vpn)
    std::unordered_map<uint64_t, MapEntry> pmap;
    pmap.reserve(t.mProc.size() * 2);
    uint8_t sizesPresent = 0;
    for (size_t i = 0; i < t.mProc.size(); i++) {
        if (t.mProc[i] >= nProc) die("map row %s%lld names an unknown process", "", (long long)i);
        if (t.mSize[i] > 2) die("map row %s%lld has page size > 2", "", (long long)i);
        pmap[key(t.mProc[i], t.mVpn[i] & ~alignOf(t.mSize[i]))] =
            MapEntry{t.mPpn[i] & ~alignOf(t.mSize[i]), t.mPerm[i], t.mSize[i], t.mShared[i]};
        sizesPresent |= 1 << t.mSize[i];
    }
    std::vector<Proc> procs(nProc);
    uint32_t maxGroup = 0;
    for (uint64_t p = 0; p < nProc; p++) {
        procs[p].group = t.procGroup[p];
        maxGroup = std::max(maxGroup, t.procGroup[p]);
    }
    for (uint64_t i = 0; i < nAcc; i++) {
        if (t.aProc[i] >= nProc) die("access %s%lld names an unknown process", "", (long long)i);
        procs[t.aProc[i]].last = i;
    }
    if (maxGroup + 1 > mask(P_CCID_BITS)) die("more container groups than ccids%s", "");
    std::vector<uint32_t> groupNextIdx(maxGroup + 1, 0);
    std::unordered_map<uint64_t, uint64_t> pcMask;      // (group, vpn) -> PC bitmask
    std::unordered_map<uint64_t, MapEntry> privCopy;    // (proc, vpn) -> CoW private copy
    std::unordered_map<uint64_t, bool> dirty;           // (proc|group-tag, vpn) -> D set by a walk
    std::deque<uint32_t> freePcids;
    uint32_t nextPcid = 1;
    const uint32_t maxPcid = (uint32_t)mask(P_PCID_BITS);
    uint64_t nextFreshPpn = (mask(P_PPN_BITS) >> 1) + 1;  // frames for CoW copies: upper half
    constexpr uint64_t GROUP_TAG = 1ULL << 19;           // distinguishes group keys from proc keys

    Harness h(ctx.get(), args.walkLat, args.exactIdle, args.blocking, args.checkpointEvery);
    // Miss prediction (overlapped lookups; it changes what is simulated, never a result): a
    // lookup whose page (group, vpn) no process of the group looked up in the last
    // `predictWindow` accesses is predicted to miss, and nothing is issued behind it until its
    // response, so a miss costs no squashed lookups and no re-simulation. A wrong guess either
    // way costs only simulation time (a hit issued alone; a miss squashing what followed it).
    // Direct-mapped table of the last access to each page (a collision reads as "not seen").
    const uint64_t predictWindow = args.predictWindow >= 0 ? (uint64_t)args.predictWindow
                                   : 32ULL * (P_ENTRIES > 0 ? P_ENTRIES : 64);
    constexpr unsigned SEEN_BITS = 16;
    struct Seen { uint64_t key = ~0ULL, last = 0; };
    std::vector<Seen> seen(predictWindow ? (size_t(1) << SEEN_BITS) : 0);
    auto seenSlot = [&](uint64_t k) -> Seen& {
        return seen[(k * 0x9E3779B97F4A7C15ULL) >> (64 - SEEN_BITS)];
    };
    // the request of access k, for the overlapped lookups: known ahead only when its process
    // already has a PCID (a first access may need a PCID flush first); nothing else a hit
    // leaves behind changes a later request (only walks change pcIdx / pcIdxValid).
    auto requestOf = [&](uint64_t k, Req& q) -> bool {
        if (k >= nAcc) return false;
        const Proc& Q = procs[t.aProc[k]];
        if (Q.pcid == 0) return false;
        q.vpn = t.aVpn[k] & mask(P_VPN_BITS);
        q.pcid = Q.pcid;
        q.ccid = Q.group + 1;
        q.pcIdx = Q.pcIdx < 0 ? 0 : (uint32_t)std::min<int64_t>(Q.pcIdx, mask(P_PC_IDX_BITS));
        q.pcIdxValid = Q.hasPriv;
        q.cmd = t.aCmd[k];
        q.likelyMiss = false;
        if (predictWindow) {
            const uint64_t pk = key(GROUP_TAG | Q.group, q.vpn);
            const Seen& e = seenSlot(pk);
            q.likelyMiss = e.key != pk || k - e.last > predictWindow;
        }
        return true;
    };
    const Harness::InputsOf requestAhead = requestOf;  // one std::function for the whole run
    FILE* logf = nullptr;
    std::vector<uint8_t> logbuf;
    if (!args.log.empty()) {
        logf = std::fopen(args.log.c_str(), "wb");
        if (!logf) die("cannot write %s", args.log.c_str());
        logbuf.reserve(1 << 16);
    }
    std::vector<uint64_t> sliceCycles, sliceWalks;
    uint64_t sliceStart = 0, sliceWalk0 = 0;
    int64_t cur = -1;
    auto tRun = std::chrono::steady_clock::now();
    uint64_t unmapped = 0;

    Stats warm{};  // counters at the end of the warm-up (the first --warmup accesses)
    size_t warmSlices = 0;
    for (uint64_t i = 0; i < nAcc; i++) {
        if (i == args.warmup && i) {
            warm = h.st;
            warmSlices = sliceCycles.size();
        }
        const uint32_t p = t.aProc[i];
        Proc& P = procs[p];
        if ((int64_t)p != cur) {  // context switch: the OS loads pcid/ccid/pcIdx, no flush
            if (cur >= 0) {
                h.st.ctxSwitches++;
                sliceCycles.push_back(h.st.cycles - sliceStart);
                sliceWalks.push_back(h.st.walks - sliceWalk0);
            }
            sliceStart = h.st.cycles;
            sliceWalk0 = h.st.walks;
            cur = p;
        }
        if (P.pcid == 0) {  // first access: allocate a PCID (fresh ones first)
            if (nextPcid <= maxPcid) {
                P.pcid = nextPcid++;
            } else if (!freePcids.empty()) {
                // reuse a dead process's PCID: the OS flushes that PCID's private entries
                // (inval kind 2; shared entries stay with the group)
                P.pcid = freePcids.front();
                freePcids.pop_front();
                h.inval(2, 0, P.pcid, P.group + 1);
                h.st.pcidFlushes++;
                h.st.pcidRecycles++;
            } else {
                die("more than %s%lld processes alive at once (pcidBits)", "", (long long)maxPcid);
            }
        }
        Req q;
        requestOf(i, q);
        const uint32_t ccid = q.ccid, pcIdx = q.pcIdx;
        const uint64_t vpn = q.vpn;
        const uint8_t cmd = q.cmd;
        Harness::Resp r = h.lookup(i, q, requestAhead);
        if (predictWindow) {
            Seen& e = seenSlot(key(GROUP_TAG | P.group, vpn));
            e.key = key(GROUP_TAG | P.group, vpn);
            e.last = i;
        }
        if (P.hasPriv && pcIdx >= (uint32_t)P_PC_BITS) h.st.badPcIdxLookups++;
        uint8_t flags = 0;
        if (r.hit) {
            h.st.hits++;
            flags |= 1;
            if (r.shared) { h.st.sharedHits++; flags |= 2; }
            if (r.crossHit) { h.st.crossHits++; flags |= 4; }
            if (r.permFault) { h.st.permFaults++; flags |= 8; }
        } else {
            h.st.misses++;
        }
        if (!r.hit || r.permFault) {
            // ---- the walker / OS: resolve the translation the page tables dictate
            MapEntry m{};
            bool found = false, priv = false;
            auto pc = privCopy.find(key(p, vpn));
            if (pc != privCopy.end()) {
                m = pc->second;
                found = priv = true;
            } else {
                for (uint8_t s = 0; s < 3 && !found; s++) {
                    if (!(sizesPresent & (1 << s))) continue;
                    auto it = pmap.find(key(p, vpn & ~alignOf(s)));
                    if (it != pmap.end() && it->second.size == s) { m = it->second; found = true; }
                }
            }
            if (!found) {
                unmapped++;
                if (logf) logbuf.push_back(flags | 0x80);
                continue;  // a fault the OS would kill the process for: nothing to fill
            }
            const uint64_t base = vpn & ~alignOf(m.size);
            const bool sharedMap = m.shared && !priv;
            const uint64_t dkey = sharedMap ? key(GROUP_TAG | P.group, base) : key(p, base);
            bool d = (m.perm & PD) || dirty.count(dkey);
            h.st.walks++;
            flags |= 16;
            h.idle(h.walkLat());
            if (cmd == 1 && sharedMap && (m.perm & PCOW) && m.size == 0) {
                // copy-on-write fault: private copy, PC bit, invalidate the group's entry
                h.st.cowFaults++;
                flags |= 32;
                if (P.pcIdx < 0) {
                    P.pcIdx = groupNextIdx[P.group]++;
                    if (P.pcIdx >= P_PC_BITS) h.st.badPcIdxProcs++;
                }
                P.hasPriv = true;
                if (P.pcIdx < P_PC_BITS) pcMask[key(GROUP_TAG | P.group, base)] |= 1ULL << P.pcIdx;
                MapEntry c{nextFreshPpn++ & mask(P_PPN_BITS),
                           (uint8_t)((m.perm & (PR | PX | PU)) | PW | PD), 0, 0};
                privCopy[key(p, base)] = c;
                if (P_SHARING) h.inval(5, base, P.pcid, ccid);
                else h.inval(4, base, P.pcid, ccid);
                h.fill(vpn, c.ppn, 0, c.perm, true, P.pcid, ccid, true, 0);
            } else {
                const bool write = cmd == 1;
                const bool allowed = (cmd == 0 && (m.perm & PR)) || (write && (m.perm & PW)) ||
                                     (cmd == 2 && (m.perm & PX));
                if (!allowed) h.st.protFaults++;  // counted; the entry is filled as the OS has it
                if (write && allowed && !d) {
                    dirty[dkey] = true;
                    d = true;
                    if (r.hit) h.st.dirtyWalks++;
                }
                uint64_t pcm = 0;
                if (sharedMap) {
                    auto it = pcMask.find(key(GROUP_TAG | P.group, base));
                    if (it != pcMask.end()) pcm = it->second;
                }
                h.fill(vpn, m.ppn, m.size, m.perm, d, P.pcid, ccid, !sharedMap, pcm);
            }
        }
        if (logf) {
            logbuf.push_back(flags);
            if (logbuf.size() >= (1 << 16)) {
                std::fwrite(logbuf.data(), 1, logbuf.size(), logf);
                logbuf.clear();
            }
        }
        if (P.last == i) freePcids.push_back(P.pcid);  // the process exits: its PCID is free
        if (args.progress && (i + 1) % args.progress == 0) {
            double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - tRun).count();
            std::fprintf(stderr, "progress %s %" PRIu64 "/%" PRIu64 " %.0f lookups/s\n",
                         args.label.c_str(), i + 1, nAcc, (i + 1) / std::max(el, 1e-9));
        }
    }
    if (cur >= 0) {
        sliceCycles.push_back(h.st.cycles - sliceStart);
        sliceWalks.push_back(h.st.walks - sliceWalk0);
    }
    if (logf) {
        std::fwrite(logbuf.data(), 1, logbuf.size(), logf);
        std::fclose(logf);
    }
    for (int k = 0; k < P_LATENCY + 2; k++) h.tick();  // drain
    auto t1 = std::chrono::steady_clock::now();
    const double runSec = std::chrono::duration<double>(t1 - tRun).count();
    const double totSec = std::chrono::duration<double>(t1 - t0).count();

    // ---- cross-check against the RTL's own counters
    Vdut& d = h.dut();
    struct C { const char* name; uint64_t rtl, mine; } checks[] = {
        {"lookups", d.perf_lookups, h.st.lookups},
        {"hits", d.perf_hits, h.st.hits},
        {"sharedHits", d.perf_sharedHits, h.st.sharedHits},
        {"crossHits", d.perf_crossHits, h.st.crossHits},
        {"permFaults", d.perf_permFaults, h.st.permFaults},
        {"fills", d.perf_fills, h.st.fills},
        {"invals", d.perf_invals, h.st.invals},
        {"badPcIdx", d.perf_badPcIdx, h.st.badPcIdxLookups},
        {"badFills", d.perf_badFills, 0},
        {"badCmds", d.perf_badCmds, 0},
        {"badInvals", d.perf_badInvals, 0},
    };
    bool ok = true;
    for (auto& c : checks) {
        // counters are 32-bit saturating
        uint64_t expect = std::min<uint64_t>(c.mine, 0xFFFFFFFFULL);
        if (c.rtl != expect) {
            std::fprintf(stderr, "harness: MISMATCH perf_%s: rtl %" PRIu64 " harness %" PRIu64 "\n",
                         c.name, c.rtl, c.mine);
            ok = false;
        }
    }

    FILE* o = std::fopen(args.out.c_str(), "w");
    if (!o) die("cannot write %s", args.out.c_str());
    std::fprintf(o, "{\n  \"label\": \"%s\",\n  \"config\": \"%s\",\n", args.label.c_str(), P_CONFIG);
    std::fprintf(o, "  \"sharing\": %d,\n  \"latency\": %d,\n  \"walk_latency\": %u,\n", P_SHARING,
                 P_LATENCY, args.walkLat);
    std::fprintf(o, "  \"processes\": %" PRIu64 ",\n  \"groups\": %u,\n", nProc, maxGroup + 1);
    std::fprintf(o, "  \"accesses\": %" PRIu64 ",\n  \"warmup\": %" PRIu64 ",\n", nAcc,
                 std::min<uint64_t>(args.warmup, nAcc));
    // measured window (after the warm-up); "total" below is the whole run (cross-checked)
    auto dump = [&](const Stats& s, const Stats& w, const char* indent) {
#define F(x) std::fprintf(o, "%s\"" #x "\": %" PRIu64 ",\n", indent, (uint64_t)(s.x - w.x))
        F(lookups); F(hits); F(misses); F(sharedHits); F(crossHits); F(permFaults); F(walks);
        F(dirtyWalks); F(cowFaults); F(protFaults); F(fills); F(sharedFills); F(privateFills);
        F(invals); F(ctxSwitches); F(pcidFlushes); F(pcidRecycles); F(badPcIdxProcs);
        F(badPcIdxLookups); F(cycles);
        F(idleCyclesSkipped);
#undef F
        std::fprintf(o, "%s\"stallCycles\": %" PRIu64, indent, s.stallCycles - w.stallCycles);
    };
    dump(h.st, warm, "  ");
    std::fprintf(o, ",\n  \"total\": {\n");
    dump(h.st, Stats{}, "    ");
    std::fprintf(o, "\n  },\n");
    std::fprintf(o, "  \"unmapped\": %" PRIu64 ",\n", unmapped);
    std::fprintf(o, "  \"perf\": {\"lookups\": %u, \"hits\": %u, \"sharedHits\": %u, "
                 "\"crossHits\": %u, \"permFaults\": %u, \"fills\": %u, \"evictions\": %u, "
                 "\"invals\": %u, \"badFills\": %u, \"badPcIdx\": %u, \"badCmds\": %u, "
                 "\"badInvals\": %u},\n",
                 (unsigned)d.perf_lookups, (unsigned)d.perf_hits, (unsigned)d.perf_sharedHits,
                 (unsigned)d.perf_crossHits, (unsigned)d.perf_permFaults, (unsigned)d.perf_fills,
                 (unsigned)d.perf_evictions, (unsigned)d.perf_invals, (unsigned)d.perf_badFills,
                 (unsigned)d.perf_badPcIdx, (unsigned)d.perf_badCmds, (unsigned)d.perf_badInvals);
    sliceCycles.erase(sliceCycles.begin(), sliceCycles.begin() + std::min(warmSlices, sliceCycles.size()));
    double mean = 0;
    for (auto c : sliceCycles) mean += c;
    mean = sliceCycles.empty() ? 0 : mean / sliceCycles.size();
    std::fprintf(o, "  \"slices\": %zu,\n  \"slice_cycles_mean\": %.3f,\n", sliceCycles.size(), mean);
    std::fprintf(o, "  \"slice_cycles_p50\": %.1f,\n  \"slice_cycles_p95\": %.1f,\n"
                 "  \"slice_cycles_p99\": %.1f,\n",
                 pct(sliceCycles, 0.5), pct(sliceCycles, 0.95), pct(sliceCycles, 0.99));
    std::fprintf(o, "  \"counters_agree\": %s,\n", ok ? "true" : "false");
    std::fprintf(o, "  \"lookup_mode\": \"%s\",\n  \"simulated_cycles\": %" PRIu64 ",\n"
                 "  \"lookups_issued\": %" PRIu64 ",\n  \"lookups_squashed\": %" PRIu64 ",\n",
                 args.blocking ? "blocking" : "overlapped", h.simulatedCycles(),
                 args.blocking ? h.st.lookups : h.speculated, h.rolledBack);
    std::fprintf(o, "  \"checkpoint_every\": %" PRIu64 ",\n", args.blocking ? 0 : h.checkpointEvery());
    std::fprintf(o, "  \"predict_window\": %" PRIu64 ",\n", args.blocking ? 0 : predictWindow);
    std::fprintf(o, "  \"run_seconds\": %.4f,\n  \"total_seconds\": %.4f,\n", runSec, totSec);
    std::fprintf(o, "  \"lookups_per_second\": %.1f,\n  \"cycles_per_second\": %.1f\n}\n",
                 h.st.lookups / std::max(runSec, 1e-9), h.st.cycles / std::max(runSec, 1e-9));
    std::fclose(o);
    if (!ok) {
        std::fprintf(stderr, "harness: RTL perf counters disagree with the harness\n");
        return 3;
    }
    return 0;
}
