// The relay's own CPU per message, in process: McpRelay fed from memory (no
// cell, no pipes, no scheduler), so the figures hold on a loaded machine
// where wall-clock ones do not (bench/relay.sh has those).
//   relay_bench cpu [REPS]       per-message µs (median of REPS rounds) for
//                                each case below, scan off and on (redact),
//                                and the peak RSS growth of the 24 MiB case.
//   relay_bench rss              the supervisor's memory for one 24 MiB
//                                line: how far the peak RSS rises above the
//                                RSS before the line (the line itself, as the
//                                framer holds it, is allocated before).
//   relay_bench paths FILE       which path the secret scan takes for FILE's
//                                text as 64 KiB tools/call results.
//   relay_bench one CASE N MODE  runs one case N times (for perf record);
//                                MODE is off, redact, or audit (redact with
//                                every record written to an --audit-log in
//                                a temporary directory).
//   relay_bench duplex N MODE [REPS]  N 1 KiB notifications each way, the
//                                two directions on two threads at once (as
//                                the pump runs them) vs in turn on one;
//                                wall clock, median of REPS (default 5).
// Cases: notify1k (a 1 KiB notification), call45 (a 45-byte tools/call and
// its answer), result64k (a 64 KiB tools/call result), lines64k (the same
// with \n escapes), big24m (a 24 MiB
// string, one direction). No thresholds: numbers for bench/RESULTS.md.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "audit/audit_log.h"
#include "guard/json_strings_raw.h"
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

// A line as LineFramer hands it out: the text, then readable padding.
struct PaddedLine {
  std::string buf;
  explicit PaddedLine(std::string text) : buf(std::move(text)) { buf.append(LineFramer::kPadding, ' '); }
  LineFramer::Line line() const {
    std::size_t n = buf.size() - LineFramer::kPadding;
    return LineFramer::Line{std::string_view(buf.data(), n), false, n};
  }
};

std::string Filler(std::size_t n) {
  // Text that looks like a tool's output (words, digits, punctuation), no escapes.
  static const char kWords[] = "the relay reads every line of 2026 and passes it on, judged; ";
  std::string s;
  s.reserve(n);
  while (s.size() < n) s.append(kWords, std::min(n - s.size(), sizeof kWords - 1));
  return s;
}

RelayConfig Config(SecretMode mode) {
  RelayConfig cfg;
  cfg.server = "bench";
  cfg.secrets.to_client = cfg.secrets.to_server = mode;
  return cfg;
}

// A relay whose records go to a real audit log (flock, fstat, chain tail,
// SHA-256, write(2) per record, as --audit-log does), in a directory removed
// when it goes.
struct AuditedRelay {
  std::string dir;
  std::optional<AuditLog> log;
  std::unique_ptr<McpRelay> relay;
  explicit AuditedRelay(SecretMode mode) {
    char tmpl[] = "/tmp/relay-bench-audit.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) std::abort();
    dir = tmpl;
    auto opened = AuditLog::Open(dir + "/calls.jsonl");
    if (!opened.ok()) std::abort();
    log.emplace(std::move(*opened));
    relay = std::make_unique<McpRelay>(
        Config(mode), McpRelay::AuditSink::Text([this](std::string_view o) -> Status { return log->WriteObject(o); }));
  }
  ~AuditedRelay() {
    relay.reset();
    log.reset();
    std::remove((dir + "/calls.jsonl").c_str());
    ::rmdir(dir.c_str());
  }
};

struct Case {
  const char* name;
  const char* what;
  double bytes;  // per round, for MB/s
  // Runs `n` rounds against `relay`, returns the seconds spent in the relay.
  double (*run)(McpRelay& relay, std::size_t n);
};

double Notify1k(McpRelay& relay, std::size_t n) {
  std::string head = R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":")";
  PaddedLine l(head + Filler(1024 - head.size() - 4) + "\"}}");
  auto t = Clock::now();
  for (std::size_t i = 0; i < n; ++i) relay.FromServer(l.line());
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double Call45(McpRelay& relay, std::size_t n) {
  std::chrono::duration<double> busy{};
  for (std::size_t i = 0; i < n; ++i) {
    std::string id = std::to_string(i);
    PaddedLine call(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/call","params":{"name":"x"}})");
    PaddedLine answer(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"content":[]}})");
    auto t = Clock::now();
    relay.FromClient(call.line());
    relay.FromServer(answer.line());
    busy += Clock::now() - t;
  }
  return busy.count();
}

