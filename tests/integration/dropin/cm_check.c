/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_check: an ordinary librdmacm program (built against rdma-core's
 * headers and libraries) that checks what librnic-verbs gives it when run
 * under rnic-run. Every wait is a poll() on the channel's fd, bounded, so
 * a missing event fails instead of hanging.
 *
 *   cm_check server PORT accept|reject|exit
 *   cm_check client ADDR PORT accept|reject|exit
 *
 * accept: the request carries the client's private data; the accept's
 *         reaches the client with ESTABLISHED; the client disconnects,
 *         the server sees DISCONNECTED and its own rdma_disconnect() of
 *         the closed connection returns 0, as rdma_cm's.
 * reject: REJECTED on the client, the reject's private data, status as
 *         rdma_cm reports it (-ECONNREFUSED on iWARP, IB CM reason 28,
 *         consumer reject, on RoCE).
 * exit:   the server exits once established (the client's Send came),
 *         without a disconnect: the client still gets DISCONNECTED (the
 *         exiting stack closes it). rdma_create_qp's CQs and completion
 *         channels serve rdma_get_recv_comp / rdma_get_send_comp.
 * The client also checks first: an O_NONBLOCK channel with nothing in it
 * (EAGAIN), and calls rnic does not support (EOPNOTSUPP).
 *
 *   cm_check ids|ids-queued|ids-moved N ADDR
 *
 * N ids on one channel each resolve ADDR. ids: the first half's
 * ADDR_RESOLVED are taken and those ids destroyed while the second half's
 * events still wait, then the rest; with RNIC_VERBS_STATS=1 the library
 * says how many queued events the destroys looked at (0: the ids had none
 * queued; a walk of the channel's queue per destroy looked at N^2/4).
 * ids-queued: every id destroyed with its event queued; none may be
 * delivered after (and each destroy looks at its own event only: N in
 * all, not the N^2/2 of a walk of the channel's queue).
 * ids-moved: as ids-queued, but half the ids moved to another channel
 * (rdma_migrate_id) before their destroy: the events they left queued on
 * the first channel are not delivered either (they named freed ids).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#define WAIT_MS 10000

static const char cli_pdata[] = "cli-hello";
static const char acc_pdata[] = "srv-accept";
static const char rej_pdata[] = "srv-reject";

static void die(const char *what)
{
	printf("FAIL: %s (errno %d: %s)\n", what, errno, strerror(errno));
	exit(1);
}

/* The next event, which must be @p want, within WAIT_MS. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	int n;
	while ((n = poll(&p, 1, WAIT_MS)) < 0 && errno == EINTR)
		;
	if (n != 1) {
		printf("FAIL: no %s within %d ms (poll %d, errno %d)\n", rdma_event_str(want),
		       WAIT_MS, n, errno);
		exit(1);
	}
	if (rdma_get_cm_event(ch, &ev) != 0)
		die("rdma_get_cm_event");
	if (ev->event != want) {
		printf("FAIL: %s (status %d), expected %s\n", rdma_event_str(ev->event), ev->status,
		       rdma_event_str(want));
		exit(1);
	}
	printf("%s status %d pdata_len %u\n", rdma_event_str(ev->event), ev->status,
	       ev->param.conn.private_data_len);
	return ev;
}

static void expect_pdata(const struct rdma_cm_event *ev, const char *want)
{
	const struct rdma_conn_param *c = &ev->param.conn;
	if (c->private_data_len < strlen(want) + 1 || c->private_data == NULL ||
	    memcmp(c->private_data, want, strlen(want) + 1) != 0) {
		printf("FAIL: private data of %s is not \"%s\"\n", rdma_event_str(ev->event), want);
		exit(1);
	}
}

static void make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	/* no PD, no CQs: the id's PD, CQs made by rdma_create_qp */
	if (rdma_create_qp(id, NULL, &a) != 0)
		die("rdma_create_qp");
	if (id->pd == NULL || id->send_cq == NULL || id->recv_cq == NULL || id->qp == NULL)
		die("rdma_create_qp left id->pd, send_cq, recv_cq or qp empty");
}

static void expect_unsupported(const char *what, int rc)
{
	if (rc != -1 || errno != EOPNOTSUPP) {
		printf("FAIL: %s: rc %d errno %d, expected -1 EOPNOTSUPP\n", what, rc, errno);
		exit(1);
	}
}

static int server(uint16_t port, const char *mode)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *listen_id, *id;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (ch == NULL)
		die("rdma_create_event_channel");
	if (rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP) != 0)
		die("rdma_create_id");
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&sin) != 0)
		die("rdma_bind_addr");
	if (rdma_listen(listen_id, 4) != 0)
		die("rdma_listen");
	if (ntohs(rdma_get_src_port(listen_id)) != port)
		die("rdma_get_src_port of the listener");
	printf("listening\n");
	fflush(stdout);
	struct rdma_cm_event *ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	expect_pdata(ev, cli_pdata);
	id = ev->id;
	if (ev->listen_id != listen_id || id->verbs == NULL)
		die("CONNECT_REQUEST: listen_id or the new id's verbs");
	printf("request on %s from port %u\n", ibv_get_device_name(id->verbs->device),
	       ntohs(rdma_get_dst_port(id)));
	rdma_ack_cm_event(ev);
	if (strcmp(mode, "reject") == 0) {
		if (rdma_reject(id, rej_pdata, sizeof(rej_pdata)) != 0)
			die("rdma_reject");
		/* the reject leaves before the process does */
		usleep(200 * 1000);
		rdma_destroy_id(id);
		rdma_destroy_id(listen_id);
		rdma_destroy_event_channel(ch);
		return 0;
	}
	make_qp(id);
	static char buf[16];
	struct ibv_mr *mr = rdma_reg_msgs(id, buf, sizeof(buf));
	if (mr == NULL || rdma_post_recv(id, NULL, buf, sizeof(buf), mr) != 0)
		die("rdma_reg_msgs or rdma_post_recv");
	struct rdma_conn_param cp = {
		.private_data = acc_pdata, .private_data_len = sizeof(acc_pdata),
		.responder_resources = 1, .initiator_depth = 1,
	};
	if (rdma_accept(id, &cp) != 0)
		die("rdma_accept");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	if (strcmp(mode, "exit") == 0) {
		/* the client is established once its Send is here */
		struct ibv_wc wc;
		int rc;
		while ((rc = rdma_get_recv_comp(id, &wc)) == 0)
			;
		if (rc < 0 || wc.status != IBV_WC_SUCCESS)
			die("rdma_get_recv_comp");
		printf("exiting without a disconnect\n");
		fflush(stdout);
		exit(0);
	}
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	if (rdma_disconnect(id) != 0)
		die("rdma_disconnect after the peer's");
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ch);
	return 0;
}

