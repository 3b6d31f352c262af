// The building blocks of every typed JSON object kernrl's processes exchange or write: the trace
// record (record/trace_record.h), its parts (protocol/parts.h) and the worker's messages
// (protocol/worker.h). A field may be absent, null or a value; a Codec says how each C++ type
// reads from and writes to JSON; an object type lists its fields once, in a static visit(), and
// that one list is its reader, its writer and its escaper.
//
// Two ways of reading. The tolerant one (Codec::decode, what the record's reader uses):
// A record read from a file must come back out byte for byte, whatever kernrl version or person
// wrote it. So a field remembers what it read when its type cannot say it the same way: a value of
// an unexpected type (`"level": "one"`) is kept as read (the field is then "odd": it reads as no
// value), and a value its type reads with a loss of form (`"ms": 81` read as the double 81.0) is
// written back as it was read while it keeps that value. Keys an object does not know are kept in
// its `extra` object. Nothing here throws on odd input.
//
// The strict one (read_message, what both ends of the worker protocol use): the same decode, then
// every field is checked, nested objects and arrays included: a value of the wrong type, or a key
// visit() marks `required` that is missing or null, is a ProtocolError naming the key
// (`launches[0].grid`). Keys no visit() names are kept, as in the tolerant reader.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/safe_text.h"
#include "protocol/status.h"

namespace kernrl {

// How a JSON value read as a C++ value.
enum class Decoded {
  No,     // not at all: the field keeps the JSON as it was (odd)
  Exact,  // writing the value back gives the same JSON text
  Lossy,  // the value is right but its JSON form differs (an integer read as a double)
};

// Base of the typed objects (the record, its parts, the worker's messages): the keys the type does
// not know, kept as they were read and written back beside the typed ones.
//
// A derived type has a static visit(self, v) that calls v(key, field) for each of its fields, in
// its order, or v(key, field, required) for a key its messages must carry (checked by strict
// reads only; the tolerant reader reads every key as optional).
struct RecordObject {
  // User-provided, so that no record type is an aggregate a JSON value could brace-initialise.
  RecordObject() {}
  // An object of those keys; null when there are none (no allocation: a record holds a dozen of
  // these objects, most of them absent).
  nlohmann::json extra;
};

// Reading and writing one C++ type: decode(json, out) -> Decoded, encode(value) -> json, and
// escape(value): every string inside made valid UTF-8 (core/safe_text.h).
template <class T, class Enable = void>
struct Codec;

template <>
struct Codec<std::string> {
  static Decoded decode(const nlohmann::json& j, std::string& out) {
    if (!j.is_string()) return Decoded::No;
    out = j.get<std::string>();
    return Decoded::Exact;
  }
  static nlohmann::json encode(const std::string& v) { return v; }
  static void escape(std::string& v) {
    if (!is_valid_utf8(v)) v = escape_invalid_utf8(v);
  }
};

template <>
struct Codec<bool> {
  static Decoded decode(const nlohmann::json& j, bool& out) {
    if (!j.is_boolean()) return Decoded::No;
    out = j.get<bool>();
    return Decoded::Exact;
  }
  static nlohmann::json encode(bool v) { return v; }
  static void escape(bool&) {}
};

// Whole numbers (int, int64_t, uint64_t): an integer in range reads exactly (signed and unsigned
// JSON integers are written alike); a float with a whole value in range reads with a loss of form.
template <class T>
struct Codec<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  static Decoded decode(const nlohmann::json& j, T& out) {
    if (j.is_number_unsigned()) {
      uint64_t v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return Decoded::No;
      out = static_cast<T>(v);
      return Decoded::Exact;
    }
    if (j.is_number_integer()) {
      int64_t v = j.get<int64_t>();
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 &&
           static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        return Decoded::No;
      out = static_cast<T>(v);
      return Decoded::Exact;
    }
    if (j.is_number_float()) {
      double v = j.get<double>();
      // Strictly inside T's range (the bounds as doubles may round past it).
      if (!std::isfinite(v) || v != std::floor(v) ||
          v < static_cast<double>(std::numeric_limits<T>::min()) ||
          v >= static_cast<double>(std::numeric_limits<T>::max()))
        return Decoded::No;
      out = static_cast<T>(v);
      return Decoded::Lossy;
    }
    return Decoded::No;
  }
  static nlohmann::json encode(T v) { return v; }
  static void escape(T&) {}
};

template <>
struct Codec<double> {
  static Decoded decode(const nlohmann::json& j, double& out) {
    if (!j.is_number()) return Decoded::No;
    out = j.get<double>();
    return j.is_number_float() ? Decoded::Exact : Decoded::Lossy;
  }
  static nlohmann::json encode(double v) { return v; }
  static void escape(double&) {}
};

