#include "engine/peer_protocol.hpp"

#include <bit>
#include <cstring>
#include <string>

#include "engine/errors.hpp"

namespace uniperf::engine {
namespace {

enum class Kind : std::uint8_t {
  region = 1,
  done = 2,
  corrupted = 3,
  delivered = 4,
  cpu = 5,
  placing = 6,
  settled = 7
};

const char* name_of(Kind kind) {
  switch (kind) {
    case Kind::region:
      return "buffer key";
    case Kind::done:
      return "end-of-phase message";
    case Kind::corrupted:
      return "validation count";
    case Kind::delivered:
      return "count of messages received";
    case Kind::cpu:
      return "CPU time of the phase";
    case Kind::placing:
      return "time spent placing the last message";
    case Kind::settled:
      return "word that its requests of the phase are complete";
  }
  return "message";
}

class Writer {
 public:
  explicit Writer(Kind kind) { bytes_.push_back(static_cast<std::byte>(kind)); }
  Writer& u64(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<std::byte>(value >> (8 * i)));
    return *this;
  }
  Writer& f64(double value) { return u64(std::bit_cast<std::uint64_t>(value)); }
  Writer& count(std::size_t n) {
    const auto value = static_cast<std::uint32_t>(n);
    for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<std::byte>(value >> (8 * i)));
    return *this;
  }
  Writer& blob(std::span<const std::byte> data) {
    count(data.size());
    bytes_.insert(bytes_.end(), data.begin(), data.end());
    return *this;
  }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, Kind expected) : bytes_(bytes), kind_(expected) {
    if (bytes_.empty() || bytes_[0] != static_cast<std::byte>(expected)) {
      fail(bytes_.empty() ? "an empty message"
                          : "a message of kind " + std::to_string(std::to_integer<int>(bytes_[0])));
    }
    at_ = 1;
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= std::to_integer<std::uint64_t>(bytes_[at_ + i]) << (8 * i);
    at_ += 8;
    return value;
  }
  double f64() { return std::bit_cast<double>(u64()); }
  std::size_t count() {
    need(4);
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value |= std::to_integer<std::uint32_t>(bytes_[at_ + i]) << (8 * i);
    at_ += 4;
    return value;
  }
  /// A count of `element_bytes`-sized items that must all be in the message:
  /// checked before the caller allocates for them.
  std::size_t count_of(std::size_t element_bytes) {
    const std::size_t n = count();
    need(n * element_bytes);
    return n;
  }
  Bytes blob() {
    const std::size_t n = count();
    need(n);
    Bytes out(bytes_.begin() + static_cast<std::ptrdiff_t>(at_),
              bytes_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return out;
  }
  void finish() const {
    if (at_ != bytes_.size()) fail(std::to_string(bytes_.size() - at_) + " bytes too many");
  }

 private:
  void need(std::size_t n) const {
    if (bytes_.size() - at_ < n) fail("a message cut short");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ProtocolError(std::string("protocol error: expected the peer's ") + name_of(kind_) +
                        ", got " + what);
  }

  std::span<const std::byte> bytes_;
  Kind kind_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<std::byte> encode(const RegionAdvert& message) {
  return Writer(Kind::region).u64(message.address).u64(message.length).blob(message.key).take();
}

std::vector<std::byte> encode(const PhaseDone& message) {
  Writer writer(Kind::done);
  writer.f64(message.seconds).u64(message.bytes).count(message.posted.size());
  for (const std::uint64_t posted : message.posted) writer.u64(posted);
  return writer.take();
}

std::vector<std::byte> encode_corrupted(std::uint64_t count) {
  return Writer(Kind::corrupted).u64(count).take();
}

std::vector<std::byte> encode_delivered(std::uint64_t count) {
  return Writer(Kind::delivered).u64(count).take();
}

std::vector<std::byte> encode(const CpuUse& message) {
  return Writer(Kind::cpu).f64(message.user_s).f64(message.system_s).f64(message.seconds).take();
}

RegionAdvert decode_region(std::span<const std::byte> bytes) {
  Reader reader(bytes, Kind::region);
  RegionAdvert message;
  message.address = reader.u64();
  message.length = reader.u64();
  message.key = reader.blob();
  reader.finish();
  return message;
}

PhaseDone decode_done(std::span<const std::byte> bytes) {
  Reader reader(bytes, Kind::done);
  PhaseDone message;
  message.seconds = reader.f64();
  message.bytes = reader.u64();
  message.posted.resize(reader.count_of(8));
  for (auto& posted : message.posted) posted = reader.u64();
  reader.finish();
  return message;
}

namespace {
std::uint64_t decode_count(std::span<const std::byte> bytes, Kind kind) {
  Reader reader(bytes, kind);
  const std::uint64_t count = reader.u64();
  reader.finish();
  return count;
}
}  // namespace

std::uint64_t decode_corrupted(std::span<const std::byte> bytes) {
  return decode_count(bytes, Kind::corrupted);
}

std::uint64_t decode_delivered(std::span<const std::byte> bytes) {
  return decode_count(bytes, Kind::delivered);
}

std::vector<std::byte> encode_placing(double seconds) {
  return Writer(Kind::placing).f64(seconds).take();
}

double decode_placing(std::span<const std::byte> bytes) {
  Reader reader(bytes, Kind::placing);
  const double seconds = reader.f64();
  reader.finish();
  if (!(seconds >= 0 && seconds < 1e6))
    throw ProtocolError("the peer's time spent placing the last message is out of range");
  return seconds;
}

std::vector<std::byte> encode_settled() {
  return Writer(Kind::settled).take();
}

void decode_settled(std::span<const std::byte> bytes) {
  Reader reader(bytes, Kind::settled);
  reader.finish();
}

CpuUse decode_cpu(std::span<const std::byte> bytes) {
  Reader reader(bytes, Kind::cpu);
  CpuUse message;
  message.user_s = reader.f64();
  message.system_s = reader.f64();
  message.seconds = reader.f64();
  reader.finish();
  return message;
}

Bytes PeerLink::exchange(const std::vector<std::byte>& mine) {
  return control_.exchange(std::span(mine), control_.timeout());
}

RegionAdvert PeerLink::exchange_region(const RegionAdvert& mine) {
  return decode_region(exchange(encode(mine)));
}

void PeerLink::send_done(const PhaseDone& done) {
  const std::vector<std::byte> message = encode(done);
  control_.send(message);
}

void PeerLink::receive_done() {
  peer_done_ = decode_done(control_.receive(control_.timeout()));
  done_received_ = true;
}

void PeerLink::forget_done() {
  peer_done_ = PhaseDone{};
  done_received_ = false;
}

void PeerLink::send_settled() {
  control_.send(encode_settled());
}

void PeerLink::receive_settled() {
  decode_settled(control_.receive(control_.timeout()));
}

std::uint64_t PeerLink::exchange_corrupted(std::uint64_t mine) {
  return decode_corrupted(exchange(encode_corrupted(mine)));
}

std::uint64_t PeerLink::exchange_delivered(std::uint64_t mine) {
  return decode_delivered(exchange(encode_delivered(mine)));
}

double PeerLink::exchange_placing(double mine) {
  return decode_placing(exchange(encode_placing(mine)));
}

CpuUse PeerLink::exchange_cpu(const CpuUse& mine) {
  return decode_cpu(exchange(encode(mine)));
}

}  // namespace uniperf::engine
