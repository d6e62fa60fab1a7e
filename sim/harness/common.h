// xlat sim: pieces shared by the Verilator harnesses of sim/harness/ (harness.cpp for
// BabelFishTlb, walker.cpp for NestedWalker, pml.cpp for PmlLogger, devtlb.cpp for DevTlb,
// perforated.cpp for PerforatedL2Tlb, mmu.cpp for XlatMmu): errors, masks, binary input, the
// memory image (load_memory), percentiles, a small JSON writer, command-line parsing, a seeded
// random source, the latency memory's response queue (and a memory port's requests and
// responses on it), record logs, the perf-counter cross-check, the port-protocol error log, the
// verilated model's set-up, and exact idle-cycle skipping.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <type_traits>
#include <vector>

#include "verilated.h"

namespace xlat {

// printf-style fatal error (exit status 2)
[[noreturn]] inline void die(const char* fmt, ...) {
    std::fprintf(stderr, "harness: error: ");
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "\n");
    std::exit(2);
}

constexpr uint64_t mask(int bits) { return bits >= 64 ? ~0ULL : ((1ULL << bits) - 1); }

// n little-endian items of T from f into v
template <class T>
void readv(FILE* f, std::vector<T>& v, uint64_t n, const char* what) {
    v.resize(n);
    if (n && std::fread(v.data(), sizeof(T), n, f) != n) die("short read in %s", what);
}

// n items into each vector named in turn: read_columns(f, n, "va", t.va, "asid", t.asid, ...)
inline void read_columns(FILE*, uint64_t) {}
template <class T, class... Rest>
void read_columns(FILE* f, uint64_t n, const char* what, std::vector<T>& v, Rest&&... rest) {
    readv(f, v, n, what);
    read_columns(f, n, std::forward<Rest>(rest)...);
}

// opens a harness input file and checks its 8-byte magic
inline FILE* open_input(const char* path, const char* magic) {
    FILE* f = std::fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    char m[8];
    if (std::fread(m, 1, 8, f) != 8 || std::memcmp(m, magic, 8) != 0)
        die("%s is not an xlat harness input (magic %s)", path, magic);
    return f;
}

// The memory image of a harness with page tables in memory (walker.cpp, perforated.cpp),
// written by sim/memimage.py: "XLATWM01", u64 n, u64 addr[n], u64 data[n] (sparse 64-bit
// words, byte addresses 8-byte aligned; a word not in the image reads 0).
inline std::unordered_map<uint64_t, uint64_t> load_memory(const char* path) {
    FILE* f = open_input(path, "XLATWM01");
    uint64_t n;
    if (std::fread(&n, 8, 1, f) != 1) die("short header in %s", path);
    std::vector<uint64_t> addr, data;
    readv(f, addr, n, "addr");
    readv(f, data, n, "data");
    std::fclose(f);
    std::unordered_map<uint64_t, uint64_t> m;
    m.reserve(n * 2);
    for (uint64_t k = 0; k < n; k++) {
        if (addr[k] & 7) die("memory image word %llu: address %#llx is not 8-byte aligned",
                             (unsigned long long)k, (unsigned long long)addr[k]);
        m[addr[k]] = data[k];
    }
    return m;
}

inline double pct(std::vector<uint64_t> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t i = (size_t)std::min<double>(v.size() - 1, q * (v.size() - 1) + 0.5);
    return (double)v[i];
}

