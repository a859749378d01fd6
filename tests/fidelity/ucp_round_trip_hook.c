// Preloaded (LD_PRELOAD) into both sides of a UCP tag ping-pong, uniperf's
// or ucx_perftest's alike, by tests/fidelity/ucp_round_trip.py: records the
// TSC at every ucp_tag_send_nbx call and at every tag receive that completes
// (in its callback, or in the post when it completed at once). Paired
// message by message across the two sides (the TSC is invariant and shared
// by the CPUs of this host), the records split each round trip into two
// flights (one side's send call to the other side's receive completion:
// UCX's send, the cache lines' trip, the poll that finds them, UCX's receive)
// and two turnarounds (a side's receive completion to its next send call:
// the rest of UCX's progress call, then the tool's own code).
//
// The same UCP entry points are wrapped in both tools, so the records cost
// both the same (ucp_worker_progress passes straight through unless its
// calls are stamped or a spin trial asked for, below). Nothing is written
// unless UCP_ROUND_TRIP_OUT names a directory; there each process leaves
// <pid>.bin at exit.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>
#include <x86intrin.h>

enum { kCapacity = 1 << 20, kCallbacks = 1 << 20 };

// Per message: its send call's start and end, and its receive's completion.
static uint64_t sends[kCapacity], sent[kCapacity], receives[kCapacity];
static uint32_t send_count, receive_count;

// With UCP_ROUND_TRIP_PROGRESS set, ucp_worker_progress is wrapped too: its
// calls are counted and the last one's start kept (unfenced TSC reads, a few
// ns on every idle poll of both tools), so that a flight splits at the start
// of the progress call that found the message. Per receive: that start (0
// when the receive completed outside a progress call) and the calls made by
// then, and the start of the first call after the side's last send; per
// send, the calls made before it; a histogram of how long the calls that
// found nothing took, in ticks (the last bucket holds the rest); and per
// receive the start of the call before the finding one: when that call
// began after the peer's send call had returned, it looked and missed a
// message that was already sent.
enum { kIdleBuckets = 1024 };
static int stamp_progress, inside_progress;
static uint64_t progress_began, previous_began, progress_calls, calls_by_last_send;
static uint64_t first_after_send;
static uint64_t found_in[kCapacity], polls_by_receive[kCapacity], polls_by_send[kCapacity];
static uint64_t first_poll[kCapacity], missed_in[kCapacity];
static uint64_t idle_calls[kIdleBuckets];
static uint64_t start_tsc, start_ns;

// Trials on a tool's loop: UCP_ROUND_TRIP_SPIN_BEFORE_SEND and
// UCP_ROUND_TRIP_SPIN_AFTER_PROGRESS (ns) busy-wait that long before every
// send call and after every progress call, lengthening the turnaround or
// the idle loop by a known amount (ucp_round_trip.py sets them for
// ucx_perftest's runs only).
static uint64_t spin_before_send, spin_after_progress;  // in ticks; 0 = none

// The fence keeps the read after the loads before it: without it the TSC
// can be read before the awaited cache line has arrived.
static inline uint64_t tick(void) {
  _mm_lfence();
  return __rdtsc();
}

static uint64_t raw_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC_RAW, &now);
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void spin(uint64_t ticks) {
  const uint64_t began = __rdtsc();
  while (__rdtsc() - began < ticks) {
  }
}

// The tools load libucp themselves (uniperf's plugin with dlopen and
// RTLD_LOCAL, out of RTLD_NEXT's reach): look the real calls up in it.
static void* real_call(const char* name) {
  void* ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (ucp == NULL) ucp = dlopen("libucp.so.0", RTLD_NOW);
  void* call = ucp != NULL ? dlsym(ucp, name) : NULL;
  if (call == NULL) {
    fprintf(stderr, "ucp_round_trip_hook: no %s in libucp.so.0\n", name);
    abort();
  }
  return call;
}

// A receive's own callback and argument, kept while it is posted. The ring
// outlasts any tool's outstanding receives (uniperf takes at most 2^20).
typedef struct {
  ucp_tag_recv_nbx_callback_t callback;
  void* user_data;
} Receive;
static Receive posted[kCallbacks];
static uint32_t next_posted;

static void record_receive(void) {
  if (receive_count >= kCapacity) return;
  found_in[receive_count] = inside_progress ? progress_began : 0;
  missed_in[receive_count] = inside_progress ? previous_began : 0;
  polls_by_receive[receive_count] = progress_calls;
  first_poll[receive_count] = first_after_send;
  receives[receive_count++] = tick();
}

// Stamps the call (when asked) around UCP's own progress; returns its events.
static unsigned stamped_progress(unsigned (*real)(ucp_worker_h), ucp_worker_h worker) {
  if (!stamp_progress) return real(worker);
  previous_began = progress_began;
  progress_began = __rdtsc();
  if (progress_calls++ == calls_by_last_send) first_after_send = progress_began;
  inside_progress = 1;
  const unsigned events = real(worker);
  inside_progress = 0;
  if (events == 0) {
    const uint64_t took = __rdtsc() - progress_began;
    ++idle_calls[took < kIdleBuckets ? took : kIdleBuckets - 1];
  }
  return events;
}

