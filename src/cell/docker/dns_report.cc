#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include "cell/docker/dns_report.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "cell/docker/dns_relay_blob.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/frame_demux.h"
#include "egress/cell_net.h"
#include "egress/dns_stub.h"
#include "egress/egress_audit.h"
#include "egress/host_rules.h"
#include "egress/name_map.h"
#include "util/diag.h"
#include "util/terminal_text.h"
#include "util/write_all.h"

namespace mcpcell::docker {
namespace {

constexpr const char* kParent = "/dev/shm";
constexpr const char* kPrefix = "mcpcell-dns-";
constexpr const char* kRelayName = "relay";
constexpr const char* kResolvConfName = "resolv.conf";
/// What the relay's own stderr may put on ours, at most (the server runs as
/// the same uid and could write there too).
constexpr std::size_t kMaxRelayNotes = 1024;
/// Each engine call of the exec: the run's end waits for one in flight.
constexpr std::chrono::seconds kEngineTimeout{10};

Status WriteFileWithMode(const std::string& path, std::string_view data, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd) return ErrnoError("create", path);
  MCPCELL_TRY(WriteAll(fd.get(), data, "write", path));
  // After the write: the file is never writable by anyone else on the way.
  if (::fchmod(fd.get(), mode) != 0) return ErrnoError("chmod", path);
  return {};
}

}  // namespace

std::string DnsRelayPath() { return std::string(kDnsReportTarget) + "/" + kRelayName; }

std::vector<std::string> DnsRelayCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> out{DnsRelayPath(), "hold", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::size_t RelayFrameReader::PayloadSize() const {
  return (static_cast<std::size_t>(static_cast<unsigned char>(buf_[0])) << 8) |
         static_cast<unsigned char>(buf_[1]);
}

RelayFrame RelayFrameReader::Frame() const {
  RelayFrame f;
  std::memcpy(&f.port, buf_.data() + 2, 2);
  std::memcpy(&f.address, buf_.data() + 4, 4);
  f.payload = std::string_view(buf_).substr(kHeader);
  return f;
}

std::string RelayFrameReader::Encode(const RelayFrame& frame) {
  std::string out(kHeader, '\0');
  std::size_t n = std::min<std::size_t>(frame.payload.size(), 65535);
  out[0] = static_cast<char>(n >> 8);
  out[1] = static_cast<char>(n & 0xff);
  std::memcpy(out.data() + 2, &frame.port, 2);
  std::memcpy(out.data() + 4, &frame.address, 4);
  out.append(frame.payload.substr(0, n));
  return out;
}

namespace {

// The relay's serving half, exec'd in the container; its stdio hijacked.
// nullopt with nothing said when the container has already stopped (a
// server that exits at once is no reason for a note).
std::optional<HijackedStream> ExecRelay(const EngineClient& engine, const std::string& container_id) {
  nlohmann::json create{{"AttachStdin", true}, {"AttachStdout", true}, {"AttachStderr", true},
                        {"Tty", false},        {"Cmd", {DnsRelayPath(), "serve"}}};
  auto made = engine.Call("POST", "/containers/" + container_id + "/exec", create.dump());
  if (!made) {
    Say("note: name lookups in this cell are not reported: " + made.error().Message());
    return std::nullopt;
  }
  if (made->status == 404 || made->status == 409) return std::nullopt;  // gone or not running any more
  auto j = nlohmann::json::parse(made->body, nullptr, false);
  if (made->status != 201 || !j.is_object() || !j.contains("Id") || !j["Id"].is_string()) {
    Say("note: name lookups in this cell are not reported: the engine refused to exec the DNS relay: " +
        EngineMessage(*made));
    return std::nullopt;
  }
  auto stream = engine.Hijack("/exec/" + j["Id"].get<std::string>() + "/start", R"({"Detach":false,"Tty":false})");
  if (!stream) {
    Say("note: name lookups in this cell are not reported: " + stream.error().Message());
    return std::nullopt;
  }
  return std::move(*stream);
}

}  // namespace

// The DNS stub of a cell without network, fed by the relay's stream. The
// exec happens on the thread too: the server's stdio never waits for it.
class DnsAnswerer {
 public:
  DnsAnswerer(std::string engine_socket, std::string container_id, const RunContext& ctx)
      : engine_(std::move(engine_socket), kEngineTimeout),
        container_id_(std::move(container_id)),
        audit_(ctx.audit, ctx.server),
        stub_(io_, rules_, names_, audit_) {
    rules_.no_network = true;
    thread_ = std::thread([this] { Run(); });
  }
  DnsAnswerer(const DnsAnswerer&) = delete;
  DnsAnswerer& operator=(const DnsAnswerer&) = delete;
  ~DnsAnswerer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      // Wakes the thread's read or send; the relay in the container sees EOF and exits.
      if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    auto stream = ExecRelay(engine_, container_id_);
    if (!stream) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stream_ = std::move(*stream);
      fd_ = stream_.fd.get();
    }
    FrameDemux demux([this](int stream_no, std::string_view data) -> Status {
      if (stream_no == 2) return Note(data);
      frames_.Feed(data, [this](const RelayFrame& f) { Answer(f); });
      return {};
    });
    Status fed = demux.Feed(stream_.leftover);
    char buf[16384];
    while (fed) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      fed = demux.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
    }
  }

  void Answer(const RelayFrame& query) {
    std::vector<std::uint8_t> reply;
    try {
      reply = stub_.Answer(reinterpret_cast<const std::uint8_t*>(query.payload.data()), query.payload.size());
    } catch (const std::exception& e) {
      Say(std::string("dns stub: query dropped: ") + e.what());
      return;
    }
    if (reply.empty()) return;
    RelayFrame out = query;
    out.payload = std::string_view(reinterpret_cast<const char*>(reply.data()), reply.size());
    std::string bytes = RelayFrameReader::Encode(out);
    // MSG_NOSIGNAL: a relay gone is EPIPE here, not a SIGPIPE for mcpcell.
    for (std::size_t off = 0; off < bytes.size();) {
      ssize_t w = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;
      off += static_cast<std::size_t>(w);
    }
  }

  // The relay's stderr is writable by the server too (same uid:
  // /proc/<relay>/fd/2), so what it says is shown, not obeyed: escapes
  // made visible (TerminalFilter, across chunks; VisibleOnTerminal for a
  // CR, which would let a line overwrite ours), every line marked as the
  // relay's, so none reads as mcpcell's own (e2e adv2_dns_relay_stderr).
  Status Note(std::string_view data) {
    if (noted_ >= kMaxRelayNotes) return {};
    data = data.substr(0, kMaxRelayNotes - noted_);
    noted_ += data.size();
    while (!data.empty()) {
      std::size_t nl = data.find('\n');
      std::string line = filter_.Filter(data.substr(0, nl));
      data.remove_prefix(nl == std::string_view::npos ? data.size() : nl + 1);
      if (!line.empty()) Say("the DNS relay in the container says: " + VisibleOnTerminal(line));
    }
    return {};
  }

  EngineClient engine_;
  std::string container_id_;
  std::mutex mu_;
  bool stopping_ = false;  ///< guarded by mu_
  int fd_ = -1;            ///< stream_'s fd once the thread has it; guarded by mu_ for the destructor
  HijackedStream stream_;
  EgressRules rules_;
  NameMap names_;
  EgressAudit audit_;
  boost::asio::io_context io_{1};
  DnsStub stub_;
  RelayFrameReader frames_;
  std::size_t noted_ = 0;
  TerminalFilter filter_;
  std::thread thread_;  ///< last: starts once everything it uses exists
};

