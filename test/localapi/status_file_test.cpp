// --status-file: atomic replacement, checked by a reader that parses the file while it is being
// rewritten, and the errors a bad path gives.
#include "localapi/status_file.h"

#include <dirent.h>
#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_clock.h"
#include "localapi/leader_doc.h"

namespace leasehold::localapi {
namespace {

using namespace std::chrono_literals;

// What a status file renders its publications on; these tests write their content by hand.
const FakeClock kClock;

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/leasehold-status-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { [[maybe_unused]] int rc = std::system(("rm -rf '" + path + "'").c_str()); }
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    DIR* d = opendir(path.c_str());
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    closedir(d);
    return out;
  }
  std::string path;
};

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("status file: written at creation, replaced on every write, no temporary left") {
  TempDir dir;
  const std::string path = dir.path + "/leader.json";
  auto file = StatusFile::Create(path, R"({"isLeader":false})", kClock);
  REQUIRE(file.ok());
  CHECK(Read(path) == "{\"isLeader\":false}\n");
  REQUIRE((*file)->Write(R"({"isLeader":true})").ok());
  CHECK(Read(path) == "{\"isLeader\":true}\n");
  CHECK(dir.Entries() == std::vector<std::string>{"leader.json"});
  CHECK((*file)->HandsOutLeadership());

  election::Publication p;
  p.snapshot.observed = true;
  p.snapshot.record.leader_transitions = 2;
  (*file)->Publish(p);
  CHECK(Read(path) == LeaderLine(p.snapshot, kClock) + "\n");
  CHECK(Read(path).find(R"("isLeader":false,"term":2,)") != std::string::npos);
}

TEST_CASE("status file: a publication's yes is judged when the file is written") {
  // The publication was taken leading; the write comes at, or after, the end of its claim (the
  // publisher's thread stalled in an earlier sink): the file must not say "you lead" then.
  struct Case {
    const char* name;
    Duration written_before_end;
    bool says_leader;
  };
  const std::vector<Case> cases = {
      {"written 1ms before validUntil: yes, 1ms left", 1ms, true},
      {"written at validUntil: no", 0ms, false},
      {"written 5s after validUntil: no, and no validUntil", -5s, false},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      TempDir dir;
      FakeClock clock;
      auto file = StatusFile::Create(dir.path + "/leader.json", "{}", clock);
      REQUIRE(file.ok());
      election::Publication p;
      p.snapshot.observed = true;
      p.snapshot.identity = "me";
      p.snapshot.record.holder_identity = "me";
      p.snapshot.is_leader = true;
      p.snapshot.valid_until = clock.MonotonicNow() + 10s;
      clock.Advance(10s - c.written_before_end);
      (*file)->Publish(p);
      const std::string content = Read(dir.path + "/leader.json");
      CAPTURE(content);
      CHECK((content.find(R"("isLeader":true,)") != std::string::npos) == c.says_leader);
      CHECK((content.find(R"("isLeader":false,)") != std::string::npos) == !c.says_leader);
      CHECK((content.find(R"("validForMs":1,"validUntil":)") != std::string::npos) ==
            c.says_leader);
    }
  }
}

TEST_CASE("status file: a reader never sees a partial file") {
  TempDir dir;
  const std::string path = dir.path + "/leader.json";
  // Contents of very different sizes, each valid JSON: a torn read would not parse, or would
  // parse to a size that does not match.
  const std::string small = R"({"isLeader":false})";
  const std::string large = R"({"isLeader":true,"pad":")" + std::string(20000, 'x') + R"("})";
  auto file = StatusFile::Create(path, small, kClock);
  REQUIRE(file.ok());

  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, bad{0};
  std::thread reader([&] {
    while (!done) {
      const std::string text = Read(path);
      rapidjson::Document d;
      d.Parse(text.c_str());
      if (d.HasParseError() || !d.IsObject() || !d.HasMember("isLeader") ||
          (text != small + "\n" && text != large + "\n")) {
        ++bad;
      }
      ++reads;
    }
  });
  // Keep writing until the reader has had a fair number of goes, however the threads ran.
  int writes = 0;
  while ((writes < 200 || reads < 2000) && writes < 20000) {
    REQUIRE((*file)->Write(writes % 2 ? large : small).ok());
    ++writes;
  }
  done = true;
  reader.join();
  MESSAGE(reads.load() << " reads during " << writes << " writes");
  CHECK(reads >= 2000);
  CHECK(bad == 0);
  CHECK(dir.Entries() == std::vector<std::string>{"leader.json"});
}

TEST_CASE("status file: a bad path fails at creation with the reason") {
  TempDir dir;
  struct Case {
    const char* name;
    std::string path;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"empty", "", "must not be empty"},
      {"a directory", dir.path + "/", "\"" + dir.path + "/\" names a directory"},
      {"missing directory", dir.path + "/no/such/leader.json",
       "cannot create " + dir.path + "/no/such/.leader.json.tmp: No such file or directory"},
      {"the path is a directory", dir.path,
       "cannot rename " + dir.path.substr(0, dir.path.rfind('/')) + "/." +
           dir.path.substr(dir.path.rfind('/') + 1) + ".tmp to " + dir.path + ": Is a directory"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto file = StatusFile::Create(c.path, "{}", kClock);
      REQUIRE_FALSE(file.ok());
      CHECK(file.status().message() == c.want);
    }
  }
}

TEST_CASE("status file: a FIFO or a symlink left at the temporary path is replaced, not used") {
  TempDir dir;
  const std::string temp = dir.path + "/.leader.json.tmp";
  const std::string elsewhere = dir.path + "/elsewhere";
  struct Case {
    const char* name;
    std::function<int()> plant;
  };
  const std::vector<Case> cases = {
      // A FIFO without a reader would block the first write, and start-up with it, for good.
      {"a FIFO", [&] { return mkfifo(temp.c_str(), 0600); }},
      // A symlink would have the status written through it, wherever it points.
      {"a symlink", [&] { return symlink(elsewhere.c_str(), temp.c_str()); }},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      REQUIRE(c.plant() == 0);
      auto file = StatusFile::Create(dir.path + "/leader.json", "{\"isLeader\":false}", kClock);
      REQUIRE(file.ok());
      CHECK(Read(dir.path + "/leader.json") == "{\"isLeader\":false}\n");
      CHECK(access(elsewhere.c_str(), F_OK) != 0);
      CHECK(access(temp.c_str(), F_OK) != 0);
    }
  }
}

TEST_CASE("status file: a file name without a directory is relative to the working directory") {
  TempDir dir;
  char cwd[4096];
  REQUIRE(getcwd(cwd, sizeof cwd) != nullptr);
  REQUIRE(chdir(dir.path.c_str()) == 0);
  auto file = StatusFile::Create("leader.json", "{}", kClock);
  const bool ok = file.ok();
  const auto entries = dir.Entries();
  REQUIRE(chdir(cwd) == 0);
  REQUIRE(ok);
  CHECK(entries == std::vector<std::string>{"leader.json"});
}

}  // namespace
}  // namespace leasehold::localapi
