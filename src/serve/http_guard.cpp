#include "serve/http_guard.h"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <cctype>
#include <iterator>

#include "record/trace_file.h"

namespace kernrl::serve {

namespace http = boost::beast::http;

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool listed(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// The transfer codings a request names, over all its Transfer-Encoding fields, in order.
std::vector<std::string> transfer_codings(const http::request_header<>& h) {
  std::vector<std::string> out;
  for (const auto& f : h) {
    if (f.name() != http::field::transfer_encoding) continue;
    http::token_list list{f.value()};
    for (auto t : list) out.push_back(lower(std::string(t)));
    if (list.begin() == list.end()) out.push_back("");  // an empty or malformed value
  }
  return out;
}

// "application/json" and "application/json; charset=utf-8", in any case.
bool json_media_type(std::string v) {
  v = lower(v.substr(0, v.find(';')));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
  return v == "application/json";
}

std::string path_of(const std::string& target) {
  return target.substr(0, target.find('?'));
}

}  // namespace

std::vector<std::string> loopback_hosts(const std::string& host,
                                        const std::vector<std::string>& extra) {
  std::vector<std::string> out = {"localhost", "127.0.0.1", "[::1]"};
  std::string h = lower(host);
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";
  if (!listed(out, h)) out.push_back(h);
  for (const auto& e : extra)
    if (!listed(out, host_name(e))) out.push_back(host_name(e));
  return out;
}

std::string host_name(const std::string& host_header) {
  std::string h = lower(host_header);
  if (!h.empty() && h.front() == '[') {
    size_t close = h.find(']');
    h = close == std::string::npos ? h : h.substr(0, close + 1);
  } else {
    h = h.substr(0, h.find(':'));
  }
  if (!h.empty() && h.back() == '.') h.pop_back();
  return h;
}

HttpResponse refusal(const std::string& target, int status, const std::string& code,
                     const std::string& message) {
  std::string path = path_of(target);
  bool v1 = path == "/v1" || path.rfind("/v1/", 0) == 0;
  HttpResponse r;
  r.status = status;
  r.body = v1 ? json_line({{"error", {{"code", code}, {"message", message}}}})
              : json_line({{"detail", message}, {"code", code}});
  return r;
}

std::optional<HttpResponse> check_request_head(const http::request_header<>& h,
                                               const GuardOptions& opt) {
  std::string target(h.target());
  if (h.method() == http::verb::unknown)
    return refusal(target, 501, "NOT_IMPLEMENTED", "unknown method; kernrl serves GET and POST");
  if (static_cast<size_t>(std::distance(h.begin(), h.end())) > kMaxHeaderFields)
    return refusal(target, 431, "HEADERS_TOO_LARGE",
                   "more than " + std::to_string(kMaxHeaderFields) + " header fields");
  std::vector<std::string> codings = transfer_codings(h);
  if (!codings.empty() && !(codings.size() == 1 && codings[0] == "chunked"))
    return refusal(target, 400, "BAD_TRANSFER_ENCODING",
                   "Transfer-Encoding must be exactly 'chunked' (no other coding is accepted)");
  if (!opt.allowed_hosts.empty()) {
    auto host = h.find(http::field::host);
    if (host == h.end() ? h.version() >= 11
                        : !listed(opt.allowed_hosts, host_name(std::string(host->value()))))
      return refusal(target, 403, "FORBIDDEN_HOST",
                     "the Host header names none of the names this server answers to "
                     "(--allow-host adds one)");
  }
  if (auto origin = h.find(http::field::origin); origin != h.end()) {
    std::string o(origin->value());
    if (!listed(opt.allowed_origins, "*") && !listed(opt.allowed_origins, o))
      return refusal(target, 403, "FORBIDDEN_ORIGIN",
                     "requests from web pages are refused unless their origin is allowed "
                     "(--allow-origin)");
  }
  bool health = path_of(target) == "/health" &&
                (h.method() == http::verb::get || h.method() == http::verb::head);
  if (!health && !authorized(opt.token, std::string(h[http::field::authorization]))) {
    HttpResponse r = refusal(target, 401, "UNAUTHORIZED", "a bearer token is required");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  if (h.method() == http::verb::post && !json_media_type(std::string(h[http::field::content_type])))
    return refusal(target, 415, "UNSUPPORTED_MEDIA_TYPE",
                   "a POST body must be sent as Content-Type: application/json");
  return std::nullopt;
}

}  // namespace kernrl::serve
