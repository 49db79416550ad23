/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the configuration parsers (lib/config): the INI file
 * loader over rte_cfgfile and the common command-line options.
 *
 * Input: mode byte, error-buffer length byte, then the body. Mode bit 0
 * clear: the body is written to a private temporary file and loaded
 * (bit 1 lets [target.*] sections through the extra_section hook); set:
 * the body is split at NUL bytes into argv for rnic_config_parse_args()
 * (--config is renamed so no other file is ever opened).
 *
 * Properties: the documented return values only; an error always leaves a
 * NUL-terminated, non-empty message in an error buffer of exactly the
 * given size, naming the file; success leaves every bound respected and
 * every string terminated; loading the same file twice gives the same
 * configuration; parse_args keeps argv NULL-terminated and only ever
 * drops or keeps the caller's pointers.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "rnic/rnic.h"
#include "fuzz_util.h"

#define CFG_MAX_ARGS 48

static char cfg_path[64];

static void
cfg_cleanup(void)
{
	if (cfg_path[0] != '\0')
		unlink(cfg_path);
}

static bool
cfg_extra(const char *name)
{
	return strncmp(name, "target.", 7) == 0;
}

/* Bounds every accepted configuration must respect. */
static void
cfg_check(const struct rnic_config *c)
{
	unsigned i;

	FUZZ_CHECK(c->n_ports <= RNIC_MAX_PORTS);
	FUZZ_CHECK(c->n_eal_args <= RNIC_MAX_EAL_ARGS);
	FUZZ_CHECK(c->workers >= 1 && c->workers <= RNIC_MAX_WORKERS);
	FUZZ_CHECK(c->poll_mode == RNIC_POLL_BUSY ||
		   c->poll_mode == RNIC_POLL_ADAPTIVE);
	FUZZ_CHECK(memchr(c->path, 0, sizeof(c->path)) != NULL);
	for (i = 0; i < c->n_eal_args; i++)
		FUZZ_CHECK(memchr(c->eal_args[i], 0,
				  sizeof(c->eal_args[i])) != NULL);
	for (i = 0; i < c->n_ports; i++) {
		const struct rnic_port_cfg *p = &c->ports[i];

		FUZZ_CHECK(memchr(p->vdev, 0, sizeof(p->vdev)) != NULL);
		FUZZ_CHECK(memchr(p->pci, 0, sizeof(p->pci)) != NULL);
		FUZZ_CHECK(memchr(p->ring, 0, sizeof(p->ring)) != NULL);
		FUZZ_CHECK(memchr(p->pcap, 0, sizeof(p->pcap)) != NULL);
		FUZZ_CHECK(p->vdev[0] || p->pci[0] || p->ring[0]);
		FUZZ_CHECK(p->mtu >= 68 && p->mtu <= 9000);
		FUZZ_CHECK(p->prefix_len <= 32);
	}
}

static void
cfg_check_err(const char *err, size_t errlen)
{
	FUZZ_CHECK(memchr(err, 0, errlen) != NULL);
	FUZZ_CHECK(errlen == 1 || err[0] != '\0');
}

static void
cfg_ini(const uint8_t *p, size_t len, bool extra, size_t errlen)
{
	struct rnic_config *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char *err = malloc(errlen);
	int fd, ra, rb;

	FUZZ_CHECK(a != NULL && b != NULL && err != NULL);
	if (cfg_path[0] == '\0') {
		snprintf(cfg_path, sizeof(cfg_path), "/tmp/rnic-fuzz-%d.ini",
			 (int)getpid());
		atexit(cfg_cleanup);
	}
	fd = open(cfg_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(len == 0 || write(fd, p, len) == (ssize_t)len);
	close(fd);

	rnic_config_init(a);
	rnic_config_init(b);
	memset(err, 0x5a, errlen);
	ra = rnic_config_load(a, cfg_path, extra ? cfg_extra : NULL, err,
			      errlen);
	FUZZ_CHECK(ra == 0 || ra == -EINVAL);
	if (ra == 0) {
		cfg_check(a);
	} else {
		cfg_check_err(err, errlen);
		if (errlen > strlen(cfg_path))
			FUZZ_CHECK(strncmp(err, cfg_path, strlen(cfg_path)) == 0);
	}
	rb = rnic_config_load(b, cfg_path, extra ? cfg_extra : NULL, err,
			      errlen);
	FUZZ_CHECK(ra == rb);
	if (ra == 0)
		FUZZ_CHECK(memcmp(a, b, sizeof(*a)) == 0);
	free(err);
	free(a);
	free(b);
}

static void
cfg_args(const uint8_t *p, size_t len, size_t errlen)
{
	struct rnic_config *c = calloc(1, sizeof(*c));
	char *buf = malloc(len + 1), *err = malloc(errlen);
	char *argv[CFG_MAX_ARGS + 1], *orig[CFG_MAX_ARGS + 1];
	static char prog[] = "rnic";
	int argc = 1, before, rc, i, j;
	size_t off = 0;

	FUZZ_CHECK(c != NULL && buf != NULL && err != NULL);
	memcpy(buf, p, len);
	buf[len] = '\0';
	argv[0] = prog;
	while (off < len && argc < CFG_MAX_ARGS) {
		char *a = buf + off;

		/* Never let the fuzzer open files by name. */
		if (strncmp(a, "--config", 8) == 0)
			a[2] = 'x';
		argv[argc++] = a;
		off += strlen(a) + 1;
	}
	argv[argc] = NULL;
	memcpy(orig, argv, sizeof(argv));
	before = argc;
	rnic_config_init(c);
	rc = rnic_config_parse_args(c, &argc, argv, err, errlen);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc == 0) {
		FUZZ_CHECK(argc >= 1 && argc <= before && argv[argc] == NULL);
		FUZZ_CHECK(argv[0] == prog);
		/* What is left is a subsequence of what was given. */
		for (i = 1, j = 1; i < argc; i++) {
			while (j < before && orig[j] != argv[i])
				j++;
			FUZZ_CHECK(j < before);
			j++;
		}
		cfg_check(c);
	} else {
		cfg_check_err(err, errlen);
	}
	free(err);
	free(buf);
	free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in;
	uint8_t mode;
	size_t errlen;

	fuzz_in_init(&in, data, size);
	mode = fuzz_u8(&in);
	errlen = 1 + fuzz_u8(&in);
	if (mode & 1)
		cfg_args(data + in.off, fuzz_in_left(&in), errlen);
	else
		cfg_ini(data + in.off, fuzz_in_left(&in), mode & 2, errlen);
	return 0;
}
