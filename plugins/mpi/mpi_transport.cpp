// The `mpi` plugin's Context, memory and Endpoint; see mpi_transport.hpp.
#include "mpi_transport.hpp"

#include <algorithm>
#include <climits>
#include <exception>

namespace uniperf::mpi {
namespace {

constexpr std::string_view kPlugin = "mpi";

void check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw TransportError("mpi: " + what + ": " + mpi_error_text(code));
}

/// What each side sends while connecting: its rank (the "address") and how
/// many endpoints its Context made before this one (the tag), so a peer out
/// of step is refused instead of matched to the wrong endpoint.
struct Hello {
  std::int32_t rank;
  std::int32_t size;
  std::uint32_t sequence;
};

class MpiRemoteRegion final : public RemoteRegion {
 public:
  MpiRemoteRegion(std::uint64_t address, std::uint64_t length, MPI_Aint displacement)
      : RemoteRegion(address, length), displacement_(displacement) {}
  MPI_Aint displacement() const { return displacement_; }

 private:
  MPI_Aint displacement_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

MpiRegion::MpiRegion(MpiContext& context, void* address, std::size_t length)
    : MemoryRegion(address, length), context_(context) {
  check(MPI_Get_address(address, &displacement_), "MPI_Get_address");
}

MpiRegion::~MpiRegion() {
  if (attached_to_ != MPI_WIN_NULL) MPI_Win_detach(attached_to_, address());
  context_.forget(this);
}

Bytes MpiRegion::remote_key() const {
  return support::to_blob(displacement_);
}

void MpiRegion::attach(MPI_Win window) {
  if (attached_to_ != MPI_WIN_NULL) return;
  check(MPI_Win_attach(window, address(), static_cast<MPI_Aint>(length())), "MPI_Win_attach");
  attached_to_ = window;
}

// ---------------------------------------------------------------------------
// Context
// ---------------------------------------------------------------------------

MpiContext::MpiContext(const ProcessInfo& process) : process_(process) {}

MpiContext::~MpiContext() {
  // Both sides destroy their Contexts at the same point of the suite, so
  // the collective frees meet.
  if (window_ != MPI_WIN_NULL) {
    MPI_Win_unlock_all(window_);
    MPI_Win_free(&window_);
  }
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  release_process();
}

Capabilities MpiContext::capabilities() const {
  Capabilities caps;
  caps.set(Op::send, Support::native);
  caps.set(Op::write, Support::native);
  caps.set(Op::read, Support::native);
  caps.set(Op::fetch_add, Support::native);
  caps.set(Op::cswap, Support::native);
  // write_imm: MPI has no put that consumes a receive at the target.
  caps.selective_completion = Support::emulated;  // every MPI operation completes
  caps.completion_events = Support::none;         // MPI has no wait object to sleep on
  caps.post_list = Support::emulated;
  caps.max_inline = 0;
  caps.max_message = INT_MAX;  // an MPI count is an int (of MPI_BYTE)
  // Open MPI's one-sided components may progress at the target only when it
  // enters the library (osc/pt2pt does), so the target calls progress().
  caps.target_progress = true;
  // MPI promises nothing about the order in which a put's bytes appear at
  // the target (and reading window memory during an access epoch is only
  // defined in the unified model): write latency is SKIPPED.
  caps.ordered_write_visibility = false;
  // One Context per flow: each has its own communicator and window.
  caps.thread_safe_endpoints = false;
  caps.max_send_depth = 0;  // requests are queued by MPI without a fixed depth
  caps.max_recv_depth = 0;
  caps.reliable_delivery = true;
  return caps;
}

std::string MpiContext::device() const {
  return "MPI_COMM_WORLD rank " + std::to_string(process_.rank) + " of " +
         std::to_string(process_.size) + " (" + thread_level_name(process_.thread_level) + ")";
}

std::unique_ptr<MemoryRegion> MpiContext::register_memory(void* address, std::size_t length) {
  auto region = std::make_unique<MpiRegion>(*this, address, length);
  regions_.push_back(region.get());
  if (window_ != MPI_WIN_NULL) region->attach(window_);
  return region;
}

void MpiContext::forget(MpiRegion* region) {
  regions_.erase(std::remove(regions_.begin(), regions_.end(), region), regions_.end());
}

void MpiContext::make_window(int peer, bool initiator) {
  // A communicator of the two ranks alone: creating it, and the window on
  // it, is collective over the pair only, so the other ranks of a job of
  // many (cli/rank_job.hpp) need not take part, and a rank in several pairs
  // at once (incast, all_to_all) makes each pair's on a thread of its own.
  // The tag tells those concurrent creations apart: one per ordered pair
  // (a pair's two directions can run at once), the same on both sides.
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Group pair = MPI_GROUP_NULL;
  check(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  const int members[2] = {std::min(process_.rank, peer), std::max(process_.rank, peer)};
  const int rc = MPI_Group_incl(world, 2, members, &pair);
  MPI_Group_free(&world);
  check(rc, "MPI_Group_incl");
  int* tag_bound = nullptr;
  int has_bound = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_bound, &has_bound);
  const long long tag_ub = has_bound && tag_bound ? *tag_bound : 32767;
  const long long from = initiator ? process_.rank : peer;
  const long long to = initiator ? peer : process_.rank;
  const int tag = static_cast<int>((from * process_.size + to) % (tag_ub + 1));
  const int created = MPI_Comm_create_group(MPI_COMM_WORLD, pair, tag, &comm_);
  MPI_Group_free(&pair);
  check(created, "MPI_Comm_create_group");
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  const int made = MPI_Win_create_dynamic(MPI_INFO_NULL, comm_, &window_);
  if (made != MPI_SUCCESS && process_.size > 2) {
    // Open MPI 4.1's osc/rdma names its shared-memory segment after the
    // communicator's id, which two disjoint pairs' communicators share: the
    // second window made at once on one node fails (seen here with
    // `pairs: all` under mpirun -np 4). osc/ucx has no such name.
    throw TransportError("mpi: MPI_Win_create_dynamic: " + mpi_error_text(made) +
                         " (with Open MPI, pairs that make their windows at once on one node "
                         "need a one-sided component other than osc/rdma: --mca osc ucx)");
  }
  check(made, "MPI_Win_create_dynamic");
  check(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
  // The engine fills and checks its buffers with plain loads and stores
  // while the peer reaches them through the window: defined only where
  // public and private copies of the window are one (MPI_WIN_UNIFIED).
  int* model = nullptr;
  int found = 0;
  check(MPI_Win_get_attr(window_, MPI_WIN_MODEL, &model, &found), "MPI_Win_get_attr(MODEL)");
  if (found && model && *model != MPI_WIN_UNIFIED) {
    MPI_Win_free(&window_);  // both sides: they run the same MPI
    throw Unsupported(
        "mpi: this MPI's window is of the separate memory model; the engine needs "
        "MPI_WIN_UNIFIED to touch window memory with loads and stores");
  }
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
  peer_ = peer;
  // The lower world rank is rank 0 of the pair's communicator.
  peer_in_comm_ = peer < process_.rank ? 0 : 1;
  for (MpiRegion* region : regions_) region->attach(window_);
}

std::unique_ptr<Endpoint> MpiContext::connect(const EndpointParams& params, PeerChannel& channel) {
  const Hello mine{process_.rank, process_.size, connects_};
  const Hello theirs = support::from_blob<Hello>(
      support::exchange_step(channel, kPlugin, [&] { return support::to_blob(mine); }), kPlugin,
      "hello");
  std::exception_ptr failure;
  try {
    if (theirs.rank == mine.rank || theirs.size != mine.size) {
      throw TransportError("mpi: the peer is rank " + std::to_string(theirs.rank) + " of " +
                           std::to_string(theirs.size) + ", this is rank " +
                           std::to_string(mine.rank) + " of " + std::to_string(mine.size) +
                           ": not two ranks of one MPI job");
    }
    if (theirs.sequence != mine.sequence) {
      throw TransportError("mpi: endpoint " + std::to_string(mine.sequence) +
                           " here meets endpoint " + std::to_string(theirs.sequence) +
                           " of the peer");
    }
    if (peer_ >= 0 && peer_ != theirs.rank) {
      throw TransportError("mpi: the peer changed from rank " + std::to_string(peer_) + " to " +
                           std::to_string(theirs.rank));
    }
  } catch (...) {
    failure = std::current_exception();
  }
  support::exchange_outcome(channel, kPlugin, failure);
  // Both sides agreed: the collective calls below meet.
  if (window_ == MPI_WIN_NULL) {
    try {
      make_window(theirs.rank, channel.rank() == 0);
    } catch (...) {
      failure = std::current_exception();
    }
    support::exchange_outcome(channel, kPlugin, failure);
  }
  int* tag_bound = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_bound, &found), "MPI_Comm_get_attr(TAG_UB)");
  const int tag_ub = found && tag_bound ? *tag_bound : 32767;
  const int tag = static_cast<int>(connects_ % static_cast<std::uint32_t>(tag_ub));
  ++connects_;
  return std::make_unique<MpiEndpoint>(params, comm_, window_, peer_in_comm_, tag);
}

// ---------------------------------------------------------------------------
// Endpoint
// ---------------------------------------------------------------------------

MpiEndpoint::MpiEndpoint(const EndpointParams& params, MPI_Comm comm, MPI_Win window, int peer,
                         int tag)
    : comm_(comm),
      window_(window),
      peer_(peer),
      tag_(tag),
      sends_(std::max<std::uint32_t>(params.send_depth, 1)),
      recvs_(std::max<std::uint32_t>(params.recv_depth, 1)) {}

MpiEndpoint::~MpiEndpoint() {
  // Receives still posted are cancelled; one-sided operations are finished
  // (their buffers go after this); sends are left to MPI (their tag is this
  // endpoint's alone, so nothing later matches them).
  for (RecvSlot& slot : recvs_.storage()) {
    if (slot.request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&slot.request);
    MPI_Wait(&slot.request, MPI_STATUS_IGNORE);
  }
  bool one_sided = unflushed_ > 0;
  for (SendSlot& slot : sends_.storage()) one_sided |= slot.request != MPI_REQUEST_NULL;
  if (one_sided) MPI_Win_flush(peer_, window_);
  for (SendSlot& slot : sends_.storage()) {
    if (slot.request == MPI_REQUEST_NULL) continue;
    int flag = 0;
    MPI_Test(&slot.request, &flag, MPI_STATUS_IGNORE);
    if (!flag) MPI_Request_free(&slot.request);
  }
}

std::unique_ptr<RemoteRegion> MpiEndpoint::import_region(std::uint64_t address,
                                                         std::uint64_t length,
                                                         std::span<const std::byte> key) {
  const auto displacement = support::from_blob<MPI_Aint>(key, kPlugin, "window displacement");
  return std::make_unique<MpiRemoteRegion>(address, length, displacement);
}

void MpiEndpoint::post(const WorkRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) post_one(requests[i]);
}