// Minimal JSON writer: objects and scalars, commas and indentation handled.
class Json {
  public:
    explicit Json(FILE* f) : f_(f) {}
    Json& open(const char* key = nullptr) {
        sep(key);
        std::fputs("{", f_);
        first_.push_back(true);
        return *this;
    }
    Json& close() {
        first_.pop_back();
        std::fputs("\n", f_);
        indent();
        std::fputs("}", f_);
        if (first_.empty()) std::fputs("\n", f_);
        return *this;
    }
    Json& u(const char* key, uint64_t v) { sep(key); std::fprintf(f_, "%" PRIu64, v); return *this; }
    Json& i(const char* key, int64_t v) { sep(key); std::fprintf(f_, "%" PRId64, v); return *this; }
    Json& d(const char* key, double v) { sep(key); std::fprintf(f_, "%.6g", v); return *this; }
    Json& b(const char* key, bool v) { sep(key); std::fputs(v ? "true" : "false", f_); return *this; }
    Json& s(const char* key, const std::string& v) {
        sep(key);
        std::fputc('"', f_);
        for (char c : v) {
            if (c == '"' || c == '\\') std::fputc('\\', f_);
            std::fputc(c, f_);
        }
        std::fputc('"', f_);
        return *this;
    }

  private:
    void indent() { for (size_t k = 0; k < first_.size(); k++) std::fputs("  ", f_); }
    void sep(const char* key) {
        if (!first_.empty()) {
            std::fputs(first_.back() ? "\n" : ",\n", f_);
            first_.back() = false;
            indent();
        }
        if (key) std::fprintf(f_, "\"%s\": ", key);
    }
    FILE* f_;
    std::vector<bool> first_;
};

// Command line: --name value / --flag; "+verilator..." arguments are left to Verilator.
class Args {
  public:
    Args(int argc, char** argv) : argc_(argc), argv_(argv) {}
    template <class Fn>  // fn(name, next) returns false for an unknown name
    void parse(Fn fn, const char* usage) {
        for (int k = 1; k < argc_; k++) {
            std::string s = argv_[k];
            if (s.rfind("+verilator", 0) == 0) continue;
            if (s == "--help" || s == "-h") {
                std::printf("%s\n", usage);
                std::exit(0);
            }
            auto next = [&]() -> std::string {
                if (k + 1 >= argc_) die("%s needs a value", s.c_str());
                return argv_[++k];
            };
            if (!fn(s, next)) die("unknown argument %s (try --help)", s.c_str());
        }
    }

  private:
    int argc_;
    char** argv_;
};

// Options of every harness with a latency memory: --out, --log, --label, --latency, --jitter,
// --seed, --exact-idle. A harness derives its Options from it and offers each argument to
// parse_common() first.
struct CommonOptions {
    std::string out, log, label;
    uint64_t latency = 100, jitter = 0, seed = 1;
    bool exactIdle = false;
    template <class Next>
    bool parse_common(const std::string& s, Next next) {
        if (s == "--out") out = next();
        else if (s == "--log") log = next();
        else if (s == "--label") label = next();
        else if (s == "--latency") latency = std::stoull(next());
        else if (s == "--jitter") jitter = std::stoull(next());
        else if (s == "--seed") seed = std::stoull(next());
        else if (s == "--exact-idle") exactIdle = true;
        else return false;
        return true;
    }
};

class Rng {  // xorshift64*, deterministic by seed
  public:
    explicit Rng(uint64_t s) : s_(s * 0x9E3779B97F4A7C15ULL + 1) {}
    uint64_t next() {
        s_ ^= s_ >> 12; s_ ^= s_ << 25; s_ ^= s_ >> 27;
        return s_ * 0x2545F4914F6CDD1DULL;
    }
    bool chance(double p) { return p >= 1.0 || (double)(next() >> 11) * 0x1.0p-53 < p; }
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }

  private:
    uint64_t s_;
};

// Memory responses waiting for their due cycle: one is presented a cycle, earliest due first
// (ties in issue order), so responses to different ids may overtake each other.
class Responses {
  public:
    struct Item {
        uint64_t due, seq, rdata;
        uint32_t id;
        bool operator>(const Item& o) const { return due != o.due ? due > o.due : seq > o.seq; }
    };
    void push(uint64_t due, uint32_t id, uint64_t rdata = 0) { q_.push(Item{due, seq_++, rdata, id}); }
    bool due(uint64_t cycle) const { return !q_.empty() && q_.top().due <= cycle; }
    Item pop() { Item i = q_.top(); q_.pop(); return i; }
    bool empty() const { return q_.empty(); }
    size_t size() const { return q_.size(); }
    uint64_t next_due() const { return q_.top().due; }

