#include "cell/native/seccomp_key.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <seccomp.h>

#include <cstring>

#include <fmt/format.h>

namespace mcpcell {
namespace {

void AppendRule(std::vector<std::uint64_t>& out, const SyscallRule& rule) {
  out.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(SyscallNumber(rule.syscall))));
  out.push_back(static_cast<std::uint64_t>(rule.errno_value));
  out.push_back(rule.checks.size());
  for (const auto& c : rule.checks) {
    out.insert(out.end(), {c.arg, static_cast<std::uint64_t>(c.op), c.mask, c.value});
  }
}

// The GNU build-id note among one loaded object's PT_NOTE segments.
std::string BuildIdOf(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info.dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const char* name = p + sizeof nh;
      const char* desc = name + ((nh.n_namesz + 3) & ~3U);
      if (desc + nh.n_descsz > end) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (unsigned k = 0; k < nh.n_descsz; ++k) hex += fmt::format("{:02x}", static_cast<unsigned char>(desc[k]));
        return hex;
      }
      p = desc + ((nh.n_descsz + 3) & ~3U);
    }
  }
  return {};
}

struct BuildIdSearch {
  std::uintptr_t address = 0;
  std::string build_id;
  bool found = false;
};

int FindObjectOf(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && search->address >= start && search->address < start + ph.p_memsz) {
      search->build_id = BuildIdOf(*info);
      search->found = true;
      return 1;
    }
  }
  return 0;
}

// The exact libseccomp this process runs: a distribution may patch its code
// without changing the version it reports.
std::string LibseccompBuildId() {
  BuildIdSearch search;
  search.address = reinterpret_cast<std::uintptr_t>(&seccomp_export_bpf);
  ::dl_iterate_phdr(FindObjectOf, &search);
  return search.build_id;
}

}  // namespace

std::vector<SyscallRule> SeccompRules(SeccompVariant variant) {
  auto rules = SeccompDenyRules();
  if (variant == SeccompVariant::kDenyAndPreallocation) {
    for (auto& r : PreallocationRules()) rules.push_back(std::move(r));
  }
  return rules;
}

const char* SeccompVariantName(SeccompVariant variant) {
  return variant == SeccompVariant::kDeny ? "deny" : "deny+preallocation";
}

std::vector<std::uint64_t> SeccompCompileInputs(const std::vector<SyscallRule>& rules) {
  std::vector<std::uint64_t> out;
  out.reserve(rules.size() * 7);
  for (const auto& rule : rules) AppendRule(out, rule);
  return out;
}

SeccompCompileKey SeccompKeyFor(const std::vector<SyscallRule>& rules) {
  SeccompCompileKey key;
  key.arch = seccomp_arch_native();
  if (const scmp_version* v = seccomp_version(); v != nullptr) {
    key.version[0] = v->major;
    key.version[1] = v->minor;
    key.version[2] = v->micro;
  }
  key.library_build_id = LibseccompBuildId();
  key.api_level = static_cast<int>(seccomp_api_get());
  key.inputs = SeccompCompileInputs(rules);
  return key;
}

}  // namespace mcpcell
