#pragma once
// The profile's "mcpcell": {"secret_scan": {...}} block (docs/PROFILES.md):
//   {"mode": "redact",                 both directions: off | audit | redact | block
//    "to_server": "block",             client → server only (wins over mode)
//    "to_client": "redact",            server → client only (wins over mode)
//    "rules": [{"name": "acme-key", "regex": "ACME-[0-9]{8}", "caseless": false, "bounded": true}],
//    "disable": ["jwt"]}               built-in rules turned off, by name

#include <string>

#include <nlohmann/json.hpp>

#include "guard/secret_policy.h"
#include "util/error.h"

namespace mcpcell {

/// Reads the block at JSON path `path` of `origin`; every error names the
/// path ("fs.json: $.mcpcell.secret_scan.rules[0].regex: ...").
Status ReadSecretScan(const std::string& origin, const std::string& path, const nlohmann::json& j,
                      SecretPolicy* out);
/// The block as it would be written in a profile.
nlohmann::json SecretScanToJson(const SecretPolicy& p);

}  // namespace mcpcell
