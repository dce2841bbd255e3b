// libFuzzer target: a request head from a cell to the egress proxy. The head
// is parsed by Boost.Beast exactly as ServeHttp (src/egress/http_proxy.cc)
// sets its parser up; then the parts mcpcell parses itself run on it as the
// proxy runs them: CONNECT's authority-form target (http_connect.cc:
// ParseAuthority with no default port), an absolute-form http:// URI
// (http_forward.cc: ParseHttpTarget), the Host header check, and the
// hop-by-hop header filter (src/egress/http_target.cc).
#include "egress/asio_prelude.h"  // first: pragmas and includes Asio needs on GCC 12

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include <boost/beast/http.hpp>

#include "egress/http_proxy.h"
#include "egress/http_target.h"

namespace http = boost::beast::http;

namespace {
std::string_view Std(boost::beast::string_view s) { return {s.data(), s.size()}; }
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mcpcell::RequestHeadParser parser;
  parser.header_limit(64 * 1024);  // http_proxy.cc's kHeadLimit
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  parser.eager(false);
  boost::system::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_header_done()) return 0;
  const auto& req = parser.get();
  std::string_view target = Std(req.target());
  std::string_view host_header = Std(req[http::field::host]);
  if (req.method() == http::verb::connect) {
    auto where = mcpcell::ParseAuthority(target, 0);
    if (!where) return 0;
    (void)mcpcell::HostHeaderMatches(host_header, *where, where->port);
    (void)mcpcell::FormatHostPort(*where);
    return 0;
  }
  std::string why;
  auto parsed = mcpcell::ParseHttpTarget(target, &why);
  if (!parsed) return 0;
  (void)mcpcell::HostHeaderMatches(host_header, parsed->where, 80);
  (void)mcpcell::FormatHostPort(parsed->where);
  std::string tokens;
  for (const auto& f : req) {
    if (f.name() == http::field::connection) tokens += std::string(Std(f.value())) + ",";
  }
  for (const auto& f : req) (void)mcpcell::IsHopByHop(Std(f.name_string()), tokens);
  return 0;
}
