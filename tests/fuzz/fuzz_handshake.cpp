// The session's JSON messages as the peer could send them: the handshake
// (session::handshake), then the per-config and per-size agreements. The
// first byte picks the message, the rest is what the peer "sent". A
// handshake the reader refuses is a HandshakeError; a bad agreement is any
// std::exception (the run ends with its message). Crashes, leaks and hangs
// are findings.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "session/agreement.hpp"
#include "session/session.hpp"

namespace {

using namespace uniperf;

/// A control channel whose peer answers every message with the input.
class ScriptedPeer final : public bootstrap::Bootstrap {
 public:
  explicit ScriptedPeer(std::span<const std::byte> reply) : reply_(reply.begin(), reply.end()) {}
  int rank() const override { return 0; }
  void send(std::span<const std::byte>) override {}
  Bytes receive(std::chrono::milliseconds) override { return reply_; }
  bool message_ready() override { return true; }

 private:
  Bytes reply_;
};

model::SuiteSpec suite() {
  model::SuiteSpec s;
  s.name = "quick";
  s.content_hash = "0123456789abcdef";
  s.tests.emplace_back().name = "send_lat";
  return s;
}

std::vector<model::ConfigSpec> configs() {
  model::ConfigSpec c;
  c.name = "tcp";
  c.content_hash = "fedcba9876543210";
  return {c};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ScriptedPeer peer(std::as_bytes(std::span(data + 1, size - 1)));
  if (data[0] % 3 == 0) {
    try {
      (void)session::handshake(peer, suite(), configs(), {{"host", "here"}});
    } catch (const session::HandshakeError&) {
    } catch (const bootstrap::BootstrapError&) {
      // A handshake of this run, then a reply that is no clock reading:
      // the peer is lost (a scripted peer answers everything alike).
    }
    return 0;
  }
  try {
    if (data[0] % 3 == 1) {
      (void)session::agree(peer, session::Agreement{});
    } else {
      (void)session::agree_sizes(peer, {"", "skipped here", ""});
    }
  } catch (const std::exception&) {
  }
  return 0;
}