// An element that may be null inside an array or map (a time that was not taken): null reads as
// no value and no value writes null.
template <class V>
struct Codec<std::optional<V>> {
  static Decoded decode(const nlohmann::json& j, std::optional<V>& out) {
    if (j.is_null()) {
      out.reset();
      return Decoded::Exact;
    }
    V v{};
    Decoded d = Codec<V>::decode(j, v);
    if (d != Decoded::No) out = std::move(v);
    return d;
  }
  static nlohmann::json encode(const std::optional<V>& v) {
    return v ? Codec<V>::encode(*v) : nlohmann::json(nullptr);
  }
  static void escape(std::optional<V>& v) {
    if (v) Codec<V>::escape(*v);
  }
};

// A status is one of protocol/status.h's names; any other string is kept as read (odd).
template <>
struct Codec<Status> {
  static Decoded decode(const nlohmann::json& j, Status& out) {
    if (!j.is_string()) return Decoded::No;
    auto s = status_from_string(j.get_ref<const std::string&>());
    if (!s) return Decoded::No;
    out = *s;
    return Decoded::Exact;
  }
  static nlohmann::json encode(Status v) { return to_string(v); }
  static void escape(Status&) {}
};

// Opaque JSON, passed through as it is (any value but null, which is the field's own state).
template <>
struct Codec<nlohmann::json> {
  static Decoded decode(const nlohmann::json& j, nlohmann::json& out) {
    out = j;
    return Decoded::Exact;
  }
  static nlohmann::json encode(const nlohmann::json& v) { return v; }
  static void escape(nlohmann::json& v) { escape_invalid_utf8_in(v); }
};

inline Decoded worse(Decoded a, Decoded b) {
  return a == Decoded::No || b == Decoded::No         ? Decoded::No
         : a == Decoded::Lossy || b == Decoded::Lossy ? Decoded::Lossy
                                                      : Decoded::Exact;
}

template <class V>
struct Codec<std::vector<V>> {
  static Decoded decode(const nlohmann::json& j, std::vector<V>& out) {
    if (!j.is_array()) return Decoded::No;
    out.clear();
    Decoded d = Decoded::Exact;
    for (const auto& e : j) {
      V v{};
      d = worse(d, Codec<V>::decode(e, v));
      if (d == Decoded::No) return d;
      out.push_back(std::move(v));
    }
    return d;
  }
  static nlohmann::json encode(const std::vector<V>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : v) a.push_back(Codec<V>::encode(e));
    return a;
  }
  static void escape(std::vector<V>& v) {
    for (auto& e : v) Codec<V>::escape(e);
  }
};

template <class V>
struct Codec<std::map<std::string, V>> {
  static Decoded decode(const nlohmann::json& j, std::map<std::string, V>& out) {
    if (!j.is_object()) return Decoded::No;
    out.clear();
    Decoded d = Decoded::Exact;
    for (auto it = j.begin(); it != j.end(); ++it) {
      V v{};
      d = worse(d, Codec<V>::decode(it.value(), v));
      if (d == Decoded::No) return d;
      out.emplace(it.key(), std::move(v));
    }
    return d;
  }
  static nlohmann::json encode(const std::map<std::string, V>& v) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, e] : v) o[k] = Codec<V>::encode(e);
    return o;
  }
  static void escape(std::map<std::string, V>& v) {
    std::map<std::string, V> fixed;
    for (auto& [k, e] : v) {
      Codec<V>::escape(e);
      fixed.emplace(is_valid_utf8(k) ? k : escape_invalid_utf8(k), std::move(e));
    }
    v = std::move(fixed);
  }
};

template <class T, class = void>
struct EqualityComparable : std::false_type {};
template <class T>
struct EqualityComparable<
    T, std::void_t<decltype(std::declval<const T&>() == std::declval<const T&>())>>
    : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class V>
struct IsVector<std::vector<V>> : std::true_type {};
template <class T>
struct IsStringMap : std::false_type {};
template <class V>
struct IsStringMap<std::map<std::string, V>> : std::true_type {};

// Whether values of T can be compared (containers: their elements; record objects cannot).
template <class T>
constexpr bool equality_comparable() {
  if constexpr (IsVector<T>::value)
    return equality_comparable<typename T::value_type>();
  else if constexpr (IsStringMap<T>::value)
    return equality_comparable<typename T::mapped_type>();
  else
    return EqualityComparable<T>::value;
}

