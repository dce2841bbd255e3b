// The container create body built from a CellSpec: every hardening option is
// there, limits and mounts are lowered faithfully, secrets never reach Env.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cell/docker/create_body.h"
#include "cell/spec_builder.h"

namespace mcpcell::docker {
namespace {

CellSpec SampleSpec() {
  CellSpec s;
  s.argv = {"node", "/srv/app/server.js"};
  s.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/mcp"}};
  s.workdir = "/home/mcp";
  s.mounts = SystemMounts(false);
  s.mounts.push_back({MountSpec::Kind::kTmpfs, "", "/tmp", true, false, 128ULL << 20, "tmp"});
  s.mounts.push_back({MountSpec::Kind::kTmpfs, "", "/home/mcp", true, false, 64ULL << 20, "home"});
  s.mounts.push_back({MountSpec::Kind::kBind, "/srv/app", "/srv/app", false, false, 0, "--read"});
  s.mounts.push_back({MountSpec::Kind::kBind, "/srv/data", "/data", true, false, 0, "--write"});
  s.mounts.push_back({MountSpec::Kind::kTmpfs, "", "/srv/app/.ssh", false, false, 4096, "masked"});
  s.limits.memory_bytes = {512ULL << 20, true};
  s.limits.pids = {256, false};
  s.limits.cpus = {1.5, true};
  s.limits.nofile = 4096;
  return s;
}

ContainerOptions SampleOptions() {
  ContainerOptions o;
  o.image = "mcpcell-base:1";
  o.cell_id = "abc123";
  o.supervisor_pid = 4242;
  o.supervisor_start = "987654";
  o.supervisor_pidns = "pid:[4026531836]";
  // Pretend /lib32 and /libx32 are missing on this host.
  o.exists = [](const std::string& p) { return p != "/lib32" && p != "/libx32"; };
  return o;
}

nlohmann::json Build(const CellSpec& s, const ContainerOptions& o) {
  auto b = BuildCreateBody(s, o);
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().Message());
  return b.ok() ? *b : nlohmann::json();
}

const nlohmann::json* FindMount(const nlohmann::json& body, const std::string& target) {
  for (const auto& m : body["HostConfig"]["Mounts"]) {
    if (m["Target"] == target) return &m;
  }
  return nullptr;
}

TEST(DockerCreateBody, HardeningIsAlwaysOn) {
  auto b = Build(SampleSpec(), SampleOptions());
  const auto& h = b["HostConfig"];
  EXPECT_EQ(h["ReadonlyRootfs"], true);
  EXPECT_EQ(h["CapDrop"], nlohmann::json::array({"ALL"}));
  EXPECT_FALSE(h.contains("CapAdd"));
  ASSERT_EQ(h["SecurityOpt"].size(), 2U);
  EXPECT_EQ(h["SecurityOpt"][0], "no-new-privileges:true");
  std::string seccomp = h["SecurityOpt"][1];
  ASSERT_EQ(seccomp.rfind("seccomp=", 0), 0U);
  auto profile = nlohmann::json::parse(seccomp.substr(8));
  EXPECT_EQ(profile["defaultAction"], "SCMP_ACT_ALLOW");
  bool ptrace = false, io_uring = false;
  for (const auto& r : profile["syscalls"]) {
    ptrace = ptrace || (r["names"][0] == "ptrace" && r["action"] == "SCMP_ACT_ERRNO" && r["args"].empty());
    io_uring = io_uring || r["names"][0] == "io_uring_setup";
  }
  EXPECT_TRUE(ptrace) << "docker's default profile allows ptrace; ours must not";
  EXPECT_TRUE(io_uring);
  EXPECT_EQ(h["Privileged"], false);
  EXPECT_EQ(h["Init"], true);
  EXPECT_EQ(h["IpcMode"], "private");
  EXPECT_EQ(h["LogConfig"]["Type"], "none");
  EXPECT_EQ(b["User"], "1000:1000");
  EXPECT_EQ(b["Tty"], false);
  EXPECT_EQ(b["OpenStdin"], true);
  EXPECT_EQ(b["StdinOnce"], true);
  EXPECT_FALSE(h.contains("Runtime"));
}

TEST(DockerCreateBody, UserComesFromTheSpec) {
  auto s = SampleSpec();
  s.uid = 2000;
  s.gid = 3000;
  auto b = Build(s, SampleOptions());
  EXPECT_EQ(b["User"], "2000:3000");
  EXPECT_NE(b["HostConfig"]["Tmpfs"]["/home/mcp"].get<std::string>().find("uid=2000,gid=3000"), std::string::npos);
}

TEST(DockerCreateBody, NetworkNoneUnlessOpen) {
  auto s = SampleSpec();
  auto b = Build(s, SampleOptions());
  EXPECT_EQ(b["HostConfig"]["NetworkMode"], "none");
  EXPECT_EQ(b["NetworkDisabled"], true);
  s.network.mode = NetworkSpec::Mode::kOpen;
  b = Build(s, SampleOptions());
  EXPECT_EQ(b["HostConfig"]["NetworkMode"], "bridge");
  EXPECT_EQ(b["NetworkDisabled"], false);
}

// Profile none with the DNS report directory (dns_report.h): still no
// network of the engine's; only the relay, resolv.conf and a sysctl of the
// container's own namespace are added.
TEST(DockerCreateBody, NetworkNoneWithDnsReportStaysNone) {
  auto s = SampleSpec();
  s.network.mode = NetworkSpec::Mode::kNone;
  auto o = SampleOptions();
  o.dns_report_host_dir = "/dev/shm/mcpcell-dns-1-abc/d";
  auto b = Build(s, o);
  const auto& h = b["HostConfig"];
  EXPECT_EQ(h["NetworkMode"], "none");
  EXPECT_EQ(b["NetworkDisabled"], true);
  EXPECT_EQ(h["Sysctls"], (nlohmann::json{{"net.ipv4.ip_unprivileged_port_start", "53"}}));
  const auto* dir = FindMount(b, "/run/mcpcell-dns");
  ASSERT_NE(dir, nullptr);
  EXPECT_EQ((*dir)["ReadOnly"], true);
  EXPECT_EQ((*dir)["Source"], "/dev/shm/mcpcell-dns-1-abc/d");
  const auto* resolv = FindMount(b, "/etc/resolv.conf");
  ASSERT_NE(resolv, nullptr);
  EXPECT_EQ((*resolv)["ReadOnly"], true);
  EXPECT_EQ((*resolv)["Source"], "/dev/shm/mcpcell-dns-1-abc/d/resolv.conf");
  EXPECT_EQ(b["Cmd"], nlohmann::json::array({"/run/mcpcell-dns/relay", "hold", "--", "node", "/srv/app/server.js"}));
}

TEST(DockerCreateBody, DnsReportOnlyForNetworkNone) {
  auto s = SampleSpec();
  s.network.mode = NetworkSpec::Mode::kOpen;
  auto o = SampleOptions();
  o.dns_report_host_dir = "/dev/shm/mcpcell-dns-1-abc/d";
  auto b = Build(s, o);
  EXPECT_FALSE(b["HostConfig"].contains("Sysctls"));
  EXPECT_EQ(FindMount(b, "/run/mcpcell-dns"), nullptr);
  EXPECT_EQ(b["Cmd"], nlohmann::json::array({"node", "/srv/app/server.js"}));
}

TEST(DockerCreateBody, AllowListIsRefusedNotOpened) {
  auto s = SampleSpec();
  s.network.mode = NetworkSpec::Mode::kAllowList;
  s.network.allow_hosts = {"example.com"};
  auto b = BuildCreateBody(s, SampleOptions());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("allow-list"), std::string::npos);
}

