// uniperf transport plugin interface: THE SPECIFICATION.
//
// A transport plugin moves bytes; the engine owns every test semantic (window,
// signaling, moderation, replenish, timing, statistics). This header is the
// whole contract between the two and the only header a plugin may include.
// Everything a plugin must do, may do and must never do is written here; if a
// behaviour is not written here, the engine does not rely on it.
//
// Life cycle (setup path, may allocate, throw and block with deadlines):
//
//   Plugin          one per shared library, made by the exported factory
//     open()     -> Context   one opened device / provider / worker
//       allocate_memory()  -> MemoryRegion   transport memory (optional), or
//       register_memory()  -> MemoryRegion   buffers the engine allocated
//       connect()          -> Endpoint       one connected endpoint to the peer
//         import_region()  -> RemoteRegion   the peer's buffer, from its key
//
// Hot path (the timed loop; see "Hot-path rules" below):
//   Endpoint::post, post_recv, poll, wait, progress.
//
// Ownership: the engine owns every object a plugin returns (std::unique_ptr)
// and destroys them in reverse order of creation: remote regions, endpoints,
// memory regions, the context, then the plugin. The engine never unloads the
// library while any of them lives. Memory handed to register_memory() belongs
// to the engine and outlives its MemoryRegion.
//
// Hot-path rules. Endpoint::post, post_recv, poll, wait and progress:
//   - must not allocate, log, or make a system call the transport itself does
//     not need (a socket send is needed for a socket transport; a getpid() is not);
//   - must not block, except wait();
//   - report failures through Completion::status where an operation failed, and
//     throw TransportError only for a broken endpoint (peer gone, fatal state):
//     the engine stops the test and reports an error record.
//
// Threads: the engine drives one Endpoint from one thread at a time. A test
// with several concurrent flows drives each flow from its own thread. Where
// Capabilities::thread_safe_endpoints is true, the flows' endpoints share the
// config's Context; where it is false, the engine opens one more Context per
// further flow (Plugin::open() again, same options), so no Context is ever
// driven by two threads. open() must therefore allow several independent
// Contexts at once; a plugin that cannot (one device handle per process,
// say) throws Unsupported from the second open(), and multi-flow tests are
// then SKIPPED with its reason.
//
// Errors on the setup path:
//   - Unavailable: the library, device or provider is missing or unusable on
//     this machine. The engine reports "unavailable: <what()>" and skips.
//   - Unsupported: the request is valid but this transport cannot do it (an op,
//     an inline size, a mode). The engine reports the test as SKIPPED with
//     what() as the reason. Prefer declaring it in Capabilities instead.
//   - TransportError: anything else that went wrong; the test is an error.
//   - OptionError: an option value the plugin cannot accept.
//
// ABI. Plugins are C++ modules built with the same compiler and the same
// standard library as the uniperf binary that loads them (in practice: in the
// same tree, by the same CMake run). std::string, std::vector, std::unique_ptr
// and exceptions cross the boundary in both directions, and so do the
// layouts of the structs below and the order of every class's virtual
// functions; there is no C shim. The version numbers say which promises hold:
//   - kAbiMajor changes with any edit to a type that crosses the boundary as
//     an array or by value (WorkRequest, RecvRequest, Completion,
//     EndpointParams, Capabilities, OptionSpec, PluginEntry; appending a
//     member changes the stride or the copy, so "at the end" is no
//     exception), to the error types, or to any virtual function of a class
//     plugins implement (Plugin, Context, Endpoint, MemoryRegion,
//     RemoteRegion: its signature, its position, or a new one, even at the
//     end, since the engine would call a slot an older plugin's vtable lacks).
//   - kAbiMinor changes only for additions an older plugin cannot notice: a
//     new inline helper or constant, or a new virtual function *with a
//     default body* at the end of PeerChannel, the one class the engine
//     implements and plugins only call (1.1 added peer_host() that way).
// The loader refuses a plugin of another major, one of a newer minor (it may
// call what this engine lacks), one whose sizeof fingerprint of the crossing
// types (AbiFingerprint, filled by UNIPERF_PLUGIN) differs from the engine's
// (that catches a size-changing edit made without the bump, and a plugin
// built with another standard library; a same-size edit such as reordering
// members it cannot see, so the rule above still binds), and one whose
// name() is not its file's stem.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace uniperf {

