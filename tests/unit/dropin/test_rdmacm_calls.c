/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librnic-verbs' librdmacm entry points that need no stack: each one rnic
 * does not support fails as librdmacm reports failure (-1, or NULL, or 0
 * bytes for riowrite) with errno EOPNOTSUPP; rdma_getaddrinfo,
 * rdma_event_str and rpoll work; without a configured port the stack
 * calls fail with ENODEV instead of crashing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/uio.h>

#include <cmocka.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#define EXPECT_UNSUP(call) do {                          \
		errno = 0;                               \
		assert_int_equal((call), -1);            \
		assert_int_equal(errno, EOPNOTSUPP);     \
	} while (0)

static void test_rsockets_unsupported(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	char buf[8] = "";
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int v = 0;
	(void)state;

	EXPECT_UNSUP(rsocket(AF_INET, SOCK_STREAM, 0));
	EXPECT_UNSUP(rbind(3, (struct sockaddr *)&sin, len));
	EXPECT_UNSUP(rlisten(3, 1));
	EXPECT_UNSUP(raccept(3, (struct sockaddr *)&sin, &len));
	EXPECT_UNSUP(rconnect(3, (struct sockaddr *)&sin, len));
	EXPECT_UNSUP(rshutdown(3, SHUT_RDWR));
	EXPECT_UNSUP(rclose(3));
	EXPECT_UNSUP(rrecv(3, buf, sizeof(buf), 0));
	EXPECT_UNSUP(rrecvfrom(3, buf, sizeof(buf), 0, (struct sockaddr *)&sin, &len));
	EXPECT_UNSUP(rrecvmsg(3, &msg, 0));
	EXPECT_UNSUP(rsend(3, buf, sizeof(buf), 0));
	EXPECT_UNSUP(rsendto(3, buf, sizeof(buf), 0, (struct sockaddr *)&sin, len));
	EXPECT_UNSUP(rsendmsg(3, &msg, 0));
	EXPECT_UNSUP(rread(3, buf, sizeof(buf)));
	EXPECT_UNSUP(rreadv(3, &iov, 1));
	EXPECT_UNSUP(rwrite(3, buf, sizeof(buf)));
	EXPECT_UNSUP(rwritev(3, &iov, 1));
	EXPECT_UNSUP(rselect(0, NULL, NULL, NULL, NULL));
	EXPECT_UNSUP(rgetpeername(3, (struct sockaddr *)&sin, &len));
	EXPECT_UNSUP(rgetsockname(3, (struct sockaddr *)&sin, &len));
	EXPECT_UNSUP(rsetsockopt(3, SOL_RDMA, RDMA_SQSIZE, &v, sizeof(v)));
	EXPECT_UNSUP(rgetsockopt(3, SOL_RDMA, RDMA_SQSIZE, &v, &len));
	EXPECT_UNSUP(rfcntl(3, F_GETFL));
	EXPECT_UNSUP(riomap(3, buf, sizeof(buf), PROT_WRITE, 0, -1));
	EXPECT_UNSUP(riounmap(3, buf, sizeof(buf)));
	errno = 0;
	assert_int_equal(riowrite(3, buf, sizeof(buf), 0, 0), 0);
	assert_int_equal(errno, EOPNOTSUPP);
}

static void test_rdma_unsupported(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct rdma_cm_id *id = NULL;
	(void)state;

	EXPECT_UNSUP(rdma_create_id(NULL, &id, NULL, RDMA_PS_UDP));
	EXPECT_UNSUP(rdma_create_id(NULL, &id, NULL, RDMA_PS_IB));
	assert_null(id);
	EXPECT_UNSUP(rdma_join_multicast(NULL, (struct sockaddr *)&sin, NULL));
	EXPECT_UNSUP(rdma_join_multicast_ex(NULL, NULL, NULL));
	EXPECT_UNSUP(rdma_leave_multicast(NULL, (struct sockaddr *)&sin));
	EXPECT_UNSUP(rdma_notify(NULL, IBV_EVENT_COMM_EST));
	EXPECT_UNSUP(rdma_set_local_ece(NULL, NULL));
	EXPECT_UNSUP(rdma_get_remote_ece(NULL, NULL));
	EXPECT_UNSUP(rdma_reject_ece(NULL, NULL, 0));
	EXPECT_UNSUP(rdma_create_srq_ex(NULL, NULL));
}

