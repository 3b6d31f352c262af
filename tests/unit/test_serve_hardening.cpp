// kernrl serve's defences without the network: the checks on a request's header (method,
// transfer coding, Host, Origin, token, media type), the metrics' closed label set, problem names
// bounded and looked up in memory, unpredictable seeds, and what the cache holds and refuses.
#include <doctest/doctest.h>

#include <boost/beast/http.hpp>

#include "core/hash.h"
#include "core/problem.h"
#include "core/problem_catalog.h"
#include "grading/run.h"
#include "serve/api.h"
#include "serve/http_guard.h"
#include "serve/http_server.h"
#include "serve/service.h"

using namespace kernrl;
using namespace kernrl::serve;
namespace http = boost::beast::http;
using nlohmann::json;

namespace {

http::request_header<> head(http::verb v, const std::string& target) {
  http::request_header<> h;
  h.method(v);
  h.target(target);
  h.version(11);
  h.set(http::field::host, "127.0.0.1:8000");
  return h;
}

GuardOptions loopback() {
  GuardOptions g;
  g.allowed_hosts = loopback_hosts("127.0.0.1", {});
  return g;
}

int refused(const http::request_header<>& h, const GuardOptions& g, std::string* code = nullptr) {
  auto r = check_request_head(h, g);
  if (!r) return 0;
  if (code) {
    json j = json::parse(r->body);
    *code =
        j.contains("error") ? j["error"]["code"].get<std::string>() : j["code"].get<std::string>();
  }
  return r->status;
}

}  // namespace

TEST_CASE("serve guard: a plain request passes") {
  auto h = head(http::verb::get, "/v1");
  CHECK(refused(h, loopback()) == 0);
  auto p = head(http::verb::post, "/v1/grade");
  p.set(http::field::content_type, "application/json; charset=utf-8");
  CHECK(refused(p, loopback()) == 0);
}

TEST_CASE("serve guard: transfer codings other than a lone chunked are refused") {
  std::string code;
  for (const char* te :
       {"identity", "gzip", "chunked, identity", "xchunked", "gzip, chunked", ""}) {
    auto h = head(http::verb::post, "/v1/grade");
    h.set(http::field::content_type, "application/json");
    h.set(http::field::transfer_encoding, te);
    CAPTURE(te);
    CHECK(refused(h, loopback(), &code) == 400);
    CHECK(code == "BAD_TRANSFER_ENCODING");
  }
  auto two = head(http::verb::post, "/step");
  two.set(http::field::content_type, "application/json");
  two.insert(http::field::transfer_encoding, "identity");
  two.insert(http::field::transfer_encoding, "chunked");
  CHECK(refused(two, loopback()) == 400);
  auto ok = head(http::verb::post, "/step");
  ok.set(http::field::content_type, "application/json");
  ok.set(http::field::transfer_encoding, "Chunked");
  CHECK(refused(ok, loopback()) == 0);
}

TEST_CASE("serve guard: browsers' Origin and foreign Host names") {
  std::string code;
  auto h = head(http::verb::get, "/ws");
  h.set(http::field::origin, "http://evil.example");
  CHECK(refused(h, loopback(), &code) == 403);
  CHECK(code == "FORBIDDEN_ORIGIN");
  GuardOptions allow = loopback();
  allow.allowed_origins = {"http://lab.example:8443"};
  CHECK(refused(h, allow) == 403);
  h.set(http::field::origin, "http://lab.example:8443");
  CHECK(refused(h, allow) == 0);
  allow.allowed_origins = {"*"};
  h.set(http::field::origin, "null");
  CHECK(refused(h, allow) == 0);

  auto rebind = head(http::verb::get, "/v1");
  rebind.set(http::field::host, "attacker.example:8000");
  CHECK(refused(rebind, loopback(), &code) == 403);
  CHECK(code == "FORBIDDEN_HOST");
  for (const char* good :
       {"localhost:8000", "LOCALHOST", "[::1]:8000", "127.0.0.1", "localhost."}) {
    rebind.set(http::field::host, good);
    CAPTURE(good);
    CHECK(refused(rebind, loopback()) == 0);
  }
  GuardOptions extra;
  extra.allowed_hosts = loopback_hosts("127.0.0.1", {"gpu-box.lan"});
  rebind.set(http::field::host, "gpu-box.lan:8000");
  CHECK(refused(rebind, extra) == 0);
  rebind.erase(http::field::host);
  CHECK(refused(rebind, loopback()) == 403);    // HTTP/1.1 without Host
  CHECK(refused(rebind, GuardOptions{}) == 0);  // a non-loopback bind checks no Host
  CHECK(host_name("[::1]:80") == "[::1]");
  CHECK(is_loopback_host("127.0.0.2"));
  CHECK(is_loopback_host("::1"));
  CHECK(is_loopback_host("localhost"));
  CHECK(!is_loopback_host("0.0.0.0"));
  CHECK(!is_loopback_host("10.1.2.3"));
}

