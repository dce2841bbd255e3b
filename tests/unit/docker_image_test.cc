// docker:// images: reference parsing and lookup names, the image config
// (docker run's Entrypoint/Cmd rule, env layering, a user that is never
// root, the digest pin), the pull progress display, and the create body of
// an image cell.
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "cell/docker/create_body.h"
#include "cell/docker/image_config.h"
#include "cell/docker/image_pull.h"
#include "source/image_ref.h"

namespace mcpcell::docker {
namespace {

const std::string kDigest = "sha256:" + std::string(64, 'a');
const std::string kOther = "sha256:" + std::string(64, 'b');

TEST(ImageRef, ParsesTagDigestAndRegistryPort) {
  auto r = ParseImageRef("docker://localhost:5000/team/x:1.2@" + kDigest);
  ASSERT_TRUE(r.ok()) << r.error().Message();
  EXPECT_EQ(r->repository, "localhost:5000/team/x");
  EXPECT_EQ(r->tag, "1.2");
  EXPECT_EQ(r->digest, kDigest);
  EXPECT_TRUE(r->pinned());
  EXPECT_EQ(r->Reference(), "localhost:5000/team/x:1.2@" + kDigest);
  auto bare = ParseImageRef("mcp/fetch");
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->pinned());
  EXPECT_EQ(bare->Reference(), "mcp/fetch");
  EXPECT_FALSE(ParseImageRef("mcp/fetch@sha256:short").ok());
  EXPECT_FALSE(ParseImageRef("Upper/Case").ok());
}

TEST(ImageRef, LookupNamesAndPullTag) {
  ImageRef tagged{"x", "1", ""};
  EXPECT_EQ(tagged.LookupNames(), (std::vector<std::string>{"x:1"}));
  EXPECT_EQ(tagged.PullTag(), "1");
  ImageRef latest{"x", "", ""};
  EXPECT_EQ(latest.LookupNames(), (std::vector<std::string>{"x:latest"}));
  EXPECT_EQ(latest.PullTag(), "latest");
  ImageRef pinned{"x", "1", kDigest};
  EXPECT_EQ(pinned.LookupNames(), (std::vector<std::string>{"x@" + kDigest, "x:1"}));
  EXPECT_EQ(pinned.PullTag(), kDigest);  // the registry serves exactly the pinned manifest
  ImageRef digest_only{"x", "", kDigest};
  EXPECT_EQ(digest_only.LookupNames(), (std::vector<std::string>{"x@" + kDigest}));
}

TEST(ImageConfig, ParsesInspectAndMatchesDigest) {
  nlohmann::json inspect{{"Id", kDigest},
                         {"RepoDigests", {"x@" + kOther}},
                         {"Config",
                          {{"Entrypoint", {"/usr/bin/node"}},
                           {"Cmd", {"/app/server.js"}},
                           {"Env", {"PATH=/app/bin:/usr/bin", "FOO=bar"}},
                           {"WorkingDir", "/app"},
                           {"User", "1000"}}}};
  auto c = ParseImageInspect(inspect.dump(), "x:1");
  ASSERT_TRUE(c.ok()) << c.error().Message();
  EXPECT_EQ(c->entrypoint, std::vector<std::string>{"/usr/bin/node"});
  EXPECT_TRUE(MatchesDigest(*c, kDigest));  // the image Id (a locally built image)
  EXPECT_TRUE(MatchesDigest(*c, kOther));   // a registry manifest digest
  EXPECT_FALSE(MatchesDigest(*c, "sha256:" + std::string(64, 'c')));
  EXPECT_TRUE(MatchesDigest(*c, ""));  // not pinned
  EXPECT_FALSE(ParseImageInspect("{}", "x").ok());
  // null Entrypoint/Cmd (images that set neither) parse as empty.
  auto n = ParseImageInspect(R"({"Id":"sha256:1","Config":{"Entrypoint":null,"Cmd":null}})", "x");
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->entrypoint.empty());
}

TEST(ImageConfig, ArgsReplaceCmdNotEntrypoint) {
  ImageConfig c;
  c.entrypoint = {"/usr/bin/node"};
  c.cmd = {"/app/server.js", "--stdio"};
  EXPECT_EQ(ImageArgv(c, {}), (std::vector<std::string>{"/usr/bin/node", "/app/server.js", "--stdio"}));
  EXPECT_EQ(ImageArgv(c, {"-e", "1"}), (std::vector<std::string>{"/usr/bin/node", "-e", "1"}));
  c.entrypoint.clear();
  EXPECT_EQ(ImageArgv(c, {"/bin/true"}), std::vector<std::string>{"/bin/true"});
}

TEST(ImageConfig, ImageUserIsNotedNotUsed) {
  EXPECT_EQ(ImageUserNote("", 0x70000001, 0x70000001), "");
  for (const char* user : {"0", "root", "node", "1000", "1000:1000"}) {
    std::string note = ImageUserNote(user, 0x70000001, 0x70000001);
    EXPECT_NE(note.find(std::string("'") + user + "' is not used"), std::string::npos) << note;
    EXPECT_NE(note.find("1879048193:1879048193"), std::string::npos) << note;
  }
}

