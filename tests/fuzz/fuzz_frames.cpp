// The control channel's frame reader (bootstrap/bootstrap.cpp, TCP): the
// input is what a stranger writes to a listening control port before it
// hangs up. Every message is read until the reader says why it stops (a
// BootstrapError: not uniperf, too long, the peer closed); nothing it reads
// may exceed kMaxFrameBytes.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bootstrap/bootstrap.hpp"

namespace {

using namespace uniperf::bootstrap;
using namespace std::chrono_literals;

TcpListener& listener() {
  static TcpListener the_listener("127.0.0.1", 0);
  return the_listener;
}

/// A raw client connection to the listener; closes with a reset (no
/// TIME_WAIT), so a million runs do not run out of ports.
int connect_raw() {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(listener().port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A loaded machine (other engineers' builds and tests on the loopback)
  // failed one connect in ~436k: that is the harness's problem, not the
  // reader's, so it tries again for a while before giving up loudly.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) break;
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
      const linger reset{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
      return fd;
    }
    ::close(fd);
    ::usleep(10'000);
  }
  std::perror("fuzz_frames: cannot connect to its own listener");
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Inputs beyond a loopback socket's buffer would block the write below.
  if (size > 256 * 1024) return 0;
  const int fd = connect_raw();
  std::unique_ptr<Bootstrap> control = listener().accept(1, 5s);
  for (std::size_t written = 0; written < size;) {
    const ssize_t n = ::send(fd, data + written, size - written, MSG_NOSIGNAL);
    if (n <= 0) std::abort();
    written += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  try {
    for (;;) {
      const uniperf::Bytes message = control->receive(5s);
      if (message.size() > kMaxFrameBytes) std::abort();
    }
  } catch (const BootstrapError&) {
  }
  ::close(fd);
  return 0;
}
