#include "session/pair_samples.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace uniperf::session {
namespace {

/// Samples per frame: 8 bytes each, well inside bootstrap::kMaxFrameBytes.
constexpr std::size_t kSamplesPerFrame = bootstrap::kMaxFrameBytes / 16;

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
    for (std::size_t from = 0; from < kept.us.size(); from += kSamplesPerFrame) {
      const std::size_t to = std::min(kept.us.size(), from + kSamplesPerFrame);
      frame.assign(reinterpret_cast<const std::byte*>(kept.us.data() + from),
                   reinterpret_cast<const std::byte*>(kept.us.data() + to));
      rank0.send(frame);
    }
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
    kept.us.reserve(count);
    while (kept.us.size() < count) {
      frame = rank.receive(rank.timeout());
      const std::size_t in_frame = frame.size() / sizeof(double);
      if (frame.size() % sizeof(double) != 0 || in_frame == 0 || in_frame > count - kept.us.size())
        throw malformed("a malformed frame");
      const std::size_t had = kept.us.size();
      kept.us.resize(had + in_frame);
      std::memcpy(kept.us.data() + had, frame.data(), frame.size());
    }
  }
}

}  // namespace uniperf::session