static int client(const char *addr, uint16_t port, const char *mode, bool roce)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id, *udp;
	struct rdma_cm_event *ev;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };

	if (ch == NULL || inet_pton(AF_INET, addr, &dst.sin_addr) != 1)
		die("rdma_create_event_channel or the address");
	/* a non-blocking channel with nothing in it */
	int fl = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
	errno = 0;
	if (rdma_get_cm_event(ch, &ev) != -1 || errno != EAGAIN)
		die("rdma_get_cm_event on an empty O_NONBLOCK channel is not EAGAIN");
	fcntl(ch->fd, F_SETFL, fl);
	/* what rnic does not do */
	expect_unsupported("rdma_create_id(RDMA_PS_UDP)", rdma_create_id(ch, &udp, NULL, RDMA_PS_UDP));
	expect_unsupported("rsocket", rsocket(AF_INET, SOCK_STREAM, 0));
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
		die("rdma_create_id");
	expect_unsupported("rdma_join_multicast",
			   rdma_join_multicast(id, (struct sockaddr *)&dst, NULL));

	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) != 0)
		die("rdma_resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (id->verbs == NULL || id->route.addr.src_addr.sa_family != AF_INET)
		die("ADDR_RESOLVED: id->verbs or the source address");
	if ((id->verbs->device->transport_type == IBV_TRANSPORT_IB) != roce)
		die("the id's device is not of the transport asked");
	if (rdma_resolve_route(id, 2000) != 0)
		die("rdma_resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	make_qp(id);
	struct rdma_conn_param cp = {
		.private_data = cli_pdata, .private_data_len = sizeof(cli_pdata),
		.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
	};
	if (rdma_connect(id, &cp) != 0)
		die("rdma_connect");
	if (strcmp(mode, "reject") == 0) {
		ev = expect(ch, RDMA_CM_EVENT_REJECTED);
		expect_pdata(ev, rej_pdata);
		int want = roce ? 28 : -ECONNREFUSED;
		if (ev->status != want) {
			printf("FAIL: REJECTED status %d, expected %d\n", ev->status, want);
			return 1;
		}
		rdma_ack_cm_event(ev);
	} else {
		ev = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
		expect_pdata(ev, acc_pdata);
		rdma_ack_cm_event(ev);
		if (strcmp(mode, "accept") == 0 && rdma_disconnect(id) != 0)
			die("rdma_disconnect");
		if (strcmp(mode, "exit") == 0) {
			static char buf[16] = "bye";
			struct ibv_mr *mr = rdma_reg_msgs(id, buf, sizeof(buf));
			struct ibv_wc wc;
			int rc;
			if (mr == NULL || rdma_post_send(id, NULL, buf, sizeof(buf), mr, IBV_SEND_SIGNALED) != 0)
				die("rdma_reg_msgs or rdma_post_send");
			while ((rc = rdma_get_send_comp(id, &wc)) == 0)
				;
			if (rc < 0 || wc.status != IBV_WC_SUCCESS)
				die("rdma_get_send_comp");
		}
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED));
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	printf("client %s: ok\n", mode);
	return 0;
}

