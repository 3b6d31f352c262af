// OpenEnv's protocol for the kernrl environment: the WebSocket session (reset / step / state /
// close), the observation and state kernrl's OpenEnv client reads, the schemas and metadata, and
// the validation errors OpenEnv's server gives (docs/serve.md lists where kernrl differs).
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "serve/service.h"

namespace kernrl::serve {

// OpenEnv's error codes (WSErrorCode).
namespace ws_error {
constexpr const char* kInvalidJson = "INVALID_JSON";
constexpr const char* kUnknownType = "UNKNOWN_TYPE";
constexpr const char* kValidation = "VALIDATION_ERROR";
constexpr const char* kExecution = "EXECUTION_ERROR";
constexpr const char* kCapacity = "CAPACITY_REACHED";
constexpr const char* kSession = "SESSION_ERROR";
}  // namespace ws_error

// Nesting a client's JSON may have: deeper text is refused before it is parsed.
constexpr int kMaxJsonDepth = 64;

// Parses JSON text from a client. Throws std::exception (its what() says why) for text that is not
// JSON or nests deeper than kMaxJsonDepth.
nlohmann::json parse_client_json(const std::string& text);

// The input a validation error quotes, kept small: strings over 256 bytes are cut, large or nested
// arrays and objects become null (left out).
nlohmann::json small_input(const nlohmann::json& v);

// A JSON whole number from 0 up (a seed).
inline bool is_seed(const nlohmann::json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

// One episode's state (OpenEnv's KernelState).
struct Episode {
  std::string episode_id;
  std::string problem_id;  // empty before the first reset
  int step_count = 0;
  int turn = 0;
  int max_turns = 10;
  double best_speedup = 0;
  bool solved = false;
  std::string language = "cuda";  // the prompt's kernel language (reset's `language`)
  std::string suite;              // the suite of the problem (reset's `suite`); empty: the default

  nlohmann::json state() const;
  // Counts a graded step: turn, step_count, best_speedup, solved (correct and more than 1.05x
  // faster, as OpenEnv's kernrl environment has it).
  void count(const TraceRecord& record);
  bool done() const { return turn >= max_turns || solved; }
};

// {"observation": {...}, "reward": r, "done": d}: the payload of an observation message and of
// POST /reset and /step.
nlohmann::json reset_payload(const ProblemInfo& p, const std::string& gpu_info, int max_turns,
                             const std::string& language = "cuda");
nlohmann::json step_payload(const ProblemInfo* p, const Episode& e, const TraceRecord& record,
                            const std::string& gpu_info);

// {"type": "error", "data": {"message", "code", ...extra}}.
nlohmann::json ws_error_message(const char* code, const std::string& message,
                                const nlohmann::json& extra = nlohmann::json::object());

// Pydantic-style validation errors ([{type, loc, msg, input?}]) of a KernelAction (`code`, a
// non-empty string; `metadata`, an object; nothing else, and with `allow_problem_id` also
// `problem_id`, a string). Empty when valid.
nlohmann::json validate_action(const nlohmann::json& action, bool allow_problem_id);

// GET /schema, /metadata, /state (the state of a fresh environment).
nlohmann::json openenv_schema();
nlohmann::json openenv_metadata();
nlohmann::json openenv_fresh_state(int max_turns);

// One WebSocket connection: its episode and its messages, handled one at a time in arrival order
// (the transport hands over the next message only after the reply to this one). The transport
// keeps the session alive until every reply it was promised has come.
class WsSession {
 public:
  explicit WsSession(Service& svc);
  // `reply` gets the text to send (empty: none) and whether to close the connection after it;
  // it is called exactly once, possibly from a grading thread.
  using Reply = std::function<void(std::string text, bool close)>;
  void handle(const std::string& text, Reply reply);
  Episode episode() const;

 private:
  void reset(const nlohmann::json& data, const Reply& reply);
  void step(const nlohmann::json& data, const Reply& reply);

  Service& svc_;
  mutable std::mutex mu_;
  Episode ep_;
  const ProblemInfo* problem_ = nullptr;
  std::vector<std::string> examples_;  // the examples the episode's task prompt carries
};

}  // namespace kernrl::serve
