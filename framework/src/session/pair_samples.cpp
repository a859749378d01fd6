#include "session/pair_samples.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "model/latency_distribution.hpp"

namespace uniperf::session {
namespace {

// Little-endian integers, and doubles as their bits (both ends are uniperf
// on hosts of one byte order within a job).
template <class T>
void put_raw(std::vector<std::byte>& out, T value) {
  std::byte bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <class T>
T get_raw(const std::byte*& in) {
  T value;
  std::memcpy(&value, in, sizeof(T));
  in += sizeof(T);
  return value;
}

/// `values` in frames of half bootstrap::kMaxFrameBytes at most.
template <class T>
void send_values(bootstrap::Bootstrap& rank0, std::span<const T> values) {
  constexpr std::size_t kPerFrame = bootstrap::kMaxFrameBytes / 2 / sizeof(T);
  std::vector<std::byte> frame;
  for (std::size_t from = 0; from < values.size(); from += kPerFrame) {
    const std::size_t to = std::min(values.size(), from + kPerFrame);
    frame.assign(reinterpret_cast<const std::byte*>(values.data() + from),
                 reinterpret_cast<const std::byte*>(values.data() + to));
    rank0.send(frame);
  }
}

/// `count` values sent by send_values() into `values`; `malformed` makes
/// the error of a frame that is not whole values or overruns the count.
template <class T, class Malformed>
void receive_values(bootstrap::Bootstrap& rank, std::size_t count, std::vector<T>& values,
                    const Malformed& malformed) {
  values.clear();
  values.reserve(count);
  while (values.size() < count) {
    const Bytes frame = rank.receive(rank.timeout());
    const std::size_t in_frame = frame.size() / sizeof(T);
    if (frame.size() % sizeof(T) != 0 || in_frame == 0 || in_frame > count - values.size())
      throw malformed("a malformed frame");
    const std::size_t had = values.size();
    values.resize(had + in_frame);
    std::memcpy(static_cast<void*>(values.data() + had), frame.data(), frame.size());
  }
}

}  // namespace

void send_pair_samples(bootstrap::Bootstrap& rank0, const results::Record& record) {
  std::vector<std::byte> frame;
  put_raw<std::uint64_t>(frame, record.kept_samples.size());
  rank0.send(frame);
  for (const results::Record::KeptSamples& kept : record.kept_samples) {
    frame.clear();
    put_raw<std::uint32_t>(frame, kept.flow);
    put_raw<std::uint64_t>(frame, kept.us.size());
    rank0.send(frame);
    send_values<double>(rank0, kept.us);
  }
}

void receive_pair_samples(bootstrap::Bootstrap& rank, results::Record& record) {
  const auto malformed = [](const std::string& what) {
    return bootstrap::BootstrapError("the pair's kept samples: " + what);
  };
  Bytes frame = rank.receive(rank.timeout());
  if (frame.size() != 8) throw malformed("a malformed header");
  const std::byte* at = frame.data();
  const auto series = get_raw<std::uint64_t>(at);
  const std::size_t flows = std::max<std::size_t>(1, record.flows.size());
  if (series > flows) throw malformed(std::to_string(series) + " series of a test of fewer flows");
  std::uint64_t total = 0;
  for (std::uint64_t s = 0; s < series; ++s) {
    frame = rank.receive(rank.timeout());
    if (frame.size() != 12) throw malformed("a malformed series header");
    at = frame.data();
    const auto flow = get_raw<std::uint32_t>(at);
    const auto count = get_raw<std::uint64_t>(at);
    total += count;
    if (flow >= flows) throw malformed("a series of no flow of this test");
    if (total > record.samples_kept) {
      throw malformed("more samples than the record kept (" + std::to_string(record.samples_kept) +
                      ")");
    }
    results::Record::KeptSamples& kept = record.kept_samples.emplace_back();
    kept.flow = flow;
    receive_values(rank, count, kept.us, malformed);
  }
}

void send_pair_iterations(bootstrap::Bootstrap& rank0, const results::Record& record) {
  const results::Record::Iterations& it = *record.iterations;
  std::vector<std::byte> frame;
  put_raw<std::int64_t>(frame, it.started_ns);
  put_raw<std::uint8_t>(frame, it.one_way ? 1 : 0);
  put_raw<std::uint8_t>(frame, it.all_samples ? 1 : 0);
  put_raw<std::uint64_t>(frame, it.samples_us.size());
  put_raw<std::uint64_t>(frame, it.begins_us.size());
  put_raw<std::uint64_t>(frame, it.resumes_us.size());
  rank0.send(frame);
  send_values<double>(rank0, it.samples_us);
  send_values<double>(rank0, it.begins_us);
  std::vector<double> resumes;  // {index, us} as two doubles: an index below 2^53
  for (const auto& [index, us] : it.resumes_us) {
    resumes.push_back(static_cast<double>(index));
    resumes.push_back(us);
  }
  send_values<double>(rank0, resumes);
}

void receive_pair_iterations(bootstrap::Bootstrap& rank, results::Record& record) {
  const auto malformed = [](const std::string& what) {
    return bootstrap::BootstrapError("the pair's latency iterations: " + what);
  };
  const Bytes frame = rank.receive(rank.timeout());
  if (frame.size() != 34) throw malformed("a malformed header");
  const std::byte* at = frame.data();
  results::Record::Iterations it;
  it.started_ns = get_raw<std::int64_t>(at);
  it.one_way = get_raw<std::uint8_t>(at) != 0;
  it.all_samples = get_raw<std::uint8_t>(at) != 0;
  const auto samples = get_raw<std::uint64_t>(at);
  const auto begins = get_raw<std::uint64_t>(at);
  const auto resumes = get_raw<std::uint64_t>(at);
  // What the pair's sampler can keep, and no more than it ran.
  if (samples > model::LatencyDistribution::kDefaultExactLimit || samples > record.iterations_run)
    throw malformed(std::to_string(samples) + " samples of " +
                    std::to_string(record.iterations_run) + " iterations");
  if ((begins != 0 && begins != samples) || resumes > samples)
    throw malformed("begins or resumes that are not one per sample");
  receive_values(rank, samples, it.samples_us, malformed);
  receive_values(rank, begins, it.begins_us, malformed);
  std::vector<double> pairs;
  receive_values(rank, 2 * resumes, pairs, malformed);
  for (std::size_t i = 0; i < pairs.size(); i += 2)
    it.resumes_us.emplace_back(static_cast<std::uint64_t>(pairs[i]), pairs[i + 1]);
  record.iterations = std::move(it);
}

}  // namespace uniperf::session
