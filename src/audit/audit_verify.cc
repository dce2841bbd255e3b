#include "audit/audit_verify.h"

#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "audit/audit_log.h"

namespace mcpcell {
namespace {

ChainReport Broken(std::uint64_t line, std::string problem) {
  ChainReport r;
  r.line = line;
  r.problem = std::move(problem);
  return r;
}

bool IsHex64(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

ChainReport VerifyChain(std::istream& in) {
  std::string prev(64, '0');
  std::uint64_t n = 0;
  std::set<std::string> runs;
  std::string line;
  while (std::getline(in, line)) {
    ++n;
    if (in.eof()) return Broken(n, "incomplete last record (no newline): the tail was truncated or a write was cut");
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return Broken(n, "not a JSON record (edited or corrupted?)");
    std::string stated;
    auto own = ChainedRecordHash(line, &stated);
    if (!own || !IsHex64(j.value("prev", nlohmann::json())) || !j.contains("seq") || !j.contains("run")) {
      return Broken(n, "record has no hash chain (hash, prev, seq, run): edited, or written by an mcpcell without chaining");
    }
    if (*own != stated) return Broken(n, "record hash mismatch (edited?)");
    if (j["prev"] != prev) {
      return Broken(n, n == 1 ? "the chain does not start here (head deleted, or the file spliced from another log?)"
                              : "previous-hash mismatch: a record before this line was deleted, inserted or "
                                "reordered, or this one comes from another log");
    }
    if (!j["seq"].is_number_unsigned() || j["seq"].get<std::uint64_t>() != n - 1) {
      return Broken(n, fmt::format("seq {} where {} was expected (record deleted or inserted?)", j["seq"].dump(), n - 1));
    }
    prev = stated;
    if (j["run"].is_string()) runs.insert(j["run"].get<std::string>());
  }
  ChainReport r;
  r.ok = true;
  r.records = n;
  r.runs = runs.size();
  return r;
}

}  // namespace mcpcell
