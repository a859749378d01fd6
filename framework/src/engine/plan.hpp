// The plan of one flow: everything decided about it before anything runs,
// from the test, the flow and the plugin's capabilities alone. The session
// builds it once per (config, test, flow); the runner runs it and the
// record builder echoes it, so the rules below are applied once and the two
// sides, which build their plans from the same inputs, agree on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <uniperf/plugin.hpp>
#include <vector>

#include "model/test_spec.hpp"

namespace uniperf::engine {

// The engine runs the test model's values (model/test_spec.hpp).
using model::BufferMode;
using model::CompletionMode;
using model::Direction;
using model::Duration;
using model::FlowSpec;
using model::Pattern;
using model::SendBuffers;
using model::StreamEnd;
using model::TargetWatch;
using model::TestSpec;
using model::WindowMode;

/// Buffers are whole pages, page-aligned.
inline constexpr std::size_t kPageSize = 4096;

/// How each endpoint's registered memory is laid out: a tx half and an rx
/// half of `slots` slots each, every slot holding the test's largest message.
struct BufferGeometry {
  std::size_t slot_size = 0;   ///< the largest size, rounded up to a cache line
  std::uint32_t slots = 1;     ///< per half; a power of two, so slot arithmetic is a mask
  std::size_t tx_base = 0;     ///< offset of the tx half
  std::size_t rx_base = 0;     ///< offset of the rx half
  std::size_t lane_bytes = 0;  ///< both halves, rounded up to a page
  /// Requests one endpoint may have outstanding: the window, a signaling
  /// period or a chain, whichever is longest, plus one (a window ack).
  std::uint32_t send_depth = 1;
  /// Where receives are posted: the rx half's slots, or for a pipelined
  /// flow that copies (FlowSpec::delivery copy) the stage ring.
  std::size_t recv_base = 0;
  std::size_t recv_slot_size = 0;
  std::uint32_t recv_slots = 1;  ///< a power of two
  /// A pipelined flow's ring of fragment-sized buffers (docs/pipeline.md):
  /// the sender's bounce buffers (source staged) and the receiver's
  /// receive buffers (delivery copy); after both halves. 0 slots otherwise.
  std::size_t stage_base = 0;
  std::size_t stage_slot_size = 0;
  std::uint32_t stage_slots = 0;  ///< a power of two, or 0
  /// Where a staged sender's bounce buffers are: the stage ring, or in a
  /// pipelined ping-pong that also copies (whose sides both send and
  /// receive fragments) a second ring of as many slots after it.
  std::size_t bounce_base = 0;
  /// Non-zero: the ring the flow needs, in slots, when it would pass the
  /// bound on one endpoint's memory. Nothing runs then (plan_flow says
  /// why), and the ring laid out is one slot, so the endpoints the plan
  /// still opens stay small.
  std::uint32_t oversized_stage_slots = 0;
};

/// FlowPlan::latency_segment: 2^20 iterations, 8 MiB of stamps.
inline constexpr std::uint64_t kLatencySegment = std::uint64_t{1} << 20;
/// FlowPlan::exact_samples of a flow that keeps its samples
/// (FlowSpec::keep_samples) or runs beside others: 2^24, 128 MiB.
inline constexpr std::size_t kKeptSamplesLimit = std::size_t{1} << 24;

/// One lane of a flow over a config's rails: which rail its endpoint is on,
/// and who sends on it.
struct LanePlan {
  /// Under stripe and round_robin, where a flow's endpoints each have a lane
  /// per rail, also the lane's piece of a striped message or its turn.
  std::uint32_t rail = 0;
  bool initiator_sends = true;  ///< a stream's initiator posts on it
  bool responder_sends = true;  ///< a bi-directional stream's responder posts on it
};

struct FlowPlan {
  FlowSpec flow;                      ///< as it really runs here (inline clamped to max_inline)
  std::vector<std::string> emulated;  ///< features the plugin emulates for it
  std::vector<std::uint64_t> sizes;   ///< the test's sizes, in order
  std::vector<std::string> skip;      ///< per size: "" when it runs, else why not
  Duration run;                       ///< how long each size runs
  BufferGeometry buffers;             ///< sized for the largest of `sizes`
  std::uint64_t max_size = 0;
  /// Receives each endpoint may have posted (EndpointParams::recv_depth):
  /// rx_depth where the flow posts receives; where it posts none, rx_depth
  /// held to the plugin's max_recv_depth, so the idle queue asks for
  /// nothing the plugin cannot give.
  std::uint32_t recv_depth = 0;
  /// Latency iterations stamped per segment: the stamps' memory (8 B
  /// each, two with a gap). Between two segments the initiator adds the
  /// samples to the outcome's distribution, outside every sample, so a
  /// phase's memory does not grow with its length.
  std::uint64_t latency_segment = kLatencySegment;
  /// Samples a latency phase keeps exactly before it folds them
  /// (model::LatencyDistribution): more (kKeptSamplesLimit) where the flow
  /// keeps its samples for the samples file, or is one of a test's several
  /// (its percentiles while every flow ran need its samples in order).
  std::size_t exact_samples = 0;
  /// The plugin's Capabilities::reliable_delivery. Without it a stream of
  /// two-sided messages ends when the receiver has drained what came, and
  /// the record counts what was lost.
  bool reliable_delivery = true;
  /// The config's rails (1 without `rails:`; docs/rails.md) and the flow's
  /// lanes over them, one per endpoint: lane_count() endpoints in all.
  std::uint32_t rails = 1;
  std::vector<LanePlan> lanes;