TEST(DockerCreateBody, Limits) {
  auto b = Build(SampleSpec(), SampleOptions());
  const auto& h = b["HostConfig"];
  EXPECT_EQ(h["Memory"], 512LL << 20);
  EXPECT_EQ(h["MemorySwap"], 512LL << 20);
  EXPECT_EQ(h["PidsLimit"], 256);
  EXPECT_EQ(h["NanoCpus"], 1500000000LL);
  bool nofile = false, core = false;
  for (const auto& u : h["Ulimits"]) {
    if (u["Name"] == "nofile") nofile = u["Soft"] == 4096 && u["Hard"] == 4096;
    if (u["Name"] == "core") core = u["Soft"] == 0 && u["Hard"] == 0;
  }
  EXPECT_TRUE(nofile);
  EXPECT_TRUE(core);
}

TEST(DockerCreateBody, NoCpuLimitWhenUnset) {
  auto s = SampleSpec();
  s.limits.cpus = {};
  auto b = Build(s, SampleOptions());
  EXPECT_FALSE(b["HostConfig"].contains("NanoCpus"));
}

TEST(DockerCreateBody, TmpIsNoexecAndSizeCapped) {
  auto b = Build(SampleSpec(), SampleOptions());
  std::string tmp = b["HostConfig"]["Tmpfs"]["/tmp"];
  EXPECT_NE(tmp.find("noexec"), std::string::npos) << tmp;
  EXPECT_NE(tmp.find("nosuid"), std::string::npos) << tmp;
  EXPECT_NE(tmp.find("size=134217728"), std::string::npos) << tmp;
  EXPECT_NE(tmp.find("mode=1777"), std::string::npos) << tmp;
  std::string mask = b["HostConfig"]["Tmpfs"]["/srv/app/.ssh"];
  EXPECT_EQ(mask.rfind("ro,", 0), 0U) << mask;
}

