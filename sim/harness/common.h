// xlat sim: pieces shared by the Verilator harnesses of sim/harness/ (harness.cpp for
// BabelFishTlb, walker.cpp for NestedWalker): errors, masks, binary input, percentiles, a small
// JSON writer, command-line parsing, progress lines, and exact idle-cycle skipping.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// opens a harness input file and checks its 8-byte magic
inline FILE* open_input(const char* path, const char* magic) {
    FILE* f = std::fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    char m[8];
    if (std::fread(m, 1, 8, f) != 8 || std::memcmp(m, magic, 8) != 0)
        die("%s is not an xlat harness input (magic %s)", path, magic);
    return f;
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

  private:
    const Root* root_;
    std::vector<unsigned char> snap_;
    bool have_ = false;
};

}  // namespace xlat