/* No RNIC_CONFIG / RNIC_ARGS: what needs the stack fails cleanly. */
static void test_no_stack(void **state)
{
	struct rdma_cm_id *id = NULL;
	int n = -1;
	(void)state;

	errno = 0;
	assert_null(rdma_create_event_channel());
	assert_int_equal(errno, ENODEV);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), -1);
	assert_int_equal(errno, ENODEV);
	struct ibv_context **devs = rdma_get_devices(&n);
	assert_non_null(devs);
	assert_int_equal(n, 0);
	assert_null(devs[0]);
	rdma_free_devices(devs);
	assert_int_equal(rdma_ack_cm_event(NULL), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_getaddrinfo(void **state)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res = NULL;
	(void)state;

	/* passive: the source, the any address without a node */
	assert_int_equal(rdma_getaddrinfo(NULL, "7471", &hints, &res), 0);
	assert_non_null(res->ai_src_addr);
	assert_null(res->ai_dst_addr);
	struct sockaddr_in *s = (struct sockaddr_in *)res->ai_src_addr;
	assert_int_equal(s->sin_family, AF_INET);
	assert_int_equal(ntohs(s->sin_port), 7471);
	assert_int_equal(s->sin_addr.s_addr, htonl(INADDR_ANY));
	assert_int_equal(res->ai_port_space, RDMA_PS_TCP);
	assert_int_equal(res->ai_qp_type, IBV_QPT_RC);
	rdma_freeaddrinfo(res);

	/* active: the destination, a source from the hints */
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0xc0000202) };
	hints = (struct rdma_addrinfo){ .ai_flags = RAI_NUMERICHOST,
					.ai_src_addr = (struct sockaddr *)&src,
					.ai_src_len = sizeof(src) };
	assert_int_equal(rdma_getaddrinfo("192.0.2.1", "18515", &hints, &res), 0);
	s = (struct sockaddr_in *)res->ai_dst_addr;
	assert_non_null(s);
	assert_int_equal(ntohl(s->sin_addr.s_addr), 0xc0000201);
	assert_int_equal(ntohs(s->sin_port), 18515);
	assert_non_null(res->ai_src_addr);
	assert_int_equal(((struct sockaddr_in *)res->ai_src_addr)->sin_addr.s_addr, src.sin_addr.s_addr);
	rdma_freeaddrinfo(res);

	/* a name that is not a number with RAI_NUMERICHOST: getaddrinfo's
	 * EAI_ code (for gai_strerror), as librdmacm returns it */
	assert_int_equal(rdma_getaddrinfo("no.such.host", "1", &hints, &res), EAI_NONAME);
	/* UDP: not supported */
	hints = (struct rdma_addrinfo){ .ai_port_space = RDMA_PS_UDP };
	EXPECT_UNSUP(rdma_getaddrinfo("192.0.2.1", "1", &hints, &res));
	errno = 0;
	assert_int_equal(rdma_getaddrinfo(NULL, NULL, NULL, &res), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_event_str_rpoll(void **state)
{
	int p[2];
	(void)state;

	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED");
	assert_string_equal(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT),
			    "RDMA_CM_EVENT_TIMEWAIT_EXIT");
	assert_string_equal(rdma_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT");

	assert_int_equal(pipe(p), 0);
	struct pollfd fd = { .fd = p[0], .events = POLLIN };
	assert_int_equal(rpoll(&fd, 1, 0), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(rpoll(&fd, 1, 1000), 1);
	assert_true(fd.revents & POLLIN);
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rsockets_unsupported),
		cmocka_unit_test(test_rdma_unsupported),
		cmocka_unit_test(test_no_stack),
		cmocka_unit_test(test_getaddrinfo),
		cmocka_unit_test(test_event_str_rpoll),
	};
	unsetenv("RNIC_CONFIG");
	unsetenv("RNIC_ARGS");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