TEST(DockerCreateBody, BindsAreReadOnlyUnlessWritable) {
  auto b = Build(SampleSpec(), SampleOptions());
  const auto* app = FindMount(b, "/srv/app");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ((*app)["ReadOnly"], true);
  EXPECT_EQ((*app)["Type"], "bind");
  const auto* data = FindMount(b, "/data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ((*data)["ReadOnly"], false);
  EXPECT_EQ((*data)["Source"], "/srv/data");
  const auto* usr = FindMount(b, "/usr");
  ASSERT_NE(usr, nullptr);
  EXPECT_EQ((*usr)["ReadOnly"], true);
  for (const auto& m : b["HostConfig"]["Mounts"]) {
    if (m["Target"] != "/data") {
      EXPECT_EQ(m["ReadOnly"], true) << m.dump();
    }
  }
}

TEST(DockerCreateBody, MissingOptionalMountsAndSbinAreLeftOut) {
  auto b = Build(SampleSpec(), SampleOptions());
  EXPECT_EQ(FindMount(b, "/lib32"), nullptr);
  EXPECT_EQ(FindMount(b, "/libx32"), nullptr);
  EXPECT_NE(FindMount(b, "/lib"), nullptr);
  // The engine's init lives at /sbin/docker-init.
  EXPECT_EQ(FindMount(b, "/sbin"), nullptr);
}

TEST(DockerCreateBody, LabelsNameTheCellAndItsSupervisor) {
  auto b = Build(SampleSpec(), SampleOptions());
  EXPECT_EQ(b["Labels"][kLabelCell], "abc123");
  EXPECT_EQ(b["Labels"][kLabelSupervisor], "4242");
  EXPECT_EQ(b["Labels"][kLabelSupervisorStart], "987654");
  EXPECT_EQ(b["Labels"][kLabelSupervisorPidNs], "pid:[4026531836]");
}

TEST(DockerCreateBody, ArgvEnvWorkdir) {
  auto b = Build(SampleSpec(), SampleOptions());
  EXPECT_EQ(b["Cmd"], nlohmann::json::array({"node", "/srv/app/server.js"}));
  EXPECT_EQ(b["Env"], nlohmann::json::array({"HOME=/home/mcp", "PATH=/usr/bin:/bin"}));
  EXPECT_EQ(b["WorkingDir"], "/home/mcp");
  EXPECT_EQ(b["Image"], "mcpcell-base:1");
}

TEST(DockerCreateBody, SecretsAreABindNeverEnv) {
  auto s = SampleSpec();
  s.secrets.push_back({"token", "/etc/host-token", std::nullopt});
  auto o = SampleOptions();
  o.secrets_host_dir = "/dev/shm/mcpcell-secrets-1-x/s";
  auto b = Build(s, o);
  const auto* sec = FindMount(b, "/run/secrets");
  ASSERT_NE(sec, nullptr);
  EXPECT_EQ((*sec)["Source"], "/dev/shm/mcpcell-secrets-1-x/s");
  EXPECT_EQ((*sec)["ReadOnly"], true);
  EXPECT_EQ(b.dump().find("host-token"), std::string::npos) << "the secret's host path leaked into the body";
}

TEST(DockerCreateBody, SecretAsEnvIsRefused) {
  auto s = SampleSpec();
  s.secrets.push_back({"token", "/etc/host-token", std::string("API_TOKEN")});
  auto b = BuildCreateBody(s, SampleOptions());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("docker inspect"), std::string::npos);
}

TEST(DockerCreateBody, SeccompOffLeavesTheEngineDefault) {
  auto s = SampleSpec();
  s.seccomp = false;
  auto b = Build(s, SampleOptions());
  EXPECT_EQ(b["HostConfig"]["SecurityOpt"], nlohmann::json::array({"no-new-privileges:true"}));
}

