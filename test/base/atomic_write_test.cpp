// base/file.h's one atomic writer (it replaces three copies, keeping the strictest
// behaviour of each). One table row per property; the concurrent writers and the failing write
// have cases of their own.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "fakes/temp_dir.h"

namespace leasehold {
namespace {

namespace fs = std::filesystem;
using leasehold::testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Restores the process umask when the test ends, however it ends.
struct UmaskGuard {
  explicit UmaskGuard(mode_t m) : old(::umask(m)) {}
  ~UmaskGuard() { ::umask(old); }
  mode_t old;
};

TEST_CASE("WriteFileAtomically: one row per property") {
  struct Case {
    const char* name;
    // Prepares the directory; returns the target path.
    std::function<std::string(const TempDir&)> plant;
    AtomicWriteOptions options;
    Code want;                 // kOk: the target holds the content afterwards
    std::string want_message;  // for errors; {dir} is replaced by the directory
    std::vector<std::string> want_entries;
    unsigned want_mode = 0;  // 0: not checked
  };
  AtomicWriteOptions exact;
  exact.mode = 0755;
  exact.exact_mode = true;
  AtomicWriteOptions umasked;
  umasked.mode = 0755;
  AtomicWriteOptions volatile_write;
  volatile_write.durable = false;
  const std::vector<Case> cases = {
      {"a new file", [](const TempDir& d) { return d.Path("out"); }, {}, Code::kOk, "", {"out"}},
      {"over an older file",
       [](const TempDir& d) { return d.Write("out", "old content, longer than the new"); },
       {},
       Code::kOk,
       "",
       {"out"}},
      {"without fsync (durable false) the same",
       [](const TempDir& d) { return d.Path("out"); },
       volatile_write,
       Code::kOk,
       "",
       {"out"}},
      // O_NOFOLLOW|O_EXCL and the stale temporary unlinked: a symlink at the temporary name
      // is never written through.
      {"a symlink planted at the temporary name",
       [](const TempDir& d) {
         fs::create_symlink(d.Path("elsewhere"), d.Path(".out.tmp"));
         return d.Path("out");
       },
       {},
       Code::kOk,
       "",
       {"out"}},
      // O_NONBLOCK and the unlink: a FIFO at the temporary name never blocks the write.
      {"a FIFO planted at the temporary name",
       [](const TempDir& d) {
         REQUIRE(::mkfifo(d.Path(".out.tmp").c_str(), 0600) == 0);
         return d.Path("out");
       },
       {},
       Code::kOk,
       "",
       {"out"}},
      {"a stale temporary of an older writer",
       [](const TempDir& d) {
         d.Write(".out.tmp", "half a write");
         return d.Path("out");
       },
       {},
       Code::kOk,
       "",
       {"out"}},
      // The target itself is replaced, never opened: a FIFO there needs no reader.
      {"a FIFO at the target",
       [](const TempDir& d) {
         REQUIRE(::mkfifo(d.Path("out").c_str(), 0600) == 0);
         return d.Path("out");
       },
       {},
       Code::kOk,
       "",
       {"out"}},
      {"a symlink at the target is replaced, its target untouched",
       [](const TempDir& d) {
         d.Write("victim", "untouched");
         fs::create_symlink(d.Path("victim"), d.Path("out"));
         return d.Path("out");
       },
       {},
       Code::kOk,
       "",
       {"out", "victim"}},
      {"a directory at the target",
       [](const TempDir& d) {
         fs::create_directory(d.Path("out"));
         return d.Path("out");
       },
       {},
       Code::kUnavailable,
       "cannot rename {dir}/.out.tmp to {dir}/out: Is a directory",
       {"out"}},
      {"a missing directory",
       [](const TempDir& d) { return d.Path("no/such/out"); },
       {},
       Code::kUnavailable,
       "cannot create {dir}/no/such/.out.tmp: No such file or directory",
       {}},
      // install: exactly 0755 whatever the umask (the test sets 077).
      {"exact mode 0755 under umask 077",
       [](const TempDir& d) { return d.Path("out"); },
       exact,
       Code::kOk,
       "",
       {"out"},
       0755},
      {"without exact_mode the umask applies",
       [](const TempDir& d) { return d.Path("out"); },
       umasked,
       Code::kOk,
       "",
       {"out"},
       0700},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      TempDir dir;
      UmaskGuard umask(077);
      const std::string path = c.plant(dir);
      const Status st = WriteFileAtomically(path, "new\n", c.options);
      CHECK(st.code() == c.want);
      if (c.want == Code::kOk) {
        CHECK(Slurp(path) == "new\n");
        struct stat sb {};
        REQUIRE(::lstat(path.c_str(), &sb) == 0);
        CHECK(S_ISREG(sb.st_mode));
        if (c.want_mode != 0) CHECK((sb.st_mode & 07777) == c.want_mode);
      } else {
        std::string want = c.want_message;
        for (size_t at; (at = want.find("{dir}")) != std::string::npos;) {
          want.replace(at, 5, dir.path());
        }
        CHECK(st.message() == want);
      }
      CHECK(Entries(dir.path()) == c.want_entries);
      if (fs::exists(dir.Path("victim"))) CHECK(Slurp(dir.Path("victim")) == "untouched");
      CHECK_FALSE(fs::exists(dir.Path("elsewhere")));
    }
  }
}

// A write that fails half way (the file size limit here; a full disk in life) leaves the old
// content and no temporary file. SIGXFSZ is ignored so that write() returns EFBIG.
TEST_CASE("WriteFileAtomically: a failed write keeps the old content") {
  TempDir dir;
  const std::string path = dir.Write("out", "old\n");
  struct sigaction ignore {
  }, old_action{};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGXFSZ, &ignore, &old_action) == 0);
  rlimit old_limit{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const Status st = WriteFileAtomically(path, std::string(64 * 1024, 'x'));
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  REQUIRE(::sigaction(SIGXFSZ, &old_action, nullptr) == 0);
  CHECK(st.code() == Code::kUnavailable);
  CHECK(st.message() == "cannot write " + dir.Path(".out.tmp") + ": File too large");
  CHECK(Slurp(path) == "old\n");
  CHECK(Entries(dir.path()) == std::vector<std::string>{"out"});
}

