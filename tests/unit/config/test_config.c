/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Config parser: a full valid file, every error message exactly, the CLI
 * shortcuts, and rnic_parse_cidr. No EAL: rte_cfgfile works without it.
 * INI files are written by the tests into a private temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"
#include "tmp_ini.h"

#define write_ini tmp_ini_write

static bool targets(const char *name)
{
	return strncmp(name, "target.", 7) == 0;
}

static void full_file(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN] = "";
	(void)state;

	rnic_config_init(&c);
	const char *p = write_ini(
		"; a comment\n# another = comment before any section\n"
		"[eal]\nargs = \"--log-level=*:info -m  512\"\n"
		"[port.5]\nring = x.b\nip = 10.1.0.2/16 ; inline comment\nmtu = 9000\n"
		"rx_drop = 2.5\ndup = 1\ntx_delay_us = 100\ndelay = 0.25\n"
		"fault_seed = 18446744073709551615\ngateway = 10.1.0.1\nmbufs = 4096\n"
		"rx_desc = 512\ntx_desc = 256\npcap = /tmp/x.pcapng\nsw_csum = on\n"
		"  # indented = comment\n"
		"[port.2]\n  vdev = net_tap0,iface=t0  \nip = 192.0.2.10\n"
		"[target.scratch]\nsize = 64M\nanything = goes here\n"
		"[workers]\ncount = 16\npoll = busy\n[gateway]\nstatus_ms = 0\nbacklog = 64\n");
	int rc = rnic_config_load(&c, p, targets, err, sizeof(err));
	if (rc != 0)
		fail_msg("rc %d: %s", rc, err);
	assert_string_equal(c.path, p);
	assert_int_equal(c.n_eal_args, 3);
	assert_string_equal(c.eal_args[0], "--log-level=*:info");
	assert_string_equal(c.eal_args[1], "-m");
	assert_string_equal(c.eal_args[2], "512");
	assert_int_equal(c.n_ports, 2);
	/* ordered by N, whatever the file order; numbers kept */
	assert_int_equal(c.port_num[0], 2);
	assert_int_equal(c.port_num[1], 5);
	const struct rnic_port_cfg *a = &c.ports[0], *b = &c.ports[1];
	assert_string_equal(a->vdev, "net_tap0,iface=t0");
	assert_int_equal(a->ip, 0xc000020a);
	assert_int_equal(a->prefix_len, 24);
	assert_int_equal(a->mtu, 1500);
	assert_int_equal(a->mbufs, 8191);
	assert_int_equal(a->rx_desc, 1024);
	assert_int_equal(a->fault_seed, 1);
	assert_int_equal(a->gateway, 0);
	assert_false(a->sw_csum);
	assert_true(a->rx_fault.drop == 0 && a->tx_fault.dup == 0);
	assert_string_equal(b->ring, "x.b");
	assert_string_equal(b->vdev, "");
	assert_int_equal(b->ip, 0x0a010002);
	assert_int_equal(b->prefix_len, 16);
	assert_int_equal(b->mtu, 9000);
	assert_int_equal(b->mbufs, 4096);
	assert_int_equal(b->rx_desc, 512);
	assert_int_equal(b->tx_desc, 256);
	assert_true(b->rx_fault.drop == 2.5 && b->tx_fault.drop == 0);
	assert_true(b->rx_fault.dup == 1 && b->tx_fault.dup == 1);
	assert_true(b->rx_fault.delay == 0.25 && b->tx_fault.delay == 0.25);
	assert_int_equal(b->rx_fault.delay_us, 0);
	assert_int_equal(b->tx_fault.delay_us, 100);
	assert_true(b->fault_seed == UINT64_MAX);
	assert_int_equal(b->gateway, 0x0a010001);
	assert_string_equal(b->pcap, "/tmp/x.pcapng");
	assert_true(b->sw_csum);
	assert_int_equal(c.workers, 16);
	assert_int_equal(c.poll_mode, RNIC_POLL_BUSY);
	assert_int_equal(c.status_interval_ms, 0);
	assert_int_equal(c.listen_backlog, 64);
}

static void defaults(void **state)
{
	struct rnic_config c;
	struct rnic_port_cfg pc;
	(void)state;

	memset(&c, 0xa5, sizeof(c));
	rnic_config_init(&c);
	assert_int_equal(c.n_ports, 0);
	assert_int_equal(c.n_eal_args, 0);
	assert_int_equal(c.workers, 1);
	assert_int_equal(c.poll_mode, RNIC_POLL_ADAPTIVE);
	assert_int_equal(c.status_interval_ms, 1000);
	assert_int_equal(c.listen_backlog, RNIC_CM_BACKLOG_MAX);
	assert_string_equal(c.path, "");
	memset(&pc, 0xa5, sizeof(pc));
	rnic_port_cfg_init(&pc);
	assert_int_equal(pc.mtu, 1500);
	assert_int_equal(pc.mbufs, 8191);
	assert_int_equal(pc.rx_desc, 1024);
	assert_int_equal(pc.tx_desc, 1024);
	assert_int_equal(pc.fault_seed, 1);
	assert_int_equal(pc.ip, 0);
	assert_true(pc.rx_fault.drop == 0 && pc.tx_fault.corrupt == 0);
	assert_string_equal(pc.vdev, "");
}

