#include "egress/name_map.h"

#include <fmt/format.h>

namespace mcpcell {

std::optional<std::uint32_t> NameMap::AddressFor(std::string_view name) {
  std::lock_guard lock(mu_);
  std::string key(name);
  if (auto it = by_name_.find(key); it != by_name_.end()) return it->second;
  // .0 and the last address are skipped: some resolvers treat them as network/broadcast.
  if (by_offset_.size() + 2 >= kSize) return std::nullopt;
  by_offset_.push_back(key);
  auto address = kBase + static_cast<std::uint32_t>(by_offset_.size());
  by_name_.emplace(std::move(key), address);
  return address;
}

std::optional<std::string> NameMap::NameOf(std::uint32_t address) const {
  if (!IsSynthetic(address) || address == kBase) return std::nullopt;
  std::lock_guard lock(mu_);
  std::size_t offset = address - kBase - 1;
  if (offset >= by_offset_.size()) return std::nullopt;
  return by_offset_[offset];
}

std::string NameMap::Format(std::uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

}  // namespace mcpcell
