#pragma once
// The JSON-RPC envelope of one MCP message, decoded the way the server (or
// client) behind the relay will decode it. The TypeScript SDK takes the last
// of duplicate keys and decodes escapes ("\u0074ools/call" is tools/call),
// so the relay decides only on decoded values and refuses what it cannot
// decide on: duplicate keys anywhere, batches, non-objects, invalid UTF-8,
// nesting deeper than simdjson's 1024 levels, ids that are neither a string
// nor a safe integer, a line whose DOM would outgrow the memory bound. Parsing is simdjson's DOM (validates the whole
// document, ~1-2 GB/s), never a re-serialisation of the payload.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <simdjson.h>

namespace mcpcell {

/// A request id: `json` as it goes back on the wire ("1", "\"a\""), `key`
/// what tells ids apart ("n:1" vs "s:1": 1 and "1" are different requests).
struct RpcId {
  std::string json;
  std::string key;
};

/// JSON-RPC error codes the relay answers with.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
/// Server-defined range: a request refused by mcpcell's rules.
inline constexpr int kRefusedByPolicy = -32001;
inline constexpr int kMessageTooLarge = -32002;
/// A call refused or ended by one of the relay's limits (rate, in flight, timeout).
inline constexpr int kLimitReached = -32003;
/// A call refused (or its answer withheld) because its audit record cannot be written.
inline constexpr int kAuditUnavailable = -32004;

struct Envelope {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kNotification;
  std::optional<RpcId> id;         ///< requests and responses
  std::string method;              ///< decoded; requests and notifications
  simdjson::dom::element params;   ///< valid until the parser's next Parse; null type if absent
  bool has_params = false;
  simdjson::dom::element result;   ///< responses: the result (has_result) or the error
  bool has_result = false;
  bool has_error = false;
  simdjson::dom::element root;     ///< the whole message (the secret scan reads every string)
};

/// Why a message cannot be passed: the code and message of the JSON-RPC error
/// sent back, and the id to send it with ("null" when none can be told).
struct Refusal {
  int code = kInvalidRequest;
  std::string message;
  std::string id_json = "null";
  std::string id_key;  ///< set when the id could be told
};

/// The longest string id: every unanswered id is kept (up to max_pending per
/// direction), so a peer sending requests with 1 MiB ids that are never
/// answered grew the supervisor by 1 MiB each (2000 of them: 2 GB RSS).
inline constexpr std::size_t kMaxIdBytes = 1024;
/// The longest method name, for the same reason: a request's method is kept
/// while it is unanswered (1000 requests with 1 MiB methods: 1 GB RSS).
inline constexpr std::size_t kMaxMethodBytes = 1024;

/// A decoded id (string of up to kMaxIdBytes, or integer within JavaScript's
/// safe range), or nullopt with the reason in `*why`.
std::optional<RpcId> DecodeId(simdjson::dom::element v, std::string* why);

/// How much memory simdjson's DOM of a message may take, as a multiple of the
/// maximum message size (plus kDomSlack): a line whose DomBytesBound is over
/// it is refused as too large (kMessageTooLarge) before it is parsed.
inline constexpr std::size_t kDomPerMaxMessage = 4;
inline constexpr std::size_t kDomSlack = 1024 * 1024;

/// An upper bound on the bytes simdjson's DOM parse of `line` writes (its
/// structural index, tape and decoded strings) and on the key list
/// FindDuplicateKey may sort, counted without allocating: 4 bytes per token
/// in the index, 16 per number or literal and 8 per string, bracket or brace
/// in the tape, a string's raw length and 21 bytes more. A line of text costs
/// about its size; `[0,0,0,…]` costs 12 bytes per byte (each number is two
/// tape words and two index entries for its two bytes), so under the default
/// 64 MiB maximum one line held the supervisor at ~830 MiB. Tokens are found
/// as simdjson's stage 1 finds them (an unescaped quote opens or closes a
/// string wherever it is), so the bound holds for any bytes, JSON or not.
std::size_t DomBytesBound(std::string_view line);

class EnvelopeParser {
 public:
  /// Refuses a message over max_message (the framer does) or whose DOM would
  /// exceed kDomPerMaxMessage * max_message + kDomSlack (DomBytesBound).
  explicit EnvelopeParser(std::size_t max_message);
  /// `line` must be followed by 64 readable bytes (LineFramer guarantees it).
  /// The envelope's elements stay valid until the next Parse.
  std::variant<Envelope, Refusal> Parse(std::string_view line);
  /// Gives back the memory of a message larger than kKeptCapacity (its DOM
  /// is as large as the line: decoded strings, tape, index). The envelope
  /// of the last Parse is invalid afterwards.
  void Shrink();

