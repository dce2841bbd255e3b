#include "egress/tls_client_hello.h"

#include <cstdint>

namespace mcpcell {
namespace {

constexpr std::uint8_t kChangeCipherSpecRecord = 20;
constexpr std::uint8_t kHandshakeRecord = 22;
constexpr std::uint8_t kHeartbeatRecord = 24;
constexpr std::uint8_t kClientHello = 1;
constexpr std::uint16_t kServerNameExtension = 0;
constexpr std::uint8_t kHostName = 0;

/// A bounds-checked reader over one length-delimited piece.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool Take(std::size_t n, std::string_view* out) {
    if (bytes_.size() < n) return false;
    if (out != nullptr) *out = bytes_.substr(0, n);
    bytes_.remove_prefix(n);
    return true;
  }
  bool Uint(std::size_t width, std::uint32_t* out) {
    std::string_view raw;
    if (!Take(width, &raw)) return false;
    *out = 0;
    for (unsigned char c : raw) *out = (*out << 8) | c;
    return true;
  }
  /// A piece preceded by its length in `width` bytes.
  bool Vector(std::size_t width, std::string_view* out) {
    std::uint32_t n = 0;
    return Uint(width, &n) && Take(n, out);
  }
  bool empty() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

ClientHelloRead Malformed(std::string why) { return {ClientHelloRead::Kind::kMalformed, std::nullopt, std::move(why)}; }

/// The server_name extension's body: one host_name entry, nothing else.
ClientHelloRead ReadServerName(std::string_view body) {
  Reader ext(body);
  std::string_view list;
  if (!ext.Vector(2, &list) || !ext.empty()) return Malformed("its server_name extension's length is wrong");
  Reader names(list);
  std::optional<std::string> name;
  while (!names.empty()) {
    std::uint32_t type = 0;
    std::string_view host;
    if (!names.Uint(1, &type) || !names.Vector(2, &host)) return Malformed("its server_name list is cut short");
    // RFC 6066: at most one name of each type; a second host_name could be
    // read by the front where this reads the first.
    if (type != kHostName || name) return Malformed("its server_name extension names more than one host_name");
    name = std::string(host);
  }
  if (!name) return Malformed("its server_name extension names no host");
  return {ClientHelloRead::Kind::kHello, std::move(name), ""};
}

}  // namespace

ClientHelloRead ReadClientHello(std::string_view bytes) {
  if (bytes.empty()) return {};
  auto first = static_cast<std::uint8_t>(bytes[0]);
  // A record of another TLS type first: OpenSSL skips up to 32 empty
  // change_cipher_spec records before the ClientHello it then reads (adversary
  // pass 2 of 2026-11-28), so whatever starts as a TLS record is TLS here.
  // A TLS record is a type and a version 3.x (OpenSSL checks only the 3 of
  // a first record: 0x03ff passes). Anything else is some other protocol's
  // first bytes (the e2e load test's random tunnels start with 0x16 0x24),
  // which no TLS server reads. An SSLv2-format hello names no server.
  if (first < kChangeCipherSpecRecord || first > kHeartbeatRecord) return {ClientHelloRead::Kind::kNotTls, std::nullopt, ""};
  if (bytes.size() < 2) return {};
  if (static_cast<std::uint8_t>(bytes[1]) != 3) return {ClientHelloRead::Kind::kNotTls, std::nullopt, ""};
  if (first != kHandshakeRecord) return Malformed("its first TLS record is no handshake");
  if (bytes.size() < 5) return {};
  Reader record(bytes);
  std::uint32_t type = 0, version = 0, length = 0;
  record.Uint(1, &type);
  record.Uint(2, &version);
  record.Uint(2, &length);
  if (length == 0 || length > kMaxFirstRecord - 5) return Malformed("its first record's length is out of range");
  std::string_view payload;
  if (!record.Take(length, &payload)) return {};
  Reader hs(payload);
  std::uint32_t msg = 0;
  std::string_view hello;
  if (!hs.Uint(1, &msg) || msg != kClientHello) return Malformed("its first handshake message is no ClientHello");
  if (!hs.Vector(3, &hello)) return Malformed("its ClientHello does not fit in the first record");
  Reader h(hello);
  std::string_view skip;
  std::uint32_t legacy_version = 0;
  if (!h.Uint(2, &legacy_version) || !h.Take(32, nullptr) || !h.Vector(1, &skip) || !h.Vector(2, &skip) ||
      !h.Vector(1, &skip)) {
    return Malformed("its ClientHello's fixed fields are cut short");
  }
  if (h.empty()) return {ClientHelloRead::Kind::kHello, std::nullopt, ""};  // no extensions at all
  std::string_view extensions;
  if (!h.Vector(2, &extensions) || !h.empty()) return Malformed("its extensions' length is wrong");
  Reader ext(extensions);
  std::optional<ClientHelloRead> named;
  while (!ext.empty()) {
    std::uint32_t ext_type = 0;
    std::string_view body;
    if (!ext.Uint(2, &ext_type) || !ext.Vector(2, &body)) return Malformed("an extension is cut short");
    // Encrypted Client Hello (and its drafts, and ESNI): the front routes by
    // the encrypted inner name, the outer one is the client's to choose.
    if (ext_type == 0xfe0d || (ext_type >= 0xfe08 && ext_type <= 0xfe0c) || ext_type == 0xffce) {
      return Malformed("it carries an Encrypted Client Hello, whose server name cannot be read (a Chromium-based "
                       "server: --disable-features=EncryptedClientHello)");
    }
    if (ext_type != kServerNameExtension) continue;
    if (named) return Malformed("it has two server_name extensions");
    named = ReadServerName(body);
    if (named->kind == ClientHelloRead::Kind::kMalformed) return *named;
  }
  return named ? *named : ClientHelloRead{ClientHelloRead::Kind::kHello, std::nullopt, ""};
}

}  // namespace mcpcell
