// The secret scan's speed and false findings (bench/secret_scan.sh drives it).
//   secret_bench speed FILE   MB/s of: Vectorscan alone on the built-in rules
//                             (the floor), SecretScanner, the relay passing
//                             tools/call results without and with the scan;
//                             the last three also as ratios of the floor.
//   secret_bench fp FILE      findings per MB on benign text, by rule, with
//                             each finding's context (to judge it).
//   secret_bench start N      the start-up cost of the built-in rules, N times
//                             each: a compile, a compile stored into an empty
//                             cache, a load from the cache (median ms).
// Times are the thread's CPU time (a loaded machine inflates wall time).
// No thresholds: numbers for bench/RESULTS.md.

#include <hs.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "guard/secret_db_cache.h"
#include "guard/secret_rules.h"
#include "guard/secret_scanner.h"
#include "relay/mcp_relay.h"

using namespace mcpcell;
// This thread's CPU time, not the wall clock: on a machine shared with other
// sessions the wall clock also counts the time they hold the core.
struct Clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<Clock>;
  static constexpr bool is_steady = true;
  static time_point now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec));
  }
};

namespace {

constexpr std::size_t kChunk = 64 * 1024;  // one tool result's text

std::string ReadAll(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double Seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

int NoOp(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<std::size_t*>(ctx);
  return 0;
}

// Vectorscan by itself: the same rules and flags, a callback that only counts.
double LibraryRate(const std::string& text) {
  const auto& rules = BuiltinSecretRules();
  std::vector<const char*> exprs;
  std::vector<unsigned> flags, ids;
  for (unsigned i = 0; i < rules.size(); ++i) {
    exprs.push_back(rules[i].regex.c_str());
    flags.push_back(HS_FLAG_SOM_LEFTMOST | (rules[i].caseless ? HS_FLAG_CASELESS : 0u));
    ids.push_back(i);
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(exprs.data(), flags.data(), ids.data(), static_cast<unsigned>(exprs.size()), HS_MODE_BLOCK,
                       nullptr, &db, &err) != HS_SUCCESS) {
    std::fprintf(stderr, "compile: %s\n", err->message);
    std::exit(1);
  }
  hs_scratch_t* scratch = nullptr;
  hs_alloc_scratch(db, &scratch);
  std::size_t n = 0;
  auto t = Clock::now();
  for (std::size_t at = 0; at < text.size(); at += kChunk) {
    std::size_t len = std::min(kChunk, text.size() - at);
    hs_scan(db, text.data() + at, static_cast<unsigned>(len), 0, scratch, NoOp, &n);
  }
  double s = Seconds(t);
  hs_free_scratch(scratch);
  hs_free_database(db);
  return static_cast<double>(text.size()) / s / 1e6;
}

double ScannerRate(const std::string& text) {
  auto scanner = SecretScanner::Builtin();
  auto scratch = (*scanner)->NewScratch();
  std::size_t n = 0;
  auto t = Clock::now();
  for (std::size_t at = 0; at < text.size(); at += kChunk) {
    n += (*scanner)->Scan(std::string_view(text).substr(at, kChunk), scratch->get()).size();
  }
  return static_cast<double>(text.size()) / Seconds(t) / 1e6;
}

// The relay deciding on server → client lines (each a tools/call result
// whose text is one chunk), counted in bytes of text, as the scan sees them.
double RelayRate(const std::string& text, SecretMode mode) {
  RelayConfig cfg;
  cfg.server = "bench";
  cfg.secrets.to_client = cfg.secrets.to_server = mode;
  McpRelay relay(cfg, nullptr);
  std::vector<std::string> lines;
  for (std::size_t at = 0, id = 0; at < text.size(); at += kChunk, ++id) {
    nlohmann::json m{{"jsonrpc", "2.0"}, {"id", id},
                     {"result", {{"content", {{{"type", "text"}, {"text", text.substr(at, kChunk)}}}}}}};
    lines.push_back(m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    lines.back().append(64, ' ');  // simdjson's padding (LineFramer guarantees it)
  }
  std::chrono::duration<double> busy{};
  for (std::size_t id = 0; id < lines.size(); ++id) {
    std::string call = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                       R"(,"method":"tools/call","params":{"name":"read","arguments":{}}})" + std::string(64, ' ');
    relay.FromClient(LineFramer::Line{std::string_view(call.data(), call.size() - 64), false, call.size() - 64});
    std::string_view l(lines[id].data(), lines[id].size() - 64);
    auto t = Clock::now();
    relay.FromServer(LineFramer::Line{l, false, l.size()});
    busy += Clock::now() - t;
  }
  return static_cast<double>(text.size()) / busy.count() / 1e6;
}

int Speed(const std::string& text) {
  double floor = LibraryRate(text), scanner = ScannerRate(text);
  double relay_off = RelayRate(text, SecretMode::kOff), relay_on = RelayRate(text, SecretMode::kRedact);
  std::printf("| what | MB/s | × library |\n| --- | ---: | ---: |\n");
  std::printf("| Vectorscan alone, %zu built-in rules (floor) | %.0f | 1.00 |\n", BuiltinSecretRules().size(), floor);
  std::printf("| SecretScanner::Scan | %.0f | %.2f |\n", scanner, scanner / floor);
  std::printf("| relay, tools/call results, scan off | %.0f | %.2f |\n", relay_off, relay_off / floor);
  std::printf("| relay, tools/call results, scan on (redact) | %.0f | %.2f |\n", relay_on, relay_on / floor);
  std::printf("\n%.1f MB of text in %zu KiB results\n", static_cast<double>(text.size()) / 1e6, kChunk / 1024);
  return 0;
}

int FalseFindings(const std::string& text) {
  auto scanner = SecretScanner::Builtin();
  auto scratch = (*scanner)->NewScratch();
  std::map<std::string, int> by_rule;
  int total = 0;
  for (const auto& m : (*scanner)->Scan(text, scratch->get())) {
    ++total;
    ++by_rule[(*scanner)->rule(m.rule).name];
    std::size_t from = m.from > 40 ? m.from - 40 : 0;
    std::string ctx = text.substr(from, std::min<std::size_t>(m.to - from + 40, 240));
    for (char& c : ctx) {
      if (c == '\n' || c == '\0') c = ' ';
    }
    std::fprintf(stderr, "finding %s: %s\n", (*scanner)->rule(m.rule).name.c_str(), ctx.c_str());
  }
  double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("%.1f MB scanned, %d findings, %.4f per MB\n", mb, total, total / mb);
  for (const auto& [rule, n] : by_rule) std::printf("  %s: %d\n", rule.c_str(), n);
  return 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Start(int n) {
  char tmpl[] = "/tmp/secret-bench-cache-XXXXXX";
  std::string base = ::mkdtemp(tmpl);
  SecretDbCache cache(base);
  std::vector<double> compile, store, load;
  for (int i = 0; i < n; ++i) {
    auto t = Clock::now();
    if (!SecretScanner::Compile(BuiltinSecretRules()).ok()) return 1;
    compile.push_back(Seconds(t) * 1e3);
    std::filesystem::remove_all(base + "/mcpcell");
    t = Clock::now();
    if (!SecretScanner::Compile(BuiltinSecretRules(), &cache).ok()) return 1;
    store.push_back(Seconds(t) * 1e3);
    t = Clock::now();
    if (!SecretScanner::Compile(BuiltinSecretRules(), &cache).ok()) return 1;
    load.push_back(Seconds(t) * 1e3);
  }
  std::filesystem::remove_all(base);
  std::printf("| start-up of the %zu built-in rules | ms (median of %d) |\n| --- | ---: |\n", BuiltinSecretRules().size(), n);
  std::printf("| compile (no cache) | %.1f |\n| compile and store (empty cache) | %.1f |\n| load from the cache | %.1f |\n",
              Median(compile), Median(store), Median(load));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: secret_bench speed|fp FILE | start N\n");
    return 2;
  }
  if (std::string_view(argv[1]) == "start") return Start(std::max(1, std::atoi(argv[2])));
  std::string text = ReadAll(argv[2]);
  if (text.empty()) {
    std::fprintf(stderr, "secret_bench: %s is empty or unreadable\n", argv[2]);
    return 2;
  }
  return std::string_view(argv[1]) == "speed" ? Speed(text) : FalseFindings(text);
}
