#pragma once
// Transitional: public_sources.h (the settings checks) and install_origin.h
// (the install's record), for the files not yet moved to them
// (npx_install.cc, uvx_install.cc). Their calls without an environment read
// this process's. New code includes the two headers and passes the
// environment it judges.

#include <string>

#include "source/install_origin.h"
#include "source/public_sources.h"
#include "util/process_environment.h"

namespace mcpcell {

/// WhyCaEnvironmentIsNotPublic of this process's environment.
inline std::string WhyCaEnvironmentIsNotPublic() { return WhyCaEnvironmentIsNotPublic(ProcessEnvironment()); }

/// WhyPipSettingsAreNotPublic of this process's environment.
inline std::string WhyPipSettingsAreNotPublic() { return WhyPipSettingsAreNotPublic(ProcessEnvironment()); }

}  // namespace mcpcell