#define P0 "[port.0]\nvdev=net_null0\nip=1.2.3.4/24\n"

static void error_messages(void **state)
{
	static const struct { const char *ini; const char *msg; } cases[] = {
		{ P0 "colour=red\n", "[port.0] colour: unknown key" },
		{ "[bogus]\nx=1\n", "[bogus]: unknown section" },
		{ "[port.0]\nvdev=net_null0\nip=300.1.2.3/24\n",
		  "[port.0] ip: '300.1.2.3/24' is not an IPv4 or IPv6 address/prefix" },
		{ "[port.0]\nvdev=net_null0\nip=1.2.3.4/33\n",
		  "[port.0] ip: '1.2.3.4/33' is not an IPv4 or IPv6 address/prefix" },
		{ "[port.0]\nvdev=net_null0\nip=1.2.3.0/24\n",
		  "[port.0] ip: '1.2.3.0/24' is the network or broadcast address of its subnet" },
		{ "[port.0]\nvdev=net_null0\nip=224.0.0.1/24\n",
		  "[port.0] ip: '224.0.0.1/24' is not a unicast host address/prefix" },
		{ P0 "mtu=9001\n", "[port.0] mtu: '9001' is not 68..9000" },
		{ P0 "mtu=67\n", "[port.0] mtu: '67' is not 68..9000" },
		{ P0 "mtu=15x0\n", "[port.0] mtu: '15x0' is not 68..9000" },
		{ P0 "mtu=-1500\n", "[port.0] mtu: '-1500' is not 68..9000" },
		{ P0 "drop=101\n", "[port.0] drop: '101' is not a percentage 0..100" },
		{ P0 "rx_corrupt=-1\n", "[port.0] rx_corrupt: '-1' is not a percentage 0..100" },
		{ P0 "tx_reorder=lots\n", "[port.0] tx_reorder: 'lots' is not a percentage 0..100" },
		{ P0 "rx_delay_us=10000001\n",
		  "[port.0] rx_delay_us: '10000001' is not 0..10000000 (microseconds)" },
		{ P0 "mbufs=10\n", "[port.0] mbufs: '10' is not 1024..16777216" },
		{ P0 "rx_desc=65536\n", "[port.0] rx_desc: '65536' is not 64..16384" },
		{ P0 "sw_csum=yes\n", "[port.0] sw_csum: 'yes' is not on or off" },
		{ P0 "fault_seed=0x10\n",
		  "[port.0] fault_seed: '0x10' is not an unsigned 64-bit number" },
		{ P0 "fault_seed=18446744073709551616\n",
		  "[port.0] fault_seed: '18446744073709551616' is not an unsigned 64-bit number" },
		{ P0 "gateway=1.2.3.1/24\n", "[port.0] gateway: '1.2.3.1/24' is not an IPv4 address" },
		{ P0 "gateway=9.9.9.9\n", "[port.0] gateway: not inside the port's subnet /24" },
		{ "[port.0]\nvdev=net_null0\npci=0000:01:00.0\nip=1.2.3.4/24\n",
		  "[port.0] pci: a port takes only one of vdev, pci or ring" },
		{ "[port.0]\nvdev=net_null0\n", "[port.0] ip: missing (required, A.B.C.D/len or X:X::X/len)" },
		{ "[port.0]\nip=1.2.3.4/24\n", "[port.0]: needs one of vdev, pci or ring" },
		{ P0 "ip=1.2.3.5/24\n", "[port.0] ip: given twice" },
		{ P0 "[workers]\n" P0, "[port.0]: section given twice" },
		{ "[port.9]\nvdev=net_null0\nip=1.2.3.4/24\n", "[port.9]: port number must be 0..7" },
		{ "[port.01]\nvdev=net_null0\nip=1.2.3.4/24\n", "[port.01]: port number must be 0..7" },
		{ "[port.x]\nvdev=net_null0\nip=1.2.3.4/24\n", "[port.x]: port number must be 0..7" },
		{ "[workers]\ncount=0\n", "[workers] count: '0' is not 1..16" },
		{ "[workers]\ncount=17\n", "[workers] count: '17' is not 1..16" },
		{ "[workers]\npoll=sometimes\n", "[workers] poll: 'sometimes' is not busy or adaptive" },
		{ "[workers]\nthreads=2\n", "[workers] threads: unknown key" },
		{ "[gateway]\nstatus_ms=1s\n", "[gateway] status_ms: '1s' is not 0..3600000" },
		{ "[gateway]\nbacklog=0\n", "[gateway] backlog: '0' is not 1..4096" },
		{ "[gateway]\nbacklog=4097\n", "[gateway] backlog: '4097' is not 1..4096" },
		{ "[eal]\nargv=-m 512\n", "[eal] argv: unknown key" },
		{ P0 "tx_ce=200\n", "[port.0] tx_ce: '200' is not a percentage 0..100" },
		{ "[roce]\necn=yes\n", "[roce] ecn: 'yes' is not on or off" },
		{ "[roce]\ndcqcn=1\n", "[roce] dcqcn: '1' is not on or off" },
		{ "[roce]\ncnp_interval_us=-5\n",
		  "[roce] cnp_interval_us: '-5' is not 0..1000000" },
		{ "[roce]\ndcqcn_g_shift=0\n", "[roce] dcqcn_g_shift: '0' is not 1..20" },
		{ "[roce]\ndcqcn_rate_us=0\n", "[roce] dcqcn_rate_us: '0' is not 1..1000000" },
		{ "[roce]\ndcqcn_min_rate_mbps=2000\ndcqcn_max_rate_mbps=1000\n",
		  "[roce] dcqcn_min_rate_mbps: 2000 is above dcqcn_max_rate_mbps 1000" },
		{ "[roce]\nrate=1\n", "[roce] rate: unknown key" },
		{ "[target.x]\nsize=1\n", "[target.x]: unknown section" },
		/* syntax, found before rte_cfgfile reads the file */
		{ "just a line\n", "line 1: 'just a line' is neither [section] nor key = value" },
		{ "[port.0]\nvdev net_null0\n",
		  "line 2: 'vdev net_null0' is neither [section] nor key = value" },
		{ "; c\n[port.0\nvdev=x\n", "line 2: '[port.0' is not a [section] header" },
		{ "[port.0] x\n", "line 1: '[port.0] x' is not a [section] header" },
		{ "[ ]\n", "line 1: section name is empty or longer than 63" },
		{ "vdev = x\n[port.0]\n", "line 1: 'vdev = x' comes before any [section]" },
		{ "[port.0]\n = x\n", "line 2: '= x' is neither [section] nor key = value" },
		{ "[port.0]\nvdev =  ; nothing\n", "[port.0] vdev: has no value" },
	};
	char err[RNIC_ERRLEN], want[RNIC_ERRLEN];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rnic_config c;
		rnic_config_init(&c);
		const char *p = write_ini(cases[i].ini);
		err[0] = '\0';
		int rc = rnic_config_load(&c, p, NULL, err, sizeof(err));
		if (rc != -EINVAL)
			fail_msg("case %zu (%s): rc %d", i, cases[i].msg, rc);
		snprintf(want, sizeof(want), "%s: %s", p, cases[i].msg);
		if (strcmp(err, want) != 0)
			fail_msg("case %zu:\n got '%s'\nwant '%s'", i, err, want);
		/* a failed load leaves the configuration as it was */
		assert_int_equal(c.n_ports, 0);
		assert_string_equal(c.path, "");
	}
	struct rnic_config c;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_load(&c, "/nonexistent/x.ini", NULL, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/x.ini: cannot open: No such file or directory");
	/* a directory opens but cannot be read */
	assert_int_equal(rnic_config_load(&c, tmp_ini_dir(), NULL, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", tmp_ini_dir());
	assert_string_equal(err, want);
}

/* Lines longer than rte_cfgfile's buffer and syntax errors: our one line,
 * and nothing else on stderr (rte_cfgfile would log its own). */
static void syntax_one_line(void **state)
{
	char big[512], err[RNIC_ERRLEN], want[RNIC_ERRLEN], out[256] = "";
	struct rnic_config c;
	(void)state;

	/* 322 characters is the most rte_cfgfile takes in one line */
	int n = snprintf(big, sizeof(big), "[port.0]\nvdev=net_null0\nip=1.2.3.4/24\npcap=");
	memset(big + n, 'a', 322 - 5);
	snprintf(big + n + 317, sizeof(big) - n - 317, "\n");
	rnic_config_init(&c);
	assert_int_equal(rnic_config_load(&c, write_ini(big), NULL, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: [port.0] pcap: value longer than 255 characters",
		 tmp_ini_path());
	assert_string_equal(err, want);

	memset(big + n, 'a', 323 - 5);
	snprintf(big + n + 318, sizeof(big) - n - 318, "\n");
	int saved = dup(2);
	char logf[128];
	snprintf(logf, sizeof(logf), "%s/stderr", tmp_ini_dir());
	int fd = open(logf, O_CREAT | O_TRUNC | O_RDWR, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	int rc = rnic_config_load(&c, write_ini(big), NULL, err, sizeof(err));
	int rc2 = rnic_config_load(&c, write_ini("[a\nb\n"), NULL, out, sizeof(out));
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_int_equal(rc, -EINVAL);
	assert_int_equal(rc2, -EINVAL);
	snprintf(want, sizeof(want), "%s: line 4: longer than 322 characters", tmp_ini_path());
	assert_string_equal(err, want);
	assert_int_equal(lseek(fd, 0, SEEK_END), 0);
	close(fd);
	unlink(logf);
}

static void load_after_cli_ports(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN];
	char *argv[] = { "p", "--ring", "r.a", "--ip", "10.0.0.1/8", NULL };
	int argc = 5;
	(void)state;

	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, argv, err, sizeof(err)), 0);
	const char *p = write_ini("[port.0]\nvdev=net_null0\nip=1.2.3.4/24\n"
				  "[port.3]\nvdev=net_null1\nip=1.2.4.4/24\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.n_ports, 3);
	assert_string_equal(c.ports[0].ring, "r.a");
	assert_string_equal(c.ports[1].vdev, "net_null0");
	assert_string_equal(c.ports[2].vdev, "net_null1");
	/* numbers stay unique: the file's port.0 cannot take the CLI port's 0 */
	assert_int_equal(c.port_num[0], 0);
	assert_int_equal(c.port_num[1], 1);
	assert_int_equal(c.port_num[2], 3);
	/* nine ports in all do not fit */
	p = write_ini("[port.0]\nvdev=a\nip=1.2.3.4/24\n[port.1]\nvdev=b\nip=1.2.3.4/24\n"
		      "[port.2]\nvdev=c\nip=1.2.3.4/24\n[port.3]\nvdev=d\nip=1.2.3.4/24\n"
		      "[port.4]\nvdev=e\nip=1.2.3.4/24\n[port.5]\nvdev=f\nip=1.2.3.4/24\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), -EINVAL);
	char want[RNIC_ERRLEN];
	snprintf(want, sizeof(want), "%s: [port.5]: more than 8 ports in all", p);
	assert_string_equal(err, want);
	assert_int_equal(c.n_ports, 3);
}

static void cli_shortcuts(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN];
	char *argv[] = { "prog", "sink", "--vdev", "net_tap0,iface=a", "--ip",
			 "192.0.2.10/24", "--listen", "5001", "--ring=r.a", "--ip=10.0.0.1/8",
			 "--mtu", "9000", "--fault-drop", "2", "--fault-seed=9", "--workers=2",
			 "--busy-poll", "-x", "--gateway", "10.0.0.254", "--pcap=/tmp/c.pcapng",
			 "--fault-reorder=1.5", "--eal", "-m 256", "--json", NULL };
	int argc = 25;
	(void)state;

	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, argv, err, sizeof(err)), 0);
	assert_int_equal(c.n_ports, 2);
	assert_string_equal(c.ports[0].vdev, "net_tap0,iface=a");
	assert_int_equal(c.ports[0].ip, 0xc000020a);
	assert_int_equal(c.ports[0].mtu, 1500);
	assert_true(c.ports[0].rx_fault.drop == 0);
	assert_string_equal(c.ports[1].ring, "r.a");
	assert_int_equal(c.ports[1].ip, 0x0a000001);
	assert_int_equal(c.ports[1].prefix_len, 8);
	assert_int_equal(c.ports[1].mtu, 9000);
	assert_int_equal(c.ports[1].fault_seed, 9);
	assert_int_equal(c.ports[1].gateway, 0x0a0000fe);
	assert_string_equal(c.ports[1].pcap, "/tmp/c.pcapng");
	assert_true(c.ports[1].rx_fault.drop == 2 && c.ports[1].tx_fault.drop == 2);
	assert_true(c.ports[1].rx_fault.reorder == 1.5 && c.ports[1].tx_fault.reorder == 1.5);
	assert_int_equal(c.port_num[1], 1);
	assert_int_equal(c.workers, 2);
	assert_int_equal(c.poll_mode, RNIC_POLL_BUSY);
	assert_int_equal(c.n_eal_args, 2);
	assert_string_equal(c.eal_args[1], "256");
	/* leftovers kept in order, argv[0] first, NULL-terminated */
	assert_int_equal(argc, 6);
	assert_string_equal(argv[0], "prog");
	assert_string_equal(argv[1], "sink");
	assert_string_equal(argv[2], "--listen");
	assert_string_equal(argv[3], "5001");
	assert_string_equal(argv[4], "-x");
	assert_string_equal(argv[5], "--json");
	assert_null(argv[6]);

	/* --ip first, device second: one port; "--" ends our options */
	char *a2[] = { "p", "--ip", "1.2.3.4/24", "--vdev", "net_null0", "--",
		       "--vdev", "y", NULL };
	argc = 8;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, a2, err, sizeof(err)), 0);
	assert_int_equal(c.n_ports, 1);
	assert_string_equal(c.ports[0].vdev, "net_null0");
	assert_int_equal(argc, 4);
	assert_string_equal(a2[1], "--");
	assert_string_equal(a2[2], "--vdev");
	assert_string_equal(a2[3], "y");

	/* nothing of ours: argv untouched */
	char *a3[] = { "p", "a", "--b", "c", NULL };
	argc = 4;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, a3, err, sizeof(err)), 0);
	assert_int_equal(argc, 4);
	assert_string_equal(a3[2], "--b");
	assert_int_equal(c.n_ports, 0);
}

