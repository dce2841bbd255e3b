#include "cell/docker/docker_cell.h"

#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <utility>

#include <nlohmann/json.hpp>

#include "cell/bind_source.h"
#include "cell/cell_ids.h"
#include "cell/native/id_map.h"
#include "cell/docker/base_image.h"
#include "cell/docker/caller_rights.h"
#include "cell/docker/container_net.h"
#include "cell/docker/container_watcher.h"
#include "cell/docker/run_dirs.h"
#include "cell/docker/create_body.h"
#include "cell/docker/dns_report.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/image_config.h"
#include "cell/docker/image_pull.h"
#include "cell/docker/podman_init.h"
#include "cell/docker/reaper.h"
#include "cell/docker/secrets_dir.h"
#include "cell/docker/stdio_fifos.h"
#include "cell/docker/stdio_pump.h"
#include "core/exit_codes.h"
#include "cell/docker/container_lifecycle.h"
#include "cell/native/stdio_relay.h"
#include "util/unique_fd.h"
#include "util/diag.h"
#include "util/write_all.h"

namespace mcpcell::docker {
namespace {

using Clock = std::chrono::steady_clock;

std::string RandomId() {
  unsigned char b[6] = {};
  if (::getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    auto t = static_cast<unsigned long long>(Clock::now().time_since_epoch().count()) ^
             static_cast<unsigned long long>(::getpid());
    for (auto& c : b) c = static_cast<unsigned char>(t >>= 8);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char c : b) {
    id += kHex[c >> 4];
    id += kHex[c & 15];
  }
  return id;
}

// The engine binds by path, after every check mcpcell makes. Run by root,
// refuse too a source other cells could swap: those root starts write as
// per-run uids of one block (cell_ids.h), this one included.
Status CheckContainerBindSource(const MountSpec& m, uid_t cell_uid) {
  MCPCELL_TRY(CheckBindSource(m));
  if (::geteuid() != 0) return {};  // every cell of this user writes as it: see docs/THREAT_MODEL.md
  MCPCELL_TRY(CheckNotSwappableByCells(m.source));
  return CheckNotSwappableBy(m.source, cell_uid);
}

bool PathExists(const std::string& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0;
}

// A host file holding the seccomp profile, for Podman (see ContainerOptions).
class ProfileFile {
 public:
  ProfileFile() = default;
  ProfileFile(const ProfileFile&) = delete;
  ProfileFile& operator=(const ProfileFile&) = delete;
  ~ProfileFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  Status Write(const std::string& text) {
    std::string tmpl = "/dev/shm/mcpcell-seccomp-" + std::to_string(::getpid()) + "-XXXXXX";
    UniqueFd fd(::mkstemp(tmpl.data()));
    if (!fd) return ErrnoError("create seccomp profile file", tmpl);
    path_ = tmpl;
    return WriteAll(fd.get(), text, "write seccomp profile file", path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Podman keeps its own image store: an image a user loaded into docker is
// not there, and the pull error alone does not say why.
Error WithStoreHint(Error e, const DockerCellOptions& opts, const ImageRef& ref) {
  if (opts.engine != Engine::kPodman || e.what != "pull image") return e;
  e.detail += "; podman has its own image store, separate from docker's: if the image is in docker's, copy it "
              "with `docker save " + ref.Reference() + " | podman load`";
  return e;
}

struct PreparedImage {
  std::string id;
  CellSpec spec;
};

// The image in the engine (pulled if need be, pin checked) and the spec completed from it.
Result<PreparedImage> PrepareImage(const EngineClient& engine, const ImageRef& ref, const CellSpec& spec,
                                   bool user_given) {
  auto cfg = EnsureImage(engine, ref, Say);
  if (!cfg) return cfg.error();
  std::vector<std::string> notes;
  auto completed = SpecForImage(spec, *cfg, ImageSpecOptions{user_given}, &notes);
  if (!completed) return completed.error();
  for (const auto& n : notes) Say(n);
  // The image is the whole filesystem: none of the host's system directories
  // (its libraries would shadow the image's own).
  std::erase_if(completed->mounts, [](const MountSpec& m) { return m.origin == MountSpec::Origin::kSystem; });
  return PreparedImage{cfg->id, std::move(*completed)};
}


// A step that failed: the exit code it means and why.
struct Refusal {
  int code;
  Error error;
};
using Step = std::optional<Refusal>;

Step Refuse(int code, Error e) { return Refusal{code, std::move(e)}; }

// One container cell run, as the named steps StartDockerCell takes. Members
// are declared in the order they are made, so they are undone in reverse:
// the container removed first (running_), the claimed host ids only once the
// container and everything handed to that uid are gone; the watcher
// dismissed only once what it cleans up after is gone.
class ContainerCellRun {
 public:
  ContainerCellRun(const CellSpec& spec, const DockerCellOptions& opts, StdioRelay& stdio,
                   const LaunchCallback& on_launch)
      : spec_(spec), opts_(opts), stdio_(stdio), on_launch_(on_launch) {
    result_.backend = opts.backend_name;
    result_.cell_id = RandomId();
  }

  /// The steps up to a launched server; the failure of the first that failed.
  std::optional<CellResult> Start() {
    started_ = Clock::now();
    // Before anything exists in the engine: a Ctrl-C from here on is handled
    // by the pump (or ends setup) instead of killing us with a container left.
    BlockSupervisorSignals();
    for (auto step : {&ContainerCellRun::MakeStopRequest, &ContainerCellRun::ConnectEngine,
                      &ContainerCellRun::ClaimHostIds, &ContainerCellRun::ResolveImage,
                      &ContainerCellRun::PrepareHostFiles, &ContainerCellRun::StartWatcher}) {
      if (Step refused = (this->*step)()) return Failed(std::move(*refused));
    }
    launch_ = Launch();
    ContainerStart started = StartContainer(*engine_, *setup_, *launch_, result_);
    if (!started.running) return std::move(started.failure);
    running_ = std::move(started.running);
    return std::nullopt;
  }

  /// Cell::Wait: the pump and the exit status (container_lifecycle.h).
  CellResult Wait() { return running_->Wait(); }
  /// Cell::Stop: the pump sends the signals.
  void Stop(std::chrono::milliseconds grace) { stop_.Request(grace); }
  /// Cell::identity: the container's id.
  std::string Identity() const { return running_->id(); }

 private:
  Step MakeStopRequest() {
    auto stop = StopRequest::Make();
    if (!stop) return Refuse(kExitSetupFailed, stop.error());
    stop_ = std::move(*stop);
    return {};
  }

  CellResult Failed(Refusal r) {
    result_.exit_code = r.code;
    result_.error = std::move(r.error);
    return result_;
  }

  // Cleanup, kill and wait calls use `engine_`; setup calls use `setup_`,
  // which a signal interrupts (nothing has started yet; what was created is
  // removed). The engine was checked by the Backend (CheckEngine) already.
  Step ConnectEngine() {
    auto sock = EngineSocket(opts_.engine);
    if (!sock) return Refuse(kExitIsolationUnavailable, sock.error());
    socket_ = *sock;
    engine_.emplace(socket_);
    setup_.emplace(socket_);
    setup_->set_interruptible(true);
    if (spec_.network.mode == NetworkSpec::Mode::kAllowList) {
      if (auto ok = CheckContainerEgress(opts_.runtime, opts_.fifo_stdio, HasCapSysAdmin()); !ok) {
        return Refuse(kExitIsolationUnavailable, ok.error());
      }
    }
    ReapLeftovers();
    return {};
  }

  void ReapLeftovers() {
    if (auto reaped = ReapOrphans(*setup_); !reaped) {
      Say("warning: could not reap orphaned cells: " + reaped.error().Message());
    } else if (!reaped->empty()) {
      Say("removed " + std::to_string(reaped->size()) + " container(s) left by a dead mcpcell");
    }
    ReapSecretDirs();
    ReapSeccompFiles();
    ReapStdioDirs();
    ReapDnsReportDirs();
  }

  // The host uid:gid the container runs as, this run's alone (cell_ids.h),
  // unless --uid/--gid chose one.
  Step ClaimHostIds() {
    cell_ = spec_;
    // The engine is root: a caller that is not gets no more than it has (adv23).
    if (auto ok = CheckWithinCallerRights(spec_, ::geteuid(), CallerGroups()); !ok) return Refuse(kExitUsage, ok.error());
    if (opts_.user_given || spec_.ids_given) return {};
    auto c = CellIdClaim::ClaimForThisUser();
    if (!c) return Refuse(kExitSetupFailed, c.error());
    claim_ = std::move(*c);
    cell_.uid = cell_.gid = claim_->id();
    return {};
  }

  // What runs: a docker:// image completes the spec (argv, env, workdir,
  // user); otherwise the spec runs in the empty base image.
  Step ResolveImage() {
    if (!opts_.source_image) {
      if (auto ok = EnsureBaseImage(*setup_); !ok) return Refuse(kExitSetupFailed, ok.error());
      return {};
    }
    auto prepared = PrepareImage(*setup_, *opts_.source_image, cell_, opts_.user_given);
    if (!prepared) return Refuse(kExitSetupFailed, WithStoreHint(prepared.error(), opts_, *opts_.source_image));
    cell_ = std::move(prepared->spec);
    image_ = prepared->id;  // exactly the image that was checked, not a tag that may move
    image_ref_ = opts_.source_image->Reference();
    return {};
  }

  // Secrets, the stdio FIFOs, the egress gate and Podman's seccomp file.
  Step PrepareHostFiles() {
    // runsc's Sentry checks mode bits only, never ACLs (cell_user_access.h).
    auto secrets = SecretsDir::Create(cell_.secrets, cell_.uid, cell_.gid, opts_.runtime != "runsc");
    if (!secrets) return Refuse(kExitSetupFailed, secrets.error());
    secrets_ = std::move(*secrets);
    if (opts_.fifo_stdio && !cell_.argv.empty()) {
      auto f = StdioFifos::Create(cell_.uid, cell_.gid);
      if (!f) return Refuse(kExitSetupFailed, f.error());
      fifos_ = std::move(*f);
    }
    // An allow-list: mediated from outside the container (container_net.h).
    if (AllowList()) {
      auto e = ContainerEgress::Prepare(cell_.uid, cell_.gid);
      if (!e) return Refuse(kExitSetupFailed, e.error());
      egress_ = std::move(*e);
    }
    // No network: lookups still reach mcpcell's DNS stub, to be reported
    // (dns_report.h). Best effort: without it the cell is as it was.
    if (cell_.network.mode == NetworkSpec::Mode::kNone) {
      auto d = ContainerDnsReport::Prepare();
      if (d) dns_report_ = std::move(*d);
      else Say("note: name lookups in this cell are not reported: " + d.error().Message());
    }
    if (opts_.engine == Engine::kPodman && cell_.seccomp) {
      if (auto ok = profile_file_.Write(CellSeccompProfile(opts_.runtime).dump()); !ok) {
        return Refuse(kExitSetupFailed, ok.error());
      }
    }
    return {};
  }

  // Before the create (and after the first body is known to build): a kill
  // -9 from here on leaves nothing running (container_watcher.h).
  Step StartWatcher() {
    auto body = CreateBody(UseFifos());
    if (!body) return Refuse(kExitIsolationUnavailable, body.error());
    first_body_ = std::move(*body);
    auto w = ContainerWatcher::Start(socket_, Name(), claim_ ? claim_->fd() : -1, claim_ ? claim_->path() : std::string());
    if (!w) return Refuse(kExitSetupFailed, w.error());
    watcher_.emplace(std::move(*w));
    return {};
  }

  ContainerLaunch Launch() {
    ContainerLaunch l;
    l.name = Name();
    l.engine = opts_.engine;
    l.socket = socket_;
    l.grace = spec_.stop_grace;
    l.started = started_;
    l.fifo_stdio = UseFifos();
    l.image_may_lack_shell = opts_.source_image.has_value();
    if (spec_.limits.memory_bytes.requested) l.requested_limits.push_back("memory");
    if (spec_.limits.pids.requested) l.requested_limits.push_back("pids");
    if (spec_.limits.cpus.requested) l.requested_limits.push_back("cpus");
    l.body = [this](bool fifo) -> Result<nlohmann::json> {
      if (fifo == UseFifos() && first_body_) return *std::exchange(first_body_, std::nullopt);
      return CreateBody(fifo);
    };
    l.attach_fallback_allowed = [this]() -> Status {
      if (AllowList()) return CheckContainerEgress(opts_.runtime, false, true);
      return {};
    };
    l.before_start = [this] { return RecheckSources(); };
    l.after_start = [this](const std::string& id) -> Status {
      // The server waits at the gate until this returns ok.
      if (AllowList()) return egress_.Start(*setup_, id, cell_.network, opts_.run);
      if (!dns_report_.host_dir().empty()) dns_report_.Start(socket_, id, opts_.run);
      return {};
    };
    l.launched = [this](const std::string& id, bool fifo) { Launched(id, fifo); };
    l.pump = [this](HijackedStream stream, bool fifo, const KillContainer& kill) {
      return Pump(std::move(stream), fifo, kill);
    };
    return l;
  }

  Result<nlohmann::json> CreateBody(bool fifo) {
    ContainerOptions copts{image_,
                           result_.cell_id,
                           static_cast<long>(::getpid()),
                           ProcessStartTime(::getpid()),
                           OwnPidNamespace(),
                           opts_.runtime,
                           secrets_->bind_source(),
                           fifo ? fifos_.bind_source() : std::string(),
                           profile_file_.path(),
                           opts_.engine != Engine::kPodman,
                           PathExists};
    copts.egress_host_dir = egress_.host_dir();
    copts.dns_report_host_dir = dns_report_.host_dir();
    copts.set_entrypoint = opts_.source_image.has_value();
    copts.nproc_limit = opts_.engine == Engine::kPodman;
    copts.podman = opts_.engine == Engine::kPodman;
    copts.check_source = [this](const MountSpec& m) { return CheckContainerBindSource(m, cell_.uid); };
    return BuildCreateBody(cell_, copts);
  }

  // The engine mounts by path at start: check the sources again right
  // before, so the window left is the engine's own (docs/THREAT_MODEL.md).
  Status RecheckSources() {
    for (const auto& m : cell_.mounts) {
      if (m.kind != MountSpec::Kind::kBind || m.origin == MountSpec::Origin::kSystem || m.origin == MountSpec::Origin::kServerLink) continue;
      if (m.optional && !PathExists(m.source)) continue;
      MCPCELL_TRY(CheckContainerBindSource(m, cell_.uid));
    }
    return {};
  }

  void Launched(const std::string& id, bool fifo) {
    if (!on_launch_) return;
    on_launch_(nlohmann::json{{"backend", opts_.backend_name}, {"cell_id", result_.cell_id}, {"container", Name()},
                              {"container_id", id}, {"image", image_ref_}, {"image_id", image_}, {"engine", socket_},
                              {"runtime", opts_.runtime.empty() ? "default" : opts_.runtime},
                              {"stdio", fifo ? "fifo" : "attach"},
                              {"host_uid", cell_.uid}, {"host_gid", cell_.gid}});
  }

  // The supervisor's stdio copy (terminals, the relay) sits in front of the
  // pump: the pump reads and writes its pipe ends where it made them, the
  // client's own fds elsewhere. The ends close when the pump is done, which
  // ends the copies behind them.
  Result<PumpOutcome> Pump(HijackedStream stream, bool fifo, const KillContainer& kill) {
    std::array<UniqueFd, 3> ends = stdio_.TakeCellEnds();
    MCPCELL_TRY(stdio_.Start());
    PumpConfig pc;
    pc.client_in = ends[0] ? ends[0].get() : STDIN_FILENO;
    pc.client_out = ends[1] ? ends[1].get() : STDOUT_FILENO;
    pc.client_err = ends[2] ? ends[2].get() : STDERR_FILENO;
    pc.grace = spec_.stop_grace;
    pc.timeout = spec_.limits.timeout;
    if (fifo) {
      pc.stdin_fifo = &fifos_.in();
      pc.stdout_fifo = &fifos_.out();
      pc.ready_fifo = &fifos_.ready();
    }
    pc.kill = kill;
    pc.stop = &stop_;
    return RunStdioPump(std::move(stream), pc);
  }

  bool UseFifos() const { return opts_.fifo_stdio && !cell_.argv.empty(); }
  bool AllowList() const { return cell_.network.mode == NetworkSpec::Mode::kAllowList; }
  std::string Name() const { return "mcpcell-" + result_.cell_id; }

  const CellSpec& spec_;
  const DockerCellOptions opts_;  ///< a copy: the Backend's carries this run's RunContext in a temporary
  StdioRelay& stdio_;
  const LaunchCallback& on_launch_;
  CellResult result_;
  Clock::time_point started_;
  std::string socket_;
  std::optional<EngineClient> engine_;
  std::optional<EngineClient> setup_;
  std::optional<CellIdClaim> claim_;
  std::optional<ContainerWatcher> watcher_;
  std::optional<nlohmann::json> first_body_;  ///< built before the watcher starts, used by the create
  CellSpec cell_;
  std::string image_ = kBaseImage;
  std::string image_ref_ = kBaseImage;
  std::optional<SecretsDir> secrets_;
  StdioFifos fifos_;
  ContainerEgress egress_;
  ContainerDnsReport dns_report_;  ///< answers until the container is gone (running_ goes first)
  ProfileFile profile_file_;
  StopRequest stop_;
  std::optional<ContainerLaunch> launch_;          ///< what running_ was started from
  std::unique_ptr<RunningContainer> running_;      ///< removed first, before anything above
};

}  // namespace

Status CheckEngine(const DockerCellOptions& opts) {
  auto sock = EngineSocket(opts.engine);
  if (!sock) return sock.error();
  EngineClient engine(*sock, std::chrono::seconds(5));
  auto ping = engine.Call("GET", "/_ping");
  if (!ping) return ping.error();
  if (ping->status != 200) return MakeError("ping container engine", *sock, EngineMessage(*ping));
  // Checked here, not left to the create: Podman's own error names a path, not the package.
  if (opts.engine == Engine::kPodman) MCPCELL_TRY(CheckPodmanInit());
  if (opts.runtime.empty()) return {};
  auto info = engine.Call("GET", "/info");
  if (!info) return info.error();
  auto j = nlohmann::json::parse(info->body, nullptr, false);
  if (j.is_object() && j.contains("Runtimes") && j["Runtimes"].is_object() && j["Runtimes"].contains(opts.runtime)) {
    const auto& rt = j["Runtimes"][opts.runtime];
    bool oci_seccomp = false;
    for (const auto& a : rt.value("runtimeArgs", nlohmann::json::array())) oci_seccomp |= a == "--oci-seccomp";
    if (opts.runtime == "runsc" && !oci_seccomp) {
      // runsc ignores a container's seccomp profile unless told otherwise: the
      // sandbox still isolates, but mcpcell's deny list is not applied inside.
      Say("warning: the engine's runsc runtime lacks \"--oci-seccomp\" in its runtimeArgs, so mcpcell's seccomp "
          "deny list is not applied inside the gVisor sandbox; add it in daemon.json");
    }
    return {};
  }
  return MakeError("container runtime", opts.runtime,
                   "the engine at " + *sock + " has no runtime '" + opts.runtime +
                       "': install it (apt-get install runsc) and register it in daemon.json "
                       "(\"runtimes\": {\"runsc\": {\"path\": \"/usr/bin/runsc\", \"runtimeArgs\": "
                       "[\"--network=none\"]}}), then restart the engine");
}

StartedCell StartDockerCell(const CellSpec& spec, const DockerCellOptions& opts, StdioRelay& stdio,
                            const LaunchCallback& on_launch) {
  return StartCellHandle(std::make_unique<ContainerCellRun>(spec, opts, stdio, on_launch));
}

}  // namespace mcpcell::docker
