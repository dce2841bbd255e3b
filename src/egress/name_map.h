#pragma once
// Synthetic addresses for allowed names. The cell's DNS stub answers an
// allowed name with an address from 198.18.0.0/15 (RFC 2544's benchmarking
// range: never a real destination) that stands for that name; the cell's
// outbound TCP is redirected to the proxy, which reads the original
// destination (SO_ORIGINAL_DST) and maps it back to the name here. So a
// program that ignores proxy variables still connects "by name", and the
// proxy resolves and checks the real address itself.
//
// Thread-safe: the DNS stub allocates while the proxy looks up.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mcpcell {

class NameMap {
 public:
  static constexpr std::uint32_t kBase = 0xC6120000;  ///< 198.18.0.0, host byte order
  static constexpr std::uint32_t kSize = 1u << 17;    ///< /15

  /// The synthetic address (host byte order) for `name`, allocated on first
  /// use and stable afterwards. nullopt once all 131,070 are handed out.
  std::optional<std::uint32_t> AddressFor(std::string_view name);

  /// The name `address` (host byte order) stands for; nullopt if none does.
  std::optional<std::string> NameOf(std::uint32_t address) const;

  /// Whether `address` (host byte order) lies in the synthetic range.
  static bool IsSynthetic(std::uint32_t address) { return (address & ~(kSize - 1)) == kBase; }

  /// "198.18.0.1" for an address in host byte order.
  static std::string Format(std::uint32_t address);

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
  std::vector<std::string> by_offset_;  ///< index = address - kBase - 1
};

}  // namespace mcpcell