void MpiEndpoint::post_one(const WorkRequest& wr) {
  if (sends_.full()) [[unlikely]]
    throw TransportError("mpi: more requests posted than the endpoint's send depth allows");
  // MPI gives no order between one-sided operations: a fence waits for the
  // earlier ones.
  if ((wr.flags & WorkRequest::kFence) && wr.op != Op::send) flush_window();
  SendSlot& slot = sends_.post(wr.id, (wr.flags & WorkRequest::kSignaled) != 0);
  slot.finish = Finish::request;
  slot.request = MPI_REQUEST_NULL;
  auto* local = static_cast<std::byte*>(wr.local->address()) + wr.local_offset;
  const int length = static_cast<int>(wr.length);
  MPI_Aint target = 0;
  if (wr.op != Op::send) {
    target = static_cast<const MpiRemoteRegion*>(wr.remote)->displacement() +
             static_cast<MPI_Aint>(wr.remote_offset);
  }
  int rc = MPI_SUCCESS;
  switch (wr.op) {
    case Op::send:
      rc = MPI_Isend(local, length, MPI_BYTE, peer_, tag_, comm_, &slot.request);
      break;
    case Op::read:
      rc = MPI_Rget(local, length, MPI_BYTE, peer_, target, length, MPI_BYTE, window_,
                    &slot.request);
      break;
    case Op::write:
      slot.finish = Finish::flush;
      rc = MPI_Put(local, length, MPI_BYTE, peer_, target, length, MPI_BYTE, window_);
      break;
    case Op::fetch_add:
      slot.finish = Finish::flush;
      slot.operand = wr.compare_add;
      rc = MPI_Fetch_and_op(&slot.operand, local, MPI_UINT64_T, peer_, target, MPI_SUM, window_);
      break;
    case Op::cswap:
      slot.finish = Finish::flush;
      slot.operand = wr.swap;
      slot.compare = wr.compare_add;
      rc = MPI_Compare_and_swap(&slot.operand, &slot.compare, local, MPI_UINT64_T, peer_, target,
                                window_);
      break;
    default:
      // Not advertised: the engine never asks (plugin.hpp, Capabilities).
      throw TransportError("mpi: op " + std::string(to_string(wr.op)) + " is not offered");
  }
  if (rc != MPI_SUCCESS) {
    slot.done = true;
    slot.status = rc;
    slot.request = MPI_REQUEST_NULL;
  } else if (slot.finish == Finish::flush) {
    ++unflushed_;
  }
}

