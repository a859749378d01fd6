// A plain 8-byte UCP tag ping-pong, no framework around it: what a minimal
// program gets from the same UCP calls as ucx_perftest's tag_lat or as the
// ucx plugin makes, against both tools in the same rounds
// (tests/fidelity/ucp_plain.py, docs/fidelity.md).
//
//   ucp_plain_pingpong server PORT CPU ITERATIONS USAGE
//   ucp_plain_pingpong client HOST PORT CPU ITERATIONS USAGE
//
// The client sends first (the initiator) and prints its one-way latency in
// µs: the median of the round trips over 2, a round trip being the TSC
// between two consecutive iterations' ends, as ucx_perftest times one. CPU
// -1 leaves the process unpinned. USAGE is a comma list (or "plain"):
//   user      requests in our own memory (UCP_OP_ATTR_FIELD_REQUEST)
//   noimm     receives never complete at once (UCP_OP_ATTR_FLAG_NO_IMM_CMPL)
//   posted=N  N receives posted ahead, each re-posted after the next send;
//             without it, one receive is posted per message, after the send
//             on the initiator and before the wait on the responder, as
//             ucx_perftest does
//   features  UCP_FEATURE_RMA, AMO64 and WAKEUP besides TAG
//   sendcb    sends carry a completion callback
//   allocate  buffers from ucp_mem_map(UCP_MEM_MAP_ALLOCATE), as both tools'
// The ucx plugin's usage is user,noimm,posted=64,features,sendcb,allocate.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>
#include <x86intrin.h>

enum { kMaxPosted = 64, kWarmup = 10000, kTag = 0x1337 };

struct usage {
  int user, noimm, posted, features, sendcb, allocate;
};

struct receive {
  volatile int done;
  void* request;  // UCP's request, freed once done (without `user`)
  char* handle;   // our request memory (with `user`)
  uint64_t* buffer;
};

static struct usage use;
static ucp_worker_h worker;
static ucp_ep_h endpoint;
static struct receive receives[kMaxPosted];
static char* send_handle;
static uint64_t* send_buffer;

static void fail(const char* what) {
  fprintf(stderr, "ucp_plain_pingpong: %s\n", what);
  exit(2);
}

static void on_received(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                        void* user_data) {
  (void)request;
  (void)info;
  if (status != UCS_OK) fail("a receive failed");
  ((struct receive*)user_data)->done = 1;
}

static void on_sent(void* request, ucs_status_t status, void* user_data) {
  (void)request;
  (void)user_data;
  if (status != UCS_OK) fail("a send failed");
}

static void post_receive(struct receive* r) {
  ucp_request_param_t param;
  memset(&param, 0, sizeof param);
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  if (use.user) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_REQUEST;
    param.request = r->handle;
  }
  if (use.noimm) param.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  param.cb.recv = on_received;
  param.user_data = r;
  r->done = 0;
  const ucs_status_ptr_t result =
      ucp_tag_recv_nbx(worker, r->buffer, sizeof *r->buffer, kTag, (ucp_tag_t)-1, &param);
  if (UCS_PTR_IS_ERR(result)) fail("ucp_tag_recv_nbx failed");
  if (result == NULL) r->done = 1;
  r->request = use.user ? NULL : result;
}

static void wait_receive(struct receive* r) {
  while (!r->done) ucp_worker_progress(worker);
  if (r->request != NULL) {
    ucp_request_free(r->request);
    r->request = NULL;
  }
}

static void send_message(void) {
  ucp_request_param_t param;
  memset(&param, 0, sizeof param);
  if (use.sendcb) {
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
    param.cb.send = on_sent;
    if (use.user) {
      param.op_attr_mask |= UCP_OP_ATTR_FIELD_REQUEST;
      param.request = send_handle;
    }
  }
  const ucs_status_ptr_t result =
      ucp_tag_send_nbx(endpoint, send_buffer, sizeof *send_buffer, kTag, &param);
  if (UCS_PTR_IS_ERR(result)) fail("ucp_tag_send_nbx failed");
  if (result != NULL) {  // not finished in place: wait, as neither tool lets one pile up
    while (ucp_request_check_status(result) == UCS_INPROGRESS) ucp_worker_progress(worker);
    if (!use.user) ucp_request_free(result);
  }
}

