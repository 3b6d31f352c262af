#include "serve/http_server.h"

#include <algorithm>
#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "record/trace_file.h"
#include "serve/api.h"
#include "serve/connection.h"
#include "serve/http_guard.h"

namespace kernrl::serve {

namespace websocket = beast::websocket;
using nlohmann::json;

namespace {

constexpr auto kReadTimeout = std::chrono::seconds(60);  // an HTTP request, once started
constexpr auto kDrainTime = std::chrono::seconds(5);     // reading what a closed one still sends
constexpr size_t kHeaderLimit = 64 * 1024;               // an HTTP request's header
// What an HTTP connection buffers ahead of the parser: a header, a chunk header with its
// extensions, or a body's trailer over this is refused (431).
constexpr size_t kReadBuffer = kHeaderLimit + 16 * 1024;
constexpr auto kAcceptBackoff = std::chrono::milliseconds(250);  // after accept fails (EMFILE)

std::string header_text(const http::response_header<>& h) {
  std::ostringstream o;
  o << h;
  return o.str();
}

// ---- HTTP connections ----

class HttpConn : public Connection, public std::enable_shared_from_this<HttpConn> {
 public:
  // `counted`: the connection holds one of max_connections; otherwise it is refused at once.
  HttpConn(Shared& sh, tcp::socket&& s, bool counted)
      : sh_(sh), stream_(std::move(s)), counted_(counted), buf_(kReadBuffer) {
    on_chunk_ = [this](uint64_t, beast::string_view ext, beast::error_code& ec) {
      chunk_ext_ += ext.size();
      if (chunk_ext_ > kMaxChunkExtensions) ec = http::error::bad_chunk_extension;
    };
  }
  ~HttpConn() override {
    if (counted_) --sh_.open;
    sh_.gone();
  }

  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (self->counted_) return self->do_read();
      self->keep_alive_ = false;
      self->in_request_ = true;
      self->endpoint_ = "other";
      HttpResponse r = refusal("/v1", 503, "TOO_MANY_CONNECTIONS",
                               "the server has " + std::to_string(self->sh_.opt.max_connections) +
                                   " connections open (--max-connections); try again later");
      r.headers.emplace_back("Retry-After", "1");
      self->enqueue(self->render(r), true);
    });
  }

  void shut() override {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      if (!self->in_request_) self->stream_.cancel();  // the idle read ends, then close()
    });
  }

  // On the strand: queues bytes to send; `last` ends the response.
  void enqueue(std::string bytes, bool last) {
    outbox_.push_back(std::move(bytes));
    if (last) response_done_ = true;
    if (!writing_) write_next();
  }

 private:
  // A request is read in two steps: its header, which the guard checks (method, size, transfer
  // coding, Host, Origin, token, media type), then its body.
  void do_read() {
    if (closing_) return close();
    parser_.emplace();
    parser_->body_limit(sh_.opt.max_body_bytes);
    parser_->header_limit(kHeaderLimit);
    parser_->on_chunk_header(on_chunk_);
    chunk_ext_ = 0;
    stream_.expires_after(kReadTimeout);
    http::async_read_header(stream_, buf_, *parser_,
                            beast::bind_front_handler(&HttpConn::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, size_t) {
    if (ec) return on_read(ec, 0);
    if (auto refused = check_request_head(parser_->get().base(), sh_.guard)) {
      keep_alive_ = false;
      in_request_ = true;
      endpoint_ = "other";
      return enqueue(render(*refused), true);
    }
    http::async_read(stream_, buf_, *parser_,
                     beast::bind_front_handler(&HttpConn::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, size_t) {
    stream_.expires_never();
    if (ec == http::error::body_limit) {
      keep_alive_ = false;
      in_request_ = true;
      return respond_now(413, "PAYLOAD_TOO_LARGE",
                         "the request body is over the limit of " +
                             std::to_string(sh_.opt.max_body_bytes) + " bytes (--max-body-mb)");
    }
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow ||
        ec == http::error::bad_chunk_extension) {
      keep_alive_ = false;
      in_request_ = true;
      return respond_now(431, "HEADERS_TOO_LARGE",
                         "the request's header (64 KiB), a chunk header, its extensions (" +
                             std::to_string(kMaxChunkExtensions) +
                             " bytes over the body) or its trailer is over the limit");
    }
    if (ec == http::error::bad_transfer_encoding || ec == http::error::bad_content_length ||
        ec == http::error::bad_chunk || ec == http::error::bad_method ||
        ec == http::error::bad_target || ec == http::error::bad_version ||
        ec == http::error::bad_field || ec == http::error::bad_value) {
      keep_alive_ = false;
      in_request_ = true;
      return respond_now(400, "BAD_REQUEST", "malformed HTTP request: " + ec.message());
    }
    if (ec) return close();  // end of stream, timeout, or not HTTP
    http::request<http::string_body> req = parser_->release();
    if (buf_.capacity() > kReadBuffer / 2) buf_.shrink_to_fit();
    if (websocket::is_upgrade(req)) {
      std::string path(req.target());
      if (path.substr(0, path.find('?')) != "/ws") {
        keep_alive_ = false;
        in_request_ = true;
        return respond_now(404, "NOT_FOUND", "WebSocket sessions are at /ws");
      }
      start_websocket(sh_, std::move(stream_), std::move(req));
      return;
    }
    in_request_ = true;
    keep_alive_ = req.keep_alive();
    head_ = req.method() == http::verb::head;
    HttpRequest r;
    r.method = std::string(req.method_string());
    if (head_) r.method = "HEAD";
    r.target = std::string(req.target());
    r.body = std::move(req.body());
    r.authorization = std::string(req[http::field::authorization]);
    endpoint_ = endpoint_name(r.method, r.target);
    try {
      handle_http(sh_.svc, sh_.opt.token, r, std::make_shared<Out>(shared_from_this()));
    } catch (const std::exception& e) {  // a bug: said, answered, and the server goes on
      std::fprintf(stderr, "kernrl serve: internal error on %s: %s\n", endpoint_.c_str(), e.what());
      keep_alive_ = false;
      respond_now(500, "INTERNAL_ERROR", std::string("internal error: ") + e.what());
    }
  }

  void respond_now(int status, const char* code, const std::string& message) {
    HttpResponse r;
    r.status = status;
    r.body = json_line({{"error", {{"code", code}, {"message", message}}}});
    endpoint_ = "other";
    enqueue(render(r), true);
  }

  // A client that does not read its response is cut off after kReadTimeout without progress.
  void write_next() {
    writing_ = true;
    stream_.expires_after(kReadTimeout);
    net::async_write(stream_, net::buffer(outbox_.front()),
                     beast::bind_front_handler(&HttpConn::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, size_t) {
    writing_ = false;
    stream_.expires_never();
    outbox_.pop_front();
    if (ec) return close();
    if (!outbox_.empty()) return write_next();
    if (!response_done_) return;
    response_done_ = false;
    in_request_ = false;
    if (!keep_alive_ || closing_) return close();
    do_read();
  }

  // Ends the connection gracefully: no more sending, then what the client still sends (the rest
  // of an oversized body) is read and dropped, so that it reads the response rather than a reset.
  // The drain has one deadline, however slowly the client sends.
  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(kDrainTime);
    drain();
  }

  void drain() {
    stream_.async_read_some(
        net::buffer(scratch_), [self = shared_from_this()](beast::error_code ec, size_t n) {
          self->drained_ += n;
          if (ec || self->drained_ > 2 * self->sh_.opt.max_body_bytes + (1 << 20)) {
            beast::error_code ignored;
            self->stream_.socket().close(ignored);
            return;
          }
          self->drain();
        });
  }

 private:
  // A whole response as bytes (on the strand).
  std::string render(const HttpResponse& r) {
    sh_.svc.metrics().request(endpoint_, r.status);
    http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
    res.set(http::field::server, "kernrl/" KERNRL_VERSION);
    res.set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res.set(k, v);
    res.keep_alive(keep_alive_ && !closing_);
    res.body() = r.body;
    res.prepare_payload();
    if (head_) return header_text(res.base());
    std::ostringstream o;
    o << res;
    return o.str();
  }
  // The head of a chunked response (on the strand).
  std::string render_stream_head(int status, const std::string& content_type) {
    sh_.svc.metrics().request(endpoint_, status);
    http::response<http::empty_body> res{static_cast<http::status>(status), 11};
    res.set(http::field::server, "kernrl/" KERNRL_VERSION);
    res.set(http::field::content_type, content_type);
    res.keep_alive(keep_alive_ && !closing_);
    res.chunked(true);
    return header_text(res.base());
  }

  // The Responder handle_http answers through, from any thread: each answer is rendered and
  // queued on the connection's strand, in order.
  class Out : public Responder {
   public:
    explicit Out(std::shared_ptr<HttpConn> c) : c_(std::move(c)) {}
    void reply(HttpResponse r) override {
      net::post(c_->stream_.get_executor(),
                [c = c_, r = std::move(r)] { c->enqueue(c->render(r), true); });
    }
    void start_stream(int status, const std::string& content_type) override {
      net::post(c_->stream_.get_executor(), [c = c_, status, content_type] {
        c->enqueue(c->render_stream_head(status, content_type), false);
      });
    }
    void chunk(std::string data) override {
      if (data.empty()) return;
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", data.size());
      std::string bytes = size + data + "\r\n";
      net::post(c_->stream_.get_executor(),
                [c = c_, b = std::move(bytes)]() mutable { c->enqueue(std::move(b), false); });
    }
    void end_stream() override {
      net::post(c_->stream_.get_executor(), [c = c_] { c->enqueue("0\r\n\r\n", true); });
    }

   private:
    std::shared_ptr<HttpConn> c_;
  };

  Shared& sh_;
  beast::tcp_stream stream_;
  bool counted_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::function<void(uint64_t, beast::string_view, beast::error_code&)> on_chunk_;
  size_t chunk_ext_ = 0;
  std::deque<std::string> outbox_;
  std::string endpoint_;
  std::array<char, 16384> scratch_;
  size_t drained_ = 0;
  bool closed_ = false;
  bool writing_ = false, response_done_ = false, in_request_ = false, keep_alive_ = true,
       closing_ = false, head_ = false;
};

}  // namespace

struct Server::Impl {
  Impl(Service& svc, ServerOptions o)
      : sh{svc, std::move(o), {}, {0}, {0}, {}, {}, {}, false}, acceptor(ioc), backoff(ioc) {}

  void accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) {  // out of descriptors (EMFILE) or memory: wait, rather than spin on the error
        if (!accept_failed_.exchange(true))
          std::fprintf(stderr, "kernrl serve: cannot accept a connection: %s; retrying\n",
                       ec.message().c_str());
        backoff.expires_after(kAcceptBackoff);
        backoff.async_wait([this](beast::error_code e) {
          if (!e) accept();
        });
        return;
      }
      accept_failed_ = false;
      bool counted = ++sh.open <= sh.opt.max_connections;
      if (!counted) --sh.open;
      auto c = std::make_shared<HttpConn>(sh, std::move(s), counted);
      sh.add(c);
      c->start();
      accept();
    });
  }

  Shared sh;
  net::io_context ioc;
  tcp::acceptor acceptor;
  net::steady_timer backoff;
  std::atomic<bool> accept_failed_{false};
  std::vector<std::thread> threads;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
};

