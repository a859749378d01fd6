// uniperf plugin support: the scaffolding every transport plugin needs and
// would otherwise re-invent (libfabric's prov/util, in a few templates).
//
// OPTIONAL. plugin.hpp is the whole contract and the only header a plugin
// must include; nothing here is part of it. Everything in this header is a
// template or an inline function: there is nothing to link, no symbol the
// engine exports, and nothing of it crosses the plugin boundary, so it has no
// ABI of its own and may change without touching kAbiMajor/kAbiMinor (a
// plugin compiles against the copy it was built with).
//
//   CompletionRing<T>     fixed-capacity power-of-two FIFO for the hot path
//   Retirement<Slot>      in-order retirement: selective completion emulated
//                         exactly as plugin.hpp's "Unsignaled posts" asks
//   exchange_step() ...   connect-time outcome exchange: both sides fail the
//                         same way (Unsupported on one side SKIPs both)
//   to_blob / from_blob   POD <-> peer-channel blob with a size check
//   Handle<T, Destroy>    RAII owner of a C handle (pointer or descriptor)
//   Choice, choice()      one table declares an enum option and parses it
//   errno_text            "what: strerror(errno)"
#pragma once

#include <unistd.h>

#include <bit>
#include <cerrno>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "plugin.hpp"

namespace uniperf::support {

// ---------------------------------------------------------------------------
// CompletionRing
// ---------------------------------------------------------------------------

/// A FIFO of fixed capacity, rounded up to a power of two, sized on the setup
/// path (connect) so the hot path never allocates.
///
/// Why a power of two: head and tail are free-running 64-bit counters and a
/// slot is `counter & mask`, so full/empty need no spare slot, wrap costs an
/// AND instead of a compare or a division, and a counter is also a stable
/// sequence number for the element (see at_sequence()) that never wraps in
/// practice (2^64 posts).
///
/// Slots are never moved or cleared: push_slot() hands back the slot at the
/// tail with whatever it held. That is deliberate: transports keep per-slot
/// resources that must stay put for the life of the endpoint (the request
/// memory UCP writes to, the fi_context2 libfabric hands back, an atomic
/// operand a NIC reads), so the ring is also where those live.
template <class T>
class CompletionRing {
 public:
  CompletionRing() = default;
  /// Capacity is `min_capacity` rounded up to a power of two (at least 1).
  explicit CompletionRing(std::size_t min_capacity) { reset(min_capacity); }

  /// Setup path only: reallocates and empties the ring.
  void reset(std::size_t min_capacity) {
    slots_.assign(std::bit_ceil(min_capacity == 0 ? std::size_t{1} : min_capacity), T{});
    mask_ = slots_.size() - 1;
    head_ = tail_ = 0;
  }

  std::size_t capacity() const { return slots_.size(); }
  std::size_t size() const { return static_cast<std::size_t>(tail_ - head_); }
  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ == slots_.size(); }

  /// Appends a copy of `value`; false (and nothing stored) when full, so the
  /// caller decides whether a full ring is back-pressure or a broken promise.
  [[nodiscard]] bool push(const T& value) {
    if (full()) [[unlikely]]
      return false;
    slots_[tail_++ & mask_] = value;
    return true;
  }
  /// Appends the slot at the tail as it is and returns it for the caller to
  /// fill in. Precondition: !full().
  T& push_slot() { return slots_[tail_++ & mask_]; }

