/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile_echo: the TCP target of the hostile-peer suite. An echo server on
 * rnic's TCP that takes any number of connections, one after another or at
 * once, and runs until SIGTERM (rnic-tcp echo ends with its first
 * connection and takes at most 64). Each connection sends back what it
 * receives and closes when the peer does.
 *
 *   hostile_echo --listen PORT PORT-OPTIONS
 *
 * Exit 0 after SIGTERM once the stack is torn down, 1 when it could not
 * start, 2 on bad arguments.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "rnic/rnic.h"
#include "rnic/rnic_tcp.h"

/* Every connection's context is the listener's: nothing per connection. */
static void *echo_accept(struct rnic_tcp_conn *c, void *lctx)
{
	(void)c;
	return lctx;
}

/* Send the payload back; a peer that does not read loses it. */
static void echo_recv(struct rnic_tcp_conn *c, void *ctx, struct rte_mbuf *m)
{
	(void)ctx;
	if (rnic_tcp_send(c, m) != 0)
		rte_pktmbuf_free(m);
}

static void echo_eof(struct rnic_tcp_conn *c, void *ctx)
{
	(void)ctx;
	rnic_tcp_close(c);
}

static void echo_closed(struct rnic_tcp_conn *c, void *ctx, int err)
{
	(void)c;
	(void)ctx;
	(void)err;
}

/* SIGTERM/SIGINT: ask the main loop to stop (a second one ends the process:
 * the handler is reset). */
static void echo_signal(int sig)
{
	signal(sig, SIG_DFL);
	rnic_request_stop();
}

static const struct rnic_tcp_ops echo_ops = {
	.accept = echo_accept, .recv = echo_recv, .eof = echo_eof,
	.closed = echo_closed,
};

int main(int argc, char **argv)
{
	static int listener;   /* its address is the listener's context */
	struct rnic_config cfg;
	char err[RNIC_ERRLEN];
	unsigned long port = 0;

	rnic_config_init(&cfg);
	if (rnic_config_parse_args(&cfg, &argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "hostile_echo: %s\n", err);
		return 2;
	}
	if (argc == 3 && strcmp(argv[1], "--listen") == 0)
		port = strtoul(argv[2], NULL, 10);
	if (port == 0 || port > 65535 || cfg.n_ports == 0) {
		fprintf(stderr, "usage: hostile_echo --listen PORT PORT-OPTIONS\n%s",
			rnic_config_usage());
		return 2;
	}
	signal(SIGTERM, echo_signal);
	signal(SIGINT, echo_signal);
	if (rnic_eal_init(argv[0], &cfg, cfg.workers) != 0)
		return 1;
	struct rnic_stack *st = rnic_stack_create(&cfg);
	if (st == NULL) {
		fprintf(stderr, "hostile_echo: stack: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (rnic_tcp_listen(st, (uint16_t)port, &echo_ops, &listener, 64) != 0 ||
	    rnic_stack_start(st) != 0) {
		fprintf(stderr, "hostile_echo: cannot listen on %lu\n", port);
		rnic_stack_destroy(st);
		return 1;
	}
	printf("hostile_echo: listening on %lu\n", port);
	fflush(stdout);
	while (!rnic_stop_requested())
		usleep(10000);
	rnic_stack_stop(st);
	rnic_stack_destroy(st);
	printf("hostile_echo: stopped\n");
	return 0;
}