double Result64k(McpRelay& relay, std::size_t n) {
  std::string text = Filler(64 * 1024);
  std::chrono::duration<double> busy{};
  for (std::size_t i = 0; i < n; ++i) {
    std::string id = std::to_string(i);
    PaddedLine call(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/call","params":{"name":"read"}})");
    PaddedLine answer(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"content":[{"type":"text","text":")" + text +
                      "\"}]}}");
    relay.FromClient(call.line());
    auto t = Clock::now();
    relay.FromServer(answer.line());
    busy += Clock::now() - t;
  }
  return busy.count();
}

// The same with the text's lines written as JSON writes them ("\n" escapes
// every 80 bytes): most tool output looks like this.
double Result64kLines(McpRelay& relay, std::size_t n) {
  std::string text;
  while (text.size() < 64 * 1024) text += Filler(78) + "\\n";
  std::chrono::duration<double> busy{};
  for (std::size_t i = 0; i < n; ++i) {
    std::string id = std::to_string(i);
    PaddedLine call(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/call","params":{"name":"read"}})");
    PaddedLine answer(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"content":[{"type":"text","text":")" + text +
                      "\"}]}}");
    relay.FromClient(call.line());
    auto t = Clock::now();
    relay.FromServer(answer.line());
    busy += Clock::now() - t;
  }
  return busy.count();
}

double Big24m(McpRelay& relay, std::size_t n) {
  PaddedLine l(R"({"jsonrpc":"2.0","method":"notifications/message","params":{"data":")" + std::string(24 << 20, 'a') +
               "\"}}");
  auto t = Clock::now();
  for (std::size_t i = 0; i < n; ++i) relay.FromClient(l.line());
  return std::chrono::duration<double>(Clock::now() - t).count();
}

const Case kCases[] = {
    {"notify1k", "1 KiB notification", 1024, Notify1k},
    {"call45", "45-byte tools/call + its answer", 45, Call45},
    {"result64k", "64 KiB tools/call result", 64 * 1024, Result64k},
    {"lines64k", "64 KiB tools/call result, \\n every 80 bytes", 64 * 1024, Result64kLines},
    {"big24m", "24 MiB string line, one direction", 24 << 20, Big24m},
};

std::size_t RoundsOf(const Case& c) { return c.bytes >= (1 << 20) ? 3 : c.bytes >= 65536 ? 2000 : 20000; }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double PeakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

int Cpu(int reps) {
  std::printf("| per message, relay CPU (median of %d rounds) | scan off µs | scan on (redact) µs | on / off | scan on MB/s |\n",
              reps);
  std::printf("| --- | ---: | ---: | ---: | ---: |\n");
  double rss_before = PeakRssMiB();
  for (const Case& c : kCases) {
    std::size_t n = RoundsOf(c);
    std::vector<double> off, on;
    for (int r = 0; r < reps; ++r) {  // interleaved: off, on, off, on ...
      McpRelay a(Config(SecretMode::kOff), nullptr);
      off.push_back(c.run(a, n) / static_cast<double>(n) * 1e6);
      McpRelay b(Config(SecretMode::kRedact), nullptr);
      on.push_back(c.run(b, n) / static_cast<double>(n) * 1e6);
    }
    double mo = Median(off), mn = Median(on);
    std::printf("| %s | %.2f | %.2f | %.2f | %.0f |\n", c.what, mo, mn, mn / mo, c.bytes / mn);
  }
  // The round trip issue 17 times: a call with its record written (--audit-log).
  std::vector<double> audited;
  for (int r = 0; r < reps; ++r) {
    AuditedRelay a(SecretMode::kRedact);
    audited.push_back(Call45(*a.relay, 20000) / 20000.0 * 1e6);
  }
  std::printf("| 45-byte tools/call + its answer, --audit-log (one record written per call) | — | %.2f | — | — |\n",
              Median(audited));
  std::printf("\npeak RSS of this process: %.1f MiB (%.1f MiB before the cases)\n", PeakRssMiB(),
              rss_before);
  return 0;
}

// VmRSS or VmHWM of this process, in MiB.
double StatusMiB(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char row[256];
  double kib = -1;
  std::size_t n = std::strlen(field);
  while (std::fgets(row, sizeof row, f) != nullptr) {
    if (std::strncmp(row, field, n) == 0) kib = std::strtod(row + n + 1, nullptr);
  }
  std::fclose(f);
  return kib / 1024.0;
}

// Peak RSS growth while the relay judges one 24 MiB line (both directions in
// turn: in as a request's argument, out as its result), over the RSS before.
int Rss() {
  std::printf("| one 24 MiB line through McpRelay | scan off MiB | scan on (redact) MiB |\n| --- | ---: | ---: |\n");
  std::string big(24 << 20, 'a');
  PaddedLine in(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","arguments":{"data":")" + big +
                "\"}}}");
  PaddedLine out(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":")" + big + "\"}]}}");
  big = std::string();
  double grew[2];
  for (int i = 0; i < 2; ++i) {
    McpRelay relay(Config(i == 0 ? SecretMode::kOff : SecretMode::kRedact), nullptr);
    // Writing 5 to clear_refs resets the peak (VmHWM) to the current RSS (proc(5)).
    FILE* f = std::fopen("/proc/self/clear_refs", "w");
    if (f == nullptr || std::fputs("5", f) < 0 || std::fclose(f) != 0) return 1;
    double before = StatusMiB("VmRSS:");
    relay.FromClient(in.line());
    relay.FromServer(out.line());
    grew[i] = StatusMiB("VmHWM:") - before;
  }
  std::printf("| peak RSS above the RSS before (the lines were allocated before) | %.1f | %.1f |\n", grew[0], grew[1]);
  return 0;
}

// Which path the secret scan takes for tools/call results made of FILE's
// text in 64 KiB pieces (as secret_bench builds them): the fast path, or why not.
int Paths(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::map<std::string, int> why;
  std::chrono::duration<double> busy{};
  std::size_t lines = 0;
  for (std::size_t at = 0; at < text.size(); at += 64 * 1024, ++lines) {
    nlohmann::json m{{"jsonrpc", "2.0"}, {"id", 1},
                     {"result", {{"content", {{{"type", "text"}, {"text", text.substr(at, 64 * 1024)}}}}}}};
    std::string line = m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto t = Clock::now();
    RawScanPlan plan = PlanRawScan(line);
    busy += Clock::now() - t;
    ++why[plan.usable ? "fast path" : plan.why];
  }
  for (const auto& [w, n] : why) std::printf("%6d  %s\n", n, w.c_str());
  std::printf("PlanRawScan: %.2f µs per line\n", busy.count() * 1e6 / static_cast<double>(lines));
  return 0;
}

int One(const char* name, std::size_t n, const char* mode) {
  for (const Case& c : kCases) {
    if (std::strcmp(c.name, name) != 0) continue;
    bool audit = std::strcmp(mode, "audit") == 0;
    SecretMode secrets = std::strcmp(mode, "off") == 0 ? SecretMode::kOff : SecretMode::kRedact;
    std::optional<AuditedRelay> audited;
    std::optional<McpRelay> plain;
    if (audit) audited.emplace(secrets); else plain.emplace(Config(secrets), nullptr);
    McpRelay& relay = audit ? *audited->relay : *plain;
    double s = c.run(relay, n);
    std::printf("%s %s: %.2f µs per round, peak RSS %.1f MiB\n", name, mode, s / static_cast<double>(n) * 1e6,
                PeakRssMiB());
    return 0;
  }
  std::fprintf(stderr, "relay_bench: no case %s\n", name);
  return 2;
}

// Whether the two directions overlap: bench/relay.sh's throughput shape
// (the client's 1 KiB lines, echoed by the server) fed from memory, both
// directions in turn on one thread, then each on its own thread at once.
// The wall clock, not thread CPU: waiting for the other direction is the
// figure. Only the ratio of the two columns, taken in the same run, holds on
// a loaded machine.
int Duplex(std::size_t n, const char* mode, int reps) {
  std::string head = R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":")";
  PaddedLine l(head + Filler(1024 - head.size() - 4) + "\"}}");
  SecretMode secrets = std::strcmp(mode, "off") == 0 ? SecretMode::kOff : SecretMode::kRedact;
  using Wall = std::chrono::steady_clock;
  std::vector<double> serial, duplex;
  for (int r = 0; r < reps; ++r) {
    McpRelay one(Config(secrets), nullptr);
    auto t = Wall::now();
    for (std::size_t i = 0; i < n; ++i) {
      one.FromClient(l.line());
      one.FromServer(l.line());
    }
    serial.push_back(std::chrono::duration<double>(Wall::now() - t).count() / static_cast<double>(n) * 1e6);
    McpRelay two(Config(secrets), nullptr);
    two.FromClient(l.line());  // the rules compiled before the clock starts, as in the serial run's first line
    t = Wall::now();
    std::thread client([&] {
      for (std::size_t i = 0; i < n; ++i) two.FromClient(l.line());
    });
    for (std::size_t i = 0; i < n; ++i) two.FromServer(l.line());
    client.join();
    duplex.push_back(std::chrono::duration<double>(Wall::now() - t).count() / static_cast<double>(n) * 1e6);
  }
  double s = Median(serial), d = Median(duplex);
  std::printf("| both directions through one McpRelay, wall clock | in turn, one thread µs per pair | at once, two threads "
              "µs per pair | speed-up |\n| --- | ---: | ---: | ---: |\n");
  std::printf("| 1 KiB notification each way, scan %s (median of %d, %zu each way) | %.2f | %.2f | %.2f |\n", mode,
              reps, n, s, d, s / d);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "cpu") == 0) return Cpu(argc >= 3 ? std::max(1, std::atoi(argv[2])) : 5);
  if (argc == 2 && std::strcmp(argv[1], "rss") == 0) return Rss();
  if (argc == 3 && std::strcmp(argv[1], "paths") == 0) return Paths(argv[2]);
  if (argc == 5 && std::strcmp(argv[1], "one") == 0) return One(argv[2], std::strtoul(argv[3], nullptr, 10), argv[4]);
  if ((argc == 4 || argc == 5) && std::strcmp(argv[1], "duplex") == 0) {
    return Duplex(std::strtoul(argv[2], nullptr, 10), argv[3], argc == 5 ? std::max(1, std::atoi(argv[4])) : 5);
  }
  std::fprintf(stderr, "usage: relay_bench cpu [REPS] | rss | paths FILE | one CASE N off|redact|audit | duplex N off|redact [REPS]\n");
  return 2;
}
