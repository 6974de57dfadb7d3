// Kubeconfig parsing (ParseKubeconfig, the body of LoadKubeconfig) on any text. A first line
// "#context: NAME" (a YAML comment, so the rest parses the same) plays --context NAME.
// Beyond "no crash, no UB, no exception": errors are Invalid or NotFound (a referenced file that
// is missing), and an accepted config is one the client can use.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "kube/cluster_config.h"

namespace leasehold::kube {
namespace {

// Relative file paths in the input resolve under this directory, which does not exist, so a
// fuzzed `certificate-authority: x` never reaches a real file.
constexpr const char* kPath = "/nonexistent-leasehold-fuzz/kubeconfig";

void Fuzz(std::string_view in) {
  std::string context;
  constexpr std::string_view kContextLine = "#context: ";
  if (in.substr(0, kContextLine.size()) == kContextLine) {
    const size_t nl = in.find('\n');
    context = std::string(in.substr(kContextLine.size(), nl - std::min(nl, kContextLine.size())));
  }
  const Result<ClusterConfig> config = ParseKubeconfig(in, kPath, context);
  if (!config.ok()) {
    FUZZ_CHECK(config.code() == Code::kBadConfig || config.code() == Code::kNotFound);
    FUZZ_CHECK(config.status().message().rfind(std::string("kubeconfig ") + kPath, 0) == 0);
    return;
  }
  const ClusterConfig& c = *config;
  FUZZ_CHECK(c.server.find("://") != std::string::npos);
  FUZZ_CHECK(c.server.size() == 1 || c.server.back() != '/');
  FUZZ_CHECK(!(c.insecure_skip_tls_verify && (!c.ca_file.empty() || !c.ca_data.empty())));
  FUZZ_CHECK(c.ca_file.empty() || c.ca_data.empty());
  const bool has_cert = !c.client_cert_data.empty() || !c.client_cert_file.empty();
  const bool has_key = !c.client_key_data.empty() || !c.client_key_file.empty();
  FUZZ_CHECK(has_cert == has_key);
  // Every file it names was checked readable; relative ones were resolved.
  for (const std::string* f :
       {&c.ca_file, &c.client_cert_file, &c.client_key_file, &c.token_file}) {
    FUZZ_CHECK(f->empty() || f->front() == '/');
  }
  FUZZ_CHECK(c.source.rfind(std::string("kubeconfig ") + kPath + " (context ", 0) == 0);
}

}  // namespace
}  // namespace leasehold::kube

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  leasehold::kube::Fuzz(leasehold::fuzz::AsText(data, size));
  return 0;
}
