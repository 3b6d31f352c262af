// The WebSocket sessions of `kernrl serve` (/ws, OpenEnv's protocol): each session reads messages
// ahead into a bounded inbox, hands them one at a time to its WsSession (openenv.h), writes the
// replies in order, and stops reading a client that does not read its replies.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdio>
#include <deque>
#include <string>

#include "record/trace_file.h"
#include "serve/connection.h"
#include "serve/openenv.h"

namespace kernrl::serve {

namespace websocket = beast::websocket;
using nlohmann::json;

namespace {

constexpr size_t kMaxInbox = 4;  // WebSocket messages read ahead of the one being handled
// Replies a WebSocket session may have waiting to be sent before its messages are no longer read;
// when none of them is taken for kUnreadTimeout, the connection is dropped.
constexpr size_t kOutboxLimit = 1 << 20;
constexpr auto kUnreadTimeout = std::chrono::seconds(10);

// A WebSocket session at /ws: messages read ahead into a bounded inbox, handled one at a time by
// its WsSession, replies written in order; back-pressure on clients that do not read.
class WsConn : public Connection, public std::enable_shared_from_this<WsConn> {
 public:
  WsConn(Shared& sh, beast::tcp_stream&& stream)
      : sh_(sh), ws_(std::move(stream)), session_(sh.svc), unread_(ws_.get_executor()) {
    ++sh_.open;
  }

  ~WsConn() override {
    if (slot_) sh_.svc.close_session();
    drop_inbox();
    --sh_.open;
    sh_.gone();
  }