  std::size_t lane_count() const { return lanes.size(); }
  /// Whether the flow's lanes are laid out in stripes (one per rail for
  /// each endpoint), and whether a message of `size` is split over them.
  bool stripes() const { return rails > 1 && flow.rail_policy == model::RailPolicy::stripe; }
  bool striped_at(std::uint64_t size) const {
    return stripes() && !is_atomic(flow.op) && size > flow.stripe_threshold;
  }
  /// A ping-pong's lanes take turns by groups: a stripe's lanes together
  /// (one iteration posts a piece on each of a group's `width` lanes; below
  /// the threshold the width is 1, the first rail's lane), else one lane a
  /// turn. `stride` lanes a group.
  std::size_t turn_stride() const { return stripes() ? rails : 1; }
  std::size_t turn_width(std::uint64_t size) const { return striped_at(size) ? rails : 1; }
  /// Iterations of a ping-pong phase of `total` lane `k` takes part in.
  std::uint64_t lane_iterations(std::size_t k, std::uint64_t size, std::uint64_t total) const;
  /// Bytes each request of lane `k` carries at a message `size`: its even
  /// piece of a striped message, else the whole message.
  std::uint64_t lane_length(std::size_t k, std::uint64_t size) const;
  /// How many of a phase's `total` messages per endpoint lane `k` carries
  /// at `size` (kUnbounded stays unbounded; 0 for a lane that idles).
  std::uint64_t lane_messages(std::size_t k, std::uint64_t size, std::uint64_t total) const;
  /// Whole messages in `posted` requests per lane at `size`: a striped
  /// message is done when every piece of it is.
  std::uint64_t messages_of(const std::vector<std::uint64_t>& posted, std::uint64_t size) const;

  /// A pipelined flow (FlowSpec::fragment > 0): each message goes as
  /// fragments_at(size) requests, the last one shorter.
  bool pipelined() const { return flow.fragment > 0; }
  std::uint64_t fragments_at(std::uint64_t size) const;

  /// Whether the flow's messages can be lost without an error: two-sided
  /// (the receiver counts arrivals) over an unreliable transport.
  bool counts_loss() const { return !reliable_delivery && is_two_sided(flow.op); }

  bool runs_at(std::size_t size_index) const { return skip[size_index].empty(); }
};

/// Plans flow `index` of `test` on a plugin with `caps`, over `rails`
/// rails (a config's `rails:`; 1 without). A bound flow's rail is its
/// index after `first_rail` (mod rails): a job's pairs that run at once
/// each start at their own (session::RunSettings::first_rail).
FlowPlan plan_flow(const TestSpec& test, std::size_t index, const Capabilities& caps,
                   std::uint32_t rails = 1, std::uint32_t first_rail = 0);
/// Every flow of `test`, in order.
std::vector<FlowPlan> plan_flows(const TestSpec& test, const Capabilities& caps,
                                 std::uint32_t rails = 1, std::uint32_t first_rail = 0);
/// The lanes of the flow that binds to rail `place` mod `rails` (its index,
/// after the first rail) by its rail_policy (docs/rails.md).
std::vector<LanePlan> lane_plans(const FlowSpec& flow, std::size_t place, std::uint32_t rails);

/// Why a test of these flows cannot run at size `size_index` ("" when it
/// can): the first flow that cannot, numbered when there are several.
std::string skip_reason(const std::vector<FlowPlan>& flows, std::size_t size_index);

// The rules a plan applies, exposed for the tests that check them.

/// "" when a plugin with `caps` can run `flow` at `size`, else why not (the
/// size is then SKIPPED).
std::string skip_reason(const FlowSpec& flow, const Capabilities& caps, std::uint64_t size);
/// Whether the endpoints of `flow` post receives: two-sided ops consume
/// them, and latency's replies and window_ack's acks are sends.
bool posts_receives(const FlowSpec& flow);
/// Requests one endpoint of `flow` may have outstanding: the window, a
/// signaling period or a chain, whichever is longest, plus one (a window
/// ack). BufferGeometry::send_depth, computed wide so no knob wraps it.
std::uint64_t send_depth_needed(const FlowSpec& flow);
/// The flow as it will really run on this plugin.
FlowSpec effective_flow(const FlowSpec& flow, const Capabilities& caps);
/// Which features the plugin emulates for `flow` (named in the record).
std::vector<std::string> emulated_features(const FlowSpec& flow, const Capabilities& caps);
/// The memory layout for `flow` at messages up to `max_size` bytes.
BufferGeometry buffer_geometry(const FlowSpec& flow, std::uint64_t max_size);
/// Fragments of `fragment` bytes a message of `size` goes as: at least one
/// (an empty message, or a fragment larger than the message, is one).
constexpr std::uint64_t fragments_of(std::uint64_t size, std::uint64_t fragment) {
  return fragment == 0 || size <= fragment ? 1 : (size + fragment - 1) / fragment;
}

}  // namespace uniperf::engine
