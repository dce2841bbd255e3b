#pragma once
// An entry that already starts mcpcell, judged against what this wrap asks
// (adv10): its command name alone says nothing of the policy or options it
// runs under, so "unchanged" is said only when it carries what was asked.

#include <nlohmann/json.hpp>

#include "client/wrap_entry.h"

namespace mcpcell {

/// For an entry IsWrapped: kAlready when its args carry what `opts` asks
/// (the same --policy, or none asked); kWrapped with its --policy replaced
/// when its args are in the shape wrap writes (run [--isolate] [--policy=P]
/// [--env=..] [SOURCE] [-- ARGS]); otherwise kLeft, naming what differs.
WrapOutcome Rewrap(const nlohmann::ordered_json& entry, const WrapOptions& opts);

}  // namespace mcpcell
