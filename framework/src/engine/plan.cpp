#include "engine/plan.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "engine/lane.hpp"
#include "model/latency_distribution.hpp"
#include "model/suite_spec.hpp"

namespace uniperf::engine {
namespace {

constexpr std::size_t kCacheLine = 64;
/// Buffer slots per direction and endpoint: consecutive ops touch different
/// bytes (as perftest's cyclic buffer does) without unbounded memory.
constexpr std::uint32_t kMaxSlots = 16;
constexpr std::size_t kMaxBufferBytes = std::size_t{256} << 20;

/// At least a cache line, in whole cache lines.
std::size_t round_up_to_line(std::uint64_t bytes) {
  return std::max<std::size_t>((bytes + kCacheLine - 1) / kCacheLine * kCacheLine, kCacheLine);
}

/// The knob that sets the send queue a flow needs (the longest of the
/// three, the window when they tie), with its value.
std::string send_depth_knob(const FlowSpec& flow) {
  if (flow.window >= flow.signal_every && flow.window >= flow.post_list) {
    return "window " + std::to_string(flow.window);
  }
  if (flow.signal_every >= flow.post_list) {
    return "signal_every " + std::to_string(flow.signal_every);
  }
  return "post_list " + std::to_string(flow.post_list);
}

}  // namespace

bool posts_receives(const FlowSpec& flow) {
  return is_two_sided(flow.op) || flow.window_mode == WindowMode::window_ack ||
         flow.pattern == Pattern::latency;
}

std::uint64_t send_depth_needed(const FlowSpec& flow) {
  return std::uint64_t{std::max({flow.window, flow.signal_every, flow.post_list, 1u})} + 1;
}

std::string skip_reason(const FlowSpec& flow, const Capabilities& caps, std::uint64_t size) {
  const Support op_support = caps.op(flow.op);
  if (op_support == Support::none) {
    return "plugin does not support op " + std::string(to_string(flow.op));
  }
  if (flow.completion == CompletionMode::event && caps.completion_events == Support::none) {
    return "plugin has no completion events (completion: event)";
  }
  if (flow.pattern == Pattern::latency && flow.op == Op::write) {
    if (!caps.ordered_write_visibility) {
      return "write latency polls the last byte of the target buffer, and this plugin does not "
             "guarantee writes become visible in address order";
    }
    if (flow.completion == CompletionMode::event) {
      return "write latency polls memory for the peer's write; there is no completion to sleep "
             "on (completion: event)";
    }
  }
  if (flow.signal_every > 1 && caps.selective_completion == Support::none) {
    return "plugin cannot suppress completions (signal_every > 1)";
  }
  if (flow.window_mode == WindowMode::window_ack && is_two_sided(flow.op) &&
      !caps.reliable_delivery) {
    return "window_ack waits for the receiver's ack of every window, and this transport loses "
           "messages without telling either side (reliable_delivery false): one lost message "
           "would stall the stream";
  }
  if (flow.window_mode == WindowMode::window_ack && flow.direction == Direction::bi) {
    return "window_ack is unidirectional: the receiver acknowledges each window";
  }
  if (flow.stream_end == StreamEnd::delivered && !caps.delivery_fence) {
    return "stream_end delivered waits until the transport says the peer holds every byte, and "
           "this plugin cannot tell (delivery_fence false)";
  }
  if (const std::uint64_t depth = send_depth_needed(flow);
      caps.max_send_depth != 0 && depth > caps.max_send_depth) {
    return send_depth_knob(flow) + " needs " + std::to_string(depth) +
           " requests outstanding per endpoint, more than the plugin's send queue of " +
           std::to_string(caps.max_send_depth) + " (max_send_depth)";
  }
  if (posts_receives(flow) && caps.max_recv_depth != 0 && flow.rx_depth > caps.max_recv_depth) {
    return "rx_depth " + std::to_string(flow.rx_depth) + " exceeds the plugin's receive queue of " +
           std::to_string(caps.max_recv_depth) + " (max_recv_depth)";
  }
  if (caps.max_message != 0 && flow.fragment == 0 && size > caps.max_message) {
    return "size " + std::to_string(size) + " exceeds the plugin's max_message " +
           std::to_string(caps.max_message);
  }
  if (flow.pattern == Pattern::latency && flow.op == Op::write && size < 1) {
    return "write latency needs at least one byte";
  }
  return {};
}

FlowSpec effective_flow(const FlowSpec& flow, const Capabilities& caps) {
  FlowSpec effective = flow;
  effective.inline_size =
      static_cast<std::uint32_t>(std::min<std::size_t>(flow.inline_size, caps.max_inline));
  return effective;
}

std::vector<std::string> emulated_features(const FlowSpec& flow, const Capabilities& caps) {
  std::vector<std::string> emulated;
  if (caps.op(flow.op) == Support::emulated)
    emulated.push_back("op:" + std::string(to_string(flow.op)));
  if (flow.signal_every > 1 && caps.selective_completion == Support::emulated) {
    emulated.emplace_back("selective_completion");
  }
  if (flow.completion == CompletionMode::event && caps.completion_events == Support::emulated) {
    emulated.emplace_back("completion_events");
  }
  if (flow.post_list > 1 && caps.post_list == Support::emulated) emulated.emplace_back("post_list");
  return emulated;
}

BufferGeometry buffer_geometry(const FlowSpec& flow, std::uint64_t max_size) {
  BufferGeometry g;
  g.slot_size = round_up_to_line(max_size);
  g.slots = std::bit_floor(std::clamp<std::uint32_t>(flow.window, 2, kMaxSlots));
  // The suite's ceilings on these knobs keep the depth far inside 32 bits.
  const auto in_flight = static_cast<std::uint32_t>(send_depth_needed(flow) - 1);
  if (is_atomic(flow.op)) {
    // Atomics give every request that can be in flight a target word of its
    // own (see Lanes::choose_offsets), so they get a slot per request.
    g.slots = std::max(g.slots, std::bit_ceil(in_flight + 1));
  }
  while (g.slots > 2 && 2 * g.slots * g.slot_size > kMaxBufferBytes) g.slots /= 2;
  g.send_depth = in_flight + 1;
  std::size_t stage_rings = 1;
  if (flow.fragment > 0) {
    // One message buffer each way (fragments tile it), then the stage
    // ring: bounce buffers for every request that can be in flight, and
    // receive buffers for every receive posted, plus (store_and_forward)
    // the fragments of a whole message waiting for its last one.
    g.slots = 1;
    g.stage_slot_size = round_up_to_line(std::min<std::uint64_t>(flow.fragment, max_size));
    const bool staged = flow.source == model::Source::staged;
    std::uint64_t ring = staged ? g.send_depth : 1;
    if (flow.delivery == model::Delivery::copy) {
      std::uint64_t receives = flow.rx_depth;
      if (flow.reassembly == model::Reassembly::store_and_forward)
        receives += fragments_of(max_size, flow.fragment);
      ring = std::max(ring, receives);
    }
    g.stage_slots =
        static_cast<std::uint32_t>(std::bit_ceil(std::min<std::uint64_t>(ring, 1u << 30)));
    // A ping-pong's sides send and receive fragments: their bounce buffers
    // get a ring of their own beside the receives'.
    const std::size_t rings =
        staged && flow.delivery == model::Delivery::copy && flow.pattern == Pattern::latency ? 2
                                                                                             : 1;
    if (rings * g.stage_slots * g.stage_slot_size > kMaxBufferBytes) {
      g.oversized_stage_slots = g.stage_slots;
      g.stage_slots = 1;
    }
    stage_rings = rings;
  }
  g.tx_base = 0;
  g.rx_base = g.slots * g.slot_size;
  g.stage_base = 2 * g.slots * g.slot_size;
  g.bounce_base = g.stage_base + (stage_rings - 1) * std::size_t{g.stage_slots} * g.stage_slot_size;
  const std::size_t used = g.bounce_base + std::size_t{g.stage_slots} * g.stage_slot_size;
  g.lane_bytes = (used + kPageSize - 1) / kPageSize * kPageSize;
  const bool copies = flow.fragment > 0 && flow.delivery == model::Delivery::copy;
  g.recv_base = copies ? g.stage_base : g.rx_base;
  g.recv_slot_size = copies ? g.stage_slot_size : g.slot_size;
  g.recv_slots = copies ? g.stage_slots : g.slots;
  return g;
}

std::uint64_t FlowPlan::fragments_at(std::uint64_t size) const {
  return fragments_of(size, flow.fragment);
}

std::vector<LanePlan> lane_plans(const FlowSpec& flow, std::size_t place, std::uint32_t rails) {
  const std::uint32_t endpoints = flow.endpoints;
  std::vector<LanePlan> lanes;
  const auto home = static_cast<std::uint32_t>(place % rails);
  const bool spread = rails > 1 && flow.rail_policy != model::RailPolicy::bind;
  if (spread) {
    // Each endpoint once per rail, the rails of one endpoint side by side:
    // a striped message's pieces, or a round-robin's turns.
    for (std::uint32_t e = 0; e < endpoints; ++e)
      for (std::uint32_t r = 0; r < rails; ++r) lanes.push_back({r, true, true});
  } else if (rails > 1 && flow.direction == Direction::bi) {
    // bind, both directions: the initiator's on the flow's rail, the
    // responder's on the next, each direction on endpoints of its own.
    const std::uint32_t other = (home + 1) % rails;
    for (std::uint32_t e = 0; e < endpoints; ++e) lanes.push_back({home, true, false});
    for (std::uint32_t e = 0; e < endpoints; ++e) lanes.push_back({other, false, true});
  } else {
    // bind: every endpoint on one rail.
    for (std::uint32_t e = 0; e < endpoints; ++e) lanes.push_back({home, true, true});
  }
  return lanes;
}

std::uint64_t FlowPlan::lane_length(std::size_t k, std::uint64_t size) const {
  if (!striped_at(size)) return size;
  const std::uint64_t piece = lanes[k].rail;
  return size / rails + (piece < size % rails ? 1 : 0);
}

std::uint64_t FlowPlan::lane_iterations(std::size_t k, std::uint64_t size,
                                        std::uint64_t total) const {
  const std::size_t stride = turn_stride();
  if (k % stride >= turn_width(size)) return 0;  // a rail the ping-pong leaves idle
  const std::size_t groups = lanes.size() / stride;
  return policy::latency_share(total, groups, k / stride);
}

std::uint64_t FlowPlan::lane_messages(std::size_t k, std::uint64_t size,
                                      std::uint64_t total) const {
  if (rails == 1 || flow.pattern == Pattern::latency) return total;
  const LanePlan& lane = lanes[k];
  switch (flow.rail_policy) {
    case model::RailPolicy::bind:
      return total;
    case model::RailPolicy::stripe:
      // At or below the threshold a message goes whole over the first rail.
      return striped_at(size) || lane.rail == 0 ? total : 0;
    case model::RailPolicy::round_robin:
      return policy::latency_share(total, rails, lane.rail);
  }
  return total;
}

std::uint64_t FlowPlan::messages_of(const std::vector<std::uint64_t>& posted,
                                    std::uint64_t size) const {
  std::uint64_t messages = 0;
  if (!striped_at(size)) {
    // A pipelined flow posts whole messages of fragments (a phase ends at
    // a message's last one).
    for (const std::uint64_t n : posted) messages += n / fragments_at(size);
    return messages;
  }
  // Lanes come in groups of one per rail (lane_plans): a message is done
  // when its piece on every rail is.
  for (std::size_t first = 0; first + rails <= posted.size(); first += rails)
    messages += *std::min_element(posted.begin() + static_cast<std::ptrdiff_t>(first),
                                  posted.begin() + static_cast<std::ptrdiff_t>(first + rails));
  return messages;
}

FlowPlan plan_flow(const TestSpec& test, std::size_t index, const Capabilities& caps,
                   std::uint32_t rails, std::uint32_t first_rail) {
  FlowPlan plan;
  plan.flow = effective_flow(test.flows.at(index), caps);
  plan.emulated = emulated_features(plan.flow, caps);
  // A flow with its own size runs it at every size of the test.
  plan.sizes = test.sizes;
  if (plan.flow.size != 0) std::fill(plan.sizes.begin(), plan.sizes.end(), plan.flow.size);
  if (rails > model::kMaxRails)  // a config lists at most that many
    throw std::invalid_argument("more than " + std::to_string(model::kMaxRails) + " rails");
  plan.rails = std::max<std::uint32_t>(1, rails);
  plan.lanes = lane_plans(plan.flow, first_rail + index, plan.rails);
  for (const std::uint64_t size : plan.sizes) {
    std::string why = skip_reason(plan.flow, caps, size);
    if (why.empty() && plan.stripes() && plan.flow.pattern == Pattern::latency &&
        (plan.flow.op == Op::write || plan.flow.latency_gap > 0)) {
      why = plan.flow.op == Op::write
                ? "a striped ping-pong runs over send, write_imm and read: write latency polls "
                  "one message's last byte, which a stripe has on every rail"
                : "a striped ping-pong takes no latency_gap";
    }
    if (why.empty() && plan.flow.fragment > 0 && caps.max_message != 0 &&
        std::min<std::uint64_t>(size, plan.flow.fragment) > caps.max_message) {
      why = "fragment " + std::to_string(plan.flow.fragment) +
            " exceeds the plugin's max_message " + std::to_string(caps.max_message);
    }
    if (why.empty() && plan.rails > 1 && plan.flow.direction == Direction::bi &&
        plan.flow.rail_policy == model::RailPolicy::bind &&
        plan.flow.window_mode == WindowMode::window_ack) {
      why =
          "rail_policy bind sends each direction on a rail of its own: with the streaming "
          "window only (window_mode: streaming)";
    }
    plan.skip.push_back(std::move(why));
  }
  plan.run = model::run_length_of(test, test.flows.at(index));
  plan.max_size = plan.sizes.empty() ? 0 : *std::max_element(plan.sizes.begin(), plan.sizes.end());
  plan.buffers = buffer_geometry(plan.flow, plan.max_size);
  if (const std::uint32_t ring = plan.buffers.oversized_stage_slots; ring != 0) {
    for (std::string& why : plan.skip) {
      if (why.empty())
        why = "the pipeline's fragment ring (" + std::to_string(ring) + " fragments of " +
              std::to_string(plan.buffers.stage_slot_size) + " B) exceeds " +
              std::to_string(kMaxBufferBytes >> 20) + " MiB per endpoint: a larger fragment";
    }
  }
  plan.recv_depth = plan.flow.rx_depth;
  plan.reliable_delivery = caps.reliable_delivery;
  // A flow of a test of several keeps more too: its percentiles while every
  // flow ran come from the samples in the order they ran.
  plan.exact_samples = plan.flow.keep_samples || test.flows.size() > 1
                           ? kKeptSamplesLimit
                           : model::LatencyDistribution::kDefaultExactLimit;
  if (!posts_receives(plan.flow) && caps.max_recv_depth != 0) {
    plan.recv_depth = std::min(plan.recv_depth, caps.max_recv_depth);
  }
  return plan;
}

std::vector<FlowPlan> plan_flows(const TestSpec& test, const Capabilities& caps,
                                 std::uint32_t rails, std::uint32_t first_rail) {
  std::vector<FlowPlan> plans;
  for (std::size_t k = 0; k < test.flows.size(); ++k)
    plans.push_back(plan_flow(test, k, caps, rails, first_rail));
  return plans;
}

std::string skip_reason(const std::vector<FlowPlan>& flows, std::size_t size_index) {
  const bool several = flows.size() > 1;
  for (std::size_t k = 0; k < flows.size(); ++k) {
    const std::string& why = flows[k].skip[size_index];
    if (!why.empty()) return several ? "flow " + std::to_string(k + 1) + ": " + why : why;
  }
  return {};
}

}  // namespace uniperf::engine
