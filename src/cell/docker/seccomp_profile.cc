#include "cell/docker/seccomp_profile.h"

namespace mcpcell::docker {
namespace {

nlohmann::json Arg(const SyscallArgCheck& c) {
  using Op = SyscallArgCheck::Op;
  switch (c.op) {
    case Op::kEq: return {{"index", c.arg}, {"value", c.value}, {"valueTwo", 0}, {"op", "SCMP_CMP_EQ"}};
    case Op::kNe: return {{"index", c.arg}, {"value", c.value}, {"valueTwo", 0}, {"op", "SCMP_CMP_NE"}};
    case Op::kGe: return {{"index", c.arg}, {"value", c.value}, {"valueTwo", 0}, {"op", "SCMP_CMP_GE"}};
    case Op::kMaskedEq:
      return {{"index", c.arg}, {"value", c.mask}, {"valueTwo", c.value}, {"op", "SCMP_CMP_MASKED_EQ"}};
  }
  return {};
}

}  // namespace

nlohmann::json SeccompProfile(const std::vector<SyscallRule>& rules) {
  nlohmann::json syscalls = nlohmann::json::array();
  for (const auto& r : rules) {
    nlohmann::json args = nlohmann::json::array();
    for (const auto& c : r.checks) args.push_back(Arg(c));
    syscalls.push_back({{"names", {r.syscall}},
                        {"action", "SCMP_ACT_ERRNO"},
                        {"errnoRet", r.errno_value},
                        {"args", args},
                        {"comment", r.why}});
  }
#if defined(__x86_64__)
  nlohmann::json arches = {"SCMP_ARCH_X86_64"};
#elif defined(__aarch64__)
  nlohmann::json arches = {"SCMP_ARCH_AARCH64"};
#else
  nlohmann::json arches = nlohmann::json::array();
#endif
  return {{"defaultAction", "SCMP_ACT_ALLOW"}, {"architectures", arches}, {"syscalls", syscalls}};
}

}  // namespace mcpcell::docker
