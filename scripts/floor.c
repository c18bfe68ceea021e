// The physical floor under the exchange benchmark (scripts/bench-exchange.sh).
//
//   floor echo PORT       a bare order-entry "echo" speaking the shape of protocol v2
//                         (docs/protocol.md): one thread spins over non-blocking
//                         sockets; on connect a Challenge (64 B); Login (64 B) ->
//                         LoginAccepted (65 B), ReplayStart (58 B), ReplayEnd (48 B);
//                         NewOrder (48 B) -> a 92-byte Accepted echoing the order's
//                         fields with the session's next report_seq (the sizes of the
//                         exchange's v2 ack); everything else ignored. No matching, no
//                         journal: what `peregrine loadgen` measures against it is the
//                         loopback TCP round trip of the same messages, schedule and
//                         client, on the same machine, in the same run.
//                         It is a floor, not an exchange: it does NOT verify the login
//                         proof (the HMAC) and accepts any account; never expose it.
//   floor fsync DIR N     N x (append 4 KiB, fdatasync) to a file in DIR; prints p50 p99
//                         max in microseconds (the journal's group commit, alone).
//   floor fsync-inplace DIR N
//                         the same, but each 4 KiB overwrites a file already written
//                         with zeros and synced (what the journal does with segments
//                         prepared ahead): no size or block allocation to commit, the
//                         lowest cost of making 4 KiB durable on that disk.
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
#define MAXREPLY 192  // the largest answer to one message: the login's three
static int fd[MAXC], nc;
static unsigned char in[MAXC][65536], out[MAXC][1 << 16];
static size_t have[MAXC], pend[MAXC];
static uint64_t seq[MAXC], report_seq[MAXC], order_id[MAXC];
static uint32_t account[MAXC];

static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }  // x86: LE
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

// Appends an exchange -> client message: header (version 2), then session_seq;
// engine_seq and engine_time stay 0. Returns the body to fill.
static unsigned char *reply(int c, uint8_t type, size_t len) {
  unsigned char *m = out[c] + pend[c];
  memset(m, 0, len);
  m[0] = len & 0xff, m[1] = len >> 8, m[2] = type, m[3] = 2;
  put64(m + 8, ++seq[c]);
  pend[c] += len;
  return m;
}

// Challenge: the nonce is zeros, since the proof is never checked.
static void challenge(int c) { reply(c, 0x84, 64); }

// Login (v2, 0x04) -> LoginAccepted, then an empty recovery phase (no instrument
// definitions, no replay): the client's stream starts live at report_seq 1.
static void login(int c, const unsigned char *req) {
  memcpy(&account[c], req + 48, 4);
  unsigned char *a = reply(c, 0x81, 65);
  put32(a + 32, account[c]);
  memcpy(a + 36, req + 56, 4);  // heartbeat interval as asked
  put64(a + 40, 1), put64(a + 48, 1);  // next_report_seq, oldest_report_seq
  put32(a + 56, account[c]);  // target; instrument_count 0, kind 0 (trading)
  unsigned char *s = reply(c, 0x85, 58);
  memcpy(s + 32, req + 8, 8);  // from_seq = the login's next_report_seq
  put64(s + 40, 1);  // to_seq; count 0, reason 0
  put64(reply(c, 0x86, 48) + 32, 1);  // ReplayEnd.next_report_seq
  report_seq[c] = 1;
}

// NewOrder (48 B) -> Accepted (92 B): bytes 8..48 of the order (client order id,
// price, qty, expiry, instrument, side, type, tif, stp) are Accepted's 40..80.
static void accept_order(int c, const unsigned char *req) {
  unsigned char *a = reply(c, 0x90, 92);
  put64(a + 32, ++order_id[c]);
  memcpy(a + 40, req + 8, 40);
  put64(a + 80, report_seq[c]++);
  put32(a + 88, account[c]);
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
      challenge(nc);
      fd[nc++] = s;
    }
    for (int c = 0; c < nc; c++) {
      if (fd[c] < 0) continue;
      ssize_t n = read(fd[c], in[c] + have[c], sizeof in[c] - have[c]);
      if (n == 0 || (n < 0 && errno != EAGAIN)) { close(fd[c]), fd[c] = -1; continue; }
      if (n > 0) have[c] += n;
      size_t at = 0;
      while (have[c] - at >= 8 && pend[c] + MAXREPLY <= sizeof out[c]) {
        size_t len = in[c][at] | in[c][at + 1] << 8;
        if (len < 8 || have[c] - at < len) break;
        if (in[c][at + 2] == 0x04 && len == 64) login(c, in[c] + at);
        if (in[c][at + 2] == 0x10 && len == 48) accept_order(c, in[c] + at);
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

static int fsyncs(const char *dir, int n, int inplace) {
  char path[4096], block[4096];
  snprintf(path, sizeof path, "%s/floor-fsync-%d", dir, getpid());
  int f = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (f < 0) return perror(path), 1;
  if (inplace) {
    memset(block, 0, sizeof block);
    for (int i = 0; i < n; i++)
      if (write(f, block, sizeof block) != sizeof block) return perror("prefill"), 1;
    if (fsync(f)) return perror("fsync"), 1;
  }
  memset(block, 'x', sizeof block);
  double *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    if (pwrite(f, block, sizeof block, (off_t)i * sizeof block) != sizeof block || fdatasync(f))
      return perror("fsync"), 1;
    t[i] = now_us() - t0;
  }
  close(f), unlink(path);
  qsort(t, n, sizeof *t, cmp);
  printf("fdatasync_us p50 %.1f p99 %.1f max %.1f n %d\n", t[n / 2], t[n * 99 / 100], t[n - 1], n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "echo")) return echo(atoi(argv[2]));
  if (argc == 4 && !strcmp(argv[1], "fsync")) return fsyncs(argv[2], atoi(argv[3]), 0);
  if (argc == 4 && !strcmp(argv[1], "fsync-inplace")) return fsyncs(argv[2], atoi(argv[3]), 1);
  fprintf(stderr, "usage: floor echo PORT | floor fsync DIR N | floor fsync-inplace DIR N\n");
  return 2;
}
