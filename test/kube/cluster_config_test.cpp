#include "kube/cluster_config.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "fakes/temp_dir.h"

namespace leasehold::kube {
namespace {

using testing::TempDir;

// An env lookup backed by a map, so tests never touch the process environment.
std::function<std::optional<std::string>(const std::string&)> Env(
    std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// base64 of "CA-PEM", "CERT-PEM", "KEY-PEM".
constexpr const char* kCaB64 = "Q0EtUEVN";
constexpr const char* kCertB64 = "Q0VSVC1QRU0=";
constexpr const char* kKeyB64 = "S0VZLVBFTQ==";

// A kubeconfig with two contexts. `cluster` and `user` are the YAML bodies of cluster "c1" and
// user "u1"; context "other" points at cluster "c2"/user "u2".
std::string Kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& current = "main") {
  return "apiVersion: v1\nkind: Config\n"
         "current-context: " +
         current +
         "\n"
         "clusters:\n"
         "- name: c1\n  cluster:\n" +
         cluster +
         "- name: c2\n  cluster:\n    server: https://second.example:6443\n"
         "    insecure-skip-tls-verify: true\n"
         "users:\n"
         "- name: u1\n  user:\n" +
         user +
         "- name: u2\n  user:\n    token: second-token\n"
         "contexts:\n"
         "- name: main\n  context:\n    cluster: c1\n    user: u1\n    namespace: team-a\n"
         "- name: other\n  context:\n    cluster: c2\n    user: u2\n"
         "- name: no-cluster\n  context:\n    cluster: missing\n    user: u1\n"
         "- name: no-user\n  context:\n    cluster: c1\n    user: missing\n"
         "- name: anonymous\n  context:\n    cluster: c1\n";
}

TEST_CASE("LoadKubeconfig reads what the context points at") {
  TempDir dir;
  const std::string abs_ca = dir.Write("abs/ca.crt", "CA");

  struct Case {
    const char* name;
    std::string cluster, user;
    std::string context;  // --context
    // What to check; unset strings must be empty.
    std::string server, ca_file, ca_data, cert_file, cert_data, key_file, key_data, token,
        token_file, ns;
    bool insecure = false;
  };
  const std::string d = dir.path() + "/kube";  // the kubeconfig lives in a subdirectory
  dir.Write("kube/pki/ca.crt", "CA");
  dir.Write("kube/pki/client.crt", "CERT");
  dir.Write("kube/pki/client.key", "KEY");
  dir.Write("kube/token", "file-token\n");
  const Case cases[] = {
      {"data fields are decoded",
       std::string("    server: https://api.example:6443\n    certificate-authority-data: ") +
           kCaB64 + "\n",
       std::string("    client-certificate-data: ") + kCertB64 +
           "\n    client-key-data: " + kKeyB64 + "\n",
       "", "https://api.example:6443", "", "CA-PEM", "", "CERT-PEM", "", "KEY-PEM", "", "",
       "team-a"},
      {"relative file paths are relative to the kubeconfig",
       "    server: https://api.example:6443\n    certificate-authority: pki/ca.crt\n",
       "    client-certificate: pki/client.crt\n    client-key: pki/client.key\n", "",
       "https://api.example:6443", d + "/pki/ca.crt", "", d + "/pki/client.crt", "",
       d + "/pki/client.key", "", "", "", "team-a"},
      {"absolute paths are kept",
       "    server: https://api.example:6443\n    certificate-authority: " + abs_ca + "\n",
       "    token: t\n", "", "https://api.example:6443", abs_ca, "", "", "", "", "", "t", "",
       "team-a"},
      {"data wins over file",
       std::string("    server: https://a:1\n    certificate-authority: pki/ca.crt\n"
                   "    certificate-authority-data: ") +
           kCaB64 + "\n",
       "    token: t\n", "", "https://a:1", "", "CA-PEM", "", "", "", "", "t", "", "team-a"},
      {"static token", "    server: https://a:1\n", "    token: abc\n", "", "https://a:1", "", "",
       "", "", "", "", "abc", "", "team-a"},
      {"tokenFile, relative", "    server: https://a:1\n", "    tokenFile: token\n", "",
       "https://a:1", "", "", "", "", "", "", "", d + "/token", "team-a"},
      {"token and tokenFile both kept", "    server: https://a:1\n",
       "    token: abc\n    tokenFile: token\n", "", "https://a:1", "", "", "", "", "", "", "abc",
       d + "/token", "team-a"},
      {"--context overrides current-context", "    server: https://a:1\n", "    token: abc\n",
       "other", "https://second.example:6443", "", "", "", "", "", "", "second-token", "", "",
       true},
      {"server without scheme gets https, trailing slash dropped", "    server: a.example:443/\n",
       "    token: abc\n", "", "https://a.example:443", "", "", "", "", "", "", "abc", "",
       "team-a"},
      {"user-less context", "    server: https://a:1\n", "    token: abc\n", "anonymous",
       "https://a:1", "", "", "", "", "", "", "", "", ""},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const std::string path = dir.Write("kube/config", Kubeconfig(c.cluster, c.user));
    const Result<ClusterConfig> got = LoadKubeconfig(path, c.context);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(got->server == c.server);
    CHECK(got->ca_file == c.ca_file);
    CHECK(got->ca_data == c.ca_data);
    CHECK(got->client_cert_file == c.cert_file);
    CHECK(got->client_cert_data == c.cert_data);
    CHECK(got->client_key_file == c.key_file);
    CHECK(got->client_key_data == c.key_data);
    CHECK(got->token == c.token);
    CHECK(got->token_file == c.token_file);
    CHECK(got->default_namespace == c.ns);
    CHECK(got->insecure_skip_tls_verify == c.insecure);
    CHECK(got->source ==
          "kubeconfig " + path + " (context " + (c.context.empty() ? "main" : c.context) + ")");
  }
}

TEST_CASE("LoadKubeconfig errors name what is missing") {
  TempDir dir;
  struct Case {
    const char* name;
    std::string text;  // "" = do not write the file
    std::string context;
    Code code;
    std::string message;  // after "kubeconfig <path>: "
  };
  const std::string ok_cluster = "    server: https://a:1\n";
  const std::string ok_user = "    token: t\n";
  const Case cases[] = {
      {"missing context", Kubeconfig(ok_cluster, ok_user), "foo", Code::kBadConfig,
       "context \"foo\" not found"},
      {"missing current context", Kubeconfig(ok_cluster, ok_user, "gone"), "", Code::kBadConfig,
       "context \"gone\" not found"},
      {"no current-context", "clusters: []\ncontexts: []\nusers: []\n", "", Code::kBadConfig,
       "no current-context is set and no --context given"},
      {"missing cluster", Kubeconfig(ok_cluster, ok_user), "no-cluster", Code::kBadConfig,
       "cluster \"missing\" (from context \"no-cluster\") not found"},
      {"missing user", Kubeconfig(ok_cluster, ok_user), "no-user", Code::kBadConfig,
       "user \"missing\" (from context \"no-user\") not found"},
      {"no server", Kubeconfig("    certificate-authority-data: Q0EtUEVN\n", ok_user), "",
       Code::kBadConfig, "cluster \"c1\" has no server"},
      // Found with fuzz/kubeconfig_fuzzer: the trailing-slash trim ate into the scheme and
      // "https://" was accepted as the server "https:".
      {"server without host", Kubeconfig("    server: https://\n", ok_user), "", Code::kBadConfig,
       "cluster \"c1\" has no host in server \"https://\""},
      {"server only slashes", Kubeconfig("    server: //\n", ok_user), "", Code::kBadConfig,
       "cluster \"c1\" has no host in server \"//\""},
      {"bad base64",
       Kubeconfig("    server: https://a:1\n    certificate-authority-data: Q0E$\n", ok_user), "",
       Code::kBadConfig,
       "cluster \"c1\": certificate-authority-data: invalid base64: unexpected character at "
       "offset 3"},
      {"insecure with a CA",
       Kubeconfig("    server: https://a:1\n    insecure-skip-tls-verify: true\n"
                  "    certificate-authority-data: Q0EtUEVN\n",
                  ok_user),
       "", Code::kBadConfig,
       "cluster \"c1\": certificate-authority and insecure-skip-tls-verify cannot both be set"},
      {"missing CA file",
       Kubeconfig("    server: https://a:1\n    certificate-authority: nope.crt\n", ok_user), "",
       Code::kNotFound,
       "certificate-authority " + dir.path() + "/nope.crt: No such file or directory"},
      {"missing tokenFile", Kubeconfig(ok_cluster, "    tokenFile: /nonexistent/token\n"), "",
       Code::kNotFound, "tokenFile /nonexistent/token: No such file or directory"},
      {"certificate without key",
       Kubeconfig(ok_cluster, "    client-certificate-data: Q0VSVC1QRU0=\n"), "", Code::kBadConfig,
       "user \"u1\": client-certificate given without client-key"},
      {"exec plugin only",
       Kubeconfig(ok_cluster, "    exec:\n      command: gke-gcloud-auth-plugin\n"), "",
       Code::kBadConfig,
       "user \"u1\" authenticates with \"exec\", which leasehold does not support; use a token, "
       "tokenFile or client certificate"},
      {"not a mapping", "- just\n- a list\n", "", Code::kBadConfig,
       "not a kubeconfig (expected a mapping at the top)"},
      {"clusters is a scalar",
       "current-context: main\nclusters: 3\ncontexts:\n- name: main\n"
       "  context:\n    cluster: c1\n",
       "", Code::kBadConfig, "cluster \"c1\" (from context \"main\") not found"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const std::string path = dir.Write("config", c.text);
    const Result<ClusterConfig> got = LoadKubeconfig(path, c.context);
    REQUIRE_FALSE(got.ok());
    CHECK(got.code() == c.code);
    CHECK(got.status().message() == "kubeconfig " + path + ": " + c.message);
  }

  SUBCASE("malformed YAML") {
    const std::string path = dir.Write("bad", "clusters: [unclosed\n");
    const Result<ClusterConfig> got = LoadKubeconfig(path, "");
    CHECK(got.code() == Code::kBadConfig);
    CHECK(got.status().message().rfind("kubeconfig " + path + ": malformed: ", 0) == 0);
  }
  SUBCASE("missing file") {
    const Result<ClusterConfig> got = LoadKubeconfig(dir.Path("none"), "");
    CHECK(got.code() == Code::kNotFound);
    CHECK(got.status().message() == "kubeconfig " + dir.Path("none") + ": cannot read " +
                                        dir.Path("none") + ": No such file or directory");
  }
}

// Hostile or mistaken paths: each is one clear error naming the file, fast, whatever the path
// names (a FIFO would block a plain open forever, /dev/zero would be read until memory ran out).
TEST_CASE("LoadKubeconfig and the files it names: regular files within their caps only") {
  TempDir dir;
  REQUIRE(::mkfifo(dir.Path("fifo").c_str(), 0600) == 0);
  std::filesystem::create_directory(dir.Path("adir"));
  const std::string ok_cluster = "    server: https://a:1\n    insecure-skip-tls-verify: true\n";
  const std::string ok_user = "    token: t\n";
  // 4 MiB + 1 byte of YAML comment: any parser would accept it, the cap does not.
  const std::string huge =
      dir.Write("huge", Kubeconfig(ok_cluster, ok_user) + "#" + std::string(4 << 20, 'x') + "\n");
  const std::string big_token = dir.Write("big-token", std::string((16 << 10) + 1, 'a'));
  dir.Write("ca.crt", "CA");
  const std::string big_ca = dir.Write("big-ca.crt", std::string((1 << 20) + 1, 'C'));
  struct Case {
    const char* name;
    std::string path;  // the kubeconfig
    std::string want;  // the whole message
  };
  const auto config = [&](const std::string& name, const std::string& text) {
    return dir.Write(name, text);
  };
  const Case cases[] = {
      {"kubeconfig is a FIFO", dir.Path("fifo"),
       "kubeconfig " + dir.Path("fifo") + ": " + dir.Path("fifo") +
           " is a FIFO, not a regular file"},
      {"kubeconfig is /dev/null", "/dev/null",
       "kubeconfig /dev/null: /dev/null is a character device, not a regular file"},
      {"kubeconfig is a directory", dir.Path("adir"),
       "kubeconfig " + dir.Path("adir") + ": " + dir.Path("adir") +
           " is a directory, not a regular file"},
      {"kubeconfig over 4 MiB", huge, "kubeconfig " + huge + ": " + huge + " is larger than 4 MiB"},
      {"tokenFile is a FIFO",
       config("c1", Kubeconfig(ok_cluster, "    tokenFile: " + dir.Path("fifo") + "\n")),
       "kubeconfig " + dir.Path("c1") + ": tokenFile: " + dir.Path("fifo") +
           " is a FIFO, not a regular file"},
      {"tokenFile over 16 KiB",
       config("c2", Kubeconfig(ok_cluster, "    tokenFile: " + big_token + "\n")),
       "kubeconfig " + dir.Path("c2") + ": tokenFile: " + big_token + " is larger than 16 KiB"},
      {"certificate-authority is a FIFO",
       config("c3",
              Kubeconfig("    server: https://a:1\n    certificate-authority: fifo\n", ok_user)),
       "kubeconfig " + dir.Path("c3") + ": certificate-authority: " + dir.Path("fifo") +
           " is a FIFO, not a regular file"},
      {"certificate-authority over 1 MiB",
       config("c4", Kubeconfig("    server: https://a:1\n    certificate-authority: big-ca.crt\n",
                               ok_user)),
       "kubeconfig " + dir.Path("c4") + ": certificate-authority: " + big_ca +
           " is larger than 1 MiB"},
      {"client-key is /dev/zero",
       config("c5", Kubeconfig(ok_cluster,
                               "    client-certificate: ca.crt\n    client-key: /dev/zero\n")),
       "kubeconfig " + dir.Path("c5") +
           ": client-key: /dev/zero is a character device, not a regular file"},
      {"static token with CRLF (header injection)",
       config("c6", Kubeconfig(ok_cluster, "    token: \"TOKEN\\r\\nX-Injected: yes\"\n")),
       "kubeconfig " + dir.Path("c6") +
           ": user \"u1\": token: contains a control character, whitespace or non-ASCII byte at "
           "byte 5 (a bearer token is visible ASCII only)"},
      {"static token with inner space",
       config("c7", Kubeconfig(ok_cluster, "    token: \"abc def\"\n")),
       "kubeconfig " + dir.Path("c7") +
           ": user \"u1\": token: contains a control character, whitespace or non-ASCII byte at "
           "byte 3 (a bearer token is visible ASCII only)"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const auto start = std::chrono::steady_clock::now();
    const Result<ClusterConfig> got = LoadKubeconfig(c.path, "");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    CHECK(got.code() == Code::kBadConfig);
    CHECK(got.status().message() == c.want);
  }
  SUBCASE("--kubeconfig errors name the flag") {
    LoadOptions options;
    options.kubeconfig = dir.Path("fifo");
    options.env = Env({});
    const Result<ClusterConfig> got = LoadClusterConfig(options);
    CHECK(got.status().message() == "kubeconfig " + dir.Path("fifo") + ": " + dir.Path("fifo") +
                                        " is a FIFO, not a regular file (--kubeconfig)");
  }
}

// A service-account directory as the kubelet mounts it.
void WriteServiceAccount(const TempDir& dir, const std::string& ns = "team-b\n") {
  dir.Write("sa/token", "sa-token\n");
  dir.Write("sa/ca.crt", "CA");
  if (!ns.empty()) dir.Write("sa/namespace", ns);
}

TEST_CASE("LoadInClusterConfig") {
  TempDir dir;
  struct Case {
    const char* name;
    std::string host, port;
    std::string want_server;
  };
  const Case cases[] = {
      {"IPv4", "10.96.0.1", "443", "https://10.96.0.1:443"},
      {"IPv6 is bracketed", "fd00:10:96::1", "443", "https://[fd00:10:96::1]:443"},
      {"DNS name", "kubernetes.default.svc", "6443", "https://kubernetes.default.svc:6443"},
  };
  WriteServiceAccount(dir);
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Result<ClusterConfig> got = LoadInClusterConfig(c.host, c.port, dir.Path("sa"));
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(got->server == c.want_server);
    CHECK(got->token_file == dir.Path("sa/token"));
    CHECK(got->token.empty());  // read by the client, and re-read as it rotates
    CHECK(got->ca_file == dir.Path("sa/ca.crt"));
    CHECK(got->default_namespace == "team-b");
    CHECK(got->source == "in-cluster (" + dir.Path("sa") + ")");
  }

  SUBCASE("no namespace file") {
    dir.Remove("sa/namespace");
    const Result<ClusterConfig> got = LoadInClusterConfig("h", "1", dir.Path("sa"));
    REQUIRE(got.ok());
    CHECK(got->default_namespace.empty());
  }
  SUBCASE("missing token") {
    dir.Remove("sa/token");
    const Result<ClusterConfig> got = LoadInClusterConfig("h", "1", dir.Path("sa"));
    CHECK(got.code() == Code::kNotFound);
    CHECK(got.status().message() ==
          "in-cluster config: cannot read " + dir.Path("sa/token") + ": No such file or directory");
  }
  SUBCASE("empty token") {
    dir.Write("sa/token", " \n");
    const Result<ClusterConfig> got = LoadInClusterConfig("h", "1", dir.Path("sa"));
    CHECK(got.code() == Code::kBadConfig);
    CHECK(got.status().message() ==
          "in-cluster config: token file " + dir.Path("sa/token") + " is empty");
  }
  SUBCASE("token, CA and namespace that are not small regular files, or a bad token") {
    struct Bad {
      const char* name;
      std::function<void()> make;
      std::string want;
    };
    const std::string fifo = dir.Path("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto link = [&](const std::string& target, const std::string& name) {
      dir.Remove(name);
      std::filesystem::create_symlink(target, dir.Path(name));
    };
    const std::string prefix = "in-cluster config: ";
    const Bad bads[] = {
        {"token is a FIFO", [&] { link(fifo, "sa/token"); },
         prefix + dir.Path("sa/token") + " is a FIFO, not a regular file"},
        {"token over 16 KiB", [&] { dir.Write("sa/token", std::string((16 << 10) + 1, 'a')); },
         prefix + dir.Path("sa/token") + " is larger than 16 KiB"},
        {"token with CRLF and a header",
         [&] { dir.Write("sa/token", "TOKEN\r\nX-Injected: yes\n"); },
         prefix + "token file " + dir.Path("sa/token") +
             ": contains a control character, whitespace or non-ASCII byte at byte 5 (a bearer "
             "token is visible ASCII only)"},
        {"token with inner whitespace", [&] { dir.Write("sa/token", "abc\tdef\n"); },
         prefix + "token file " + dir.Path("sa/token") +
             ": contains a control character, whitespace or non-ASCII byte at byte 3 (a bearer "
             "token is visible ASCII only)"},
        {"CA is a FIFO", [&] { link(fifo, "sa/ca.crt"); },
         prefix + "CA file: " + dir.Path("sa/ca.crt") + " is a FIFO, not a regular file"},
        {"CA over 1 MiB", [&] { dir.Write("sa/ca.crt", std::string((1 << 20) + 1, 'C')); },
         prefix + "CA file: " + dir.Path("sa/ca.crt") + " is larger than 1 MiB"},
        {"namespace is a FIFO", [&] { link(fifo, "sa/namespace"); },
         prefix + "namespace file: " + dir.Path("sa/namespace") + " is a FIFO, not a regular file"},
        {"namespace over 1 KiB", [&] { dir.Write("sa/namespace", std::string(1025, 'n')); },
         prefix + "namespace file: " + dir.Path("sa/namespace") + " is larger than 1 KiB"},
    };
    // Writing through a symlink to the FIFO would block: always start from fresh files.
    const auto fresh = [&] {
      for (const char* f : {"sa/token", "sa/ca.crt", "sa/namespace"}) dir.Remove(f);
      WriteServiceAccount(dir);
    };
    for (const Bad& b : bads) {
      INFO(std::string(b.name));
      fresh();
      b.make();
      const auto start = std::chrono::steady_clock::now();
      const Result<ClusterConfig> got = LoadInClusterConfig("h", "1", dir.Path("sa"));
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
      CHECK(got.code() == Code::kBadConfig);
      CHECK(got.status().message() == b.want);
      // Through LoadClusterConfig the message names the flag that chose the directory.
      LoadOptions options;
      options.serviceaccount_dir = dir.Path("sa");
      options.env = Env({{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}});
      CHECK(LoadClusterConfig(options).status().message() == b.want + " (--serviceaccount-dir)");
    }
    fresh();
  }
  SUBCASE("missing CA") {
    dir.Remove("sa/ca.crt");
    const Result<ClusterConfig> got = LoadInClusterConfig("h", "1", dir.Path("sa"));
    CHECK(got.code() == Code::kNotFound);
    CHECK(got.status().message() ==
          "in-cluster config: CA file " + dir.Path("sa/ca.crt") + ": No such file or directory");
  }
}

TEST_CASE("LoadClusterConfig resolution order") {
  TempDir dir;
  WriteServiceAccount(dir);
  const std::string flag_path =
      dir.Write("flag.yaml", Kubeconfig("    server: https://flag:1\n", "    token: t\n"));
  const std::string env_path =
      dir.Write("env.yaml", Kubeconfig("    server: https://env:1\n", "    token: t\n"));
  dir.Write("home/.kube/config", Kubeconfig("    server: https://home:1\n", "    token: t\n"));
  const std::map<std::string, std::string> in_cluster = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                         {"KUBERNETES_SERVICE_PORT", "443"}};

  struct Case {
    const char* name;
    std::string flag;
    std::map<std::string, std::string> env;
    std::string want_server;  // "" = expect an error
    Code want_code = Code::kOk;
  };
  const auto with = [](std::map<std::string, std::string> a,
                       const std::map<std::string, std::string>& b) {
    a.insert(b.begin(), b.end());
    return a;
  };
  const std::map<std::string, std::string> home = {{"HOME", dir.Path("home")}};
  const Case cases[] = {
      {"--kubeconfig wins over everything", flag_path,
       with(with({{"KUBECONFIG", env_path}}, in_cluster), home), "https://flag:1"},
      {"$KUBECONFIG beats in-cluster", "", with({{"KUBECONFIG", env_path}}, in_cluster),
       "https://env:1"},
      {"$KUBECONFIG list: first existing file",
       "",
       {{"KUBECONFIG", dir.Path("none.yaml") + ":" + env_path + ":" + flag_path}},
       "https://env:1"},
      {"$KUBECONFIG naming no file is an error", "", with({{"KUBECONFIG", "::/nope"}}, in_cluster),
       "", Code::kNotFound},
      {"in-cluster beats ~/.kube/config", "", with(in_cluster, home), "https://10.0.0.1:443"},
      {"in-cluster needs both host and port", "",
       with({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}}, home), "https://home:1"},
      {"~/.kube/config last", "", home, "https://home:1"},
      {"nothing at all", "", {{"HOME", dir.Path("nohome")}}, "", Code::kNotFound},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    LoadOptions options;
    options.kubeconfig = c.flag;
    options.serviceaccount_dir = dir.Path("sa");
    options.env = Env(c.env);
    const Result<ClusterConfig> got = LoadClusterConfig(options);
    if (c.want_server.empty()) {
      CHECK(got.code() == c.want_code);
    } else {
      REQUIRE_MESSAGE(got.ok(), got.status().ToString());
      CHECK(got->server == c.want_server);
    }
  }

  SUBCASE("the error when nothing is found says where it looked") {
    LoadOptions options;
    options.env = Env({});
    const Result<ClusterConfig> got = LoadClusterConfig(options);
    CHECK(got.status().message() ==
          "no cluster configuration: --kubeconfig not given, $KUBECONFIG not set, not in-cluster "
          "($KUBERNETES_SERVICE_HOST/_PORT not set) and no ~/.kube/config");
  }
  SUBCASE("--context applies to the kubeconfig found") {
    LoadOptions options;
    options.context = "other";
    options.env = Env(home);
    const Result<ClusterConfig> got = LoadClusterConfig(options);
    REQUIRE(got.ok());
    CHECK(got->server == "https://second.example:6443");
  }
  SUBCASE("--context while in-cluster is an error") {
    LoadOptions options;
    options.context = "other";
    options.serviceaccount_dir = dir.Path("sa");
    options.env = Env(in_cluster);
    CHECK(LoadClusterConfig(options).code() == Code::kBadConfig);
  }
}

}  // namespace
}  // namespace leasehold::kube
