// The physical floor under the exchange benchmark (scripts/bench-exchange.sh).
//
//   floor echo PORT       a bare order-entry "echo": one thread spins over non-blocking
//                         sockets; Login (32 B) -> LoginAccepted (40 B), NewOrder (48 B)
//                         -> an 80-byte Accepted echoing its client order id (the sizes
//                         of the exchange's ack), everything else ignored. No matching,
//                         no journal: what `peregrine loadgen` measures against it is the
//                         loopback TCP round trip of the same messages, schedule and
//                         client, on the same machine, in the same run.
//   floor fsync DIR N     N x (append 4 KiB, fdatasync) to a file in DIR; prints p50 p99
//                         max in microseconds (the journal's group commit, alone).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXC 256
static int fd[MAXC], nc;
static unsigned char in[MAXC][65536], out[MAXC][1 << 16];
static size_t have[MAXC], pend[MAXC];
static uint64_t seq[MAXC];

static void reply(int c, uint8_t type, size_t len, const unsigned char *req) {
  unsigned char *m = out[c] + pend[c];
  memset(m, 0, len);
  m[0] = len & 0xff, m[1] = len >> 8, m[2] = type, m[3] = 1;
  uint64_t s = ++seq[c];
  memcpy(m + 8, &s, 8);
  if (type == 0x90) memcpy(m + 40, req + 8, 8);  // Accepted.client_order_id
  if (type == 0x81) memcpy(m + 32, req + 8, 4);  // LoginAccepted.account
  pend[c] += len;
}

static int echo(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(l, (void *)&a, sizeof a) || listen(l, 512)) return perror("listen"), 1;
  fcntl(l, F_SETFL, O_NONBLOCK);
  printf("listening on 127.0.0.1:%d\n", port), fflush(stdout);
  for (;;) {
    int s = accept(l, 0, 0);
    if (s >= 0 && nc < MAXC) {
      fcntl(s, F_SETFL, O_NONBLOCK);
      setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fd[nc++] = s;
    }
    for (int c = 0; c < nc; c++) {
      if (fd[c] < 0) continue;
      ssize_t n = read(fd[c], in[c] + have[c], sizeof in[c] - have[c]);
      if (n == 0 || (n < 0 && errno != EAGAIN)) { close(fd[c]), fd[c] = -1; continue; }
      if (n > 0) have[c] += n;
      size_t at = 0;
      while (have[c] - at >= 8 && pend[c] + 80 <= sizeof out[c]) {
        size_t len = in[c][at] | in[c][at + 1] << 8;
        if (len < 8 || have[c] - at < len) break;
        if (in[c][at + 2] == 0x01) reply(c, 0x81, 40, in[c] + at);
        if (in[c][at + 2] == 0x10) reply(c, 0x90, 80, in[c] + at);
        at += len;
      }
      memmove(in[c], in[c] + at, have[c] - at), have[c] -= at;
      if (pend[c]) {  // one write per connection per iteration
        ssize_t w = write(fd[c], out[c], pend[c]);
        if (w > 0) memmove(out[c], out[c] + w, pend[c] - w), pend[c] -= w;
      }
    }
  }
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fsyncs(const char *dir, int n) {
  char path[4096], block[4096];
  snprintf(path, sizeof path, "%s/floor-fsync-%d", dir, getpid());
  int f = open(path, O_CREAT | O_WRONLY | O_APPEND | O_TRUNC, 0600);
  if (f < 0) return perror(path), 1;
  memset(block, 'x', sizeof block);
  double *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    if (write(f, block, sizeof block) != sizeof block || fdatasync(f)) return perror("fsync"), 1;
    t[i] = now_us() - t0;
  }
  close(f), unlink(path);
  qsort(t, n, sizeof *t, cmp);
  printf("fdatasync_us p50 %.1f p99 %.1f max %.1f n %d\n", t[n / 2], t[n * 99 / 100], t[n - 1], n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "echo")) return echo(atoi(argv[2]));
  if (argc == 4 && !strcmp(argv[1], "fsync")) return fsyncs(argv[2], atoi(argv[3]));
  fprintf(stderr, "usage: floor echo PORT | floor fsync DIR N\n");
  return 2;
}