static struct rdma_cm_id **ids_resolving(struct rdma_event_channel *ch, int n, const char *addr)
{
	struct rdma_cm_id **ids = calloc((size_t)n, sizeof(*ids));
	struct sockaddr_in dst = { .sin_family = AF_INET };

	if (ids == NULL || inet_pton(AF_INET, addr, &dst.sin_addr) != 1)
		die("setup");
	for (int i = 0; i < n; i++) {
		if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP) != 0)
			die("rdma_create_id");
		if (rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)&dst, WAIT_MS) != 0)
			die("rdma_resolve_addr");
	}
	return ids;
}

static void take_resolved(struct rdma_event_channel *ch, struct rdma_cm_id **ids, int from, int to)
{
	for (int i = from; i < to; i++) {
		struct rdma_cm_event *ev = expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
		if (ev->id != ids[i]) {
			printf("FAIL: ADDR_RESOLVED %d came for another id\n", i);
			exit(1);
		}
		rdma_ack_cm_event(ev);
	}
}

static void destroy_ids(struct rdma_cm_id **ids, int from, int to)
{
	for (int i = from; i < to; i++)
		if (rdma_destroy_id(ids[i]) != 0)
			die("rdma_destroy_id");
}

/* An O_NONBLOCK read of @p ch must find nothing. @return 0, or 1 (said). */
static int nothing_left(struct rdma_event_channel *ch, const char *which)
{
	struct rdma_cm_event *ev;

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_get_cm_event(ch, &ev) == 0) {
		printf("FAIL: an event (%s) of a destroyed id on the %s channel\n",
		       rdma_event_str(ev->event), which);
		return 1;
	}
	return 0;
}

/* cm_check ids N ADDR: the first half's events taken, those ids destroyed
 * while the second half's events still wait on the channel, then the rest.
 * cm_check ids-queued N ADDR: every id destroyed with its event queued;
 * none may be delivered after. ids-moved: half of them moved to a second
 * channel first. */
static int many_ids(int n, const char *addr, const char *mode)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_event_channel *ch2 = rdma_create_event_channel();

	if (ch == NULL || ch2 == NULL)
		die("rdma_create_event_channel");
	struct rdma_cm_id **ids = ids_resolving(ch, n, addr);
	if (strcmp(mode, "ids") == 0) {
		take_resolved(ch, ids, 0, n / 2);
		destroy_ids(ids, 0, n / 2);
		take_resolved(ch, ids, n / 2, n);
		destroy_ids(ids, n / 2, n);
	} else {
		if (strcmp(mode, "ids-moved") == 0)
			for (int i = 0; i < n; i += 2)
				if (rdma_migrate_id(ids[i], ch2) != 0)
					die("rdma_migrate_id");
		destroy_ids(ids, 0, n);
	}
	if (nothing_left(ch, "first") || nothing_left(ch2, "second"))
		return 1;
	rdma_destroy_event_channel(ch);
	rdma_destroy_event_channel(ch2);
	free(ids);
	printf("ids: %d made and destroyed, ok\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return server((uint16_t)atoi(argv[2]), argv[3]);
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client(argv[2], (uint16_t)atoi(argv[3]), argv[4],
			      getenv("RNIC_TRANSPORT") && strcmp(getenv("RNIC_TRANSPORT"), "roce") == 0);
	if (argc == 4 && (strcmp(argv[1], "ids") == 0 || strcmp(argv[1], "ids-queued") == 0 ||
			  strcmp(argv[1], "ids-moved") == 0))
		return many_ids(atoi(argv[2]), argv[3], argv[1]);
	fprintf(stderr, "usage: cm_check server PORT accept|reject|exit\n"
			"       cm_check client ADDR PORT accept|reject|exit\n"
			"       cm_check ids|ids-queued|ids-moved N ADDR\n");
	return 2;
}