  private:
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> q_;
    uint64_t seq_ = 0;
};

// A binary log of fixed-size records (--log), written in blocks; no file when the path is empty.
template <class Rec>
class RecordLog {
  public:
    explicit RecordLog(const std::string& path) {
        if (path.empty()) return;
        f_ = std::fopen(path.c_str(), "wb");
        if (!f_) die("cannot write %s", path.c_str());
        buf_.reserve(4096);
    }
    ~RecordLog() { close(); }
    void push(const Rec& r) {
        if (!f_) return;
        buf_.push_back(r);
        if (buf_.size() >= 4096) flush();
    }
    void close() {
        if (!f_) return;
        flush();
        std::fclose(f_);
        f_ = nullptr;
    }

  private:
    void flush() {
        std::fwrite(buf_.data(), sizeof(Rec), buf_.size(), f_);
        buf_.clear();
    }
    FILE* f_ = nullptr;
    std::vector<Rec> buf_;
};

// One `mem_req` as the port offers it, and its effect on a memory image: a write applied under
// its byte mask, a read returning the word as it is (a word not in the image reads 0).
struct MemReq {
    uint32_t id = 0;
    uint64_t addr = 0, wdata = 0;
    bool write = false;
    uint8_t wmask = 0;
    template <class Dut>
    static MemReq of(const Dut& d) {
        return MemReq{(uint32_t)d.mem_req_bits_id, (uint64_t)d.mem_req_bits_addr, (uint64_t)d.mem_req_bits_wdata,
                      (bool)d.mem_req_bits_write, (uint8_t)d.mem_req_bits_wmask};
    }
    // the read data (0 for a write)
    uint64_t apply(std::unordered_map<uint64_t, uint64_t>& mem) const {
        if (write) {
            uint64_t m = 0;
            for (int k = 0; k < 8; k++)
                if (wmask >> k & 1) m |= 0xFFULL << (8 * k);
            uint64_t& w = mem[addr];
            w = (w & ~m) | (wdata & m);
            return 0;
        }
        auto it = mem.find(addr);
        return it == mem.end() ? 0 : it->second;
    }
};

// Drives a memory port's `mem_resp` for this cycle from the latency memory: the response due
// now, if any (earliest first), with its id, its read data (WithData: ports that return data)
// and no error. Returns whether one is presented; `cur` is it.
template <bool WithData, class Dut>
bool present_response(Dut& d, Responses& pend, uint64_t cycle, Responses::Item& cur) {
    const bool v = pend.due(cycle);
    if (v) {
        cur = pend.pop();
        d.mem_resp_bits_id = cur.id;
        if constexpr (WithData) d.mem_resp_bits_rdata = cur.rdata;
        d.mem_resp_bits_error = 0;
    }
    d.mem_resp_valid = v;
    return v;
}

// The harness's own count of what a perf_* counter (32-bit, saturating) must hold.
struct CounterCheck {
    const char* name;
    uint64_t rtl, mine;
};
// true when every RTL counter equals the harness's count; prints each MISMATCH to stderr
inline bool counters_agree(const std::vector<CounterCheck>& checks) {
    bool ok = true;
    for (const auto& c : checks) {
        if (c.rtl != std::min<uint64_t>(c.mine, 0xFFFFFFFFULL)) {
            std::fprintf(stderr, "harness: MISMATCH %s: rtl %llu harness %llu\n", c.name,
                         (unsigned long long)c.rtl, (unsigned long long)c.mine);
            ok = false;
        }
    }
    return ok;
}