static void cli_config_file(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN], want[RNIC_ERRLEN];
	(void)state;

	const char *p = write_ini("[port.0]\nvdev=net_null0\nip=1.2.3.4/24\n");
	char opt[160];
	snprintf(opt, sizeof(opt), "--config=%s", p);
	char *argv[] = { "p", opt, "--mtu", "2000", "--vdev", "net_null1", "--ip",
			 "1.2.5.6/24", NULL };
	int argc = 8;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, argv, err, sizeof(err)), 0);
	assert_int_equal(argc, 1);
	assert_int_equal(c.n_ports, 2);
	assert_int_equal(c.ports[0].mtu, 2000); /* the last port so far: the file's */
	assert_string_equal(c.ports[1].vdev, "net_null1");

	/* the file's error line comes back unchanged */
	p = write_ini("[port.0]\ncolour=red\n");
	char *a2[] = { "p", "--config", (char *)p, NULL };
	argc = 3;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, a2, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: [port.0] colour: unknown key", p);
	assert_string_equal(err, want);
	char *a3[] = { "p", "--config", "/nonexistent.ini", NULL };
	argc = 3;
	assert_int_equal(rnic_config_parse_args(&c, &argc, a3, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/nonexistent.ini: cannot open: No such file or directory");
}

static void cli_errors(void **state)
{
	static const struct { const char *a, *b, *c, *d; const char *msg; } bad[] = {
		{ "--ip", "1.2.3", NULL, NULL, "--ip: '1.2.3' is not an IPv4 or IPv6 address/prefix" },
		{ "--vdev", "x", "--ip=1.2.3.4/40", NULL,
		  "--ip: '1.2.3.4/40' is not an IPv4 or IPv6 address/prefix" },
		{ "--workers", "99", NULL, NULL, "--workers: '99' is not 1..16" },
		{ "--workers=0", NULL, NULL, NULL, "--workers: '0' is not 1..16" },
		{ "--vdev", "net_null0", NULL, NULL,
		  "--vdev: 'net_null0' has no address (pair it with --ip A.B.C.D/LEN or X:X::X/LEN)" },
		{ "--ip", "1.2.3.4/24", NULL, NULL,
		  "--ip: 1.2.3.4/24 has no device (pair it with --vdev, --ring or --pci)" },
		{ "--ring", "a.a", "--ring", "b.a",
		  "--ring: 'a.a' has no address (pair it with --ip A.B.C.D/LEN or X:X::X/LEN)" },
		{ "--vdev", "x", "--ip", "1.2.3.4/24",  NULL },
		{ "--mtu", "1500", NULL, NULL,
		  "--mtu: applies to a port: give --vdev, --ring or --pci first" },
		{ "--vdev", "x", "--fault-drop", "200",
		  "--fault-drop: '200' is not a percentage 0..100" },
		{ "--vdev", "x", "--mtu", "big", "--mtu: 'big' is not 68..9000" },
		{ "--vdev", "x", "--gateway", "1.2.3.4/8", "--gateway: '1.2.3.4/8' is not an IPv4 address" },
		{ "--busy-poll=yes", NULL, NULL, NULL, "--busy-poll: takes no value" },
		{ "--vdev", NULL, NULL, NULL, "--vdev: needs a value" },
		{ "--vdev=", NULL, NULL, NULL, "--vdev: '' is empty" },
	};
	char err[RNIC_ERRLEN];
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "p", (char *)bad[i].a, (char *)bad[i].b, (char *)bad[i].c,
				 (char *)bad[i].d, NULL };
		int argc = 1;
		struct rnic_config c;
		while (argc < 5 && argv[argc] != NULL)
			argc++;
		rnic_config_init(&c);
		err[0] = '\0';
		int rc = rnic_config_parse_args(&c, &argc, argv, err, sizeof(err));
		if (bad[i].msg == NULL) {
			/* the control: a complete pair passes */
			assert_int_equal(rc, 0);
			continue;
		}
		if (rc != -EINVAL || strcmp(err, bad[i].msg) != 0)
			fail_msg("case %zu: rc %d\n got '%s'\nwant '%s'", i, rc, err, bad[i].msg);
	}
}

