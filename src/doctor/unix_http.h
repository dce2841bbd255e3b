#pragma once
// One HTTP request over a unix socket, with a short timeout: enough for the
// doctor to ask an engine "/_ping" and "/info". Not a general client.

#include <chrono>
#include <string>

#include "doctor/parse.h"
#include "util/error.h"

namespace mcpcell::doctor {

/// Connects to the unix socket `path`, sends `request` verbatim and reads one
/// response. Every connect/send/receive waits at most `timeout`. The Error's
/// err is the connect/read errno (ENOENT, EACCES, ECONNREFUSED, EAGAIN on
/// timeout), or 0 for a malformed answer.
Result<HttpResponse> UnixHttpRequest(const std::string& path, const std::string& request,
                                     std::chrono::milliseconds timeout);

}  // namespace mcpcell::doctor