// 2.0: OptionSpec choices/min/max, PluginEntry fingerprint.
// 3.0: Capabilities::max_send_depth and max_recv_depth.
// 4.0: Capabilities::reliable_delivery.
// 4.1: PeerChannel::cancelled().
// 4.2: PeerChannel::peer_has_spoken().
// 5.0: Capabilities::delivery_fence, Endpoint::flush().
inline constexpr std::uint32_t kAbiMajor = 5;
inline constexpr std::uint32_t kAbiMinor = 0;

using Bytes = std::vector<std::byte>;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// The plugin's library, device or provider cannot be used on this machine.
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A valid request this transport cannot honour; the test is SKIPPED.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A failure while running: the test is reported as an error.
struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An option value the plugin rejects (the loader already checked the type).
struct OptionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------
// Operations and capabilities (data, not code)
// ---------------------------------------------------------------------------

/// The operations the engine can ask for. Atomics operate on 8 bytes.
enum class Op : std::uint8_t { send, write, write_imm, read, fetch_add, cswap };
inline constexpr std::size_t kOpCount = 6;

inline constexpr std::string_view to_string(Op op) {
  constexpr std::string_view names[kOpCount] = {"send", "write",     "write_imm",
                                                "read", "fetch_add", "cswap"};
  return names[static_cast<std::size_t>(op)];
}

/// fetch_add and cswap: 8 bytes, at an 8-byte aligned target.
constexpr bool is_atomic(Op op) {
  return op == Op::fetch_add || op == Op::cswap;
}

/// send and write_imm: the target consumes a posted receive (RecvRequest).
constexpr bool is_two_sided(Op op) {
  return op == Op::send || op == Op::write_imm;
}