static void cidr_table(void **state)
{
	static const struct { const char *s; int rc; uint32_t ip; uint8_t len; } t[] = {
		{ "192.0.2.10/24", 0, 0xc000020a, 24 }, { "10.0.0.1", 0, 0x0a000001, 24 },
		{ "0.0.0.0/0", 0, 0, 0 }, { "255.255.255.255/32", 0, 0xffffffff, 32 },
		{ "1.2.3.4/8", 0, 0x01020304, 8 }, { "0.0.0.0", 0, 0, 24 },
		{ "1.2.3.4/33", -EINVAL, 0, 0 }, { "1.2.3", -EINVAL, 0, 0 },
		{ "1.2.3.4.5", -EINVAL, 0, 0 }, { "256.1.1.1", -EINVAL, 0, 0 },
		{ "1.2.3.1234", -EINVAL, 0, 0 }, { "1.2.3.4/", -EINVAL, 0, 0 },
		{ "1.2.3.4/x", -EINVAL, 0, 0 }, { "a.b.c.d", -EINVAL, 0, 0 },
		{ "", -EINVAL, 0, 0 }, { " 1.2.3.4", -EINVAL, 0, 0 },
		{ "1.2.3.4 ", -EINVAL, 0, 0 }, { "1.2.3.4/24x", -EINVAL, 0, 0 },
		{ "-1.2.3.4", -EINVAL, 0, 0 }, { "+1.2.3.4", -EINVAL, 0, 0 },
		{ "1..2.3", -EINVAL, 0, 0 }, { "1.2.3.4/8/8", -EINVAL, 0, 0 },
		{ "01.2.3.4", -EINVAL, 0, 0 }, { "1.2.3.4/024", -EINVAL, 0, 0 },
		{ "1.2.3.4/-1", -EINVAL, 0, 0 }, { "99999999999.1.1.1", -EINVAL, 0, 0 },
		{ "1.2.3.4/99999999999999999999", -EINVAL, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t ip = 0x5a5a5a5a;
		uint8_t len = 0x5a;
		int rc = rnic_parse_cidr(t[i].s, &ip, &len);
		if (rc != t[i].rc)
			fail_msg("'%s': rc %d, want %d", t[i].s, rc, t[i].rc);
		if (rc == 0) {
			assert_int_equal(ip, t[i].ip);
			assert_int_equal(len, t[i].len);
		} else {
			/* nothing written on failure */
			assert_int_equal(ip, 0x5a5a5a5a);
			assert_int_equal(len, 0x5a);
		}
	}
	assert_int_equal(rnic_parse_cidr(NULL, NULL, NULL), -EINVAL);
}

/* [roce] and the ce fault: defaults (ECN and DCQCN off, the paper's
 * timers), every key, the CLI switches. */
static void roce_cc_keys(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN] = "";
	(void)state;
	rnic_config_init(&c);
	assert_false(c.roce_cc.ecn);
	assert_false(c.roce_cc.dcqcn);
	assert_int_equal(c.roce_cc.cnp_interval_us, 50);
	assert_int_equal(c.roce_cc.alpha_us, 55);
	assert_int_equal(c.roce_cc.rate_us, 300);
	assert_int_equal(c.roce_cc.byte_reset, 10u << 20);
	assert_int_equal(c.roce_cc.f, 5);
	assert_int_equal(c.roce_cc.g_shift, 8);
	assert_int_equal(c.roce_cc.max_rate_mbps, 100000);
	const char *p = write_ini(
		"[roce]\necn = on\ndcqcn = on\ncnp_interval_us = 0\n"
		"dcqcn_max_rate_mbps = 2000\ndcqcn_min_rate_mbps = 20\n"
		"dcqcn_ai_rate_mbps = 5\ndcqcn_hai_rate_mbps = 50\n"
		"dcqcn_alpha_us = 60\ndcqcn_rate_us = 100\ndcqcn_byte_reset = 65536\n"
		"dcqcn_f = 3\ndcqcn_g_shift = 4\n"
		"[port.0]\nvdev=net_null0\nip=1.2.3.4/24\ntx_ce = 12.5\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), 0);
	assert_true(c.roce_cc.ecn);
	assert_true(c.roce_cc.dcqcn);
	assert_int_equal(c.roce_cc.cnp_interval_us, 0);
	assert_int_equal(c.roce_cc.max_rate_mbps, 2000);
	assert_int_equal(c.roce_cc.min_rate_mbps, 20);
	assert_int_equal(c.roce_cc.ai_rate_mbps, 5);
	assert_int_equal(c.roce_cc.hai_rate_mbps, 50);
	assert_int_equal(c.roce_cc.alpha_us, 60);
	assert_int_equal(c.roce_cc.rate_us, 100);
	assert_int_equal(c.roce_cc.byte_reset, 65536);
	assert_int_equal(c.roce_cc.f, 3);
	assert_int_equal(c.roce_cc.g_shift, 4);
	assert_true(c.ports[0].tx_fault.ce == 12.5);
	assert_true(c.ports[0].rx_fault.ce == 0);
	/* the CLI: --ecn, --dcqcn, --fault-ce (both directions) */
	char *argv[] = { "prog", "--ring", "r.a", "--ip", "10.0.0.1/8", "--fault-ce=3",
			 "--ecn", "--dcqcn", "rest", NULL };
	int argc = 9;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, argv, err, sizeof(err)), 0);
	assert_int_equal(argc, 2);
	assert_string_equal(argv[1], "rest");
	assert_true(c.roce_cc.ecn && c.roce_cc.dcqcn);
	assert_true(c.ports[0].rx_fault.ce == 3 && c.ports[0].tx_fault.ce == 3);
	char *bad[] = { "prog", "--ecn=on", NULL };
	argc = 2;
	assert_int_equal(rnic_config_parse_args(&c, &argc, bad, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--ecn: takes no value");
}

/* struct rnic_addr: both families' text forms, prefixes, brackets, errors. */
static void addr_parse_print(void **state)
{
	static const struct { const char *in; int rc; unsigned fam; uint8_t plen;
			      const char *out; } cases[] = {
		{ "10.0.0.1", 0, RNIC_AF_INET, 24, "10.0.0.1" },
		{ "10.0.0.1/30", 0, RNIC_AF_INET, 30, "10.0.0.1" },
		{ "2001:db8::10", 0, RNIC_AF_INET6, 64, "2001:db8::10" },
		{ "2001:DB8:0:0:0:0:0:10/127", 0, RNIC_AF_INET6, 127, "2001:db8::10" },
		{ "[2001:db8::2]", 0, RNIC_AF_INET6, 64, "2001:db8::2" },
		{ "::ffff:10.1.2.3", 0, RNIC_AF_INET6, 64, "::ffff:10.1.2.3" },
		{ "fe80::1/10", 0, RNIC_AF_INET6, 10, "fe80::1" },
		{ "2001:db8::10/129", -EINVAL, 0, 0, NULL },
		{ "10.0.0.1/33", -EINVAL, 0, 0, NULL },
		{ "2001:db8:::10", -EINVAL, 0, 0, NULL },
		{ "2001:db8::g", -EINVAL, 0, 0, NULL },
		{ "[10.0.0.1]", -EINVAL, 0, 0, NULL },
		{ "[2001:db8::2", -EINVAL, 0, 0, NULL },
		{ "2001:db8::2/", -EINVAL, 0, 0, NULL },
		{ "2001:db8::2/6x", -EINVAL, 0, 0, NULL },
		{ "", -EINVAL, 0, 0, NULL },
		{ "1:2:3:4:5:6:7:8:9", -EINVAL, 0, 0, NULL },
	};
	char buf[RNIC_ADDRSTRLEN];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rnic_addr a;
		uint8_t plen = 0;
		int rc = rnic_addr_parse(cases[i].in, &a, &plen);
		if (rc != cases[i].rc)
			fail_msg("'%s': rc %d, want %d", cases[i].in, rc, cases[i].rc);
		if (rc != 0)
			continue;
		assert_int_equal(a.family, cases[i].fam);
		assert_int_equal(plen, cases[i].plen);
		assert_string_equal(rnic_addr_str(&a, buf, sizeof(buf)), cases[i].out);
		struct rnic_addr b;
		assert_int_equal(rnic_addr_parse(buf, &b, NULL), 0);
		assert_true(rnic_addr_eq(&a, &b));
	}
	/* without a prefix argument a prefix is refused */
	struct rnic_addr a;
	assert_int_equal(rnic_addr_parse("2001:db8::1/64", &a, NULL), -EINVAL);
	struct rnic_addr none = { 0 };
	assert_string_equal(rnic_addr_str(&none, buf, sizeof(buf)), "-");
	struct rnic_addr v4 = rnic_addr_v4(0x0a000001), v4b = rnic_addr_v4(0x0a000002);
	assert_false(rnic_addr_eq(&v4, &v4b));
	assert_string_equal(rnic_addr_str(&v4, buf, sizeof(buf)), "10.0.0.1");
}

