/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Linux kernel's connection rate over loopback, for scale beside
 * rnic-perf conn_rate (run-conn-rate.sh): one thread, non-blocking sockets
 * and epoll, both ends in this thread as conn_rate runs both stacks on
 * one. Each connection, up to --window at once:
 *
 *   client: socket, connect to 127.0.0.1 -> writable: send 8 bytes
 *   server: accept -> read the 8 bytes -> close
 *   client: EOF -> close
 *
 * so each is a TCP handshake, one message and a graceful close (the
 * server's FIN first: TIME_WAIT stays on the server's side, whose port is
 * the listener's, and the client's ephemeral ports are not held).
 * Prints one JSON line: conns, seconds, conns_per_s. Not a test: asserts
 * nothing about speed; exit 1 only when a connection fails.
 *
 *   kernel_conn_rate [--conns N] [--window W]
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG 8
#define SERVER_TAG (1ull << 32)   /* epoll data: server fds carry it */
#define LISTEN_TAG (1ull << 33)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "kernel_conn_rate: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long conns = 10000, window = 64;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--conns"))
			conns = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--window"))
			window = strtoul(argv[i + 1], NULL, 10);
		else
			break;
	}
	if (conns == 0 || window == 0 || window > 4096) {
		fprintf(stderr, "usage: kernel_conn_rate [--conns N] [--window W (1..4096)]\n");
		return 2;
	}
	int ep = epoll_create1(0);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t slen = sizeof(sa);
	int one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ep < 0 || l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &slen) != 0 || listen(l, 4096) != 0)
		return die("listener");
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LISTEN_TAG };
	epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
	unsigned long started = 0, done = 0, inflight = 0;
	char buf[MSG];
	memset(buf, 0x5a, sizeof(buf));
	double t0 = now_s();
	while (done < conns) {
		while (started < conns && inflight < window) {
			int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (c < 0)
				return die("socket");
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS)
				return die("connect");
			ev = (struct epoll_event){ .events = EPOLLOUT, .data.u64 = (uint64_t)c };
			epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
			started++;
			inflight++;
		}
		struct epoll_event evs[256];
		int n = epoll_wait(ep, evs, 256, 1000);
		if (n <= 0)
			return die(n == 0 ? "no event for 1 s" : "epoll_wait");
		for (int k = 0; k < n; k++) {
			uint64_t d = evs[k].data.u64;
			int fd = (int)(uint32_t)d;
			if (d & LISTEN_TAG) {
				int s;
				while ((s = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					ev = (struct epoll_event){ .events = EPOLLIN,
								   .data.u64 = SERVER_TAG | (uint64_t)s };
					epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
				}
				if (errno != EAGAIN)
					return die("accept");
			} else if (d & SERVER_TAG) {
				ssize_t r = read(fd, buf, sizeof(buf));
				if (r == MSG || r == 0) {
					close(fd);   /* epoll forgets it */
				} else if (r < 0 && errno != EAGAIN) {
					return die("server read");
				}
			} else if (evs[k].events & EPOLLOUT) {
				int err = 0;
				socklen_t el = sizeof(err);
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err != 0 || write(fd, buf, sizeof(buf)) != MSG) {
					errno = err ? err : errno;
					return die("client connect/send");
				}
				ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = (uint64_t)fd };
				epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
			} else {
				ssize_t r = read(fd, buf, sizeof(buf));
				if (r < 0 && errno == EAGAIN)
					continue;
				if (r != 0)
					return die("client: data or an error instead of EOF");
				close(fd);
				inflight--;
				done++;
			}
		}
	}
	double secs = now_s() - t0;
	printf("{\"test\": \"kernel_conn_rate\", \"window\": %lu, \"conns\": %lu, "
	       "\"seconds\": %.3f, \"conns_per_s\": %.0f}\n", window, done, secs, done / secs);
	close(l);
	close(ep);
	return 0;
}