// One field: absent (no key), null, a value, or odd (a value of another type, kept as read and
// reading as no value). A value read with a loss of form (an integer read as a double) is written
// back as it was read as long as it is still the value read.
template <class T>
class Field {
 public:
  Field() = default;
  Field(const T& v) : state_(kValue), value_(v) { null_json_is_null(); }
  Field(T&& v) : state_(kValue), value_(std::move(v)) { null_json_is_null(); }
  Field(std::nullptr_t) : state_(kNull) {}
  // Beside T's own constructors (a string field from a C string, a double field from an int).
  template <class U, class = std::enable_if_t<std::is_convertible_v<U, T> &&
                                              !std::is_same_v<std::decay_t<U>, T> &&
                                              !std::is_same_v<std::decay_t<U>, std::nullptr_t> &&
                                              !std::is_same_v<std::decay_t<U>, Field>>>
  Field(U&& v) : state_(kValue), value_(std::forward<U>(v)) {
    null_json_is_null();
  }

  // Null. A template taking nullptr only: a literal 0 is a null pointer constant too, and
  // `field = 0` must set the value 0 (through the converting constructor), not make it null.
  template <class N, std::enable_if_t<std::is_same_v<N, std::nullptr_t>, int> = 0>
  Field& operator=(N) {
    set_state(kNull);
    value_ = T{};
    return *this;
  }

  bool absent() const { return state_ == kAbsent; }
  bool is_null() const { return state_ == kNull; }
  bool has_value() const { return state_ == kValue; }
  // A value of a type this field does not read (kept as read, written back as it was).
  bool odd() const { return state_ == kOdd; }
  explicit operator bool() const { return has_value(); }

  const T& operator*() const { return checked(); }
  const T* operator->() const { return &checked(); }
  T& operator*() { return const_cast<T&>(checked()); }
  T* operator->() { return &const_cast<T&>(checked()); }
  // The value, or null when there is none.
  const T* get() const { return has_value() ? &value_ : nullptr; }
  T* get() { return has_value() ? &value_ : nullptr; }
  template <class U>
  T value_or(U&& otherwise) const {
    return has_value() ? value_ : static_cast<T>(std::forward<U>(otherwise));
  }
  // Makes the field a default value (keeping the one it has) and returns it for changing.
  T& emplace() {
    if (!has_value()) {
      value_ = T{};
      set_state(kValue);
    }
    return value_;
  }
  // Back to absent: no key.
  void reset() {
    set_state(kAbsent);
    value_ = T{};
  }

  // The JSON this field writes (null when absent).
  nlohmann::json to_json() const {
    switch (state_) {
      case kValue:
        return same_as_read() ? raw_ : Codec<T>::encode(value_);
      case kOdd:
        return raw_;
      default:
        return nullptr;
    }
  }
  // Sets the field from a JSON value, as the reader does.
  void assign_json(const nlohmann::json& v) {
    value_ = T{};
    raw_ = nullptr;
    if (v.is_null()) {
      state_ = kNull;
      return;
    }
    switch (Codec<T>::decode(v, value_)) {
      case Decoded::Exact:
        state_ = kValue;
        break;
      case Decoded::Lossy:
        state_ = kValue;
        raw_ = v;
        break;
      case Decoded::No:
        state_ = kOdd;
        value_ = T{};
        raw_ = v;
        break;
    }
  }

  // The reader and writer of the record's objects: `key` of `obj`.
  void read(const nlohmann::json& obj, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end())
      reset();
    else
      assign_json(*it);
  }
  void write(nlohmann::json& obj, const char* key) const {
    if (!absent()) obj[key] = to_json();
  }
  // Every string inside made valid UTF-8, the value's and the one kept as read.
  void escape_text() {
    if (has_value()) Codec<T>::escape(value_);
    if (!raw_.is_null()) escape_invalid_utf8_in(raw_);
  }

 private:
  enum State : unsigned char { kAbsent, kNull, kValue, kOdd };
  void set_state(State s) {
    state_ = s;
    raw_ = nullptr;
  }
  // An opaque JSON field given a null JSON value is null, as the reader would have it.
  void null_json_is_null() {
    if constexpr (std::is_same_v<T, nlohmann::json>)
      if (value_.is_null()) state_ = kNull;
  }
  const T& checked() const {
    if (!has_value()) throw std::logic_error("a field without a value was read");
    return value_;
  }
  // True when the value is still the one read from raw_ (kept for its form).
  bool same_as_read() const {
    if (raw_.is_null()) return false;
    if constexpr (equality_comparable<T>()) {
      T v{};
      return Codec<T>::decode(raw_, v) != Decoded::No && v == value_;
    } else {
      return false;
    }
  }

  State state_ = kAbsent;
  T value_{};
  nlohmann::json raw_;  // odd: the value as read; a value: the JSON it was read from, when T's
                        // form differs (written while the value is unchanged)
};

// A field equals a value when it has that value (absent, null and odd fields equal none).
template <class T>
bool operator==(const Field<T>& f, const std::common_type_t<T>& v) {
  return f.has_value() && *f == v;
}
template <class T>
bool operator!=(const Field<T>& f, const std::common_type_t<T>& v) {
  return !(f == v);
}