TEST_CASE("serve guard: POST bodies are JSON; the token is checked on the header") {
  std::string code;
  for (const char* ct : {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                         "application/jsonp", ""}) {
    auto h = head(http::verb::post, "/v1/grade");
    if (*ct) h.set(http::field::content_type, ct);
    CAPTURE(ct);
    CHECK(refused(h, loopback(), &code) == 415);
  }
  GuardOptions g = loopback();
  g.token = "s3cret";
  auto h = head(http::verb::post, "/v1/grade");
  h.set(http::field::content_type, "application/json");
  CHECK(refused(h, g, &code) == 401);
  h.set(http::field::authorization, "Bearer s3cret");
  CHECK(refused(h, g) == 0);
  CHECK(refused(head(http::verb::get, "/health"), g) == 0);
  CHECK(refused(head(http::verb::get, "/ws"), g) == 401);
}

TEST_CASE("serve guard: unknown methods and too many fields") {
  http::request_header<> h;
  h.method_string("XYZZY");
  h.target("/v1");
  h.version(11);
  h.set(http::field::host, "localhost");
  CHECK(refused(h, loopback()) == 501);
  auto many = head(http::verb::get, "/v1");
  for (size_t i = 0; i < kMaxHeaderFields; ++i) many.insert("X-Pad-" + std::to_string(i), "1");
  CHECK(refused(many, loopback()) == 431);
}

TEST_CASE("serve metrics: endpoint labels come from a closed set") {
  CHECK(endpoint_name("GET", "/v1") == "GET /v1");
  CHECK(endpoint_name("POST", "/v1/grade?x=1") == "POST /v1/grade");
  CHECK(endpoint_name(std::string(40000, 'M'), "/v1") == "other");
  CHECK(endpoint_name("DELETE", "/v1") == "other");
  CHECK(endpoint_name("GET", "/nowhere/" + std::string(1000, 'x')) == "other");
}

TEST_CASE("problem names: bounded, and matched over ids in memory") {
  std::vector<std::string> ids = {"L1_23_Softmax", "L1_24_LogSoftmax", "L2_5_Conv"};
  CHECK(match_problem_id(ids, "L1_23") == "L1_23_Softmax");
  CHECK(match_problem_id(ids, "conv") == "L2_5_Conv");
  CHECK_THROWS_WITH_AS(match_problem_id(ids, "softmax"), doctest::Contains("ambiguous"), SpecError);
  CHECK_THROWS_WITH_AS(match_problem_id(ids, "L1_23_Softmx"), doctest::Contains("did you mean"),
                       SpecError);
  CHECK_THROWS_WITH_AS(match_problem_id(ids, std::string(1500000, 'a')),
                       doctest::Contains("at most"), SpecError);
}

TEST_CASE("seeds: keyed, so that what a client sees does not predict them") {
  std::string k1 = fresh_secret_key(), k2 = fresh_secret_key();
  CHECK(k1.size() == 32);
  CHECK(k1 != k2);
  CHECK(keyed_seed(k1, 7, "1request-1") == keyed_seed(k1, 7, "1request-1"));
  CHECK(keyed_seed(k1, 7, "1request-1") != keyed_seed(k2, 7, "1request-1"));
  CHECK(keyed_seed(k1, 7, "1request-1") != keyed_seed(k1, 8, "1request-1"));
  CHECK(keyed_seed(k1, 7, "1request-1") != keyed_seed(k1, 7, "2request-1"));
  // A run with a key derives its answers' seeds with it: the run seed alone does not give them.
  RunOptions o;
  o.name = "t";
  o.seed = 7;
  Run plain(o);
  o.seed_key = k1;
  Run keyed(o);
  CHECK(plain.seed_for("1request-1") == derive_seed(7, "1request-1") >> 1);
  CHECK(keyed.seed_for("1request-1") == keyed_seed(k1, 7, "1request-1") >> 1);
  CHECK(keyed.seed_for("1request-1") != plain.seed_for("1request-1"));
}

TEST_CASE("serve cache: nondeterministic records are not kept; entries counted by their bytes") {
  auto rec = [](json correctness) {
    return TraceRecord::from_json({{"schema", "kernrl.trace.v1"},
                                   {"status", "correct"},
                                   {"correctness", std::move(correctness)}});
  };
  CHECK(!shows_nondeterminism(rec(nullptr)));
  CHECK(!shows_nondeterminism(rec({{"n_trials", 3}, {"n_passed", 3}})));
  CHECK(!shows_nondeterminism(rec({{"n_trials", 3}, {"n_passed", 0}})));
  CHECK(shows_nondeterminism(rec({{"n_trials", 3}, {"n_passed", 2}})));
  CHECK(shows_nondeterminism(rec({{"n_trials", 1},
                                  {"n_passed", 1},
                                  {"trials", {{{"passed", true}, {"rerun_passed", false}}}}})));
  std::string line(5000, 'x'), key(100, 'k');
  CHECK(cache_entry_bytes(key, line) >= line.size() + 2 * key.size());
}
