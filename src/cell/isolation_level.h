#pragma once
// The isolation level a run asks for (--isolate=LEVEL, a policy's "level"),
// as a value: which backend runs the cell is decided on this enum, never on
// the text the user typed.

#include <optional>
#include <string>
#include <string_view>

namespace mcpcell {

enum class IsolationLevel {
  kAuto,       ///< native for a command; a container for a docker:// image
  kNative,     ///< namespaces, seccomp, Landlock, cgroups (cell/native/)
  kContainer,  ///< the docker engine (an alias of kDocker)
  kDocker,
  kPodman,
  kGvisor,     ///< the docker engine with the runsc runtime
};

/// "auto" | "native" | "container" | "docker" | "podman" | "gvisor"; nullopt for anything else.
std::optional<IsolationLevel> ParseIsolationLevel(std::string_view text);
std::string ToString(IsolationLevel level);
/// True for every level that runs a container (docker, podman, gvisor, container).
bool IsContainerLevel(IsolationLevel level);

/// The levels in the words a refusal lists them with.
inline constexpr const char* kIsolationLevelList = "auto, native, container, docker, podman or gvisor";

}  // namespace mcpcell
