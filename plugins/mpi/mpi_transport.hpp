// The `mpi` plugin: MPI as a transport, so a suite puts MPI-level numbers
// beside the transport-level ones under it (the PCI Express study's VAPI
// level vs MPI level).
//
// Process. MPI is initialised once per process, at the first open(), with
// MPI_THREAD_MULTIPLE: a test with concurrent flows drives one Context per
// flow, each from its own thread (plugin.hpp, "Threads"). With a lower level
// only one Context may live at a time (a second open() is Unsupported, so
// multi-flow tests are SKIPPED with the level named). MPI_Finalize runs when
// the Plugin is destroyed (or, failing that, when the library is unloaded at
// exit); Open MPI cannot initialise again after it, so an open() after that
// is Unavailable with that reason.
//
// Availability. Only a process started by an MPI launcher can initialise
// (OMPI_COMM_WORLD_SIZE or PMIX_RANK in the environment); elsewhere probe()
// and open() say so instead of letting MPI_Init start a singleton.
//
// Context. Each Context has a communicator of its own, of its two ranks only
// (MPI_Comm_create_group over MPI_COMM_WORLD, so a job of more than two
// ranks pairs any two of them without the others), and a dynamic window on it
// (MPI_Win_create_dynamic, locked with MPI_Win_lock_all for passive-target access), both made at
// its first connect(), where both sides are in step. register_memory() attaches the buffer to that
// window (MPI_Win_attach, a local call; buffers registered before the first connect are attached
// when the window is made), and the remote key is the buffer's MPI_Get_address displacement. The
// "address" exchanged through the peer channel is the peer's rank.
//
// Endpoint. send: MPI_Isend / MPI_Irecv on the Context's communicator with a
// tag per endpoint (the Context's connect count, equal on both sides).
// read: MPI_Rget, complete when its request is. write: MPI_Put; fetch_add:
// MPI_Fetch_and_op(MPI_SUM); cswap: MPI_Compare_and_swap; these have no
// request, so poll() completes them with MPI_Win_flush to the peer (remote
// completion) when the oldest unfinished request is one of them. That call
// blocks until the operations already posted finish: MPI has no
// non-blocking remote completion. Requests retire in posting order
// (support::Retirement), which also emulates unsignaled posts.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <uniperf/plugin.hpp>
#include <uniperf/plugin_support.hpp>
#include <vector>

namespace uniperf::mpi {

/// The reason MPI cannot be used in this process, "" when it can: no
/// launcher in the environment, or MPI already finalized here.
std::string unavailable_reason();

/// Initialises MPI on the first call (throws Unavailable when it cannot) and
/// counts the live Contexts; release() uncounts one.
struct ProcessInfo {
  int rank = -1;
  int size = 0;
  int thread_level = MPI_THREAD_SINGLE;
};
ProcessInfo acquire_process();
void release_process();
/// MPI_Finalize if MPI was initialised here and no Context lives.
void finalize_process();

std::string mpi_error_text(int code);
std::string thread_level_name(int level);

class MpiContext;

class MpiRegion final : public MemoryRegion {
 public:
  MpiRegion(MpiContext& context, void* address, std::size_t length);
  ~MpiRegion() override;
  Bytes remote_key() const override;

  /// Attaches the buffer to `window` (once).
  void attach(MPI_Win window);

 private:
  MpiContext& context_;
  MPI_Aint displacement_ = 0;
  MPI_Win attached_to_ = MPI_WIN_NULL;
};

class MpiContext final : public Context {
 public:
  explicit MpiContext(const ProcessInfo& process);
  ~MpiContext() override;
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  Capabilities capabilities() const override;
  std::string device() const override;
  std::unique_ptr<MemoryRegion> register_memory(void* address, std::size_t length) override;
  std::unique_ptr<Endpoint> connect(const EndpointParams& params, PeerChannel& channel) override;

  void forget(MpiRegion* region);

 private:
  void make_window(int peer, bool initiator);

  ProcessInfo process_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  int peer_ = -1;          ///< the peer's MPI_COMM_WORLD rank
  int peer_in_comm_ = -1;  ///< its rank in comm_, the pair's own communicator
  std::uint32_t connects_ = 0;
  std::vector<MpiRegion*> regions_;
};

class MpiEndpoint final : public Endpoint {
 public:
  MpiEndpoint(const EndpointParams& params, MPI_Comm comm, MPI_Win window, int peer, int tag);
  ~MpiEndpoint() override;
  MpiEndpoint(const MpiEndpoint&) = delete;
  MpiEndpoint& operator=(const MpiEndpoint&) = delete;

  std::unique_ptr<RemoteRegion> import_region(std::uint64_t address, std::uint64_t length,
                                              std::span<const std::byte> key) override;
  void post(const WorkRequest* requests, std::size_t count) override;
  void post_recv(const RecvRequest* requests, std::size_t count) override;
  std::size_t poll(Completion* out, std::size_t max) override;
  bool wait(std::chrono::milliseconds timeout, std::uint32_t threshold) override;
  void progress() override;
  std::string describe(std::int32_t status) const override;

 private:
  /// How a posted request learns it has finished.
  enum class Finish : std::uint8_t { request, flush };

  struct SendSlot {
    std::uint64_t id = 0;
    bool signaled = false;
    bool done = false;
    std::int32_t status = 0;
    Finish finish = Finish::request;
    MPI_Request request = MPI_REQUEST_NULL;
    // Atomic operands: MPI reads them until the operation completes, so
    // they live in the slot, not in the engine's WorkRequest.
    std::uint64_t operand = 0;
    std::uint64_t compare = 0;
  };
  struct RecvSlot {
    std::uint64_t id = 0;
    bool signaled = true;
    bool done = false;
    std::int32_t status = 0;
    std::uint32_t length = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  void post_one(const WorkRequest& request);
  void flush_window();

  MPI_Comm comm_;
  MPI_Win window_;
  int peer_;
  int tag_;
  support::Retirement<SendSlot> sends_;
  support::Retirement<RecvSlot> recvs_;
  /// Flush-finished requests posted and not yet flushed.
  std::size_t unflushed_ = 0;
};

}  // namespace uniperf::mpi
