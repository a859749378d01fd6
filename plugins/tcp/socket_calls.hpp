// The tcp plugin's socket calls, made without glibc's cancellation bracket.
//
// recv, send, recvmsg and sendmsg are POSIX cancellation points. In a
// process that has ever started a second thread (uniperf always has: the
// session's watchdog and its signal waiter), glibc brackets each of them
// with __pthread_enable_asynccancel and __pthread_disable_asynccancel, two
// atomic read-modify-writes of the thread's cancel state per call. A
// busy-polled receiver makes about a dozen calls per message, nearly all of
// them on an empty socket: in a 64 B ping-pong the bracket took 5% of each
// side's CPU and lengthened every empty poll, so the receiver looked at its
// socket less often than single-threaded sockperf does (docs/fidelity.md,
// note (k); its effect on the p50 was within that host's spread). The
// plugin never cancels a thread, so it asks the kernel directly: the same
// system calls, results and errno, without the bracket. Sanitizers no
// longer intercept these calls (their buffers are the engine's, checked
// where the engine writes and reads them).
#pragma once

#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>

namespace uniperf::tcp::socket_calls {

// syscall() is variadic and reads every argument as a long: ints are
// widened here, not left to the caller's registers.

inline ssize_t recv(int fd, void* buffer, std::size_t length, int flags) {
  return ::syscall(SYS_recvfrom, static_cast<long>(fd), buffer, length, static_cast<long>(flags),
                   nullptr, nullptr);
}

inline ssize_t send(int fd, const void* buffer, std::size_t length, int flags) {
  return ::syscall(SYS_sendto, static_cast<long>(fd), buffer, length, static_cast<long>(flags),
                   nullptr, 0L);
}

inline ssize_t recvmsg(int fd, msghdr* message, int flags) {
  return ::syscall(SYS_recvmsg, static_cast<long>(fd), message, static_cast<long>(flags));
}

inline ssize_t sendmsg(int fd, const msghdr* message, int flags) {
  return ::syscall(SYS_sendmsg, static_cast<long>(fd), message, static_cast<long>(flags));
}

}  // namespace uniperf::tcp::socket_calls