TEST(ImageConfig, SpecForImageLayersEnvAndFillsWorkdir) {
  ImageConfig c;
  c.entrypoint = {"/usr/bin/node"};
  c.cmd = {"/app/server.js"};
  c.env = {"PATH=/app/bin:/usr/bin", "FOO=image", "HOME=/root"};
  c.workdir = "/app";
  c.user = "1000";  // a real host user here: not kept
  CellSpec s;
  s.uid = s.gid = 0x70000001;  // what docker_cell claimed
  s.env = {{"HOME", "/home/mcp"}, {"FOO", "flag"}};
  s.workdir.clear();
  std::vector<std::string> notes;
  auto out = SpecForImage(s, c, {}, &notes);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->argv, (std::vector<std::string>{"/usr/bin/node", "/app/server.js"}));
  EXPECT_EQ(out->env.at("PATH"), "/app/bin:/usr/bin");
  EXPECT_EQ(out->env.at("FOO"), "flag");  // --env wins over the image
  EXPECT_EQ(out->env.at("HOME"), "/home/mcp");
  EXPECT_EQ(out->workdir, "/app");
  EXPECT_EQ(out->uid, 0x70000001u);
  EXPECT_EQ(out->gid, 0x70000001u);
  EXPECT_EQ(notes.size(), 1u);
  s.uid = 0;  // --uid 0 given explicitly: the user's choice stands
  auto given = SpecForImage(s, c, ImageSpecOptions{true}, nullptr);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->uid, 0u);
  ImageConfig empty;
  EXPECT_FALSE(SpecForImage(CellSpec{}, empty, {}, nullptr).ok());
}

TEST(ImageConfig, ImageVolumesBecomeTmpfsUnlessMounted) {
  auto c = ParseImageInspect(R"({"Id":"sha256:1","Config":{"Cmd":["x"],"Volumes":{"/data":{},"/cache":{}}}})", "x");
  ASSERT_TRUE(c.ok());
  CellSpec s;
  s.mounts.push_back({MountSpec::Kind::kBind, "/host/data", "/data", true, false, 0, "--write"});
  auto out = SpecForImage(s, *c, {}, nullptr);
  ASSERT_TRUE(out.ok());
  int tmpfs = 0;
  for (const auto& m : out->mounts) {
    if (m.kind == MountSpec::Kind::kTmpfs && m.why == "image volume") {
      ++tmpfs;
      EXPECT_EQ(m.target, "/cache");
      EXPECT_EQ(m.size_bytes, kImageVolumeBytes);
    }
  }
  EXPECT_EQ(tmpfs, 1);  // /data is the user's bind, not replaced
}

TEST(PullProgress, OneLinePerLayerStateAndThrottledBytes) {
  PullProgress p("x:1", std::chrono::seconds(1));
  auto t0 = PullProgress::Clock::time_point{} + std::chrono::hours(1);
  std::string stream =
      R"({"status":"Pulling from library/x","id":"1"})" "\n"
      R"({"status":"Pulling fs layer","progressDetail":{},"id":"aaa"})" "\n"
      R"({"status":"Downloading","progressDetail":{"current":100,"total":1000},"id":"aaa"})" "\n";
  auto first = p.Feed(stream, t0);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0], "pull x:1: Pulling from library/x");
  EXPECT_EQ(first[1], "pull x:1: aaa: Pulling fs layer");
  EXPECT_EQ(first[2], "pull x:1: aaa: Downloading");
  // Repeated byte updates: one summary, then silence within the interval.
  std::string more = R"({"status":"Downloading","progressDetail":{"current":500000,"total":1000000},"id":"aaa"})" "\n";
  auto second = p.Feed(more, t0 + std::chrono::seconds(2));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0], "pull x:1: 0.5 MB of 1.0 MB (0/1 layers complete)");
  EXPECT_TRUE(p.Feed(more, t0 + std::chrono::milliseconds(2500)).empty());
  // A line split across pieces is put back together.
  auto a = p.Feed(R"({"status":"Pull comp)", t0);
  EXPECT_TRUE(a.empty());
  auto b = p.Feed(R"(lete","progressDetail":{},"id":"aaa"})" "\n", t0);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0], "pull x:1: aaa: Pull complete");
  EXPECT_TRUE(p.error().empty());
  p.Feed(R"({"errorDetail":{"message":"denied"},"error":"denied"})" "\n", t0);
  EXPECT_EQ(p.error(), "denied");
}

TEST(ImageCreateBody, EntrypointIsReplacedAndNprocSetForPodman) {
  CellSpec s;
  s.argv = {"/usr/bin/node", "/app/server.js"};
  s.limits.pids = {300, false};
  ContainerOptions o;
  o.image = kDigest;
  o.set_entrypoint = true;
  o.nproc_limit = true;
  auto b = BuildCreateBody(s, o);
  ASSERT_TRUE(b.ok()) << b.error().Message();
  EXPECT_EQ((*b)["Entrypoint"], nlohmann::json::array({"/usr/bin/node"}));
  EXPECT_EQ((*b)["Cmd"], nlohmann::json::array({"/app/server.js"}));
  bool nproc = false;
  for (const auto& u : (*b)["HostConfig"]["Ulimits"]) nproc |= u["Name"] == "nproc" && u["Hard"] == 300;
  EXPECT_TRUE(nproc);
  // The FIFO wrapper is the entrypoint when stdio goes through FIFOs.
  o.stdio_host_dir = "/dev/shm/x/d";
  auto f = BuildCreateBody(s, o);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)["Entrypoint"], nlohmann::json::array({"/bin/sh"}));
  EXPECT_EQ((*f)["Cmd"].back(), "/app/server.js");
  // Without set_entrypoint (the base image) Cmd carries everything, as before.
  o.set_entrypoint = false;
  o.stdio_host_dir.clear();
  auto plain = BuildCreateBody(s, o);
  EXPECT_FALSE(plain->contains("Entrypoint"));
  EXPECT_EQ((*plain)["Cmd"], nlohmann::json::array({"/usr/bin/node", "/app/server.js"}));
}

}  // namespace
}  // namespace mcpcell::docker