inline std::optional<Op> parse_op(std::string_view name) {
  for (std::size_t i = 0; i < kOpCount; ++i) {
    if (to_string(static_cast<Op>(i)) == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

/// How a plugin provides a feature. `emulated` results are marked as such in
/// every result record, so a reader knows the number is not the native path.
enum class Support : std::uint8_t { none, emulated, native };

inline constexpr std::string_view to_string(Support s) {
  constexpr std::string_view names[] = {"none", "emulated", "native"};
  return names[static_cast<std::size_t>(s)];
}

/// What a Context can do. The engine reads this before every test and never
/// asks for what is not declared here: an op with Support::none, event
/// completion without completion_events, an inline size above max_inline, a
/// message above max_message, a send or receive queue deeper than
/// max_send_depth or max_recv_depth. Those tests are SKIPPED with a reason
/// naming the missing capability.
struct Capabilities {
  /// Support for each Op, indexed by static_cast<size_t>(op).
  Support ops[kOpCount] = {};
  /// Unsignaled posts (WorkRequest::kSignaled clear): native when the
  /// hardware skips the completion, emulated when the plugin hides it.
  Support selective_completion = Support::none;
  /// Endpoint::wait() sleeps on a completion channel / wait object.
  Support completion_events = Support::none;
  /// Several work requests per post() call as one chain (verbs next-pointer,
  /// FI_MORE, ...). Emulated means post() loops; the engine may always pass
  /// a count above one.
  Support post_list = Support::emulated;
  /// Largest payload sent inline (kInline); 0 when there is no inline path.
  std::size_t max_inline = 0;
  /// Largest single message; 0 when unlimited.
  std::size_t max_message = 0;
  /// One-sided operations (write, read, atomics) land only while the target
  /// calls Endpoint::progress() (software transports: UCX shm, tcp, ofi tcp).
  /// The engine then calls progress() on the passive side of such tests.
  bool target_progress = false;
  /// A write's bytes become visible at the target in address order, so the
  /// target may poll the last byte of a buffer to learn the whole write has
  /// landed (write latency). Without it write latency is SKIPPED.
  bool ordered_write_visibility = false;
  /// Distinct endpoints of one Context may be driven by distinct threads at
  /// once (concurrent flows then share one Context instead of one each).
  bool thread_safe_endpoints = false;
  /// (ABI 3.0) The most requests one endpoint can have outstanding: the
  /// largest EndpointParams::send_depth connect() accepts (a transmit
  /// queue's size: fi_info tx_attr->size, ibv_device_attr max_qp_wr,
  /// max_dto_per_ep). 0 when the plugin queues without limit. The engine
  /// never asks for more: a test whose window, signaling period or chain
  /// needs a deeper queue is SKIPPED with a reason naming the knob.
  std::uint32_t max_send_depth = 0;
  /// (ABI 3.0) The most receives one endpoint can have posted at once: the
  /// largest EndpointParams::recv_depth whose receives post_recv() takes
  /// without failing (fi_info rx_attr->size, max_qp_wr, max_recv_dtos). 0
  /// when unbounded. A test that posts receives with a larger rx_depth is
  /// SKIPPED naming rx_depth.
  std::uint32_t max_recv_depth = 0;
  /// (ABI 4.0) Every message sent arrives, or the transport reports an
  /// error (RC, TCP, libfabric's rxd and rxm, UCX). False for unreliable
  /// datagrams (verbs UD): a send that finds no posted receive, or a packet
  /// the network drops, completes successfully on the sender and never
  /// arrives. The engine then ends a stream when the sender has finished
  /// and the receiver has drained what came, and reports the loss (messages
  /// sent, received, lost); window_ack, which would wait for an ack of a
  /// lost message, is SKIPPED.
  bool reliable_delivery = true;
  /// (ABI 5.0) Endpoint::flush() tells when every request posted on an
  /// endpoint is at the peer: the transport can be asked (UCX's
  /// ucp_ep_flush_nbx; a socket whose sent bytes the peer's kernel has all
  /// acknowledged), or its completions already say so (verbs RC, uDAPL:
  /// the default flush()). Without it a test whose streams end at delivery
  /// (the flow field stream_end: delivered) is SKIPPED.
  bool delivery_fence = false;

  Support op(Op o) const { return ops[static_cast<std::size_t>(o)]; }
  void set(Op o, Support s) { ops[static_cast<std::size_t>(o)] = s; }
};

// ---------------------------------------------------------------------------
// Options: declared by the plugin, validated by the loader
// ---------------------------------------------------------------------------

enum class OptionType : std::uint8_t { string, integer, boolean, size };

/// One option a plugin accepts in a config's `options:` map. The loader
/// rejects unknown keys, values that do not parse as `type`, a string not
/// among `choices` and a number outside [min, max], naming the file, line
/// and key, before the plugin sees them; `uniperf info` prints the choices
/// and the range. So a plugin declares its enums and ranges here and never
/// re-checks them by hand.
struct OptionSpec {
  std::string name;
  OptionType type = OptionType::string;
  std::string default_value;  ///< "" means "not set" (the plugin decides)
  std::string help;
  /// string: the accepted values (empty: any string). An unset value ("")
  /// is always accepted, so a default of "" still means "not set".
  std::vector<std::string> choices = {};
  /// integer and size (in bytes): the inclusive range (nullopt: unbounded).
  std::optional<std::int64_t> min = std::nullopt;
  std::optional<std::int64_t> max = std::nullopt;
};

/// Validated option values: every declared option is present (explicit value
/// or default). Sizes accept suffixes K, M, G (binary) and are returned in bytes.
class Options {
 public:
  Options() = default;
  explicit Options(std::map<std::string, std::string> values) : values_(std::move(values)) {}

  const std::string& string(const std::string& name) const { return values_.at(name); }
  bool has(const std::string& name) const {
    auto it = values_.find(name);
    return it != values_.end() && !it->second.empty();
  }
  std::int64_t integer(const std::string& name) const { return std::stoll(values_.at(name)); }
  bool boolean(const std::string& name) const {
    const auto& v = values_.at(name);
    return v == "true" || v == "yes" || v == "on" || v == "1";
  }
  std::uint64_t size(const std::string& name) const;  // defined below
  const std::map<std::string, std::string>& all() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

/// Parses "4096", "4K", "1M", "2G" (binary multiples). Returns nullopt when
/// the text is not a size.
inline std::optional<std::uint64_t> parse_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  std::uint64_t scale = 1;
  if (i < text.size()) {
    switch (text[i]) {
      case 'k':
      case 'K':
        scale = 1ULL << 10;
        break;
      case 'm':
      case 'M':
        scale = 1ULL << 20;
        break;
      case 'g':
      case 'G':
        scale = 1ULL << 30;
        break;
      default:
        return std::nullopt;
    }
    ++i;
    if (i < text.size() && (text[i] == 'B' || text[i] == 'b' || text[i] == 'i')) ++i;
    if (i < text.size() && text[i] == 'B') ++i;
    if (i != text.size()) return std::nullopt;
  }
  return value * scale;
}

inline std::uint64_t Options::size(const std::string& name) const {
  auto v = parse_size(values_.at(name));
  if (!v) throw OptionError("option '" + name + "' is not a size: " + values_.at(name));
  return *v;
}

// ---------------------------------------------------------------------------
// Peer channel: the out-of-band path a plugin uses while connecting
// ---------------------------------------------------------------------------

/// Handed to Context::connect(). Carries the plugin's connection blobs
/// (addresses, QPN/GID, worker addresses, ...) to the same plugin on the
/// peer. Every call has a deadline and throws TransportError when it passes
/// or the peer is gone, so a plugin never needs its own timeout logic for
/// the out-of-band path. Not for the hot path.
class PeerChannel {
 public:
  virtual ~PeerChannel() = default;
  /// 0 on the initiator (the side that measures), 1 on the responder.
  virtual int rank() const = 0;
  /// Sends `mine` and returns the peer's blob of the same call.
  virtual Bytes exchange(std::span<const std::byte> mine) = 0;
  /// Returns once the peer reached the same barrier.
  virtual void barrier() = 0;
  /// (ABI 1.1) The peer's host as a numeric IP address, as the out-of-band
  /// connection sees it: where a transport that opens its own connection
  /// (kernel TCP, rdma_cm, libfabric msg endpoints) finds the peer when its
  /// config names no address. "" when unknown. Both sides see each other's
  /// address, so the responder may also use it to check who connects.
  virtual std::string peer_host() const { return ""; }
  /// (ABI 4.1) Whether the engine has given up on the test being set up:
  /// the peer is gone or stopped answering, its side failed, or the run
  /// was interrupted. A plugin that waits for its peer inside a blocking
  /// call of its library (a connection request, a connection's
  /// establishment) waits in short slices and throws TransportError once
  /// this is true, so a dead peer ends the run within seconds rather than
  /// at the library's own timeout.
  virtual bool cancelled() const { return false; }
  /// (ABI 4.2) Whether the peer's next message on this channel has already
  /// arrived (unread). A side that waits inside its library for the other
  /// (a responder for a connection request) uses it to stop waiting when
  /// the other side failed before it ever connected: that side has moved
  /// on to its next exchange, to report its failure, and waiting out the
  /// library's timeout would only delay the run.
  virtual bool peer_has_spoken() const { return false; }
};

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

/// A registered local buffer. The plugin subclasses it to carry its handle
/// (ibv_mr, ucp_mem_h, fid_mr, ...); the engine only reads the base fields
/// and passes the object back in WorkRequest/RecvRequest.
class MemoryRegion {
 public:
  MemoryRegion(void* address, std::size_t length) : address_(address), length_(length) {}
  virtual ~MemoryRegion() = default;
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  void* address() const { return address_; }
  std::size_t length() const { return length_; }
  /// What the peer needs to target this buffer with one-sided ops (rkey,
  /// packed UCP rkey, fi_mr_key, ...). The engine sends it, with address()
  /// and length(), to the peer, which passes them to Endpoint::import_region.
  virtual Bytes remote_key() const = 0;

 private:
  void* address_;
  std::size_t length_;
};

/// The peer's buffer as seen from this endpoint. `address` is the peer's
/// virtual address; WorkRequest::remote_offset is relative to it.
class RemoteRegion {
 public:
  RemoteRegion(std::uint64_t address, std::uint64_t length) : address_(address), length_(length) {}
  virtual ~RemoteRegion() = default;
  RemoteRegion(const RemoteRegion&) = delete;
  RemoteRegion& operator=(const RemoteRegion&) = delete;

  std::uint64_t address() const { return address_; }
  std::uint64_t length() const { return length_; }

 private:
  std::uint64_t address_;
  std::uint64_t length_;
};

// ---------------------------------------------------------------------------
// Work requests and completions (hot path)
// ---------------------------------------------------------------------------

/// One operation posted by the initiator of an op. Plain data: the engine
/// builds every request before the timed loop and only rewrites `id` and
/// offsets inside it.
struct WorkRequest {
  enum Flags : std::uint8_t {
    kSignaled = 1 << 0,  ///< produce a Completion; clear = suppressed (see below)
    kInline = 1 << 1,    ///< payload copied at post time; the buffer is reusable at once
    kFence = 1 << 2,     ///< start only after earlier reads/atomics completed
  };

  std::uint64_t id = 0;  ///< returned in Completion::id
  Op op = Op::send;
  std::uint8_t flags = kSignaled;
  std::uint32_t length = 0;  ///< payload bytes; 8 for atomics
  MemoryRegion* local = nullptr;
  std::uint64_t local_offset = 0;  ///< source (send/write) or result (read/atomics)
  RemoteRegion* remote = nullptr;  ///< target of write/write_imm/read/atomics
  std::uint64_t remote_offset = 0;
  std::uint64_t compare_add = 0;  ///< fetch_add: addend; cswap: compare value
  std::uint64_t swap = 0;         ///< cswap: new value
  std::uint32_t immediate = 0;    ///< write_imm (and send where supported)
};

/// Unsignaled posts. When kSignaled is clear the plugin produces no
/// Completion for that request. A signaled request's Completion means that
/// it and every earlier request on the same endpoint have completed (RC
/// ordering); the engine relies on this to credit its window. A write's
/// completion says its source may be reused, as the transport reports it:
/// over RDMA its bytes are placed by then, over a socket (libfabric's tcp
/// provider, UCX over tcp) they may still be on their way, and the engine's
/// validating target waits for them. The engine
/// guarantees at most `EndpointParams::send_depth` requests outstanding
/// (posted and not yet covered by a signaled Completion) and that the last
/// request of every burst is signaled.

/// One receive buffer posted for an incoming send or write_imm.
struct RecvRequest {
  std::uint64_t id = 0;
  MemoryRegion* local = nullptr;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

enum class CompletionType : std::uint8_t {
  send,  ///< a WorkRequest (any op) this side posted has completed
  recv,  ///< a RecvRequest was consumed by an incoming send or write_imm
};

struct Completion {
  std::uint64_t id = 0;  ///< WorkRequest::id or RecvRequest::id
  CompletionType type = CompletionType::send;
  std::int32_t status = 0;      ///< 0 = success; else plugin-specific, see describe()
  std::uint32_t length = 0;     ///< bytes received (recv)
  std::uint32_t immediate = 0;  ///< immediate data (recv of write_imm)
};

/// Parameters of one endpoint, fixed at connect time.
struct EndpointParams {
  std::uint32_t send_depth = 128;  ///< max requests outstanding (see above); <= max_send_depth
  std::uint32_t recv_depth = 512;  ///< max receives posted at once; <= max_recv_depth when
                                   ///< the test posts receives
  std::uint32_t max_inline = 0;    ///< inline threshold the engine will use
  std::uint32_t max_message = 0;   ///< largest message the test will post
  bool completion_events = false;  ///< the engine will call wait()
  std::uint32_t index = 0;         ///< endpoint number within the flow (both sides agree)
};

/// One connected endpoint (QP, ucp_ep, fid_ep, socket, ...), with its own
/// completion queue as far as the engine can tell.
class Endpoint {
 public:
  virtual ~Endpoint() = default;

  /// Setup path. Builds a handle for the peer's buffer from what the peer's
  /// MemoryRegion::remote_key() returned.
  virtual std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                                      std::span<const std::byte> key) = 0;

  /// Hot. Posts `count` requests in order, as one chain where the transport
  /// has one. Never blocks: the engine's window guarantees the resources.
  virtual void post(const WorkRequest* requests, std::size_t count) = 0;

  /// Hot. Posts `count` receives. Never blocks; at most recv_depth posted.
  virtual void post_recv(const RecvRequest* requests, std::size_t count) = 0;

  /// Hot. Stores up to `max` completions and returns how many; 0 when none.
  /// Drives the transport's progress as a side effect where it needs it.
  virtual std::size_t poll(Completion* out, std::size_t max) = 0;

  /// Event mode only. Sleeps until a completion may be available (then
  /// returns true) or `timeout` passes (false). Spurious wake-ups are
  /// allowed: the engine polls afterwards. `threshold` is the number of
  /// completions the engine wants before waking (cq_moderation); a plugin
  /// honours it where the transport can (ibv_modify_cq, dat_evd_wait) and
  /// may wake earlier otherwise.
  virtual bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) = 0;

  /// Hot. Lets one-sided traffic from the peer land (target_progress) and
  /// services the transport without producing completions for this side.
  virtual void progress() = 0;

  /// Setup path. A readable text for a non-zero Completion::status.
  virtual std::string describe(std::int32_t status) const = 0;

  /// (ABI 5.0) A stream that ends at delivery (stream_end: delivered; only
  /// where Capabilities::delivery_fence): called over and over once the
  /// stream's last completion came, until it returns true when every
  /// request posted on this endpoint is at the peer. The first call starts
  /// a flush, later ones drive it; it never blocks. It is asked again after
  /// it said true (while other endpoints still flush): with nothing posted
  /// since, that answer is true again and cheap. Throws TransportError
  /// when the flush fails. The default suits a transport whose completions
  /// already mean delivered (RC: a completion follows the peer's ack).
  virtual bool flush() { return true; }
};

/// One opened device / provider / worker with its capabilities.
class Context {
 public:
  virtual ~Context() = default;
  /// Constant for the life of the Context.
  virtual Capabilities capabilities() const = 0;
  /// What was opened, for result records ("rxe0:1", "posix", "tcp;ofi_rxm").
  virtual std::string device() const = 0;
  /// Registers engine memory for local and remote access.
  virtual std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) = 0;
  /// Allocates and registers `length` bytes of the transport's own memory
  /// kind (shared-memory segments a peer can map, device memory, ...), page
  /// aligned and addressable by the host; the region owns it. Do not write
  /// it: the engine zeroes what it uses before anything is timed and leaves
  /// unwritten what a test asks it to (send_buffers: untouched, whose pages
  /// must read as the allocation left them). Return nullptr to have the
  /// engine allocate host memory and call register_memory() instead (the
  /// default). The engine prefers this path: native tools measure with the
  /// memory their transport allocates (ucx_perftest maps UCP memory, which
  /// makes shared-memory puts a direct copy).
  virtual std::unique_ptr<MemoryRegion> allocate_memory(std::size_t length) {
    (void)length;
    return nullptr;
  }
  /// Creates one endpoint and connects it to the peer's endpoint of the same
  /// params.index, using `channel` for any blobs it needs. Both sides call
  /// connect() in the same order; the rank tells which side is which.
  virtual std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) = 0;
};

