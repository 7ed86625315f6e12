/* How long a thread waiting on a condition variable takes to run after it
 * is signalled, the other CPU idle in between: what PoCL's second worker
 * pays at every kernel launch (it sleeps on a condition variable between
 * kernels). docs/PERFORMANCE.md (stop 39) has this VM's figures.
 *
 *   cc -O2 -o /tmp/wake_latency bench/cpu/wake_latency.c -lpthread
 *   /tmp/wake_latency        # prints p10 / median / p90 in us
 *
 * The signaller runs on CPU 0 and busy-waits 200 us between signals, so
 * the waiter (pinned to CPU 1) is asleep and its CPU idle each time. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kRounds = 2000 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag = 0;
static double sent;
static double latency[kRounds];

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *waiter(void *arg) {
  (void)arg;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(1, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
  for (int i = 0; i < kRounds; i++) {
    pthread_mutex_lock(&mu);
    while (flag == 0)
      pthread_cond_wait(&cv, &mu);
    latency[i] = now_us() - sent;
    flag = 0;
    pthread_mutex_unlock(&mu);
  }
  return NULL;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(0, &s);
  sched_setaffinity(0, sizeof s, &s);
  pthread_t t;
  pthread_create(&t, NULL, waiter, NULL);
  for (int i = 0; i < kRounds; i++) {
    double t0 = now_us();
    while (now_us() - t0 < 200) {
    }
    pthread_mutex_lock(&mu);
    sent = now_us();
    flag = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    for (;;) {
      pthread_mutex_lock(&mu);
      int pending = flag;
      pthread_mutex_unlock(&mu);
      if (!pending)
        break;
    }
  }
  pthread_join(t, NULL);
  qsort(latency, kRounds, sizeof(double), compare);
  printf("wake latency us: p10 %.1f median %.1f p90 %.1f\n",
         latency[kRounds / 10], latency[kRounds / 2], latency[kRounds * 9 / 10]);
  return 0;
}