ContainerDnsReport::ContainerDnsReport() = default;
ContainerDnsReport::ContainerDnsReport(ContainerDnsReport&&) noexcept = default;
ContainerDnsReport& ContainerDnsReport::operator=(ContainerDnsReport&&) noexcept = default;
ContainerDnsReport::~ContainerDnsReport() = default;

Result<ContainerDnsReport> ContainerDnsReport::Prepare() {
  (void)ReapDnsReportDirs();
  // The bind keeps the source mount's flags: from a noexec /dev/shm the
  // relay could not run, and with it the server it wraps.
  struct statvfs fs{};
  if (::statvfs(kParent, &fs) != 0) return ErrnoError("statvfs", kParent);
  if ((fs.f_flag & ST_NOEXEC) != 0) {
    return MakeError("DNS report relay", kParent, "mounted noexec, so the relay could not run from there");
  }
  ContainerDnsReport r;
  auto outer = RunDir::Create(kParent, kPrefix, "DNS report directory");
  if (!outer) return outer.error();
  r.outer_ = std::move(*outer);
  std::string inner = r.outer_.path() + "/d";
  // 0755 in a 0700 parent: the bind shows only this inner directory, to the
  // cell's uid as to gVisor's gofer; it is read-only in the container.
  if (::mkdir(inner.c_str(), 0755) != 0) return ErrnoError("create DNS report directory", inner);
  if (::chmod(inner.c_str(), 0755) != 0) return ErrnoError("chmod DNS report directory", inner);
  MCPCELL_TRY(WriteFileWithMode(inner + "/" + kRelayName, DnsRelayProgram(), 0555));
  MCPCELL_TRY(WriteFileWithMode(inner + "/" + kResolvConfName,
                                std::string("nameserver ") + kCellDnsAddress + "\n", 0444));
  r.inner_ = inner;
  return r;
}

void ContainerDnsReport::Start(const std::string& engine_socket, const std::string& container_id,
                               const RunContext& ctx) {
  answerer_ = std::make_unique<DnsAnswerer>(engine_socket, container_id, ctx);
}

int ReapDnsReportDirs() { return ReapDeadRunDirs(kParent, kPrefix); }

}  // namespace mcpcell::docker
