#include "core/cell_spec.h"

#include <nlohmann/json.hpp>

namespace mcpcell {
namespace {

template <typename T>
nlohmann::json LimitJson(const Limit<T>& l) {
  nlohmann::json j;
  j["value"] = l.value ? nlohmann::json(*l.value) : nlohmann::json(nullptr);
  j["requested"] = l.requested;
  return j;
}

}  // namespace

std::string ToString(MountSpec::Kind kind) {
  return kind == MountSpec::Kind::kBind ? "bind" : "tmpfs";
}

std::string ToString(NetworkSpec::Mode mode) {
  switch (mode) {
    case NetworkSpec::Mode::kNone: return "none";
    case NetworkSpec::Mode::kAllowList: return "allow-list";
    case NetworkSpec::Mode::kOpen: return "open";
  }
  return "?";
}

nlohmann::json ToJson(const CellSpec& s) {
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : s.mounts) {
    nlohmann::json j{{"kind", ToString(m.kind)}, {"target", m.target}, {"writable", m.writable},
                     {"why", m.why}};
    if (m.kind == MountSpec::Kind::kBind) j["source"] = m.source;
    if (m.optional) j["optional"] = true;
    if (m.size_bytes != 0) j["size_bytes"] = m.size_bytes;
    mounts.push_back(std::move(j));
  }
  nlohmann::json secrets = nlohmann::json::array();
  for (const auto& sec : s.secrets) {
    nlohmann::json j{{"name", sec.name}, {"host_file", sec.host_file},
                     {"path", "/run/secrets/" + sec.name}};
    if (sec.env_name) j["env"] = *sec.env_name;
    secrets.push_back(std::move(j));
  }
  nlohmann::json limits{{"memory_bytes", LimitJson(s.limits.memory_bytes)},
                        {"pids", LimitJson(s.limits.pids)},
                        {"cpus", LimitJson(s.limits.cpus)},
                        {"tmp_bytes", s.limits.tmp_bytes},
                        {"nofile", s.limits.nofile},
                        {"core_bytes", s.limits.core_bytes}};
  if (s.limits.file_bytes != 0) limits["file_bytes"] = s.limits.file_bytes;
  limits["timeout_ms"] =
      s.limits.timeout ? nlohmann::json(s.limits.timeout->count()) : nlohmann::json(nullptr);
  auto pins = nlohmann::json::array();
  for (const auto& pin : s.network.resolve) {
    pins.push_back({{"host", pin.host}, {"port", pin.port}, {"address", pin.address}});
  }
  auto host_ports = nlohmann::json::array();
  for (const auto& hp : s.network.host_ports) host_ports.push_back({{"host", hp.name}, {"port", hp.port}});
  return nlohmann::json{
      {"backend", s.backend},
      {"relay", {{"on", s.relay.on},
                 {"max_message_bytes", s.relay.max_message},
                 {"call_rate_per_s", s.relay.call_rate},
                 {"call_burst", s.relay.call_burst},
                 {"max_inflight", s.relay.max_inflight},
                 {"call_timeout_ms", s.relay.call_timeout.count()},
                 {"audit_content", s.relay.audit_content},
                 {"tools", {{"allow", s.relay.tools_allow}, {"deny", s.relay.tools_deny}, {"from", s.relay.tools_origin}}},
                 {"prompts", {{"allow", s.relay.prompts_allow}, {"deny", s.relay.prompts_deny}}},
                 {"resources", {{"allow", s.relay.resources_allow}, {"deny", s.relay.resources_deny}}},
                 {"pins", {{"on", s.relay.pins}, {"server", s.relay.pins_server}, {"dir", s.relay.pins_dir},
                           {"poisoning", s.relay.pins_block_poisoning ? "block" : "warn"}}}}},
      {"argv", s.argv},
      {"env", s.env},
      {"workdir", s.workdir},
      {"hostname", s.hostname},
      {"user", {{"uid", s.uid}, {"gid", s.gid}, {"home", s.home}}},
      {"mounts", mounts},
      {"network",
       {{"mode", ToString(s.network.mode)},
        {"allow_all", s.network.allow_all},
        {"allow_hosts", s.network.allow_hosts},
        {"allow_ports", s.network.allow_ports},
        {"resolve", pins},
        {"host_loopback_ports", host_ports}}},
      {"limits", limits},
      {"secrets", secrets},
      {"seccomp", s.seccomp},
      {"landlock", s.landlock},
      {"idmap", s.idmap == CellSpec::Idmap::kOn ? "on" : s.idmap == CellSpec::Idmap::kOff ? "off" : "auto"},
      {"stop_grace_ms", s.stop_grace.count()},
  };
}

}  // namespace mcpcell
