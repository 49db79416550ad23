/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Config parser: a full valid file, every error message exactly, the CLI
 * shortcuts, and rnic_parse_cidr. No EAL: rte_cfgfile works without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rnic/rnic.h"

static char path[64];

static const char *write_ini(const char *text)
{
	snprintf(path, sizeof(path), "/tmp/rnic-cfg-test-%d.ini", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

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
		"; comment\n[eal]\nargs = --log-level=*:info -m 512\n"
		"[port.1]\nring = x.b\nip = 10.1.0.2/16\nmtu = 9000\nrx_drop = 2.5\n"
		"dup = 1\ntx_delay_us = 100\nfault_seed = 77\ngateway = 10.1.0.1\n"
		"[port.0]\nvdev = net_tap0,iface=t0\nip = 192.0.2.10\n"
		"[workers]\ncount = 2\npoll = busy\n[gateway]\nstatus_ms = 0\n"
		"[target.scratch]\nsize = 64M\n");
	assert_int_equal(rnic_config_load(&c, p, targets, err, sizeof(err)), 0);
	assert_int_equal(c.n_eal_args, 3);
	assert_string_equal(c.eal_args[2], "512");
	assert_int_equal(c.n_ports, 2);
	/* ordered by N, whatever the file order */
	assert_string_equal(c.ports[0].vdev, "net_tap0,iface=t0");
	assert_int_equal(c.ports[0].ip, 0xc000020a);
	assert_int_equal(c.ports[0].prefix_len, 24);
	assert_int_equal(c.ports[0].mtu, 1500);
	assert_string_equal(c.ports[1].ring, "x.b");
	assert_int_equal(c.ports[1].prefix_len, 16);
	assert_int_equal(c.ports[1].mtu, 9000);
	assert_true(c.ports[1].rx_fault.drop == 2.5 && c.ports[1].tx_fault.drop == 0);
	assert_true(c.ports[1].rx_fault.dup == 1 && c.ports[1].tx_fault.dup == 1);
	assert_int_equal(c.ports[1].tx_fault.delay_us, 100);
	assert_int_equal(c.ports[1].fault_seed, 77);
	assert_int_equal(c.ports[1].gateway, 0x0a010001);
	assert_int_equal(c.workers, 2);
	assert_int_equal(c.poll_mode, RNIC_POLL_BUSY);
	assert_int_equal(c.status_interval_ms, 0);
	unlink(p);
}

static void error_messages(void **state)
{
	static const struct { const char *ini; const char *msg; } cases[] = {
		{ "[port.0]\nvdev=net_null0\nip=1.2.3.4/24\ncolour=red\n",
		  "[port.0] colour: unknown key" },
		{ "[bogus]\nx=1\n", "[bogus]: unknown section" },
		{ "[port.0]\nvdev=net_null0\nip=300.1.2.3/24\n",
		  "[port.0] ip: '300.1.2.3/24' is not a valid value (IPv4 address/prefix)" },
		{ "[port.0]\nvdev=net_null0\nip=1.2.3.4/33\n",
		  "[port.0] ip: '1.2.3.4/33' is not a valid value (IPv4 address/prefix)" },
		{ "[port.0]\nvdev=net_null0\nip=1.2.3.4/24\nmtu=9001\n",
		  "[port.0] mtu: '9001' is not a valid value" },
		{ "[port.0]\nvdev=net_null0\nip=1.2.3.4/24\ndrop=101\n",
		  "[port.0] drop: '101' is not a valid value" },
		{ "[port.0]\nvdev=net_null0\npci=0000:01:00.0\nip=1.2.3.4/24\n",
		  "[port.0]: takes only one of vdev, pci or ring" },
		{ "[port.0]\nvdev=net_null0\n", "[port.0]: needs ip = A.B.C.D/len" },
		{ "[port.0]\nip=1.2.3.4/24\n", "[port.0]: needs one of vdev, pci or ring" },
		{ "[port.9]\nvdev=net_null0\nip=1.2.3.4/24\n", "[port.9]: port number must be 0..7" },
		{ "[workers]\ncount=0\n", "[workers] count: '0' is not 1..16" },
		{ "[workers]\npoll=sometimes\n", "[workers] poll: 'sometimes' is not busy or adaptive" },
		{ "[target.x]\nsize=1\n", "[target.x]: unknown section" },
		{ "just a line\n", "not a valid INI line" },
		{ "[port.0]\nvdev net_null0\n", "not a valid INI line" },
		{ "[port.0\nvdev=x\n", "not a valid INI line" },
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
		if (strstr(cases[i].msg, "INI line"))
			assert_non_null(strstr(err, cases[i].msg));
		else
			assert_string_equal(err, want);
		assert_null(strchr(err, '\n'));   /* one line */
		unlink(p);
	}
	struct rnic_config c;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_load(&c, "/nonexistent/x.ini", NULL, err, sizeof(err)),
			 -ENOENT);
	assert_string_equal(err, "/nonexistent/x.ini: cannot open: No such file or directory");
}

