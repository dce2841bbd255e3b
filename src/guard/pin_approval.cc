#include "guard/pin_approval.h"

#include <algorithm>

#include <fmt/format.h>

#include "audit/sha256.h"
#include "guard/pin_guard.h"

namespace mcpcell {

namespace {

// Lengths first: no name can be chosen to read as two entries.
std::string DigestLine(const std::string& name, const PendingTool& p) {
  return fmt::format("{}:{}\n{}\n{}\n", name.size(), name, p.change, p.sha256);
}

}  // namespace

std::string PendingDigest(const std::string& name, const PendingTool& p) {
  return Sha256Hex(DigestLine(name, p)).substr(0, 32);
}

std::string PendingDigest(const PinFile& f, const std::vector<std::string>& names) {
  std::string text;
  auto add = [&](const std::string& name, const PendingTool& p) { text += DigestLine(name, p); };
  if (names.empty()) {
    for (const auto& [name, p] : f.pending) add(name, p);
  } else {
    std::vector<std::string> sorted(names);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (const auto& name : sorted) {
      if (auto p = f.pending.find(name); p != f.pending.end()) add(name, p->second);
    }
  }
  return Sha256Hex(text).substr(0, 32);
}

Result<Approval> ApprovePending(
    PinStore& store, const std::vector<std::string>& names, const std::string& expect,
    const std::function<void(const std::string& name, const PendingTool& p, const PinFile& f)>& show) {
  Approval out;
  std::string now;
  // On a stale digest the edit changes nothing: the file is written back as
  // it was read, under the same lock.
  Status st = store.Update([&](PinFile* f) {
    now = PendingDigest(*f, names);
    if (!expect.empty() && now != expect) return;
    std::vector<std::string> todo = names;
    if (todo.empty()) {
      for (const auto& [name, p] : f->pending) todo.push_back(name);
    }
    for (const auto& name : todo) {
      auto p = f->pending.find(name);
      if (p == f->pending.end()) {
        out.unknown.push_back(name);
        continue;
      }
      show(name, p->second, *f);
      if (p->second.change == "removed") {
        f->tools.erase(name);
      } else {
        f->tools[name] = {p->second.sha256, p->second.contract, UtcNow(), "approved", p->second.findings, {}};
      }
      f->pending.erase(p);
      out.approved.push_back(name);
    }
  });
  if (!st.ok()) return st.error();
  if (!expect.empty() && now != expect) {
    out.stale = true;
    out.refusal = fmt::format("what is pending for {} changed since you looked (--expect {}, now {}): a run of the server "
                              "recorded another version, or another approval came first; nothing was approved. "
                              "See it with: mcpcell pins diff {}",
                              store.server(), expect, now, ShellQuote(store.server()));
  }
  return out;
}

}  // namespace mcpcell