// The end of every run's statistics: the cross-check's verdict, cycles simulated and skipped,
// speeds.
inline void json_verdict(Json& j, uint64_t protocolErrors, bool ok, uint64_t simulated, uint64_t skipped,
                         double runSec, double totSec) {
    j.u("protocolErrors", protocolErrors);
    j.b("counters_agree", ok);
    j.u("simulatedCycles", simulated).u("idleCyclesSkipped", skipped);
    j.d("run_seconds", runSec).d("total_seconds", totSec);
    j.d("cycles_per_second", simulated / std::max(runSec, 1e-9));
}

// A harness's exit status: 3 when the RTL's counters or the port protocol disagree with it.
inline int exit_status(bool ok) {
    if (ok) return 0;
    std::fprintf(stderr, "harness: RTL perf counters or the port protocol disagree with the harness\n");
    return 3;
}

// Holds reset for `cycles` clock cycles (inputs must already be idle), then releases it.
template <class Dut>
void reset_cycles(Dut& d, int cycles = 4) {
    d.clock = 0;
    d.reset = 1;
    for (int k = 0; k < cycles; k++) {
        d.clock = 0; d.eval();
        d.clock = 1; d.eval();
    }
    d.reset = 0;
}

// Exact idle skipping. A verilated model's whole state (registers, inputs, scheduler
// triggers) lives in one object (Vdut__Syms::TOP, the root). If after one more cycle with the
// same inputs that object is byte-for-byte unchanged, the model sits at a fixed point of its
// next-state function: every further cycle with the same inputs leaves it unchanged too, so
// those cycles can be counted instead of simulated. (Padding bytes can only make the
// comparison fail, never pass wrongly.)
template <class Root>
class FixedPoint {
  public:
    explicit FixedPoint(const Root* root) : root_(root), snap_(sizeof(Root)) {}
    void take() {
        std::memcpy(snap_.data(), (const void*)root_, sizeof(Root));
        have_ = true;
    }
    bool unchanged() const {
        return have_ && std::memcmp(snap_.data(), (const void*)root_, sizeof(Root)) == 0;
    }
    void forget() { have_ = false; }
    bool have() const { return have_; }
    // Called once per cycle after the clock edge. True when this cycle was `quiet` (no handshake,
    // inputs as in the previous quiet cycle) and the model did not change since then: the
    // caller may skip to the next cycle whose inputs differ. A loud cycle starts over.
    bool settled(bool quiet) {
        if (!quiet) {
            forget();
            return false;
        }
        if (!unchanged()) {
            take();
            return false;
        }
        forget();
        return true;
    }

  private:
    const Root* root_;
    std::vector<unsigned char> snap_;
    bool have_ = false;
};

// Port-protocol violations the harness sees (a response for an id not outstanding, bits that
// change while valid waits): counted for the verdict, the first ten printed with their cycle.
class Protocol {
  public:
    explicit Protocol(const uint64_t& cycle) : cycle_(cycle) {}
    void operator()(const char* what, uint64_t a, uint64_t b) {
        if (errors++ < 10)
            std::fprintf(stderr, "harness: PROTOCOL %s (%#llx, %#llx) at cycle %llu\n", what,
                         (unsigned long long)a, (unsigned long long)b, (unsigned long long)cycle_);
    }
    uint64_t errors = 0;

  private:
    const uint64_t& cycle_;
};

// A verilated model with its context (which takes the command line's +plusargs) and the
// fixed-point detector over its state.
template <class V>
class Model {
  public:
    using Root = std::remove_pointer_t<std::remove_cv_t<decltype(V::rootp)>>;
    Model(int argc, char** argv) : ctx_(context(argc, argv)), dut_(std::make_unique<V>(ctx_.get())), fp(dut_->rootp) {}
    V& dut() { return *dut_; }

  private:
    static std::unique_ptr<VerilatedContext> context(int argc, char** argv) {
        auto c = std::make_unique<VerilatedContext>();
        c->commandArgs(argc, argv);
        return c;
    }
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<V> dut_;

  public:
    FixedPoint<Root> fp;
};

}  // namespace xlat
