// Golden files (test/golden/): bytes that the code must reproduce exactly, captured once from the
// code as it was (from commit d9c10c8, before the local API was split in rooms).
//
//   CheckGolden("leader/leader.json", answer.body);
//
// LEASEHOLD_UPDATE_GOLDEN=1 rewrites the files instead of comparing: only ever to capture a
// change of behaviour that was meant, and reviewed in the diff of test/golden/.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "test_paths.h"  // LEASEHOLD_GOLDEN_DIR

namespace leasehold {

inline std::string GoldenPath(const std::string& name) {
  return std::string(LEASEHOLD_GOLDEN_DIR) + "/" + name;
}

// A whole file's content; fails the test when it cannot be read.
inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string ReadGolden(const std::string& name) { return ReadWholeFile(GoldenPath(name)); }

inline void CheckGolden(const std::string& name, const std::string& actual) {
  const char* update = std::getenv("LEASEHOLD_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(GoldenPath(name), std::ios::binary | std::ios::trunc);
    REQUIRE_MESSAGE(out.good(), "cannot write " << GoldenPath(name));
    out << actual;
    return;
  }
  CAPTURE(name);
  CHECK(ReadGolden(name) == actual);
}

}  // namespace leasehold