static void cli_shortcuts(void **state)
{
	struct rnic_config c;
	char err[RNIC_ERRLEN];
	char *argv[] = { "prog", "sink", "--vdev", "net_tap0,iface=a", "--ip",
			 "192.0.2.10/24", "--listen", "5001", "--ring=r.a", "--ip=10.0.0.1/8",
			 "--mtu", "9000", "--fault-drop", "2", "--workers=2", "--busy-poll",
			 "-x", NULL };
	int argc = 17;
	(void)state;

	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, argv, err, sizeof(err)), 0);
	assert_int_equal(c.n_ports, 2);
	assert_string_equal(c.ports[0].vdev, "net_tap0,iface=a");
	assert_int_equal(c.ports[0].ip, 0xc000020a);
	assert_string_equal(c.ports[1].ring, "r.a");
	assert_int_equal(c.ports[1].prefix_len, 8);
	assert_int_equal(c.ports[1].mtu, 9000);
	assert_true(c.ports[1].rx_fault.drop == 2 && c.ports[1].tx_fault.drop == 2);
	assert_true(c.ports[0].rx_fault.drop == 0);
	assert_int_equal(c.workers, 2);
	assert_int_equal(c.poll_mode, RNIC_POLL_BUSY);
	/* leftovers kept in order */
	assert_int_equal(argc, 5);
	assert_string_equal(argv[1], "sink");
	assert_string_equal(argv[2], "--listen");
	assert_string_equal(argv[3], "5001");
	assert_string_equal(argv[4], "-x");
	assert_null(argv[5]);

	/* --ip first, device second: one port */
	char *a2[] = { "p", "--ip", "1.2.3.4/24", "--vdev", "net_null0", NULL };
	argc = 5;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, a2, err, sizeof(err)), 0);
	assert_int_equal(c.n_ports, 1);

	static const struct { const char *a, *b; const char *msg; } bad[] = {
		{ "--ip", "1.2.3", "--ip: '1.2.3' is not a valid value (IPv4 address/prefix)" },
		{ "--workers", "99", "--workers: '99' is not 1..16" },
		{ "--vdev", "net_null0", "port 0: needs ip = A.B.C.D/len (use --vdev/--ring/--pci with --ip)" },
		{ "--mtu", "1500", "--mtu: give --vdev, --ring or --pci first" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *a3[] = { "p", (char *)bad[i].a, (char *)bad[i].b, NULL };
		argc = 3;
		rnic_config_init(&c);
		assert_int_equal(rnic_config_parse_args(&c, &argc, a3, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, bad[i].msg);
	}
	char *a4[] = { "p", "--vdev", NULL };
	argc = 2;
	rnic_config_init(&c);
	assert_int_equal(rnic_config_parse_args(&c, &argc, a4, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--vdev: needs a value");
}

static void cidr_table(void **state)
{
	static const struct { const char *s; int rc; uint32_t ip; uint8_t len; } t[] = {
		{ "192.0.2.10/24", 0, 0xc000020a, 24 }, { "10.0.0.1", 0, 0x0a000001, 24 },
		{ "0.0.0.0/0", 0, 0, 0 }, { "255.255.255.255/32", 0, 0xffffffff, 32 },
		{ "1.2.3.4/33", -EINVAL, 0, 0 }, { "1.2.3", -EINVAL, 0, 0 },
		{ "1.2.3.4.5", -EINVAL, 0, 0 }, { "256.1.1.1", -EINVAL, 0, 0 },
		{ "1.2.3.4/", -EINVAL, 0, 0 }, { "1.2.3.4/x", -EINVAL, 0, 0 },
		{ "a.b.c.d", -EINVAL, 0, 0 }, { "", -EINVAL, 0, 0 },
		{ " 1.2.3.4", -EINVAL, 0, 0 }, { "1.2.3.4/24x", -EINVAL, 0, 0 },
		{ "-1.2.3.4", -EINVAL, 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint32_t ip = 0;
		uint8_t len = 0;
		int rc = rnic_parse_cidr(t[i].s, &ip, &len);
		if (rc != t[i].rc)
			fail_msg("'%s': rc %d, want %d", t[i].s, rc, t[i].rc);
		if (rc == 0) {
			assert_int_equal(ip, t[i].ip);
			assert_int_equal(len, t[i].len);
		}
	}
	assert_int_equal(rnic_parse_cidr(NULL, NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_file),
		cmocka_unit_test(error_messages),
		cmocka_unit_test(cli_shortcuts),
		cmocka_unit_test(cidr_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