 private:
  void Reserve(std::size_t size);
  static constexpr std::size_t kKeptCapacity = 1024 * 1024;
  std::optional<Refusal> TooDense(std::string_view line) const;

  std::size_t max_message_;
  std::size_t max_dom_;
  simdjson::dom::parser parser_;
};

/// The id as it goes back on the wire from a raw value's text (a plain
/// integer or an escape-free string), or "null".
std::string IdFromValue(std::string_view value);

/// The id of a line too large to parse, from its kept prefix: the value of a
/// top-level "id" key (written without escapes) that is complete within the
/// prefix; "null" when there is none.
std::string IdFromPrefix(std::string_view prefix);

/// Whether some client or server could read `line` as a JSON-RPC message:
/// its first byte after anything a parser or a trim() might skip is '{' or
/// '['. JSON.parse, Python's json.loads and pydantic skip only space, tab, CR
/// and LF; json.loads(bytes) also skips a UTF-8 BOM, and code that trims
/// first (JavaScript's trim(), Python's str.strip()) skips Unicode white
/// space too. So the skipped set is their union and more: every C0 control
/// and DEL, the BOM, and all Unicode white space (U+0085, U+00A0, U+1680,
/// U+180E, U+2000-U+200B, U+2028, U+2029, U+202F, U+205F, U+3000) in UTF-8,
/// and 0x85/0xA0 as lone bytes (a Latin-1 reader). A line for which this is
/// false cannot be a message to any of them: the relay passes it unjudged.
/// The same holds after every byte a reader may split lines on (a lone CR for
/// Python's universal newlines, VT, FF, NEL, U+2028 … for splitlines()): JSON
/// after any of them makes the line a possible message too. Linear in the line.
bool MayBeMessage(std::string_view line);

/// `message` (a line that parsed as one JSON-RPC message) with the line
/// breaks some reader splits on written so that none splits it: a raw CR
/// (JSON white space there) becomes a space, a raw NEL, U+2028 or U+2029
/// (inside a string there) its \u escape; nullopt when it has none. Python's
/// text stdin ends a line at a lone CR: `{…allowed…,"x":\r{…denied…}\r}` was one
/// message to the relay and three lines to the Python SDK's server
/// (adversary pass, tests/e2e/adv_line_split.test.mjs).
std::optional<std::string> WithoutRawBreaks(std::string_view message);

/// The first duplicate key in `e` or below it (decoded), as a dotted path, or nullopt.
std::optional<std::string> FindDuplicateKey(simdjson::dom::element e);

/// A member of an object; nullopt when `obj` is no object or has no `key`.
std::optional<simdjson::dom::element> Member(simdjson::dom::element obj, std::string_view key);

/// A string member of an object, decoded; nullopt when absent or not a string.
std::optional<std::string_view> StringMember(simdjson::dom::element obj, std::string_view key);

/// A JSON-RPC error response line (no newline).
std::string ErrorResponse(std::string_view id_json, int code, std::string_view message);

/// `s` as a JSON string literal.
std::string JsonQuote(std::string_view s);

}  // namespace mcpcell