  /// The oldest element. Precondition: !empty().
  T& front() { return slots_[head_ & mask_]; }
  const T& front() const { return slots_[head_ & mask_]; }
  void pop() { ++head_; }
  /// The i-th oldest element; i < size().
  T& at(std::size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& at(std::size_t i) const { return slots_[(head_ + i) & mask_]; }

  /// Moves up to `max` of the oldest elements to `out`; returns how many.
  std::size_t pop_into(T* out, std::size_t max) {
    std::size_t n = 0;
    while (n < max && head_ != tail_) out[n++] = slots_[head_++ & mask_];
    return n;
  }

  /// Sequence numbers: the element pushed n-th (from 0) has sequence n.
  std::uint64_t head_sequence() const { return head_; }
  std::uint64_t tail_sequence() const { return tail_; }
  T& at_sequence(std::uint64_t sequence) { return slots_[sequence & mask_]; }
  /// The sequence of a slot of this ring that is in the ring now (a
  /// completion context pointing into storage() leads back to its request).
  std::uint64_t sequence_of(const T& slot) const {
    const auto index = static_cast<std::uint64_t>(&slot - slots_.data());
    return head_ + ((index - head_) & mask_);
  }

  /// Every slot, in storage order: for setup (handing each slot its request
  /// memory) and for registering the slots' memory with a NIC.
  std::span<T> storage() { return slots_; }

 private:
  std::vector<T> slots_;
  std::uint64_t mask_ = 0;
  std::uint64_t head_ = 0;
  std::uint64_t tail_ = 0;
};

// ---------------------------------------------------------------------------
// In-order retirement (emulated selective completion)
// ---------------------------------------------------------------------------

/// What Retirement needs of a slot: the request's id, whether it asked for
/// a completion, whether the transport finished it, and its status, where a
/// value-initialised status (0, UCS_OK, ...) means success. Add whatever
/// else the transport keeps per request.
template <class Slot>
concept RetirementSlot = requires(Slot slot) {
  { slot.id } -> std::convertible_to<std::uint64_t>;
  { slot.signaled } -> std::convertible_to<bool>;
  { slot.done } -> std::convertible_to<bool>;
  slot.status == decltype(slot.status){};
};

/// The algorithm behind plugin.hpp's "Unsignaled posts" rule, for transports
/// that complete every request (UCP), or that complete out of order, or whose
/// provider cannot skip completions (libfabric without FI_ORDER_STRICT).
///
/// Every posted request takes a slot in posting order. The transport marks a
/// slot done whenever it learns so (a callback, a CQ entry, in any order).
/// retire() then walks from the oldest slot and stops at the first one not
/// done, so a request is retired only after every earlier one: that is what
/// makes "a signaled Completion covers every earlier request" true whatever
/// order the transport finished them in. A retired slot produces a
/// Completion only when it was signaled, or when it failed: a failure is
/// never hidden, or the engine would credit a window for an operation that
/// did not happen.
template <RetirementSlot Slot>
class Retirement {
 public:
  Retirement() = default;
  explicit Retirement(std::size_t depth) : slots_(depth) {}
  void reset(std::size_t depth) { slots_.reset(depth); }

  /// Takes the next slot for a request being posted, marked not done and
  /// successful, with its id and signaled flag set; the other members keep
  /// what they held (per-slot resources). Precondition: !full().
  Slot& post(std::uint64_t id, bool signaled) {
    Slot& slot = slots_.push_slot();
    slot.id = id;
    slot.signaled = signaled;
    slot.done = false;
    slot.status = decltype(slot.status){};
    return slot;
  }

  /// For transports that complete in order (a CQ entry for a later request
  /// means the earlier unsignaled ones finished too): marks every slot from
  /// the oldest outstanding one through `slot` done.
  void done_through(Slot& slot) {
    const std::uint64_t last = slots_.sequence_of(slot);
    for (std::uint64_t s = slots_.head_sequence(); s <= last; ++s)
      slots_.at_sequence(s).done = true;
  }

  /// Retires done slots in posting order. For each retired slot that must be
  /// reported, calls `emit(slot)`, which returns false when it has no room
  /// (the slot then stays, to be retired by the next call). Returns true when
  /// it stopped at an unfinished slot or an empty ring, false when emit
  /// refused.
  template <class Emit>
  bool retire(Emit&& emit) {
    while (!slots_.empty()) {
      Slot& slot = slots_.front();
      if (!slot.done) break;
      if (slot.signaled || !(slot.status == decltype(slot.status){})) {
        if (!emit(static_cast<const Slot&>(slot))) return false;
      }
      slots_.pop();
    }
    return true;
  }