TEST(DockerCreateBody, MaskedArgumentChecksPutTheMaskInValue) {
  auto s = SampleSpec();
  auto b = Build(s, SampleOptions());
  std::string seccomp = b["HostConfig"]["SecurityOpt"][1];
  auto profile = nlohmann::json::parse(seccomp.substr(8));
  bool seen = false;
  for (const auto& r : profile["syscalls"]) {
    for (const auto& a : r["args"]) {
      if (a["op"] != "SCMP_CMP_MASKED_EQ") continue;
      seen = true;
      // runc: MakeCondition(index, MaskedEqual, value=mask, valueTwo=datum); the datum fits the mask.
      EXPECT_EQ(a["valueTwo"].get<std::uint64_t>() & ~a["value"].get<std::uint64_t>(), 0U) << r.dump();
    }
  }
  EXPECT_TRUE(seen);
}

TEST(DockerCreateBody, GvisorRefusesAPidsLimitItsSandboxCannotStartWith) {
  auto s = SampleSpec();
  s.limits.pids = {64, true};
  auto o = SampleOptions();
  o.runtime = "runsc";
  auto b = BuildCreateBody(s, o);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().Message().find("at least 256"), std::string::npos);
  o.runtime = "";
  EXPECT_TRUE(BuildCreateBody(s, o).ok());
}

bool ProfileDenies(const nlohmann::json& body, const std::string& syscall) {
  std::string opt = body["HostConfig"]["SecurityOpt"][1];
  auto profile = nlohmann::json::parse(opt.substr(8));
  for (const auto& r : profile["syscalls"]) {
    if (r["names"][0] == syscall) return true;
  }
  return false;
}

TEST(DockerCreateBody, Clone3IsLeftToGvisorsOwnKernel) {
  auto o = SampleOptions();
  EXPECT_TRUE(ProfileDenies(Build(SampleSpec(), o), "clone3"));
  o.runtime = "runsc";
  auto b = Build(SampleSpec(), o);
  // runsc answers EPERM instead of errnoRet ENOSYS, and glibc then never falls back to clone.
  EXPECT_FALSE(ProfileDenies(b, "clone3"));
  EXPECT_TRUE(ProfileDenies(b, "ptrace"));
}

TEST(DockerCreateBody, GvisorSetsTheRuntime) {
  auto o = SampleOptions();
  o.runtime = "runsc";
  auto b = Build(SampleSpec(), o);
  EXPECT_EQ(b["HostConfig"]["Runtime"], "runsc");
}

// The engine binds by path: each non-system source is checked just before
// the body is built (OpenCheckedBindSource in the real cell), and a refusal
// stops the launch instead of reaching the engine.
TEST(DockerCreateBody, EveryNonSystemBindSourceIsCheckedAndARefusalStops) {
  std::vector<std::string> checked;
  ContainerOptions o = SampleOptions();
  o.check_source = [&checked](const MountSpec& m) -> Status {
    checked.push_back(m.source);
    if (m.source == "/srv/data") return MakeError("refusing mount source", m.source, "it changed");
    return {};
  };
  auto b = BuildCreateBody(SampleSpec(), o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().path, "/srv/data");
  EXPECT_EQ(checked, (std::vector<std::string>{"/srv/app", "/srv/data"}));
}

// adv23: Podman re-parses each mount as "type=bind,source=S,destination=T"
// (split on ',') and each tmpfs as "TARGET:OPTIONS": a path carrying a
// separator would have the engine mount another path than the one checked.
TEST(DockerCreateBody, PodmanRefusesMountPathsItWouldReparse) {
  for (const std::string bad : {"/srv/in,src=/etc", "/srv/a:b", "/srv/a\"b", "/srv/a'b", "/srv/a\nb"}) {
    CellSpec s = SampleSpec();
    s.mounts.push_back({MountSpec::Kind::kBind, bad, bad, false, false, 0, "--read"});
    ContainerOptions o = SampleOptions();
    o.podman = true;
    auto b = BuildCreateBody(s, o);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error().path, bad);
    EXPECT_NE(b.error().Message().find("Podman"), std::string::npos) << b.error().Message();
    // Docker takes Mounts as JSON values: the same grant is bound as written.
    auto d = Build(s, SampleOptions());
    ASSERT_NE(FindMount(d, bad), nullptr) << bad;
    EXPECT_EQ((*FindMount(d, bad))["Source"], bad);
  }
  CellSpec s = SampleSpec();
  s.mounts.push_back({MountSpec::Kind::kTmpfs, "", "/srv/app/x,y", false, false, 4096, "masked"});
  ContainerOptions o = SampleOptions();
  o.podman = true;
  auto b = BuildCreateBody(s, o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().path, "/srv/app/x,y");
  EXPECT_TRUE(BuildCreateBody(SampleSpec(), o).ok()) << "an ordinary spec still builds for Podman";
}