Server::Server(Service& svc, ServerOptions opt)
    : impl_(std::make_unique<Impl>(svc, std::move(opt))) {}

Server::~Server() {
  stop();
}

void Server::start() {
  auto& im = *impl_;
  beast::error_code ec;
  auto addr =
      net::ip::make_address(im.sh.opt.host == "localhost" ? "127.0.0.1" : im.sh.opt.host, ec);
  if (ec)
    throw std::runtime_error("--host " + im.sh.opt.host + ": not an IP address (" + ec.message() +
                             ")");
  tcp::endpoint ep(addr, im.sh.opt.port);
  im.sh.guard.token = im.sh.opt.token;
  im.sh.guard.allowed_origins = im.sh.opt.allow_origins;
  if (addr.is_loopback())
    im.sh.guard.allowed_hosts = loopback_hosts(im.sh.opt.host, im.sh.opt.allow_hosts);
  else if (!im.sh.opt.allow_hosts.empty())
    im.sh.guard.allowed_hosts = loopback_hosts(im.sh.opt.host, im.sh.opt.allow_hosts);
  std::string where = im.sh.opt.host + ":" + std::to_string(im.sh.opt.port);
  im.acceptor.open(ep.protocol(), ec);
  if (!ec) im.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) im.acceptor.bind(ep, ec);
  if (!ec) im.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error("cannot listen on " + where + ": " + ec.message());
  im.work.emplace(net::make_work_guard(im.ioc));
  im.accept();
  for (int i = 0; i < std::max(1, im.sh.opt.threads); ++i)
    im.threads.emplace_back([&im] {
      for (;;) {
        try {
          im.ioc.run();
          return;
        } catch (const std::exception& e) {  // a handler's bug must not take the server down
          std::fprintf(stderr, "kernrl serve: internal error: %s\n", e.what());
        }
      }
    });
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  beast::error_code ec;
  auto addr = net::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

uint16_t Server::port() const {
  beast::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

void Server::stop_accepting() {
  std::promise<void> done;
  net::post(impl_->acceptor.get_executor(), [&] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
    done.set_value();
  });
  if (!impl_->threads.empty()) done.get_future().wait();
}

void Server::close_connections() {
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard<std::mutex> l(impl_->sh.mu);
    impl_->sh.closing = true;
    for (auto& w : impl_->sh.conns)
      if (auto c = w.lock()) live.push_back(c);
  }
  for (auto& c : live) c->shut();
}

void Server::wait_closed(std::chrono::milliseconds grace) {
  std::unique_lock<std::mutex> l(impl_->sh.mu);
  impl_->sh.cv.wait_for(l, grace, [&] { return impl_->sh.live() == 0; });
}

void Server::stop() {
  if (!impl_) return;
  impl_->work.reset();
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
  impl_->threads.clear();
}

}  // namespace kernrl::serve