// The keys a record object's type knows, in its visit() order.
template <class T>
const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    T t;
    T::visit(t, [&](const char* key, auto&, auto&&...) { k.emplace_back(key); });
    return k;
  }();
  return keys;
}

// A typed object (derived from RecordObject, with its static visit()): an object whose known keys
// read as its fields and whose other keys are kept in `extra`. Fields a default member initializer
// gives a value (a message's wire defaults: `fatal` false) keep it when their key is missing.
template <class T>
struct Codec<T, std::enable_if_t<std::is_base_of_v<RecordObject, T>>> {
  static Decoded decode(const nlohmann::json& j, T& out) {
    if (!j.is_object()) return Decoded::No;
    out = T{};  // every field absent, or its default
    // One pass over the object's keys: each known key to its field by position in visit().
    static const std::map<std::string, size_t, std::less<>> position = [] {
      std::map<std::string, size_t, std::less<>> m;
      for (size_t i = 0; i < known_keys<T>().size(); ++i) m.emplace(known_keys<T>()[i], i);
      return m;
    }();
    for (auto it = j.begin(); it != j.end(); ++it) {
      auto at = position.find(it.key());
      if (at == position.end()) {
        out.extra[it.key()] = it.value();
        continue;
      }
      size_t i = 0;
      T::visit(out, [&](const char*, auto& field, auto&&...) {
        if (i++ == at->second) field.assign_json(it.value());
      });
    }
    return Decoded::Exact;
  }
  static nlohmann::json encode(const T& v) {
    nlohmann::json j = v.extra.is_object() ? v.extra : nlohmann::json::object();
    T::visit(v, [&](const char* key, const auto& field, auto&&...) { field.write(j, key); });
    return j;
  }
  static void escape(T& v) {
    T::visit(v, [](const char*, auto& field, auto&&...) { field.escape_text(); });
    escape_invalid_utf8_in(v.extra);
  }
};

// visit()'s mark of a key a message must carry: `v("status", s.status, required)`.
struct Required {};
constexpr Required required{};

// A message that breaks its protocol: a missing required key, or a value of the wrong type.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace strict {

template <class T>
void check_object(const T& obj, const nlohmann::json& j, const std::string& path);

// `v` as read from `j`.
template <class V>
void check_value(const V& v, const nlohmann::json& j, const std::string& path) {
  if constexpr (std::is_base_of_v<RecordObject, V>) {
    check_object(v, j, path);
  } else if constexpr (IsVector<V>::value) {
    for (size_t i = 0; i < v.size(); ++i)
      check_value(v[i], j.at(i), path + "[" + std::to_string(i) + "]");
  } else if constexpr (IsStringMap<V>::value) {
    for (const auto& [k, e] : v) check_value(e, j.at(k), path + "." + k);
  }
}

// Every field of `obj`, read from the object `j`: none odd, every required one given a value by
// `j` itself (a default member initializer does not stand in for a required key); nested objects
// alike.
template <class T>
void check_object(const T& obj, const nlohmann::json& j, const std::string& path) {
  T::visit(obj, [&](const char* key, const auto& field, auto&&... marks) {
    constexpr bool is_required =
        (std::is_same_v<std::decay_t<decltype(marks)>, Required> || ... || false);
    const std::string at = path.empty() ? std::string(key) : path + "." + key;
    if (field.odd())
      throw ProtocolError("key '" + at + "' has an unexpected value: " +
                          field.to_json()
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                              .substr(0, 200));
    auto it = j.find(key);
    const bool given = it != j.end() && !it->is_null();
    if (is_required && !given)
      throw ProtocolError("key '" + at + (it != j.end() ? "' is null" : "' is missing"));
    if (given && field.has_value()) check_value(*field, *it, at);
  });
}

}  // namespace strict

// The strict reader of a message: `j` read as T (its visit()), then checked: throws ProtocolError
// ("<what>: key 'launches[0].kernel' is missing") when a required key is missing or null or any
// known key holds a value of the wrong type. Keys T does not know are kept in `extra`.
template <class T>
T read_message(const nlohmann::json& j, const char* what) {
  if (!j.is_object()) throw ProtocolError(std::string(what) + ": not a JSON object");
  T out;
  Codec<T>::decode(j, out);
  try {
    strict::check_object(out, j, "");
  } catch (const ProtocolError& e) {
    throw ProtocolError(std::string(what) + ": " + e.what());
  }
  return out;
}

// The tolerant reader of one object (what the trace record's reader does): never throws; a value
// that is no object gives T{}.
template <class T>
T read_object(const nlohmann::json& j) {
  T out;
  Codec<T>::decode(j, out);
  return out;
}

// The writer of a message or part: its fields (and kept keys) as a JSON object.
template <class T>
nlohmann::json write_object(const T& v) {
  return Codec<T>::encode(v);
}

}  // namespace kernrl