  bool full() const { return slots_.full(); }
  bool empty() const { return slots_.empty(); }
  /// Posted and not yet retired.
  std::size_t outstanding() const { return slots_.size(); }
  std::size_t capacity() const { return slots_.capacity(); }
  /// The i-th oldest outstanding slot.
  Slot& at(std::size_t i) { return slots_.at(i); }
  /// Sequence numbers: requests ever posted and ever retired. A transport
  /// that matches arrivals to posted receives in order (UCP active
  /// messages) keeps its own "matched" sequence between the two and finds
  /// the slot with at_sequence().
  std::uint64_t posted() const { return slots_.tail_sequence(); }
  std::uint64_t retired() const { return slots_.head_sequence(); }
  Slot& at_sequence(std::uint64_t sequence) { return slots_.at_sequence(sequence); }
  /// Every slot (setup: per-slot resources; teardown: what is still running).
  std::span<Slot> storage() { return slots_.storage(); }

 private:
  CompletionRing<Slot> slots_;
};

// ---------------------------------------------------------------------------
// Connect-time outcome exchange
// ---------------------------------------------------------------------------
//
// Connecting takes both sides. When one side fails on its own (a listen that
// cannot bind, a mode its device lacks), the other must not wait for a
// message that never comes and then time out with a different error: each
// step's blob starts with an outcome byte, so both sides end with the same
// reason and the same kind of error. Above all, an Unsupported on one side is
// an Unsupported on both, so the test is SKIPPED on both rather than SKIPPED
// on one and an error on the other.

enum class Outcome : std::uint8_t { ok = 0, unsupported = 1, unavailable = 2, failed = 3 };

/// The blob of one step: the outcome byte, then `payload`.
inline Bytes encode_outcome(Outcome outcome, std::span<const std::byte> payload) {
  Bytes out(1 + payload.size());
  out[0] = static_cast<std::byte>(outcome);
  if (!payload.empty()) std::memcpy(out.data() + 1, payload.data(), payload.size());
  return out;
}

inline Bytes to_bytes(std::string_view text) {
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return Bytes(first, first + text.size());
}

inline std::string to_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// A failure as a blob: the exception's kind as the outcome, its text as payload.
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
  return encode_outcome(outcome, to_bytes(text));
}

/// Returns the peer's payload when its step succeeded; otherwise throws the
/// peer's failure as the same kind of error. `plugin` ("tcp") prefixes the
/// text and is stripped from the peer's, which the same plugin wrote.
inline Bytes payload_or_throw(std::span<const std::byte> blob, std::string_view plugin) {
  const std::string prefix = std::string(plugin) + ": ";
  if (blob.empty()) throw TransportError(prefix + "the peer sent nothing while connecting");
  const auto payload = blob.subspan(1);
  const auto outcome = static_cast<Outcome>(blob[0]);
  if (outcome == Outcome::ok) return Bytes(payload.begin(), payload.end());
  std::string why = to_text(payload);
  if (why.starts_with(prefix)) why.erase(0, prefix.size());
  switch (outcome) {
    case Outcome::unsupported:
      throw Unsupported(prefix + "the peer cannot: " + why);
    case Outcome::unavailable:
      // The engine prints "unavailable: <what>": no plugin prefix.
      throw Unavailable("on the peer: " + why);
    default:
      throw TransportError(prefix + "the peer failed: " + why);
  }
}

/// One connect step on both sides at once: runs `step` (this side's part,
/// returning the payload the peer needs, as Bytes), exchanges outcome and
/// payload, and returns the peer's payload. When either side's step threw,
/// both throw: this side its own exception, the other side the same kind
/// with the same reason. The peer must call exchange_step() (or
/// exchange_outcome()) at the same point.
template <class Step>
Bytes exchange_step(PeerChannel& channel, std::string_view plugin, Step&& step) {
  std::exception_ptr failure;
  Bytes mine;
  try {
    mine = std::forward<Step>(step)();
  } catch (...) {
    failure = std::current_exception();
  }
  const Bytes theirs =
      channel.exchange(failure ? encode_failure(failure) : encode_outcome(Outcome::ok, mine));
  if (failure) std::rethrow_exception(failure);
  return payload_or_throw(theirs, plugin);
}

/// Both sides say whether their part so far succeeded (`failure` null) and
/// then throw their own failure or the peer's; returns when both succeeded.
inline void exchange_outcome(PeerChannel& channel, std::string_view plugin,
                             const std::exception_ptr& failure) {
  const Bytes theirs =
      channel.exchange(failure ? encode_failure(failure) : encode_outcome(Outcome::ok, {}));
  if (failure) std::rethrow_exception(failure);
  payload_or_throw(theirs, plugin);
}

