#include "cell/docker/engine_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <limits>
#include <optional>

// GCC 12 reports -Wnull-dereference inside asio's scheduler after inlining
// (boost/asio/detail/impl/scheduler.ipp); the pointer is never null there.
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

namespace mcpcell::docker {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using Socket = asio::local::stream_protocol::socket;

constexpr const char* kConnectStep = "connect to container engine";

// What a user can do about a socket that does not answer.
std::string ConnectHint(int err) {
  switch (err) {
    case ENOENT: return "no engine listens there: start it (dockerd, or `podman system service`), or set DOCKER_HOST";
    case ECONNREFUSED: return "the socket exists but nothing accepts: the engine is down or restarting";
    case EACCES: return "permission denied: run as root or join the engine's group (docker)";
    default: return "is the engine running?";
  }
}

Result<void> Connect(Socket& sock, const std::string& path) {
  boost::system::error_code ec;
  sock.connect(asio::local::stream_protocol::endpoint(path), ec);
  if (ec) return Error{kConnectStep, path, ec.value(), ConnectHint(ec.value())};
  return {};
}

http::request<http::string_body> MakeRequest(std::string_view method, const std::string& target,
                                             const std::string& body, std::string_view content_type) {
  http::request<http::string_body> req{http::string_to_verb(std::string(method)), std::string(kApiPrefix) + target,
                                       11};
  req.set(http::field::host, "docker");
  req.set(http::field::user_agent, "mcpcell");
  if (!body.empty()) {
    req.set(http::field::content_type, std::string(content_type));
    req.body() = body;
  }
  req.prepare_payload();
  return req;
}

enum class Outcome { kDone, kTimedOut, kInterrupted };

// Runs the queued operations until `done`, for at most `timeout` (forever when
// `no_timeout`). When `interruptible`, a pending supervisor signal (readable
// on a signalfd because it is blocked; not consumed here) ends the wait too.
// A wait that did not finish closes the socket so the operations complete.
Outcome RunBounded(asio::io_context& ioc, Socket& sock, const bool& done, std::chrono::milliseconds timeout,
                   bool no_timeout, bool interruptible) {
  Outcome out = Outcome::kDone;
  boost::system::error_code ignored;
  std::optional<asio::posix::stream_descriptor> sig;
  if (interruptible) {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
    int fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd >= 0) {
      sig.emplace(ioc, fd);
      sig->async_wait(asio::posix::stream_descriptor::wait_read, [&](boost::system::error_code ec) {
        if (ec || done) return;
        out = Outcome::kInterrupted;
        sock.close(ignored);
      });
    }
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done) {
    std::size_t n = no_timeout ? ioc.run_one() : ioc.run_one_until(deadline);
    if (n == 0) break;
  }
  if (!done) {
    if (out == Outcome::kDone) out = Outcome::kTimedOut;
    sock.close(ignored);
  }
  if (sig) sig->close(ignored);
  ioc.restart();
  ioc.run();  // the cancelled handlers complete here
  return out;
}

Result<void> Bounded(Outcome o, const std::string& what, const std::string& path, std::chrono::milliseconds t) {
  if (o == Outcome::kTimedOut) {
    return Error{what, path, ETIMEDOUT, "no reply within " + std::to_string(t.count()) + " ms"};
  }
  if (o == Outcome::kInterrupted) return Error{what, path, EINTR, "interrupted by a signal"};
  return {};
}

Error ExchangeError(const std::string& what, const std::string& path, const boost::system::error_code& ec) {
  // A reset or EOF mid-reply is what a dying/restarting engine looks like.
  return Error{what, path, ec.category() == boost::system::system_category() ? ec.value() : 0,
               ec.message() + " (did the engine stop or restart?)"};
}

// Queues writing `req`, then `read(handler)`: a failure of either lands in
// `op_ec`, and `done` turns true when the exchange ends (RunBounded waits on it).
template <class Request, class ReadOp>
void QueueExchange(Socket& sock, Request& req, boost::system::error_code& op_ec, bool& done, ReadOp read) {
  http::async_write(sock, req, [&op_ec, &done, read](boost::system::error_code ec, std::size_t) {
    if (ec) {
      op_ec = ec;
      done = true;
      return;
    }
    read([&op_ec, &done](boost::system::error_code rec, std::size_t) {
      op_ec = rec;
      done = true;
    });
  });
}

}  // namespace

EngineClient::EngineClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout) {}

Result<HttpReply> EngineClient::Call(std::string_view method, const std::string& target, const std::string& body,
                                     std::string_view content_type, bool no_timeout) const {
  asio::io_context ioc;
  Socket sock(ioc);
  MCPCELL_TRY(Connect(sock, socket_path_));
  auto req = MakeRequest(method, target, body, content_type);
  boost::beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64ULL << 20);  // engine replies are small JSON; image import progress at most
  boost::system::error_code op_ec;
  bool done = false;
  QueueExchange(sock, req, op_ec, done, [&](auto handler) { http::async_read(sock, buf, parser, handler); });
  std::string what = std::string("engine API ") + std::string(method) + " " + target;
  MCPCELL_TRY(Bounded(RunBounded(ioc, sock, done, timeout_, no_timeout, interruptible_), what, socket_path_,
                      timeout_));
  if (op_ec) return ExchangeError(what, socket_path_, op_ec);
  auto res = parser.release();
  return HttpReply{res.result_int(), std::move(res.body())};
}