/// A plugin: what the library's factory returns.
class Plugin {
 public:
  virtual ~Plugin() = default;
  /// Short name used in configs: "ucx", "tcp", "verbs", "ofi", "udapl".
  virtual std::string name() const = 0;
  /// Version of the plugin itself.
  virtual std::string version() const = 0;
  /// The transport library it was built and runs against ("UCX 1.13.1").
  virtual std::string library_version() const = 0;
  /// One line for `uniperf list`.
  virtual std::string description() const = 0;
  /// Declared options, in the order `uniperf info` prints them.
  virtual std::vector<OptionSpec> options() const = 0;
  /// Checks that the transport is usable here without opening anything
  /// expensive; returns "" when available, else the reason.
  virtual std::string probe() const = 0;
  /// Opens a context. Throws Unavailable when the device/provider is missing.
  /// May be called again while earlier Contexts live (one per concurrent
  /// flow; see "Threads" above): the Contexts must not share mutable state.
  virtual std::unique_ptr<Context> open(const Options& options) = 0;
};

/// The sizes of the types that cross the boundary as arrays or by value, as
/// the plugin was compiled. The loader compares them with its own before it
/// calls anything in the plugin: a layout edit made without bumping
/// kAbiMajor, or a plugin built with another standard library (std::string
/// differs between libstdc++'s two ABIs and libc++), is refused with a
/// message instead of corrupting memory.
struct AbiFingerprint {
  std::uint32_t work_request = sizeof(WorkRequest);
  std::uint32_t recv_request = sizeof(RecvRequest);
  std::uint32_t completion = sizeof(Completion);
  std::uint32_t endpoint_params = sizeof(EndpointParams);
  std::uint32_t capabilities = sizeof(Capabilities);
  std::uint32_t option_spec = sizeof(OptionSpec);
  std::uint32_t string = sizeof(std::string);