  void run(http::request<http::string_body> req) {
    size_t active = 0, max = 0;
    slot_ = sh_.svc.open_session(&active, &max);
    if (!slot_) {
      refusal_ = json_line(ws_error_message(ws_error::kCapacity,
                                            "Server at capacity: " + std::to_string(active) + "/" +
                                                std::to_string(max) +
                                                " sessions active. Cannot accept new connections.",
                                            {{"active_sessions", active}, {"max_sessions", max}}));
    }
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout t;
    t.handshake_timeout = std::chrono::seconds(30);
    t.idle_timeout = std::chrono::seconds(300);
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
      res.set(http::field::server, "kernrl/" KERNRL_VERSION);
    }));
    ws_.read_message_max(sh_.opt.max_body_bytes);
    ws_.auto_fragment(false);
    ws_.async_accept(req, beast::bind_front_handler(&WsConn::on_accept, shared_from_this()));
  }

  void shut() override {
    net::post(ws_.get_executor(), [self = shared_from_this()] {
      if (self->closing_) return;
      self->closing_ = true;
      self->close_code_ = websocket::close_code::going_away;
      // Messages received but not yet handled get an explicit answer.
      for (size_t i = 0; i < self->inbox_.size(); ++i)
        self->send(json_line(ws_error_message(
            ws_error::kExecution, "the server is shutting down; this message was not handled",
            {{"reason", "shutdown"}})));
      self->drop_inbox();
      self->maybe_close();
    });
  }

 private:
  void on_accept(beast::error_code ec) {
    if (ec) return;
    if (!slot_) {  // as OpenEnv does: accept, say why, close
      closing_ = true;
      send(refusal_);
      do_read();
      return;
    }
    {
      std::lock_guard<std::mutex> l(sh_.mu);
      if (sh_.closing) closing_ = true, close_code_ = websocket::close_code::going_away;
    }
    do_read();
    maybe_close();
  }

  void do_read() {
    reading_ = true;
    ws_.async_read(buf_, beast::bind_front_handler(&WsConn::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, size_t) {
    reading_ = false;
    if (ec) {  // closed, timed out, or a message over the limit (closed with 1009)
      dead_ = true;
      drop_inbox();
      unread_.cancel();
      return;
    }
    std::string text = beast::buffers_to_string(buf_.data());
    buf_.consume(buf_.size());
    if (buf_.capacity() > 64 * 1024) buf_.shrink_to_fit();  // a large message's room goes back
    if (closing_) {
      if (slot_)
        send(json_line(ws_error_message(ws_error::kExecution,
                                        "the server is shutting down; this message was not handled",
                                        {{"reason", "shutdown"}})));
      maybe_close();
    } else {
      sh_.inbox_bytes += text.size();
      inbox_.push_back(std::move(text));
      pump();
    }
    maybe_read();
  }

  // Reads the next message unless this session has enough waiting: kMaxInbox messages, or
  // (beyond the one being handled) more than every session's share of the global bound, or
  // replies its client does not read.
  void maybe_read() {
    if (reading_ || dead_) return;
    if (outbox_bytes_ >= kOutboxLimit) return watch_unread();
    if (closing_) return inbox_.size() < kMaxInbox ? do_read() : void();
    bool idle = inbox_.empty() && !busy_;
    if (idle || (inbox_.size() < kMaxInbox && sh_.inbox_bytes.load() < inbox_budget())) do_read();
  }

  size_t inbox_budget() const { return 8 * sh_.opt.max_body_bytes; }

  void drop_inbox() {
    for (const auto& m : inbox_) sh_.inbox_bytes -= m.size();
    inbox_.clear();
  }

  // The client has left kOutboxLimit of replies unread: if none is taken for kUnreadTimeout, the
  // connection is dropped (no close frame can pass replies that are not read).
  void watch_unread() {
    if (watching_) return;
    watching_ = true;
    unread_.expires_at(last_write_ + kUnreadTimeout);
    unread_.async_wait([self = shared_from_this()](beast::error_code ec) {
      self->watching_ = false;
      if (ec || self->dead_ || self->outbox_bytes_ < kOutboxLimit) return self->maybe_read();
      if (std::chrono::steady_clock::now() < self->last_write_ + kUnreadTimeout)
        return self->watch_unread();
      self->sh_.svc.metrics().session_dropped("unread");
      self->dead_ = true;
      self->drop_inbox();
      beast::error_code ignored;
      beast::get_lowest_layer(self->ws_).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(self->ws_).socket().close(ignored);
    });
  }

  void pump() {
    if (busy_ || closing_ || dead_ || inbox_.empty()) return;
    busy_ = true;
    std::string msg = std::move(inbox_.front());
    inbox_.pop_front();
    sh_.inbox_bytes -= msg.size();
    auto self = shared_from_this();
    auto reply = [self](std::string text, bool close) {
      net::post(self->ws_.get_executor(), [self, text = std::move(text), close]() mutable {
        self->on_reply(std::move(text), close);
      });
    };
    try {
      session_.handle(msg, reply);
    } catch (const std::exception& e) {  // a bug: said, answered, and the session goes on
      std::fprintf(stderr, "kernrl serve: internal error in a WebSocket session: %s\n", e.what());
      reply(json_line(ws_error_message(ws_error::kExecution,
                                       std::string("internal error: ") + e.what(),
                                       {{"reason", "internal"}})),
            false);
    }
  }

  void on_reply(std::string reply, bool close) {
    busy_ = false;
    if (!reply.empty()) send(std::move(reply));
    if (close) {
      closing_ = true;
      drop_inbox();
    }
    pump();
    if (!closing_) maybe_read();
    maybe_close();
  }

  void send(std::string text) {
    if (dead_) return;
    if (outbox_.empty()) last_write_ = std::chrono::steady_clock::now();
    outbox_bytes_ += text.size();
    outbox_.push_back(std::move(text));
    if (!writing_) write_next();
  }

  void write_next() {
    writing_ = true;
    ws_.text(true);
    ws_.async_write(net::buffer(outbox_.front()),
                    beast::bind_front_handler(&WsConn::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, size_t) {
    writing_ = false;
    outbox_bytes_ -= outbox_.front().size();
    outbox_.pop_front();
    last_write_ = std::chrono::steady_clock::now();
    if (ec) {
      dead_ = true;
      outbox_.clear();
      outbox_bytes_ = 0;
      return;
    }
    if (!outbox_.empty()) write_next();
    maybe_read();
    if (outbox_.empty()) maybe_close();
  }

  void maybe_close() {
    if (!closing_ || dead_ || busy_ || writing_ || !outbox_.empty() || close_sent_) return;
    close_sent_ = true;
    ws_.async_close(websocket::close_reason(close_code_),
                    [self = shared_from_this()](beast::error_code) { self->dead_ = true; });
  }

  Shared& sh_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buf_;
  WsSession session_;
  bool slot_ = false;
  std::string refusal_;
  std::deque<std::string> inbox_, outbox_;
  size_t outbox_bytes_ = 0;
  net::steady_timer unread_;
  std::chrono::steady_clock::time_point last_write_ = std::chrono::steady_clock::now();
  bool reading_ = false, busy_ = false, writing_ = false, closing_ = false, dead_ = false,
       close_sent_ = false, watching_ = false;
  websocket::close_code close_code_ = websocket::close_code::normal;
};

}  // namespace

void start_websocket(Shared& sh, beast::tcp_stream&& stream, http::request<http::string_body> req) {
  auto ws = std::make_shared<WsConn>(sh, std::move(stream));
  sh.add(ws);
  ws->run(std::move(req));
}

}  // namespace kernrl::serve
