/* Preloaded into a native tool by fidelity.py --tool-idle-thread: starts one
 * thread that sleeps for the process's whole life, so that the tool runs as
 * a multi-threaded process, as uniperf always does (its session's watchdog
 * and signal waiter). Once a process has started a second thread, glibc
 * brackets every cancellation point (recv, send, poll, ...) with the async
 * cancel state's atomic updates and its mutexes stop skipping their atomics:
 * costs a single-threaded tool does not pay. The thread does nothing else. */
#include <pthread.h>
#include <unistd.h>

static void* sleep_forever(void* unused) {
  (void)unused;
  for (;;) pause();
  return NULL;
}

__attribute__((constructor)) static void start_idle_thread(void) {
  pthread_t thread;
  if (pthread_create(&thread, NULL, sleep_forever, NULL) == 0) pthread_detach(thread);
}