  friend bool operator==(const AbiFingerprint&, const AbiFingerprint&) = default;
};

/// What a plugin library exports, under the symbol name kPluginEntrySymbol.
/// abi_major and abi_minor stay the first two members in every version: the
/// loader reads them before anything else, so an entry of another major is
/// refused before its other members are looked at.
struct PluginEntry {
  std::uint32_t abi_major;
  std::uint32_t abi_minor;
  AbiFingerprint fingerprint;
  std::unique_ptr<Plugin> (*create)();
};

inline constexpr const char* kPluginEntrySymbol = "uniperf_plugin_entry";

}  // namespace uniperf

/// Exports a plugin. Put once in one source file of the plugin:
///   UNIPERF_PLUGIN(MyPlugin)
/// where MyPlugin is default-constructible and derives from uniperf::Plugin.
/// The entry carries the ABI version and the type sizes this plugin was
/// compiled against.
#define UNIPERF_PLUGIN(PluginClass)                                            \
  extern "C" __attribute__((visibility("default")))                            \
  const ::uniperf::PluginEntry uniperf_plugin_entry = {                        \
      ::uniperf::kAbiMajor, ::uniperf::kAbiMinor, ::uniperf::AbiFingerprint{}, \
      []() -> std::unique_ptr<::uniperf::Plugin> { return std::make_unique<PluginClass>(); }};