unsigned ucp_worker_progress(ucp_worker_h worker) {
  static unsigned (*real)(ucp_worker_h);
  if (real == NULL) real = real_call("ucp_worker_progress");
  const unsigned events = stamped_progress(real, worker);
  if (spin_after_progress != 0) spin(spin_after_progress);  // not in the call's own time
  return events;
}

static void on_receive(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                       void* user_data) {
  // Receives cancelled at teardown are no message.
  if (status == UCS_OK) record_receive();
  const Receive* receive = user_data;
  receive->callback(request, status, info, receive->user_data);
}

ucs_status_ptr_t ucp_tag_recv_nbx(ucp_worker_h worker, void* buffer, size_t count, ucp_tag_t tag,
                                  ucp_tag_t tag_mask, const ucp_request_param_t* param) {
  static ucs_status_ptr_t (*real)(ucp_worker_h, void*, size_t, ucp_tag_t, ucp_tag_t,
                                  const ucp_request_param_t*);
  if (real == NULL) real = real_call("ucp_tag_recv_nbx");
  ucp_request_param_t ours = *param;
  if (param->op_attr_mask & UCP_OP_ATTR_FIELD_CALLBACK) {
    Receive* receive = &posted[next_posted++ % kCallbacks];
    receive->callback = param->cb.recv;
    receive->user_data =
        (param->op_attr_mask & UCP_OP_ATTR_FIELD_USER_DATA) ? param->user_data : NULL;
    ours.cb.recv = on_receive;
    ours.user_data = receive;
    ours.op_attr_mask |= UCP_OP_ATTR_FIELD_USER_DATA;
  }
  ucs_status_ptr_t result = real(worker, buffer, count, tag, tag_mask, &ours);
  if (result == NULL) record_receive();  // the message was there: done at once
  return result;
}

ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                  const ucp_request_param_t* param) {
  static ucs_status_ptr_t (*real)(ucp_ep_h, const void*, size_t, ucp_tag_t,
                                  const ucp_request_param_t*);
  if (real == NULL) real = real_call("ucp_tag_send_nbx");
  if (spin_before_send != 0) spin(spin_before_send);
  const uint64_t began = tick();
  ucs_status_ptr_t result = real(ep, buffer, count, tag, param);
  if (send_count < kCapacity) {
    polls_by_send[send_count] = calls_by_last_send = progress_calls;
    sends[send_count] = began;
    sent[send_count++] = tick();
  }
  return result;
}

__attribute__((constructor)) static void begin(void) {
  stamp_progress = getenv("UCP_ROUND_TRIP_PROGRESS") != NULL;
  start_ns = raw_ns();
  start_tsc = __rdtsc();
  const char* before_send = getenv("UCP_ROUND_TRIP_SPIN_BEFORE_SEND");
  const char* after_progress = getenv("UCP_ROUND_TRIP_SPIN_AFTER_PROGRESS");
  if (before_send == NULL && after_progress == NULL) return;
  // The TSC's rate, over 20 ms, to turn the spins' ns into ticks.
  while (raw_ns() - start_ns < 20000000u) {
  }
  const double ticks_per_ns = (double)(__rdtsc() - start_tsc) / (double)(raw_ns() - start_ns);
  if (before_send != NULL) spin_before_send = (uint64_t)(atof(before_send) * ticks_per_ns);
  if (after_progress != NULL) spin_after_progress = (uint64_t)(atof(after_progress) * ticks_per_ns);
}

// <pid>.bin: the CPU the process ended on, the TSC's rate over its life
// (ticks per ns, against CLOCK_MONOTONIC_RAW), the counts, then the stamps:
// sends' starts and ends, then receives' completions; with the progress
// calls stamped, then the receives' progress starts, call counts and first
// calls after a send, the sends' call counts, the idle calls' histogram and
// the receives' previous progress starts.
__attribute__((destructor)) static void end(void) {
  const char* directory = getenv("UCP_ROUND_TRIP_OUT");
  if (directory == NULL || send_count == 0) return;
  const double ticks_per_ns = (double)(__rdtsc() - start_tsc) / (double)(raw_ns() - start_ns);
  char path[4096];
  snprintf(path, sizeof path, "%s/%d.bin", directory, (int)getpid());
  FILE* out = fopen(path, "wb");
  if (out == NULL) return;
  const int32_t cpu = sched_getcpu();
  fwrite(&cpu, sizeof cpu, 1, out);
  fwrite(&ticks_per_ns, sizeof ticks_per_ns, 1, out);
  fwrite(&send_count, sizeof send_count, 1, out);
  fwrite(&receive_count, sizeof receive_count, 1, out);
  fwrite(sends, sizeof sends[0], send_count, out);
  fwrite(sent, sizeof sent[0], send_count, out);
  fwrite(receives, sizeof receives[0], receive_count, out);
  if (stamp_progress) {
    fwrite(found_in, sizeof found_in[0], receive_count, out);
    fwrite(polls_by_receive, sizeof polls_by_receive[0], receive_count, out);
    fwrite(first_poll, sizeof first_poll[0], receive_count, out);
    fwrite(polls_by_send, sizeof polls_by_send[0], send_count, out);
    fwrite(idle_calls, sizeof idle_calls[0], kIdleBuckets, out);
    fwrite(missed_in, sizeof missed_in[0], receive_count, out);
  }
  fclose(out);
}