/* Linux's link-local address for a MAC: fe80::MAC with the U/L bit flipped
 * and ff:fe inserted (checked against `ip -6 addr` on a veth with this MAC). */
static void addr_link_local(void **state)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	static const uint8_t mac2[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
	uint8_t ll[16];
	char buf[RNIC_ADDRSTRLEN];
	(void)state;

	rnic_addr6_link_local(mac, ll);
	struct rnic_addr a = rnic_addr_v6(ll);
	assert_string_equal(rnic_addr_str(&a, buf, sizeof(buf)), "fe80::5054:ff:fe12:3456");
	rnic_addr6_link_local(mac2, ll);
	a = rnic_addr_v6(ll);
	assert_string_equal(rnic_addr_str(&a, buf, sizeof(buf)), "fe80::ff:fe00:1");
}

/* A port takes an IPv4 and several IPv6 addresses: from the file's ip key
 * (a list) and from repeated --ip options; bad ones get a clear line. */
static void ipv6_ports(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN];
	char buf[RNIC_ADDRSTRLEN];
	(void)state;

	rnic_config_init(&c);
	const char *p = write_ini("[port.0]\nvdev=net_null0\n"
				  "ip = 10.0.0.1/24, 2001:db8::10/64 fd00::1/48\n"
				  "[port.1]\nvdev=net_null1\nip=2001:db8:1::1/64\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.ports[0].ip, 0x0a000001);
	assert_int_equal(c.ports[0].n_ip6, 2);
	struct rnic_addr a = rnic_addr_v6(c.ports[0].ip6[1].addr);
	assert_string_equal(rnic_addr_str(&a, buf, sizeof(buf)), "fd00::1");
	assert_int_equal(c.ports[0].ip6[1].prefix_len, 48);
	assert_int_equal(c.ports[1].ip, 0);   /* IPv6 only */
	assert_int_equal(c.ports[1].n_ip6, 1);

	rnic_config_init(&c);
	char *argv[] = { "p", "--vdev", "x", "--ip", "2001:db8::10/64", "--ip=10.0.0.1/24",
			 "--ip", "2001:db8::11/120", "--ring", "r.a", "--ip", "2001:db8::12",
			 "--ip", "2001:db8::99/64", "--vdev", "z", NULL };
	int argc = 16;
	assert_int_equal(rnic_config_parse_args(&c, &argc, argv, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--vdev: 'z' has no address (pair it with --ip A.B.C.D/LEN or "
			    "X:X::X/LEN)");
	assert_int_equal(c.n_ports, 3);
	assert_int_equal(c.ports[0].ip, 0x0a000001);
	assert_int_equal(c.ports[0].n_ip6, 2);
	assert_int_equal(c.ports[0].ip6[1].prefix_len, 120);
	assert_int_equal(c.ports[1].ip, 0);
	assert_int_equal(c.ports[1].n_ip6, 2);
	assert_int_equal(c.ports[1].ip6[0].prefix_len, 64);

	static const struct { const char *ip; const char *msg; } bad[] = {
		{ "ff02::1", "--ip: 'ff02::1' is a multicast address" },
		{ "::/64", "--ip: '::/64' is the unspecified or loopback address" },
		{ "::1", "--ip: '::1' is the unspecified or loopback address" },
		{ "::ffff:1.2.3.4", "--ip: '::ffff:1.2.3.4' is IPv4-mapped (give the IPv4 "
				    "address itself)" },
		{ "fe80::1/64", "--ip: 'fe80::1/64' is link-local (each port derives its own "
				"from its MAC)" },
		{ "2001:db8::1/0", "--ip: '2001:db8::1/0' has prefix length 0" },
		{ "2001:db8::1/200", "--ip: '2001:db8::1/200' is not an IPv4 or IPv6 "
				     "address/prefix" },
		{ "[2001:db8::1]", "--ip: '[2001:db8::1]' is not an IPv4 or IPv6 "
				   "address/prefix" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *av[] = { "p", "--vdev", "x", "--ip", (char *)bad[i].ip, NULL };
		int ac = 5;
		rnic_config_init(&c);
		assert_int_equal(rnic_config_parse_args(&c, &ac, av, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].msg);
	}
	/* a fifth IPv6 address, a repeated one, a second IPv4 one in a list */
	rnic_config_init(&c);
	p = write_ini("[port.0]\nvdev=n\nip=1::1,1::2,1::3,1::4,1::5\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "[port.0] ip: '1::1,1::2,1::3,1::4,1::5' is one IPv6 "
			       "address too many (at most 4)"));
	rnic_config_init(&c);
	p = write_ini("[port.0]\nvdev=n\nip=1::1 1::1\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is given twice"));
	rnic_config_init(&c);
	p = write_ini("[port.0]\nvdev=n\nip=1.2.3.4/24,1.2.3.5/24\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is a second IPv4 address (a port takes one)"));
	rnic_config_init(&c);
	p = write_ini("[port.0]\nvdev=n\nip=1::1,bogus\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not an IPv4 or IPv6 address/prefix ('bogus')"));
	/* an IPv4 gateway needs an IPv4 subnet */
	rnic_config_init(&c);
	p = write_ini("[port.0]\nvdev=n\nip=1::1\ngateway=1.2.3.1\n");
	assert_int_equal(rnic_config_load(&c, p, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "gateway: not inside the port's subnet"));
}

static void usage_text(void **state)
{
	const char *u = rnic_config_usage();
	(void)state;
	static const char *const opts[] = { "--config", "--vdev", "--ring", "--pci", "--ip",
		"--gateway", "--mtu", "--workers", "--busy-poll", "--fault-drop", "--fault-dup",
		"--fault-reorder", "--fault-corrupt", "--fault-seed", "--pcap", "--eal",
		"--fault-ce", "--ecn", "--dcqcn" };
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strstr(u, opts[i]) == NULL)
			fail_msg("usage does not mention %s", opts[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(full_file),
		cmocka_unit_test(error_messages),
		cmocka_unit_test(syntax_one_line),
		cmocka_unit_test(load_after_cli_ports),
		cmocka_unit_test(cli_shortcuts),
		cmocka_unit_test(cli_config_file),
		cmocka_unit_test(cli_errors),
		cmocka_unit_test(cidr_table),
		cmocka_unit_test(usage_text),
		cmocka_unit_test(roce_cc_keys),
		cmocka_unit_test(addr_parse_print),
		cmocka_unit_test(addr_link_local),
		cmocka_unit_test(ipv6_ports),
	};
	return cmocka_run_group_tests(tests, tmp_ini_setup, tmp_ini_teardown);
}