static void* allocate(ucp_context_h context, size_t length) {
  if (!use.allocate) {
    void* memory = aligned_alloc(4096, length);
    if (memory == NULL) fail("out of memory");
    memset(memory, 0, length);
    return memory;
  }
  ucp_mem_map_params_t params;
  memset(&params, 0, sizeof params);
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.length = length;
  params.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memory;
  if (ucp_mem_map(context, &params, &memory) != UCS_OK) fail("ucp_mem_map failed");
  ucp_mem_attr_t attributes;
  attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  if (ucp_mem_query(memory, &attributes) != UCS_OK) fail("ucp_mem_query failed");
  return attributes.address;
}

static void parse_usage(char* list) {
  for (char* word = strtok(list, ","); word != NULL; word = strtok(NULL, ",")) {
    if (strcmp(word, "user") == 0)
      use.user = 1;
    else if (strcmp(word, "noimm") == 0)
      use.noimm = 1;
    else if (strncmp(word, "posted=", 7) == 0)
      use.posted = atoi(word + 7);
    else if (strcmp(word, "features") == 0)
      use.features = 1;
    else if (strcmp(word, "sendcb") == 0)
      use.sendcb = 1;
    else if (strcmp(word, "allocate") == 0)
      use.allocate = 1;
    else if (strcmp(word, "plain") != 0)
      fail("unknown usage word");
  }
  if (use.posted < 0 || use.posted > kMaxPosted) fail("posted is 0 to 64");
}

// The two sides meet over a TCP socket and swap their worker addresses.
static int meet(int server, const char* host, int port) {
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (server) {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr*)&address, sizeof address) != 0 || listen(listener, 1) != 0)
      fail("cannot listen");
    const int fd = accept(listener, NULL, NULL);
    close(listener);
    if (fd < 0) fail("accept failed");
    return fd;
  }
  if (inet_pton(AF_INET, host, &address.sin_addr) != 1) fail("bad host address");
  for (int attempt = 0;; ++attempt) {  // the server may not listen yet
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr*)&address, sizeof address) == 0) return fd;
    close(fd);
    if (attempt == 500) fail("cannot connect");
    usleep(10000);
  }
}

static void exchange(int fd, const void* mine, size_t length, void* theirs, size_t capacity,
                     size_t* their_length) {
  if (write(fd, &length, sizeof length) != (ssize_t)sizeof length ||
      write(fd, mine, length) != (ssize_t)length)
    fail("cannot send the address");
  if (read(fd, their_length, sizeof *their_length) != (ssize_t)sizeof *their_length ||
      *their_length > capacity)
    fail("bad peer address");
  for (size_t got = 0; got < *their_length;) {
    const ssize_t n = read(fd, (char*)theirs + got, *their_length - got);
    if (n <= 0) fail("peer gone");
    got += (size_t)n;
  }
}

static void barrier(int fd) {
  char byte = 0;
  if (write(fd, &byte, 1) != 1 || read(fd, &byte, 1) != 1) fail("peer gone");
}