void MpiEndpoint::post_recv(const RecvRequest* requests, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const RecvRequest& rr = requests[i];
    if (recvs_.full()) [[unlikely]]
      throw TransportError("mpi: more receives posted than the endpoint's receive depth allows");
    RecvSlot& slot = recvs_.post(rr.id, true);
    slot.length = 0;
    auto* local = static_cast<std::byte*>(rr.local->address()) + rr.offset;
    const int rc =
        MPI_Irecv(local, static_cast<int>(rr.length), MPI_BYTE, peer_, tag_, comm_, &slot.request);
    if (rc != MPI_SUCCESS) {
      slot.done = true;
      slot.status = rc;
      slot.request = MPI_REQUEST_NULL;
    }
  }
}

void MpiEndpoint::flush_window() {
  if (unflushed_ == 0) return;
  const int rc = MPI_Win_flush(peer_, window_);
  for (std::size_t i = 0; i < sends_.outstanding(); ++i) {
    SendSlot& slot = sends_.at(i);
    if (slot.finish != Finish::flush || slot.done) continue;
    slot.done = true;
    slot.status = rc;
  }
  unflushed_ = 0;
}

std::size_t MpiEndpoint::poll(Completion* out, std::size_t max) {
  // Oldest first, up to the first unfinished request: requests retire in
  // posting order anyway, and one MPI_Test drives MPI's progress.
  for (std::size_t i = 0; i < sends_.outstanding(); ++i) {
    SendSlot& slot = sends_.at(i);
    if (slot.done) continue;
    if (slot.finish == Finish::flush) {
      flush_window();
      continue;
    }
    int flag = 0;
    const int rc = MPI_Test(&slot.request, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      slot.done = true;
      slot.status = rc;
      slot.request = MPI_REQUEST_NULL;
    } else if (flag) {
      slot.done = true;
    } else {
      break;
    }
  }
  for (std::size_t i = 0; i < recvs_.outstanding(); ++i) {
    RecvSlot& slot = recvs_.at(i);
    if (slot.done) continue;
    int flag = 0;
    MPI_Status status;
    const int rc = MPI_Test(&slot.request, &flag, &status);
    if (rc != MPI_SUCCESS) {
      slot.done = true;
      slot.status = rc;
      slot.request = MPI_REQUEST_NULL;
    } else if (flag) {
      int received = 0;
      MPI_Get_count(&status, MPI_BYTE, &received);
      slot.done = true;
      slot.length = static_cast<std::uint32_t>(received);
    } else {
      break;
    }
  }
  std::size_t n = 0;
  sends_.retire([&](const SendSlot& slot) {
    if (n == max) return false;
    out[n++] = Completion{slot.id, CompletionType::send, slot.status, 0, 0};
    return true;
  });
  recvs_.retire([&](const RecvSlot& slot) {
    if (n == max) return false;
    out[n++] = Completion{slot.id, CompletionType::recv, slot.status, slot.length, 0};
    return true;
  });
  return n;
}

bool MpiEndpoint::wait(std::chrono::milliseconds, std::uint32_t) {
  // Not called: completion_events is none. A spurious wake-up is allowed.
  progress();
  return true;
}

void MpiEndpoint::progress() {
  // Any MPI call that tests for a message runs Open MPI's progress engine,
  // which lets the peer's one-sided operations land where the one-sided
  // component needs the target's help.
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
}

std::string MpiEndpoint::describe(std::int32_t status) const {
  return mpi_error_text(status);
}

}  // namespace uniperf::mpi