Result<HttpReply> EngineClient::CallWithin(std::string_view method, const std::string& target,
                                           std::chrono::milliseconds timeout) const {
  EngineClient bounded(socket_path_, timeout);
  bounded.set_interruptible(interruptible_);
  return bounded.Call(method, target);
}

Result<unsigned> EngineClient::Stream(std::string_view method, const std::string& target,
                                      const std::function<void(std::string_view)>& on_data) const {
  asio::io_context ioc;
  Socket sock(ioc);
  MCPCELL_TRY(Connect(sock, socket_path_));
  auto req = MakeRequest(method, target, {}, {});
  boost::beast::flat_buffer buf;
  http::response_parser<http::buffer_body> parser;
  // Bounded by time per read instead (not boost::none: older Beast takes a plain integer).
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  std::string what = std::string("engine API ") + std::string(method) + " " + target;
  boost::system::error_code op_ec;
  bool done = false;
  QueueExchange(sock, req, op_ec, done, [&](auto handler) { http::async_read_header(sock, buf, parser, handler); });
  MCPCELL_TRY(Bounded(RunBounded(ioc, sock, done, timeout_, false, interruptible_), what, socket_path_, timeout_));
  if (op_ec) return ExchangeError(what, socket_path_, op_ec);
  char chunk[16384];
  while (!parser.is_done()) {
    parser.get().body().data = chunk;
    parser.get().body().size = sizeof chunk;
    done = false;
    ioc.restart();  // the previous RunBounded ran the context out of work, which stops it
    http::async_read(sock, buf, parser, [&](boost::system::error_code rec, std::size_t) {
      op_ec = rec;
      done = true;
    });
    MCPCELL_TRY(Bounded(RunBounded(ioc, sock, done, timeout_, false, interruptible_), what, socket_path_, timeout_));
    // need_buffer: the chunk is full, not an error (Beast's buffer_body protocol).
    if (op_ec && op_ec != http::error::need_buffer) return ExchangeError(what, socket_path_, op_ec);
    std::size_t got = sizeof chunk - parser.get().body().size;
    if (got > 0) on_data(std::string_view(chunk, got));
  }
  return parser.get().result_int();
}

Result<HijackedStream> EngineClient::Hijack(const std::string& target) const { return Hijack(target, {}); }

Result<HijackedStream> EngineClient::Hijack(const std::string& target, const std::string& json_body) const {
  asio::io_context ioc;
  Socket sock(ioc);
  MCPCELL_TRY(Connect(sock, socket_path_));
  auto req = MakeRequest("POST", target, json_body, "application/json");
  // The engine switches the connection to a raw stream on this upgrade.
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::upgrade, "tcp");
  boost::beast::flat_buffer buf;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);  // a 101/200 here has no body: everything after the header is the stream
  boost::system::error_code op_ec;
  bool done = false;
  QueueExchange(sock, req, op_ec, done, [&](auto handler) { http::async_read_header(sock, buf, parser, handler); });
  std::string what = "engine API attach " + target;
  MCPCELL_TRY(Bounded(RunBounded(ioc, sock, done, timeout_, false, interruptible_), what, socket_path_, timeout_));
  if (op_ec) return ExchangeError(what, socket_path_, op_ec);
  unsigned status = parser.get().result_int();
  if (status != 101 && status != 200) {
    return MakeError(what, socket_path_, "engine answered HTTP " + std::to_string(status));
  }
  HijackedStream out;
  auto data = buf.data();
  out.leftover.assign(static_cast<const char*>(data.data()), data.size());
  // Take the fd away from asio: the stdio pump drives it with poll(2).
  out.fd = UniqueFd(::fcntl(sock.native_handle(), F_DUPFD_CLOEXEC, 3));
  if (!out.fd) return ErrnoError("dup engine stream socket", socket_path_);
  int fl = ::fcntl(out.fd.get(), F_GETFL);
  // asio made the description non-blocking; the pump expects to choose itself.
  if (fl < 0 || ::fcntl(out.fd.get(), F_SETFL, fl & ~O_NONBLOCK) < 0) {
    return ErrnoError("make engine stream blocking", socket_path_);
  }
  return out;
}

bool IsEngineUnreachable(const Error& e) {
  return e.what == kConnectStep && (e.err == ENOENT || e.err == ECONNREFUSED || e.err == EACCES ||
                                    e.err == ENOTSOCK || e.err == ENOTDIR || e.err == EPERM);
}

std::string EngineMessage(const HttpReply& reply) {
  auto j = nlohmann::json::parse(reply.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  std::string b = reply.body;
  while (!b.empty() && (b.back() == '\n' || b.back() == '\r')) b.pop_back();
  return b.empty() ? "HTTP " + std::to_string(reply.status) : b;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace mcpcell::docker