// adv23: Podman's tmpfs default is tmpcopyup, which fills a mask with what
// it masks. Docker would hand the unknown option to the kernel (refused).
TEST(DockerCreateBody, PodmanTmpfsNeverCopiesWhatItCovers) {
  ContainerOptions o = SampleOptions();
  o.podman = true;
  auto b = Build(SampleSpec(), o);
  ASSERT_FALSE(b["HostConfig"]["Tmpfs"].empty());
  for (const auto& [target, options] : b["HostConfig"]["Tmpfs"].items()) {
    EXPECT_NE(options.get<std::string>().find(",notmpcopyup"), std::string::npos) << target << ": " << options;
  }
  auto d = Build(SampleSpec(), SampleOptions());
  for (const auto& [target, options] : d["HostConfig"]["Tmpfs"].items()) {
    EXPECT_EQ(options.get<std::string>().find("tmpcopyup"), std::string::npos) << target << ": " << options;
  }
}

// adv23: nothing the cell may write can be run, on every engine: each tmpfs
// is noexec (the home and masks too), and Podman's own writable /var/tmp and
// /run are replaced by mcpcell's.
TEST(DockerCreateBody, EveryTmpfsIsNoexecAndPodmansOwnAreReplaced) {
  for (bool podman : {false, true}) {
    ContainerOptions o = SampleOptions();
    o.podman = podman;
    auto b = Build(SampleSpec(), o);
    const auto& tmpfs = b["HostConfig"]["Tmpfs"];
    for (const auto& [target, options] : tmpfs.items()) {
      EXPECT_NE(options.get<std::string>().find(",noexec"), std::string::npos) << target << ": " << options;
    }
    EXPECT_EQ(tmpfs.contains("/var/tmp"), podman);
    EXPECT_EQ(tmpfs.contains("/run"), podman);
  }
  ContainerOptions o = SampleOptions();
  o.podman = true;
  auto b = Build(SampleSpec(), o);
  std::string run = b["HostConfig"]["Tmpfs"]["/run"];
  EXPECT_NE(run.find("mode=0755"), std::string::npos) << "root's: the cell cannot write /run: " << run;
  // A spec mount at one of those places stays the spec's.
  CellSpec s = SampleSpec();
  s.mounts.push_back({MountSpec::Kind::kBind, "/srv/vt", "/var/tmp", true, false, 0, "--write"});
  auto w = Build(s, o);
  EXPECT_FALSE(w["HostConfig"]["Tmpfs"].contains("/var/tmp"));
  EXPECT_NE(FindMount(w, "/var/tmp"), nullptr);
}

// adv23: the host's sysfs (kernel BTF, CPU mitigations, modules) is covered
// by an empty read-only tmpfs under runc; gVisor's sysfs is its own.
TEST(DockerCreateBody, HostSysfsIsCoveredExceptUnderGvisor) {
  for (bool podman : {false, true}) {
    ContainerOptions o = SampleOptions();
    o.podman = podman;
    auto b = Build(SampleSpec(), o);
    std::string sys = b["HostConfig"]["Tmpfs"]["/sys"];
    EXPECT_EQ(sys.rfind("ro,", 0), 0U) << sys;
  }
  ContainerOptions o = SampleOptions();
  o.runtime = "runsc";
  auto b = Build(SampleSpec(), o);
  EXPECT_FALSE(b["HostConfig"]["Tmpfs"].contains("/sys"));
}

// adv23: Docker < 25 makes only the top of a recursive bind read-only, so a
// read-only bind is not recursive there; a writable one stays recursive.
// Podman's compat API has no such field (and binds non-recursively).
TEST(DockerCreateBody, ReadOnlyBindsAreNotRecursiveOnDocker) {
  auto b = Build(SampleSpec(), SampleOptions());
  for (const auto& m : b["HostConfig"]["Mounts"]) {
    EXPECT_EQ(m["BindOptions"].value("NonRecursive", false), m["ReadOnly"].get<bool>()) << m.dump();
    EXPECT_EQ(m["BindOptions"]["Propagation"], "rprivate") << m.dump();
  }
  ContainerOptions o = SampleOptions();
  o.podman = true;
  auto p = Build(SampleSpec(), o);
  for (const auto& m : p["HostConfig"]["Mounts"]) EXPECT_FALSE(m["BindOptions"].contains("NonRecursive")) << m.dump();
  // gVisor makes the whole tree read-only itself and shows the submount.
  ContainerOptions g = SampleOptions();
  g.runtime = "runsc";
  auto r = Build(SampleSpec(), g);
  for (const auto& m : r["HostConfig"]["Mounts"]) EXPECT_FALSE(m["BindOptions"].contains("NonRecursive")) << m.dump();
}

}  // namespace
}  // namespace mcpcell::docker