// ---------------------------------------------------------------------------
// POD blobs
// ---------------------------------------------------------------------------

/// The bytes of a trivially copyable value (a QP address, a port), for the
/// peer channel. Both sides run the same plugin build, so layout and byte
/// order agree; from_blob() still checks the size, so a peer of another
/// version fails with a message instead of being misread.
template <class T>
requires std::is_trivially_copyable_v<T> Bytes to_blob(const T& value) {
  Bytes out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

/// The value to_blob() encoded. Throws TransportError naming `what` when the
/// blob's size is not sizeof(T).
template <class T>
requires std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> T
from_blob(std::span<const std::byte> blob, std::string_view plugin, std::string_view what) {
  if (blob.size() != sizeof(T)) {
    throw TransportError(std::string(plugin) + ": the peer's " + std::string(what) + " is " +
                         std::to_string(blob.size()) + " bytes, expected " +
                         std::to_string(sizeof(T)) + " (another plugin version?)");
  }
  T value;
  std::memcpy(&value, blob.data(), sizeof(T));
  return value;
}

// ---------------------------------------------------------------------------
// Handle
// ---------------------------------------------------------------------------

/// Owns one C handle and releases it with `Destroy` (fi_close, ibv_destroy_qp,
/// close, ...). `T` is the handle itself, a pointer or a descriptor, and
/// `kNull` its empty value (nullptr, -1). Unlike std::unique_ptr it also owns
/// descriptors, and the destroy function is part of the type, so a handle is
/// one word. Destroy's result is ignored: a destructor can do nothing about a
/// failed release, and a plugin that must know calls it itself first.
template <class T, auto Destroy, T kNull = T{}>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T value) : value_(value) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : value_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  T get() const { return value_; }
  explicit operator bool() const { return value_ != kNull; }
  auto operator->() const requires std::is_pointer_v<T> { return value_; }
  auto& operator*() const requires std::is_pointer_v<T> { return *value_; }
  /// Gives up ownership and returns the handle.
  T release() { return std::exchange(value_, kNull); }
  /// Releases the current handle (if any) and owns `value`.
  void reset(T value = kNull) {
    const T old = std::exchange(value_, value);
    if (old != kNull) static_cast<void>(Destroy(old));
  }

 private:
  T value_ = kNull;
};

inline void close_descriptor(int fd) noexcept {
  ::close(fd);
}
/// A file descriptor (socket, eventfd, ...) closed when the owner goes.
using Descriptor = Handle<int, &close_descriptor, -1>;

// ---------------------------------------------------------------------------
// Enum options
// ---------------------------------------------------------------------------

/// One value of an enum option, under the name configs use.
template <class Enum>
struct Choice {
  std::string_view name;
  Enum value;
};

/// The names of a Choice table, for OptionSpec::choices: one table declares
/// the option (the loader then rejects any other value with file:line) and
/// parses it (choice()), so the two can never disagree.
template <class Enum, std::size_t N>
std::vector<std::string> choice_names(const Choice<Enum> (&table)[N]) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.name);
  return names;
}

/// The value of string option `name`, looked up in `table`. The loader has
/// already checked it against choice_names(table); a value outside it
/// (Options built by hand) throws OptionError naming `plugin`.
template <class Enum, std::size_t N>
Enum choice(const Options& options, const std::string& name, const Choice<Enum> (&table)[N],
            std::string_view plugin) {
  const std::string& value = options.string(name);
  for (const auto& entry : table) {
    if (entry.name == value) return entry.value;
  }
  std::string names;
  for (const auto& entry : table) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  throw OptionError(std::string(plugin) + ": option '" + name + "' must be one of " + names +
                    ", got '" + value + "'");
}

// ---------------------------------------------------------------------------
// Error text
// ---------------------------------------------------------------------------

/// strerror(error), for "plugin: what: <text>" messages.
inline std::string errno_text(int error = errno) {
  return std::strerror(error);
}

}  // namespace uniperf::support
