// What the two kinds of connection of `kernrl serve`'s network side share (http_server.cpp: the
// HTTP connections and the acceptor; ws_connection.cpp: the WebSocket sessions): the server's
// state every connection sees, and the shutdown hook each one has. Internal to src/serve.
#pragma once

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "serve/http_guard.h"
#include "serve/http_server.h"
#include "serve/service.h"

namespace kernrl::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// What the server does with every connection at shutdown.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void shut() = 0;
};

struct Shared {
  Service& svc;
  ServerOptions opt;
  GuardOptions guard;
  std::atomic<size_t> open{0};         // connections counted against max_connections
  std::atomic<size_t> inbox_bytes{0};  // WebSocket messages read ahead, over all sessions
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::weak_ptr<Connection>> conns;
  bool closing = false;

  void add(const std::shared_ptr<Connection>& c) {
    std::lock_guard<std::mutex> l(mu);
    conns.erase(std::remove_if(conns.begin(), conns.end(),
                               [](const std::weak_ptr<Connection>& w) { return w.expired(); }),
                conns.end());
    conns.push_back(c);
  }
  void gone() {
    { std::lock_guard<std::mutex> l(mu); }
    cv.notify_all();
  }
  size_t live() {
    size_t n = 0;
    for (auto& w : conns) n += !w.expired();
    return n;
  }
};

// Takes over `stream`, whose request `req` asked for a WebSocket upgrade at /ws: accepts it (or,
// at the session cap, accepts, says why and closes) and serves the session on the stream's strand.
void start_websocket(Shared& sh, beast::tcp_stream&& stream, http::request<http::string_body> req);

}  // namespace kernrl::serve
