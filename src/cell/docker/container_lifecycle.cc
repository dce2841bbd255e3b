#include "cell/docker/container_lifecycle.h"

#include <cctype>
#include <cstdio>
#include <optional>

#include "core/exit_codes.h"
#include "util/diag.h"

namespace mcpcell::docker {
namespace {

// Removes the container when the run ends, however it ends.
class ContainerGuard {
 public:
  ContainerGuard(const EngineApi& engine, std::string id) : engine_(engine), id_(std::move(id)) {}
  ContainerGuard(const ContainerGuard&) = delete;
  ContainerGuard& operator=(const ContainerGuard&) = delete;
  /// The engine is gone: the run's error already says so and names gc.
  void Quiet() { quiet_ = true; }
  ~ContainerGuard() {
    auto r = engine_.Call("DELETE", "/containers/" + id_ + "?force=1&v=1");
    if (quiet_) return;
    if (!r) {
      Say("could not remove container " + id_ + ": " + r.error().Message() + "; `mcpcell gc` will reap it");
    } else if (r->status != 204 && r->status != 404) {
      Say("could not remove container " + id_ + ": " + EngineMessage(*r) + "; `mcpcell gc` will reap it");
    }
  }

 private:
  const EngineApi& engine_;
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
Result<int> WaitExit(const EngineApi& engine, Engine kind, const std::string& id, std::chrono::milliseconds grace) {
  auto r = engine.CallWithin("POST", WaitTarget(kind, id), grace + std::chrono::seconds(5));
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

// Whether the created (not started) container has a /bin/sh: GET of the
// archive endpoint stats the path in the container's filesystem.
bool HasShell(const EngineApi& engine, const std::string& id) {
  auto r = engine.Call("GET", "/containers/" + id + "/archive?path=" + UrlEncode("/bin/sh"));
  return r && r->status == 200;
}

struct CreatedId {
  std::string id;
  std::vector<std::string> warnings;
};

Result<CreatedId> Create(const EngineApi& setup, const std::string& name, const nlohmann::json& body) {
  auto created = setup.Call("POST", "/containers/create?name=" + name, body.dump());
  if (!created) return created.error();
  if (created->status != 201) return MakeError("create container", name, EngineMessage(*created));
  auto cj = nlohmann::json::parse(created->body, nullptr, false);
  CreatedId out;
  out.id = cj.is_object() ? cj.value("Id", "") : "";
  if (out.id.empty()) return MakeError("create container", name, "no Id in reply");
  const nlohmann::json none = nlohmann::json::array();
  const nlohmann::json& warnings = cj.is_object() && cj.contains("Warnings") && cj["Warnings"].is_array() ? cj["Warnings"] : none;
  for (const auto& w : warnings) {
    if (!w.is_string()) continue;
    out.warnings.push_back(w.get<std::string>());
    Say("engine warning: " + out.warnings.back());
  }
  return out;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The requested limit an engine warning says it dropped ("... Limitation
// discarded.", "PIDs limit discarded.", "NanoCPUs can not be set ...",
// "Resource limits are not supported and ignored ..."), if any.
std::optional<std::string> DiscardedLimit(const std::string& warning, const std::vector<std::string>& requested) {
  std::string w = Lower(warning);
  bool dropped = w.find("discarded") != std::string::npos || w.find("ignored") != std::string::npos ||
                 w.find("can not be set") != std::string::npos || w.find("cannot be set") != std::string::npos;
  if (!dropped) return std::nullopt;
  bool all = w.find("resource limits") != std::string::npos;
  for (const auto& limit : requested) {
    bool named = (limit == "memory" && w.find("memory") != std::string::npos && w.find("swap") == std::string::npos) ||
                 (limit == "pids" && w.find("pids") != std::string::npos) ||
                 (limit == "cpus" && (w.find("cpu") != std::string::npos || w.find("quota") != std::string::npos));
    if (all || named) return limit;
  }
  return std::nullopt;
}

KillContainer KillFor(const EngineApi& engine, const std::string& id) {
  return [&engine, id](const char* sig) -> Status {
    auto r = engine.Call("POST", "/containers/" + id + "/kill?signal=" + sig);
    if (!r) return r.error();
    // 409: already not running — the stop raced its exit, which is fine.
    if (r->status != 204 && r->status != 409 && r->status != 404) {
      return MakeError(std::string("send ") + sig + " to container", id, EngineMessage(*r));
    }
    return {};
  };
}

// A running container: a guard that removes it, and how its stdio travels.
struct Created {
  std::optional<ContainerGuard> guard;
  std::string id;
  bool fifo = false;
};

// Create, and for an image without /bin/sh (distroless, scratch) create
// again with the stdio on the attach stream: the FIFO wiring is a /bin/sh
// one-liner in the cell.
Status CreateStep(const EngineApi& engine, const EngineApi& setup, const ContainerLaunch& l, Created* c, int* code) {
  c->fifo = l.fifo_stdio;
  auto body = l.body(c->fifo);
  *code = kExitIsolationUnavailable;
  if (!body) return body.error();
  auto id = Create(setup, l.name, *body);
  if (!id) {
    Error e = id.error();
    *code = CreateFailureCode(&e);
    return e;
  }
  c->id = id->id;
  c->guard.emplace(engine, c->id);  // removes the container if the run stops here
  for (const auto& w : id->warnings) {
    if (auto limit = DiscardedLimit(w, l.requested_limits)) {
      *code = kExitIsolationUnavailable;
      return MakeError("--" + *limit, "", "the container engine discarded this limit (\"" + w +
                                                    "\"); the cell would run without it: use --isolate=native, or "
                                                    "drop --" + *limit);
    }
  }
  *code = kExitSetupFailed;
  if (!c->fifo || !l.image_may_lack_shell || HasShell(setup, c->id)) return {};
  if (auto ok = l.attach_fallback_allowed(); !ok) {
    *code = kExitIsolationUnavailable;
    return ok.error();
  }
  Say("the image has no /bin/sh for the FIFO stdio path; its stdio goes through the engine's attach stream");
  c->guard.reset();
  c->fifo = false;
  body = l.body(false);
  if (!body) {
    *code = kExitIsolationUnavailable;
    return body.error();
  }
  id = Create(setup, l.name, *body);
  if (!id) return id.error();
  c->id = id->id;
  c->guard.emplace(engine, c->id);
  return {};
}

// Attach before start, so not one byte of output is missed; then start.
Result<HijackedStream> AttachAndStart(const EngineApi& setup, const ContainerLaunch& l, const Created& c, int* code) {
  *code = kExitSetupFailed;
  auto stream = setup.Hijack("/containers/" + c.id + "/attach?stream=1&stdout=1&stderr=1" +
                             (c.fifo ? "" : "&stdin=1"));
  if (!stream) return stream.error();
  MCPCELL_TRY(l.before_start());
  auto start = setup.Call("POST", "/containers/" + c.id + "/start");
  if (!start) return start.error();
  if (start->status != 204 && start->status != 304) {
    std::string msg = EngineMessage(*start);
    *code = StartFailureCode(msg);
    return MakeError("start container", l.name, msg);
  }
  MCPCELL_TRY(l.after_start(c.id));
  return stream;
}

}  // namespace

struct RunningContainer::State {
  const EngineApi& engine;
  const ContainerLaunch& launch;
  CellResult result;
  Created c{};
  HijackedStream stream{};
};

RunningContainer::RunningContainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
RunningContainer::~RunningContainer() = default;
const std::string& RunningContainer::id() const { return state_->c.id; }

CellResult RunningContainer::Wait() {
  const ContainerLaunch& l = state_->launch;
  CellResult result = state_->result;
  Created& c = state_->c;
  auto pumped = l.pump(std::move(state_->stream), c.fifo, KillFor(state_->engine, c.id));
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - l.started);
  if (!pumped) return Fail(result, kExitSetupFailed, pumped.error());
  result.timed_out = pumped->timed_out;

  auto status = WaitExit(state_->engine, l.engine, c.id, l.grace);
  if (!status) {
    if (IsEngineUnreachable(status.error()) || pumped->stream_cut) {
      c.guard->Quiet();
      return Fail(result, kExitSetupFailed,
                  Error{"container engine went away while the server ran", l.socket, status.error().err,
                        "the engine stopped or restarted, which stops its containers; run `mcpcell gc` once it "
                        "is back to remove what is left"});
    }
    return Fail(result, kExitSetupFailed, status.error());
  }
  if (pumped->stream_cut) {
    return Fail(result, kExitSetupFailed,
                MakeError("read attach stream", l.name, "the engine cut the stream mid-frame (did it restart?)"));
  }
  result.exit_code = result.timed_out ? kExitTimeout : *status;
  return result;
}

ContainerStart StartContainer(const EngineApi& engine, const EngineApi& setup, const ContainerLaunch& l,
                              CellResult result) {
  // On a failed step, `state` going out of scope removes what was created.
  auto state = std::unique_ptr<RunningContainer::State>(new RunningContainer::State{engine, l, std::move(result)});
  Created& c = state->c;
  int code = 0;
  if (auto ok = CreateStep(engine, setup, l, &c, &code); !ok) return {nullptr, Fail(state->result, code, ok.error())};
  auto stream = AttachAndStart(setup, l, c, &code);
  if (!stream) return {nullptr, Fail(state->result, code, stream.error())};
  state->stream = std::move(*stream);
  l.launched(c.id, c.fifo);
  return {std::make_unique<RunningContainer>(std::move(state)), {}};
}

CellResult RunContainer(const EngineApi& engine, const EngineApi& setup, const ContainerLaunch& l, CellResult result) {
  ContainerStart started = StartContainer(engine, setup, l, std::move(result));
  if (!started.running) return started.failure;
  return started.running->Wait();
}

}  // namespace mcpcell::docker
