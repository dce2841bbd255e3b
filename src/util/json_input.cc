#include "util/json_input.h"

#include <array>
#include <set>
#include <string>
#include <vector>
#include <fstream>

namespace mcpcell {

Result<std::string> ReadTextFile(const std::string& path, const std::string& what) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Error e = ErrnoError(what, path);
    if (e.err == 0) e.detail = "cannot open the file";
    return e;
  }
  // A policy, profile or manifest is a few KiB. A path naming /dev/zero (or
  // any endless or huge file) is refused here instead of read until memory
  // runs out.
  constexpr std::size_t kMaxTextFile = 16 << 20;
  std::string text;
  std::array<char, 64 * 1024> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxTextFile) return MakeError(what, path, "larger than 16 MiB; not read");
  }
  if (in.bad()) return ErrnoError(what, path);
  return text;
}

void LineColumn(std::string_view text, std::size_t byte, std::size_t* line, std::size_t* column) {
  std::size_t end = byte == 0 ? 0 : std::min(byte - 1, text.size());
  *line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++*line;
      line_start = i + 1;
    }
  }
  *column = end - line_start + 1;
}

namespace {

// A key written twice in one object: nlohmann keeps the last silently, so a
// policy's second "rules" would hide its first (adv8). Found while parsing
// (nlohmann's parser callback) and reported with the object's path.
struct DuplicateKey {
  std::string key, where;
};

class DuplicateFinder {
 public:
  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        frames_.push_back({event == E::object_start, {}, Element()});
        break;
      case E::object_end:
      case E::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case E::key: {
        std::string key = parsed.get<std::string>();
        if (!frames_.back().keys.insert(key).second) throw DuplicateKey{key, Path()};
        next_ = key;
        break;
      }
      case E::value:
        (void)Element();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string name;  ///< how its parent names it: "key" or "[i]"
    std::size_t items = 0;
  };
  // The name of the element starting now in the innermost frame.
  std::string Element() {
    if (frames_.empty()) return "";
    Frame& f = frames_.back();
    if (f.object) return next_;
    return "[" + std::to_string(f.items++) + "]";
  }
  std::string Path() const {
    std::string out = "$";
    for (const Frame& f : frames_) {
      if (f.name.empty()) continue;
      out += f.name[0] == '[' ? f.name : "." + f.name;
    }
    return out;
  }
  std::vector<Frame> frames_;
  std::string next_;
};

}  // namespace

Result<nlohmann::json> ParseJsonText(std::string_view text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text.begin(), text.end(), DuplicateFinder());
  } catch (const DuplicateKey& d) {
    return MakeError(origin + ": at " + d.where, "", "the key \"" + d.key + "\" is given twice in one object; "
                     "JSON readers disagree on which one counts, so mcpcell refuses it: keep one");
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t line = 0, column = 0;
    LineColumn(text, e.byte, &line, &column);
    // what() is "[json.exception.parse_error.101] parse error at line L, column C: <why>";
    // keep only <why>, the position is ours (1-based, on the offending byte).
    std::string why = e.what();
    std::size_t pos = why.find("parse error");
    if (pos != std::string::npos) pos = why.find(": ", pos);
    if (pos != std::string::npos) why = why.substr(pos + 2);
    return MakeError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                         ": invalid JSON",
                     "", why);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range (1e309): error 406 carries no position,
    // only the number ("number overflow parsing '1e309'"). Uncaught, it ended
    // mcpcell in std::terminate (found by the policy and profile fuzz targets).
    std::string why = e.what();
    std::size_t pos = why.find("] ");
    if (pos != std::string::npos) why = why.substr(pos + 2);
    return MakeError(origin + ": invalid JSON", "", why);
  }
}

namespace {
std::string Render(const nlohmann::json& got) {
  std::string s = got.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return std::string(got.type_name()) + " " + s;
}
}  // namespace

Error JsonTypeError(const std::string& origin, const std::string& path, const std::string& expected,
                    const nlohmann::json& got) {
  return MakeError(origin + ": at " + path, "", "expected " + expected + ", got " + Render(got));
}

Error JsonPathError(const std::string& origin, const std::string& path, const std::string& detail) {
  return MakeError(origin + ": at " + path, "", detail);
}

Status CheckObjectKeys(const std::string& origin, const std::string& path, const nlohmann::json& j,
                       std::initializer_list<std::string_view> allowed) {
  if (!j.is_object()) return JsonTypeError(origin, path, "an object", j);
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (known) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return JsonPathError(origin, JsonChild(path, key),
                         "unknown key \"" + key + "\" (allowed here: " + list + ")");
  }
  return {};
}

Result<std::string> JsonString(const std::string& origin, const std::string& path,
                               const nlohmann::json& j, bool nonempty) {
  if (!j.is_string()) return JsonTypeError(origin, path, "a string", j);
  std::string s = j.get<std::string>();
  if (nonempty && s.empty()) return JsonPathError(origin, path, "expected a non-empty string");
  return s;
}

Result<std::vector<std::string>> JsonStringList(const std::string& origin, const std::string& path,
                                                const nlohmann::json& j) {
  if (!j.is_array()) return JsonTypeError(origin, path, "an array of strings", j);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    auto s = JsonString(origin, JsonChild(path, i), j[i]);
    if (!s.ok()) return s.error();
    out.push_back(std::move(*s));
  }
  return out;
}

Result<bool> JsonBool(const std::string& origin, const std::string& path, const nlohmann::json& j) {
  if (!j.is_boolean()) return JsonTypeError(origin, path, "true or false", j);
  return j.get<bool>();
}

std::string JsonChild(const std::string& path, std::string_view key) {
  return path + "." + std::string(key);
}

std::string JsonChild(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

}  // namespace mcpcell