// Unique temporary names: writers racing on one path never write into each other's temporary
// file, so every read sees one writer's whole content, and nothing is left behind.
TEST_CASE("WriteFileAtomically: concurrent writers of one path") {
  TempDir dir;
  const std::string path = dir.Path("out");
  constexpr int kWriters = 4;
  constexpr int kWrites = 200;
  std::set<std::string> contents;
  for (int w = 0; w < kWriters; ++w) {
    // Different lengths, so a mix of two writers' bytes shows.
    contents.insert("writer " + std::to_string(w) + " " +
                    std::string(static_cast<size_t>(100 * (w + 1)), static_cast<char>('a' + w)));
  }
  REQUIRE(WriteFileAtomically(path, *contents.begin()).ok());
  std::atomic<int> failures{0}, bad_reads{0}, reads{0};
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      const std::string got = Slurp(path);
      ++reads;
      if (contents.count(got) == 0) ++bad_reads;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const std::string mine = *std::next(contents.begin(), w);
      AtomicWriteOptions options;
      options.durable = false;  // the race, not the disk, is under test
      for (int i = 0; i < kWrites; ++i) {
        if (!WriteFileAtomically(path, mine, options).ok()) ++failures;
      }
    });
  }
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  CHECK(failures.load() == 0);
  CHECK(bad_reads.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(contents.count(Slurp(path)) == 1);
  CHECK(Entries(dir.path()) == std::vector<std::string>{"out"});
}

TEST_CASE("CopyFileAtomically: a byte-exact copy, streamed") {
  TempDir dir;
  std::string big;
  for (int i = 0; i < 200 * 1024; ++i) big += static_cast<char>(i * 7 % 256);  // > 3 blocks
  const std::string source = dir.Write("source", big);
  AtomicWriteOptions exact;
  exact.mode = 0755;
  exact.exact_mode = true;
  UmaskGuard umask(077);
  SUBCASE("copied") {
    REQUIRE(CopyFileAtomically(source, dir.Path("copy"), exact).ok());
    CHECK(Slurp(dir.Path("copy")) == big);
    struct stat sb {};
    REQUIRE(::stat(dir.Path("copy").c_str(), &sb) == 0);
    CHECK((sb.st_mode & 07777) == 0755);
    CHECK(Entries(dir.path()) == std::vector<std::string>{"copy", "source"});
  }
  SUBCASE("a missing source keeps the old copy") {
    dir.Write("copy", "old");
    const Status st = CopyFileAtomically(dir.Path("missing"), dir.Path("copy"), exact);
    CHECK(st.code() == Code::kUnavailable);
    CHECK(st.message() == "cannot read " + dir.Path("missing") + ": No such file or directory");
    CHECK(Slurp(dir.Path("copy")) == "old");
    CHECK(Entries(dir.path()) == std::vector<std::string>{"copy", "source"});
  }
}

}  // namespace
}  // namespace leasehold
