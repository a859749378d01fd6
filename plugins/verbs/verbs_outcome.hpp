// The blobs the two sides of one endpoint exchange while connecting. Each
// starts with an outcome byte, so a side that failed tells the other why
// and both end with the same reason and the same kind of error (Unsupported
// on both sides makes the test SKIPPED, not an error on one side and a
// timeout on the other).
#pragma once

#include <exception>
#include <string>

#include "verbs_endpoint.hpp"

namespace uniperf::verbs {

enum class Outcome : std::uint8_t { ok = 0, unsupported = 1, unavailable = 2, failed = 3 };

inline Bytes with_outcome(Outcome outcome, const void* data, std::size_t length) {
  Bytes out(1 + length);
  out[0] = static_cast<std::byte>(outcome);
  if (length != 0) std::memcpy(out.data() + 1, data, length);
  return out;
}

inline Bytes encode_failure(const std::exception_ptr& failure) {
  Outcome outcome = Outcome::failed;
  std::string text = "unknown error";
  try {
    std::rethrow_exception(failure);
  } catch (const Unsupported& e) {
    outcome = Outcome::unsupported;
    text = e.what();
  } catch (const Unavailable& e) {
    outcome = Outcome::unavailable;
    text = e.what();
  } catch (const std::exception& e) {
    text = e.what();
  } catch (...) {
  }
  return with_outcome(outcome, text.data(), text.size());
}

inline Bytes encode_text(const std::string& text) {
  return with_outcome(Outcome::ok, text.data(), text.size());
}

inline Bytes encode_address(const QpAddress& address) {
  return with_outcome(Outcome::ok, &address, sizeof address);
}

/// Throws the peer's failure as the same kind of error; returns its payload.
inline std::string payload_or_throw(const Bytes& blob) {
  if (blob.empty()) throw TransportError("verbs: the peer sent nothing while connecting");
  const std::string payload(reinterpret_cast<const char*>(blob.data()) + 1, blob.size() - 1);
  std::string why = payload;
  if (why.starts_with("verbs: ")) why.erase(0, 7);
  switch (static_cast<Outcome>(blob[0])) {
    case Outcome::ok:
      return payload;
    case Outcome::unsupported:
      throw Unsupported("verbs: the peer cannot: " + why);
    case Outcome::unavailable:
      throw Unavailable("the peer's device: " + why);
    default:
      throw TransportError("verbs: the peer failed: " + why);
  }
}

inline QpAddress decode_address(const Bytes& blob) {
  const std::string payload = payload_or_throw(blob);
  QpAddress address;
  if (payload.size() != sizeof address) {
    throw TransportError("verbs: the peer's queue pair address is malformed (another version?)");
  }
  std::memcpy(&address, payload.data(), sizeof address);
  return address;
}

/// Both sides say whether their part of the connection succeeded; each then
/// throws its own failure, or the peer's.
inline void exchange_outcome(PeerChannel& channel, const std::exception_ptr& failure) {
  const Bytes theirs = channel.exchange(failure ? encode_failure(failure) : encode_text(""));
  if (failure) std::rethrow_exception(failure);
  payload_or_throw(theirs);
}

}  // namespace uniperf::verbs