static double monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const int server = argc == 6 && strcmp(argv[1], "server") == 0;
  if (!server && !(argc == 7 && strcmp(argv[1], "client") == 0)) {
    fprintf(stderr,
            "usage: %s server PORT CPU ITERATIONS USAGE | client HOST PORT CPU ITERATIONS USAGE\n",
            argv[0]);
    return 2;
  }
  const int first = server ? 2 : 3;
  const int port = atoi(argv[first]), cpu = atoi(argv[first + 1]);
  const long iterations = atol(argv[first + 2]);
  if (iterations < 1) fail("iterations must be positive");
  parse_usage(argv[first + 3]);
  alarm(120);  // never hang on a peer that died

  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) fail("cannot pin");
  }

  ucp_params_t params;
  memset(&params, 0, sizeof params);
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG;
  if (use.features) params.features |= UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
  ucp_config_t* config;
  ucp_context_h context;
  if (ucp_config_read(NULL, NULL, &config) != UCS_OK) fail("ucp_config_read failed");
  if (ucp_init(&params, config, &context) != UCS_OK) fail("ucp_init failed");
  ucp_config_release(config);
  ucp_context_attr_t context_attributes;
  context_attributes.field_mask = UCP_ATTR_FIELD_REQUEST_SIZE;
  if (ucp_context_query(context, &context_attributes) != UCS_OK) fail("ucp_context_query failed");
  ucp_worker_params_t worker_params;
  memset(&worker_params, 0, sizeof worker_params);
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  if (ucp_worker_create(context, &worker_params, &worker) != UCS_OK) fail("no worker");

  // Our request memory: UCP writes its request in the request_size bytes
  // before each handle; each starts on its own cache line, as the plugin's.
  const size_t stride = (context_attributes.request_size + 63) / 64 * 64 + 64;
  char* handles = aligned_alloc(64, stride * (kMaxPosted + 1));
  uint64_t* receive_buffers = allocate(context, 4096);
  send_buffer = allocate(context, 4096);
  if (handles == NULL) fail("out of memory");
  for (int i = 0; i < kMaxPosted; ++i) {
    receives[i].handle = handles + (size_t)i * stride + context_attributes.request_size;
    receives[i].buffer = use.posted > 0 ? receive_buffers + i : receive_buffers;
  }
  send_handle = handles + (size_t)kMaxPosted * stride + context_attributes.request_size;

  ucp_address_t* address;
  size_t address_length, peer_length;
  static char peer[8192];
  if (ucp_worker_get_address(worker, &address, &address_length) != UCS_OK)
    fail("no worker address");
  const int fd = meet(server, server ? NULL : argv[2], port);
  exchange(fd, address, address_length, peer, sizeof peer, &peer_length);
  ucp_ep_params_t endpoint_params;
  memset(&endpoint_params, 0, sizeof endpoint_params);
  endpoint_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  endpoint_params.address = (const ucp_address_t*)peer;
  if (ucp_ep_create(worker, &endpoint_params, &endpoint) != UCS_OK) fail("no endpoint");
  barrier(fd);

  uint64_t* round_trips = malloc(sizeof *round_trips * (size_t)iterations);
  if (round_trips == NULL) fail("out of memory");
  for (int i = 0; i < use.posted; ++i) post_receive(&receives[i]);
  struct receive* repost = NULL;  // consumed, re-posted after the next send
  int next = 0;
  uint64_t previous = __rdtsc(), timed_from = 0;
  double timed_from_ns = 0;
  for (long k = 0; k < kWarmup + iterations; ++k) {
    struct receive* r = &receives[next];
    if (!server) {
      if (k == kWarmup) {
        timed_from = __rdtsc();
        timed_from_ns = monotonic_ns();
      }
      send_message();
      if (use.posted == 0) post_receive(r);
      if (repost != NULL) post_receive(repost);
      wait_receive(r);
      const uint64_t now = __rdtsc();
      if (k >= kWarmup) round_trips[k - kWarmup] = now - previous;
      previous = now;
    } else {
      if (use.posted == 0) post_receive(r);
      wait_receive(r);
      send_message();
      if (repost != NULL) post_receive(repost);
    }
    if (use.posted > 0) {
      repost = r;
      next = (next + 1) % use.posted;
    }
  }
  if (!server) {
    const double ns_per_tick = (monotonic_ns() - timed_from_ns) / (double)(__rdtsc() - timed_from);
    qsort(round_trips, (size_t)iterations, sizeof *round_trips, by_value);
    printf("%.4f\n", (double)round_trips[iterations / 2] * ns_per_tick / 2 / 1000);
  }
  barrier(fd);
  close(fd);
  return 0;
}
