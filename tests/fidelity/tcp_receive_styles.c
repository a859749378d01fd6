// A loopback TCP stream whose receiver reads in one of several styles, to
// show how much of a stream's throughput is the receiver's reading and not
// the sender's tool (tests/fidelity/tcp_receive_styles.py, docs/fidelity.md).
//
//   tcp_receive_styles STYLE SIZE SECONDS
//
// The sender (CPU 0) sends SIZE-byte messages from one buffer with blocking
// send() and Nagle's algorithm on, as sockperf's throughput client does. The
// receiver (a child on CPU 1) reads in STYLE:
//   blocking-64K   blocking recv() of up to 64 KiB (sockperf's server reads
//                  65507 bytes a call)
//   blocking-256K  the same, 256 KiB a call
//   poll-message   poll() until readable, then non-blocking recv() of one
//                  message each until the socket is empty (the tcp plugin's
//                  receive, one posted buffer a message)
//   poll-64K       poll() until readable, then non-blocking 64 KiB recv()
//                  calls until the socket is empty (the tcp plugin's receive
//                  with staging=64K, sleeping in poll)
//   poll-256K      poll() until readable, then non-blocking 256 KiB recv()
//                  calls until the socket is empty
//   spin-message   non-blocking recv() of one message, again and again, never
//                  sleeping (the tcp plugin's busy-polled receive)
//   spin-256K      the same, 256 KiB a call
// Prints one line: style, MB/s (10^6 B/s, the sender's bytes over its timed
// seconds) and the receiver's CPU seconds (user + system).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum style {
  kBlocking64K,
  kBlocking256K,
  kPollMessage,
  kPoll64K,
  kPoll256K,
  kSpinMessage,
  kSpin256K
};
enum { kStyles = kSpin256K + 1 };

static void fail(const char* what) {
  perror(what);
  exit(2);
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // On a one-CPU machine both sides share it: not an error.
  (void)sched_setaffinity(0, sizeof set, &set);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Reads until the sender closes; reports its CPU time on `report`.
static void receive(int fd, enum style style, size_t message, int report) {
  static char buffer[256 * 1024];
  const size_t chunk = style == kBlocking64K || style == kPoll64K       ? 64 * 1024
                       : style == kPollMessage || style == kSpinMessage ? message
                                                                        : sizeof buffer;
  const int polled = style == kPollMessage || style == kPoll64K || style == kPoll256K;
  const int spinning = style == kSpinMessage || style == kSpin256K;
  for (;;) {
    if (polled) {
      struct pollfd readable = {fd, POLLIN, 0};
      if (poll(&readable, 1, -1) < 0 && errno != EINTR) fail("poll");
    }
    ssize_t got;
    while ((got = recv(fd, buffer, chunk, polled || spinning ? MSG_DONTWAIT : 0)) > 0) {
      if (!polled) break;  // blocking and spinning readers go back to recv() at once
    }
    if (got == 0) break;
    if (got < 0 && errno != EAGAIN && errno != EINTR) fail("recv");
  }
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const double cpu = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  if (write(report, &cpu, sizeof cpu) != sizeof cpu) fail("write");
}

int main(int argc, char** argv) {
  static const char* const names[kStyles] = {"blocking-64K", "blocking-256K", "poll-message",
                                             "poll-64K",     "poll-256K",     "spin-message",
                                             "spin-256K"};
  if (argc != 4) {
    fprintf(stderr,
            "usage: %s blocking-64K|blocking-256K|poll-message|poll-64K|poll-256K|spin-message|"
            "spin-256K "
            "SIZE SECONDS\n",
            argv[0]);
    return 2;
  }
  int style = -1;
  for (int i = 0; i < kStyles; ++i)
    if (strcmp(argv[1], names[i]) == 0) style = i;
  const long size = atol(argv[2]);
  const double seconds = atof(argv[3]);
  if (style < 0 || size <= 0 || size > 256 * 1024 || seconds <= 0) {
    fprintf(stderr, "%s: bad style, size (1 to 262144) or seconds\n", argv[0]);
    return 2;
  }

  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  if (listener < 0 || bind(listener, (struct sockaddr*)&address, sizeof address) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr*)&address, &length) != 0)
    fail("listen");
  int report[2];
  if (pipe(report) != 0) fail("pipe");

  const pid_t receiver = fork();
  if (receiver < 0) fail("fork");
  if (receiver == 0) {
    pin(1);
    const int fd = accept(listener, NULL, NULL);
    if (fd < 0) fail("accept");
    receive(fd, (enum style)style, (size_t)size, report[1]);
    _exit(0);
  }

  pin(0);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr*)&address, sizeof address) != 0) fail("connect");
  char* payload = aligned_alloc(4096, ((size_t)size + 4095) / 4096 * 4096);
  if (payload == NULL) fail("aligned_alloc");
  memset(payload, 0x5a, (size_t)size);
  long messages = 0;
  const double start = now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 64; ++i, ++messages) {
      if (send(fd, payload, (size_t)size, MSG_NOSIGNAL) != size) fail("send");
    }
    elapsed = now() - start;
  }
  close(fd);
  double receiver_cpu = 0;
  if (read(report[0], &receiver_cpu, sizeof receiver_cpu) != sizeof receiver_cpu) fail("read");
  waitpid(receiver, NULL, 0);
  printf("%s %.1f %.3f\n", names[style], (double)messages * (double)size / elapsed / 1e6,
         receiver_cpu);
  return 0;
}
