// The network side of `kernrl serve` (Boost.Beast on Boost.Asio): HTTP/1.1 with keep-alive and
// chunked streaming, and WebSocket sessions at /ws, each connection on a strand of a small pool of
// threads. Everything else is in Service, WsSession and handle_http.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serve/service.h"

namespace kernrl::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;                    // 0: any free port (port() says which)
  std::string token;                       // bearer token; empty: none
  size_t max_body_bytes = 8 << 20;         // an HTTP body or a WebSocket message
  int threads = 2;                         // network threads
  size_t max_connections = 512;            // open connections; more are refused with 503
  std::vector<std::string> allow_origins;  // --allow-origin: Origin values allowed ("*": any)
  std::vector<std::string> allow_hosts;    // --allow-host: Host names allowed besides the bind's
};

// Whether `host` (an address, or "localhost") is a loopback address. False for a name or an
// address that does not parse.
bool is_loopback_host(const std::string& host);

class Server {
 public:
  Server(Service& svc, ServerOptions opt);
  ~Server();
  // Binds and listens, then serves on the network threads. Throws std::runtime_error naming the
  // address when it cannot bind.
  void start();
  uint16_t port() const;
  // Shutdown, in order: no new connections; then (once every answer is out) close every
  // connection: WebSocket sessions with 1001 "going away" after their pending replies, HTTP
  // connections after their current response; wait up to `grace` for them to go; stop.
  void stop_accepting();
  void close_connections();
  void wait_closed(std::chrono::milliseconds grace);
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kernrl::serve
