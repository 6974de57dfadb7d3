#include "base/file.h"

#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "fakes/temp_dir.h"

namespace leasehold {
namespace {

namespace fs = std::filesystem;

using leasehold::testing::TempDir;

TEST_CASE("ReadRegularFile: regular files within the cap, nothing else, never a hang") {
  TempDir dir;
  dir.Write("small", "hello\n");
  dir.Write("at-cap", std::string(100, 'a'));
  dir.Write("over-cap", std::string(101, 'a'));
  dir.Write("empty", "");
  // The service-account volume: token -> ..data/token, ..data -> ..2026_01_01/.
  fs::create_directory(dir.Path("..2026_01_01"));
  dir.Write("..2026_01_01/token", "rotated");
  fs::create_directory_symlink("..2026_01_01", dir.Path("..data"));
  fs::create_symlink("..data/token", dir.Path("token"));
  fs::create_symlink("nowhere", dir.Path("dangling"));
  fs::create_directory(dir.Path("dir"));
  REQUIRE(::mkfifo(dir.Path("fifo").c_str(), 0600) == 0);
  fs::create_symlink("fifo", dir.Path("link-to-fifo"));
  // A socket file (bound, nobody reading).
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = dir.Path("sock");
  REQUIRE(sock_path.size() < sizeof addr.sun_path);
  sock_path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  REQUIRE(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);

  struct Case {
    const char* name;
    std::string path;
    Code want_code;
    std::string want;  // the contents, or the error message
  };
  const Case cases[] = {
      {"small file", dir.Path("small"), Code::kOk, "hello\n"},
      {"exactly the cap", dir.Path("at-cap"), Code::kOk, std::string(100, 'a')},
      {"empty file", dir.Path("empty"), Code::kOk, ""},
      {"..data symlinks are followed", dir.Path("token"), Code::kOk, "rotated"},
      {"one byte over the cap", dir.Path("over-cap"), Code::kBadConfig,
       dir.Path("over-cap") + " is larger than 100 bytes"},
      {"missing", dir.Path("none"), Code::kNotFound,
       "cannot read " + dir.Path("none") + ": No such file or directory"},
      {"dangling symlink", dir.Path("dangling"), Code::kNotFound,
       "cannot read " + dir.Path("dangling") + ": No such file or directory"},
      {"below a file", dir.Path("small/x"), Code::kNotFound,
       "cannot read " + dir.Path("small/x") + ": Not a directory"},
      {"directory", dir.Path("dir"), Code::kBadConfig,
       dir.Path("dir") + " is a directory, not a regular file"},
      {"FIFO without a writer: no hang", dir.Path("fifo"), Code::kBadConfig,
       dir.Path("fifo") + " is a FIFO, not a regular file"},
      {"symlink to a FIFO", dir.Path("link-to-fifo"), Code::kBadConfig,
       dir.Path("link-to-fifo") + " is a FIFO, not a regular file"},
      {"socket", sock_path, Code::kUnavailable,
       "cannot read " + sock_path + ": No such device or address"},
      {"/dev/zero: no endless read", "/dev/zero", Code::kBadConfig,
       "/dev/zero is a character device, not a regular file"},
      {"/dev/null", "/dev/null", Code::kBadConfig,
       "/dev/null is a character device, not a regular file"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const auto start = std::chrono::steady_clock::now();
    const Result<std::string> got = ReadRegularFile(c.path, 100);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    CHECK(got.code() == c.want_code);
    if (got.ok()) {
      CHECK(got.value() == c.want);
    } else {
      CHECK(got.status().message() == c.want);
    }
    const Status checked = CheckRegularFile(c.path, 100);
    CHECK(checked.code() == c.want_code);
    if (!checked.ok()) CHECK(checked.message() == c.want);
  }
  ::close(sock);
}

TEST_CASE("ReadRegularFile: a file that grows after fstat is still cut at cap + 1 bytes") {
  // /proc files report size 0 and then produce more: the read bound, not the size, decides.
  const Result<std::string> got = ReadRegularFile("/proc/self/maps", 16);
  CHECK(got.code() == Code::kBadConfig);
  CHECK(got.status().message() == "/proc/self/maps is larger than 16 bytes");
}

TEST_CASE("FormatByteCount") {
  CHECK(FormatByteCount(16 << 10) == "16 KiB");
  CHECK(FormatByteCount(4 << 20) == "4 MiB");
  CHECK(FormatByteCount(1000) == "1000 bytes");
  CHECK(FormatByteCount(1) == "1 byte");
}

}  // namespace
}  // namespace leasehold
