#pragma once
// The secret scan's fast path (docs/SECRETS.md): what one scan of a message's
// own bytes can stand in for, so a message with no secret (nearly all of
// them) is cleared without walking its DOM or copying its strings into
// JsonStrings' text.
//
// Why a scan of the raw line can clear a message. JsonStrings' text is the
// decoded strings laid end to end with a NUL between them (json_strings.h).
// When no rule can match across a NUL or at an anchor (RuleStaysInString),
// every match in that text lies inside one string. A string written without
// escapes has the same bytes in the line as decoded, so a rule that matches
// it there matches the line too: no match in the line and none in the
// decoded escaped strings means none in the text. A member's key and its
// string value are joined in the text as the line writes them compactly
// ("key\":\"value"), so the same holds for a match across the two. Four
// things the text does and the line does not, each checked here, send a
// message to the full path or are scanned apart:
//  - escapes: the strings written with a backslash are decoded (and only
//    they are copied), to be scanned as well, each joined to the other half
//    of its member as the text joins them;
//  - white space around a member's colon (the text has none there);
//  - invisible format characters, which the text leaves out: any in the line
//    or in a decoded string;
//  - content blocks, whose texts the text glues together: two or more keys
//    "text" (written with or without escapes).
// A line that is mostly strings with escapes (over a quarter: tool output
// with "\n") also goes to the full path, which reads those bytes once where
// this one would scan them twice; it is told by the first such string.
// The raw scan reads the whole line (keys, punctuation, numbers too): it may
// match where the text would not (two strings of an array read together),
// and then the full path decides. It never skips a byte.

#include <string>
#include <string_view>

#include "guard/secret_rules.h"

namespace mcpcell {

/// What the fast path needs from one line, or why it cannot be used.
struct RawScanPlan {
  bool usable = false;
  const char* why = "";  ///< when not usable: what sent it to the full path (for tests and profiles)
  /// The strings written with escapes, decoded, each followed by a NUL (scan this as well as the line).
  std::string escaped;
};

/// Reads `line`, a complete JSON text simdjson accepted (its strings are
/// well formed), for RawScanPlan. Linear in the line; copies only strings
/// with escapes.
RawScanPlan PlanRawScan(std::string_view line);

/// Whether `rule` can only match inside one string of JsonStrings' text: no
/// class or escape that takes a NUL, no '.', no anchors or assertions, no
/// inline options. Conservative: a rule it cannot read is false (its
/// profile's messages then take the full path; nothing is skipped).
bool RuleStaysInString(const SecretRule& rule);

}  // namespace mcpcell
