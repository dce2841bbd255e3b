#include "cell/docker/docker_cell.h"

#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cell/bind_source.h"
#include "cell/cell_ids.h"
#include "cell/native/id_map.h"
#include "cell/docker/base_image.h"
#include "cell/docker/container_net.h"
#include "cell/docker/container_watcher.h"
#include "cell/docker/run_dirs.h"
#include "cell/docker/create_body.h"
#include "cell/docker/engine_client.h"
#include "cell/docker/image_config.h"
#include "cell/docker/image_pull.h"
#include "cell/docker/podman_init.h"
#include "cell/docker/reaper.h"
#include "cell/docker/secrets_dir.h"
#include "cell/docker/stdio_fifos.h"
#include "cell/docker/stdio_pump.h"
#include "core/exit_codes.h"
#include "util/unique_fd.h"

namespace mcpcell::docker {
namespace {

using Clock = std::chrono::steady_clock;

void Say(const std::string& line) { std::fprintf(stderr, "mcpcell: %s\n", line.c_str()); }

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
    std::size_t off = 0;
    while (off < text.size()) {
      ssize_t n = ::write(fd.get(), text.data() + off, text.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoError("write seccomp profile file", path_);
      off += static_cast<std::size_t>(n);
    }
    return {};
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes the container when the run ends, however it ends.
class ContainerGuard {
 public:
  ContainerGuard(const EngineClient& engine, std::string id) : engine_(engine), id_(std::move(id)) {}
  ContainerGuard(const ContainerGuard&) = delete;
  ContainerGuard& operator=(const ContainerGuard&) = delete;
  /// The engine is gone: the run's error already says so and names gc.
  void Quiet() { quiet_ = true; }
  ~ContainerGuard() {
    if (quiet_) {
      (void)engine_.Call("DELETE", "/containers/" + id_ + "?force=1&v=1");
      return;
    }
    auto r = engine_.Call("DELETE", "/containers/" + id_ + "?force=1&v=1");
    if (!r) {
      Say("could not remove container " + id_ + ": " + r.error().Message() + "; `mcpcell gc` will reap it");
    } else if (r->status != 204 && r->status != 404) {
      Say("could not remove container " + id_ + ": " + EngineMessage(*r) + "; `mcpcell gc` will reap it");
    }
  }

 private:
  const EngineClient& engine_;
  std::string id_;
  bool quiet_ = false;
};

CellResult Fail(CellResult r, int code, Error e) {
  r.exit_code = code;
  r.error = std::move(e);
  return r;
}

// The exit code for a start that the runtime refused (runc's words).
int StartFailureCode(const std::string& msg) {
  if (msg.find("executable file not found") != std::string::npos ||
      msg.find("no such file or directory") != std::string::npos) {
    return kExitNotFound;
  }
  if (msg.find("permission denied") != std::string::npos) return kExitCannotExec;
  return kExitSetupFailed;
}

// The engine refused the create. Podman's "container-init binary not found"
// means the service reads another containers.conf than CheckPodmanInit did
// (a user's CONTAINERS_CONF): the same refusal, with the package.
int CreateFailureCode(Error* e) {
  if (e->detail.find("container-init binary not found") == std::string::npos) return kExitSetupFailed;
  e->detail += " (apt-get install catatonit, or set init_path in the service's containers.conf)";
  return kExitIsolationUnavailable;
}

Status RequireStatus(const Result<HttpReply>& r, unsigned want, const std::string& what, const std::string& name) {
  if (!r) return r.error();
  if (r->status != want) return MakeError(what, name, EngineMessage(*r));
  return {};
}

// Podman's compat wait (4.3) learns of an exit late: 2.3-4.3 s after start
// for a 0.6 s run, measured; its own libpod endpoint polled every 20 ms
// answered in 1.3-1.7 s, with the bare exit code as the body.
std::string WaitTarget(Engine engine, const std::string& id) {
  return engine == Engine::kPodman ? "/libpod/containers/" + id + "/wait?condition=exited&interval=20ms"
                                   : "/containers/" + id + "/wait?condition=not-running";
}

// Exit status once the stream ended: the container normally has exited
// already; if it only closed its stdout/stderr, give it the grace period,
// then SIGKILL, then ask again.
Result<int> WaitExit(const EngineClient& engine, Engine kind, const std::string& id,
                     std::chrono::milliseconds grace) {
  EngineClient bounded(engine.socket_path(), grace + std::chrono::seconds(5));
  auto r = bounded.Call("POST", WaitTarget(kind, id));
  if (!r && r.error().err == ETIMEDOUT) {
    (void)engine.Call("POST", "/containers/" + id + "/kill?signal=SIGKILL");
    r = engine.Call("POST", WaitTarget(kind, id));
  }
  if (!r) return r.error();
  if (r->status != 200) return MakeError("wait for container", id, EngineMessage(*r));
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_number_integer()) return j.get<int>();  // libpod's answer
  if (!j.is_object() || !j.contains("StatusCode") || !j["StatusCode"].is_number_integer()) {
    return MakeError("wait for container", id, "engine sent no StatusCode: " + r->body);
  }
  return j["StatusCode"].get<int>();
}

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
  std::erase_if(completed->mounts, [](const MountSpec& m) { return m.why == "system"; });
  return PreparedImage{cfg->id, std::move(*completed)};
}

// Whether the created (not started) container has a /bin/sh: GET of the
// archive endpoint stats the path in the container's filesystem.
bool HasShell(const EngineClient& engine, const std::string& id) {
  auto r = engine.Call("GET", "/containers/" + id + "/archive?path=" + UrlEncode("/bin/sh"));
  return r && r->status == 200;
}

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

CellResult RunDockerCell(const CellSpec& spec, const DockerCellOptions& opts, const LaunchCallback& on_launch) {
  auto started = Clock::now();
  CellResult result;
  result.backend = opts.backend_name;
  result.cell_id = RandomId();
  // Before anything exists in the engine: a Ctrl-C from here on is handled
  // by the pump (or ends setup) instead of killing us with a container left.
  BlockSupervisorSignals();

  auto sock = EngineSocket(opts.engine);
  if (!sock) return Fail(result, kExitIsolationUnavailable, sock.error());
  // Cleanup, kill and wait calls use `engine`; setup calls use `setup`,
  // which a signal interrupts (nothing has started yet, the guard removes
  // what was created).
  EngineClient engine(*sock);
  EngineClient setup(*sock);
  setup.set_interruptible(true);
  if (auto ok = CheckEngine(opts); !ok) return Fail(result, kExitIsolationUnavailable, ok.error());
  if (spec.network.mode == NetworkSpec::Mode::kAllowList) {
    if (auto ok = CheckContainerEgress(opts.runtime, opts.fifo_stdio, HasCapSysAdmin()); !ok) {
      return Fail(result, kExitIsolationUnavailable, ok.error());
    }
  }
  if (auto reaped = ReapOrphans(setup); !reaped) {
    Say("warning: could not reap orphaned cells: " + reaped.error().Message());
  } else if (!reaped->empty()) {
    Say("removed " + std::to_string(reaped->size()) + " container(s) left by a dead mcpcell");
  }
  ReapSecretDirs();
  ReapSeccompFiles();
  ReapStdioDirs();

  // The host uid:gid the container runs as, this run's alone (cell_ids.h),
  // unless --uid/--gid chose one. Declared first: released only once the
  // container and everything handed to that uid are gone.
  std::optional<CellIdClaim> claim;
  CellSpec claimed = spec;
  if (!opts.user_given && !spec.ids_given) {
    auto c = CellIdClaim::ClaimForThisUser();
    if (!c) return Fail(result, kExitSetupFailed, c.error());
    claim = std::move(*c);
    claimed.uid = claimed.gid = claim->id();
  }
  // Declared before everything it cleans up after, so that it is dismissed
  // only once they are gone (destruction runs in reverse order).
  std::optional<ContainerWatcher> watcher;

  // What runs: a docker:// image completes the spec (argv, env, workdir,
  // user); otherwise the spec runs in the empty base image.
  CellSpec cell = claimed;
  std::string image = kBaseImage;
  std::string image_ref = kBaseImage;
  if (opts.source_image) {
    auto prepared = PrepareImage(setup, *opts.source_image, claimed, opts.user_given);
    if (!prepared) return Fail(result, kExitSetupFailed, WithStoreHint(prepared.error(), opts, *opts.source_image));
    cell = std::move(prepared->spec);
    image = prepared->id;  // exactly the image that was checked, not a tag that may move
    image_ref = opts.source_image->Reference();
  } else if (auto ok = EnsureBaseImage(setup); !ok) {
    return Fail(result, kExitSetupFailed, ok.error());
  }
  // runsc's Sentry checks mode bits only, never ACLs (cell_user_access.h).
  auto secrets = SecretsDir::Create(cell.secrets, cell.uid, cell.gid, opts.runtime != "runsc");
  if (!secrets) return Fail(result, kExitSetupFailed, secrets.error());

  StdioFifos fifos;
  bool use_fifos = opts.fifo_stdio && !cell.argv.empty();
  if (use_fifos) {
    auto f = StdioFifos::Create(cell.uid, cell.gid);
    if (!f) return Fail(result, kExitSetupFailed, f.error());
    fifos = std::move(*f);
  }
  // An allow-list: mediated from outside the container (container_net.h).
  ContainerEgress egress;
  bool allow_list = cell.network.mode == NetworkSpec::Mode::kAllowList;
  if (allow_list) {
    auto e = ContainerEgress::Prepare(cell.uid, cell.gid);
    if (!e) return Fail(result, kExitSetupFailed, e.error());
    egress = std::move(*e);
  }

  ProfileFile profile_file;
  if (opts.engine == Engine::kPodman && cell.seccomp) {
    if (auto ok = profile_file.Write(CellSeccompProfile(opts.runtime).dump()); !ok) {
      return Fail(result, kExitSetupFailed, ok.error());
    }
  }
  std::string name = "mcpcell-" + result.cell_id;
  auto body_for = [&](bool fifo) -> Result<nlohmann::json> {
    ContainerOptions copts{image,
                           result.cell_id,
                           static_cast<long>(::getpid()),
                           ProcessStartTime(::getpid()),
                           OwnPidNamespace(),
                           opts.runtime,
                           secrets->bind_source(),
                           fifo ? fifos.bind_source() : std::string(),
                           profile_file.path(),
                           opts.engine != Engine::kPodman,
                           PathExists};
    copts.egress_host_dir = egress.host_dir();
    copts.set_entrypoint = opts.source_image.has_value();
    copts.nproc_limit = opts.engine == Engine::kPodman;
    copts.check_source = [&cell](const MountSpec& m) { return CheckContainerBindSource(m, cell.uid); };
    return BuildCreateBody(cell, copts);
  };
  auto create = [&](const nlohmann::json& body) -> Result<std::string> {
    auto created = setup.Call("POST", "/containers/create?name=" + name, body.dump());
    MCPCELL_TRY(RequireStatus(created, 201, "create container", name));
    auto cj = nlohmann::json::parse(created->body, nullptr, false);
    std::string cid = cj.is_object() ? cj.value("Id", "") : "";
    if (cid.empty()) return MakeError("create container", name, "no Id in reply");
    for (const auto& w : cj.value("Warnings", nlohmann::json::array())) {
      if (w.is_string()) Say("engine warning: " + w.get<std::string>());
    }
    return cid;
  };
  auto body = body_for(use_fifos);
  if (!body) return Fail(result, kExitIsolationUnavailable, body.error());
  // Before the create: a kill -9 from here on leaves nothing running (container_watcher.h).
  auto w = ContainerWatcher::Start(*sock, name, claim ? claim->fd() : -1, claim ? claim->path() : std::string());
  if (!w) return Fail(result, kExitSetupFailed, w.error());
  watcher.emplace(std::move(*w));
  auto created = create(*body);
  if (!created) {
    Error e = created.error();
    int code = CreateFailureCode(&e);
    return Fail(result, code, std::move(e));
  }
  std::string id = *created;
  std::optional<ContainerGuard> guard(std::in_place, engine, id);
  if (use_fifos && opts.source_image && !HasShell(setup, id)) {
    // The FIFO wiring is a /bin/sh one-liner in the cell; an image without a
    // shell (distroless, scratch) keeps its stdio on the attach stream.
    if (allow_list) {
      return Fail(result, kExitIsolationUnavailable, CheckContainerEgress(opts.runtime, false, true).error());
    }
    Say("the image has no /bin/sh for the FIFO stdio path; its stdio goes through the engine's attach stream");
    guard.reset();
    use_fifos = false;
    body = body_for(false);
    if (!body) return Fail(result, kExitIsolationUnavailable, body.error());
    created = create(*body);
    if (!created) return Fail(result, kExitSetupFailed, created.error());
    id = *created;
    guard.emplace(engine, id);
  }

  // Attach before start, so not one byte of output is missed.
  auto stream = setup.Hijack("/containers/" + id + "/attach?stream=1&stdout=1&stderr=1" +
                              (use_fifos ? "" : "&stdin=1"));
  if (!stream) return Fail(result, kExitSetupFailed, stream.error());
  // The engine mounts by path at start: check the sources again right
  // before, so the window left is the engine's own (docs/THREAT_MODEL.md).
  for (const auto& m : cell.mounts) {
    if (m.kind != MountSpec::Kind::kBind || m.why == "system" || m.why == "server executable link") continue;
    if (m.optional && !PathExists(m.source)) continue;
    if (auto ok = CheckContainerBindSource(m, cell.uid); !ok) return Fail(result, kExitSetupFailed, ok.error());
  }
  auto start = setup.Call("POST", "/containers/" + id + "/start");
  if (!start) return Fail(result, kExitSetupFailed, start.error());
  if (start->status != 204 && start->status != 304) {
    std::string msg = EngineMessage(*start);
    return Fail(result, StartFailureCode(msg), MakeError("start container", name, msg));
  }
  if (allow_list) {
    // The server waits at the gate until this returns ok.
    if (auto ok = egress.Start(setup, id, cell.network, opts.run); !ok) {
      return Fail(result, kExitSetupFailed, ok.error());
    }
  }
  if (on_launch) {
    on_launch(nlohmann::json{{"backend", opts.backend_name}, {"cell_id", result.cell_id}, {"container", name},
                             {"container_id", id}, {"image", image_ref}, {"image_id", image}, {"engine", *sock},
                             {"runtime", opts.runtime.empty() ? "default" : opts.runtime},
                             {"stdio", use_fifos ? "fifo" : "attach"},
                             {"host_uid", cell.uid}, {"host_gid", cell.gid}});
  }

  PumpConfig pc;
  pc.grace = spec.stop_grace;
  pc.timeout = spec.limits.timeout;
  if (use_fifos) {
    pc.stdin_fifo = &fifos.in();
    pc.stdout_fifo = &fifos.out();
    pc.ready_fifo = &fifos.ready();
  }
  pc.kill = [&engine, &id](const char* sig) -> Status {
    auto r = engine.Call("POST", "/containers/" + id + "/kill?signal=" + sig);
    if (!r) return r.error();
    // 409: already not running — the stop raced its exit, which is fine.
    if (r->status != 204 && r->status != 409 && r->status != 404) {
      return MakeError(std::string("send ") + sig + " to container", id, EngineMessage(*r));
    }
    return {};
  };
  auto pumped = RunStdioPump(std::move(*stream), pc);
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  if (!pumped) return Fail(result, kExitSetupFailed, pumped.error());
  result.timed_out = pumped->timed_out;

  auto code = WaitExit(engine, opts.engine, id, spec.stop_grace);
  if (!code) {
    if (IsEngineUnreachable(code.error()) || pumped->stream_cut) {
      guard->Quiet();
      return Fail(result, kExitSetupFailed,
                  Error{"container engine went away while the server ran", *sock, code.error().err,
                        "the engine stopped or restarted, which stops its containers; run `mcpcell gc` once it "
                        "is back to remove what is left"});
    }
    return Fail(result, kExitSetupFailed, code.error());
  }
  if (pumped->stream_cut) {
    return Fail(result, kExitSetupFailed,
                MakeError("read attach stream", name, "the engine cut the stream mid-frame (did it restart?)"));
  }
  result.exit_code = result.timed_out ? kExitTimeout : *code;
  return result;
}

}  // namespace mcpcell::docker
