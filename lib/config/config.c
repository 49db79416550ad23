/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration: the INI file (read with rte_cfgfile, which needs no EAL)
 * and the options every rnic program shares.
 *
 * Every error is one line naming where it is: "FILE: [section] key: what is
 * wrong" for the file, "--opt: what is wrong" for the command line. The
 * file is checked line by line before rte_cfgfile sees it, with the same
 * rules rte_cfgfile applies, so rte_cfgfile never fails (or logs) on its own
 * and never silently skips a line the user meant.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "rnic/rnic.h"
#include "rnic/rnic_cm.h"

/* rte_cfgfile reads a line into CFG_NAME_LEN + CFG_VALUE_LEN + 4 bytes and
 * fails when the newline does not fit: the longest line it accepts */
#define CFG_MAX_LINE (CFG_NAME_LEN + CFG_VALUE_LEN + 2)

#define MTU_MIN 68
#define MTU_MAX 9000
#define MBUFS_MIN 1024
#define MBUFS_MAX (16u << 20)
#define DESC_MIN 64
#define DESC_MAX 16384
#define DELAY_US_MAX 10000000
#define STATUS_MS_MAX 3600000

/* Write one error line into @p err; @return @p rc for "return cfg_err(...)". */
static int __rte_format_printf(4, 5)
cfg_err(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err != NULL && len > 0)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

void rnic_port_cfg_init(struct rnic_port_cfg *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->mtu = 1500;
	pc->mbufs = 8191;
	pc->rx_desc = 1024;
	pc->tx_desc = 1024;
	pc->fault_seed = 1;
}

void rnic_config_init(struct rnic_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->workers = 1;
	cfg->poll_mode = RNIC_POLL_ADAPTIVE;
	cfg->status_interval_ms = 1000;
	cfg->listen_backlog = RNIC_CM_BACKLOG_MAX;
	/* DCQCN: the paper's timers, gain and stages (Zhu et al. 2015); rates
	 * in Mb/s, the ceiling a 100 Gb/s link's */
	cfg->roce_cc = (struct rnic_roce_cc_cfg){
		.ecn = false,
		.cnp_interval_us = 50,
		.dcqcn = false,
		.max_rate_mbps = 100000,
		.min_rate_mbps = 10,
		.ai_rate_mbps = 40,
		.hai_rate_mbps = 400,
		.alpha_us = 55,
		.rate_us = 300,
		.byte_reset = 10u << 20,
		.f = 5,
		.g_shift = 8,
	};
}

/* Decimal digits only, no sign, no spaces, no leading zeros beyond one
 * (so "010" is not read as octal or silently as ten); at most @p max. */
static int parse_dec(const char **p, unsigned long max, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s) || (s[0] == '0' && isdigit((unsigned char)s[1])))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > max)
			return -EINVAL;
	}
	*p = s;
	*out = v;
	return 0;
}

int rnic_parse_cidr(const char *s, uint32_t *ip, uint8_t *prefix_len)
{
	unsigned long part, len = 24;
	uint32_t addr = 0;

	if (s == NULL || ip == NULL || prefix_len == NULL)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		if (parse_dec(&s, 255, &part) != 0)
			return -EINVAL;
		addr = addr << 8 | (uint32_t)part;
		if (i < 3 && *s++ != '.')
			return -EINVAL;
	}
	if (*s == '/') {
		s++;
		if (parse_dec(&s, 32, &len) != 0)
			return -EINVAL;
	}
	if (*s != '\0')
		return -EINVAL;
	*ip = addr;
	*prefix_len = (uint8_t)len;
	return 0;
}

/* A whole string as an unsigned decimal in [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	unsigned long v;

	if (s == NULL || parse_dec(&s, max, &v) != 0 || *s != '\0' || v < min)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A whole string as a 64-bit seed (decimal). */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (!isdigit((unsigned char)*s) || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* A percentage 0..100 with optional decimals ("2", "0.5", "12.25"). */
static int parse_pct(const char *s, double *out)
{
	char *end;

	if (s == NULL || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	double v = strtod(s, &end);
	if (*end != '\0' || !(v >= 0 && v <= 100))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Copy a string option into a fixed field. */
/* "on" or "off" into @p dst. @return 0, or -EINVAL with the reason. */
static int set_onoff(bool *dst, const char *val, char *why, size_t wlen)
{
	if (strcmp(val, "on") && strcmp(val, "off"))
		return cfg_err(why, wlen, -EINVAL, "is not on or off");
	*dst = !strcmp(val, "on");
	return 0;
}

static int set_str(char *dst, size_t cap, const char *val, char *why, size_t wlen)
{
	if (val[0] == '\0')
		return cfg_err(why, wlen, -EINVAL, "is empty");
	if (strlen(val) >= cap)
		return cfg_err(why, wlen, -EINVAL, "is longer than %zu characters", cap - 1);
	snprintf(dst, cap, "%s", val);
	return 0;
}

/* The port's IPv4 address: a unicast host address inside its prefix. */
static int set_ip4(struct rnic_port_cfg *pc, uint32_t ip, uint8_t len, char *why,
		   size_t wlen)
{
	if (ip == 0 || ip >= 0xe0000000u || len == 0)
		return cfg_err(why, wlen, -EINVAL, "is not a unicast host address/prefix");
	uint32_t host = len == 32 ? 0 : ~(UINT32_C(0xffffffff) << (32 - len));
	if (len <= 30 && ((ip & host) == 0 || (ip & host) == host))
		return cfg_err(why, wlen, -EINVAL,
			       "is the network or broadcast address of its subnet");
	if (pc->ip != 0 && pc->ip != ip)
		return cfg_err(why, wlen, -EINVAL,
			       "is a second IPv4 address (a port takes one)");
	pc->ip = ip;
	pc->prefix_len = len;
	return 0;
}

/*
 * One of the port's IPv6 addresses: unicast, neither unspecified, loopback,
 * IPv4-mapped nor link-local (the link-local address comes from the MAC).
 */
static int set_ip6(struct rnic_port_cfg *pc, const uint8_t a[16], uint8_t len,
		   char *why, size_t wlen)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	static const uint8_t zero[15];

	if (a[0] == 0xff)
		return cfg_err(why, wlen, -EINVAL, "is a multicast address");
	if (!memcmp(a, zero, 15) && a[15] <= 1)
		return cfg_err(why, wlen, -EINVAL, "is the unspecified or loopback address");
	if (!memcmp(a, mapped, 12))
		return cfg_err(why, wlen, -EINVAL,
			       "is IPv4-mapped (give the IPv4 address itself)");
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return cfg_err(why, wlen, -EINVAL,
			       "is link-local (each port derives its own from its MAC)");
	if (len == 0)
		return cfg_err(why, wlen, -EINVAL, "has prefix length 0");
	for (unsigned i = 0; i < pc->n_ip6; i++)
		if (!memcmp(pc->ip6[i].addr, a, 16))
			return cfg_err(why, wlen, -EINVAL, "is given twice");
	if (pc->n_ip6 == RNIC_PORT_IP6_MAX)
		return cfg_err(why, wlen, -EINVAL, "is one IPv6 address too many (at most %d)",
			       RNIC_PORT_IP6_MAX);
	memcpy(pc->ip6[pc->n_ip6].addr, a, 16);
	pc->ip6[pc->n_ip6].prefix_len = len;
	pc->n_ip6++;
	return 0;
}

/*
 * The port's addresses: one or more of "A.B.C.D/LEN" and "X:X::X/LEN",
 * separated by commas or blanks (a file's ip key; --ip gives one each).
 */
static int set_ip(struct rnic_port_cfg *pc, const char *val, char *why, size_t wlen)
{
	char item[64];
	const char *s = val;
	unsigned n = 0;

	while (*s) {
		size_t k = strcspn(s, ", \t");
		if (k == 0) {
			s++;
			continue;
		}
		if (k >= sizeof(item))
			return cfg_err(why, wlen, -EINVAL, "is not an IPv4 or IPv6 address/prefix");
		memcpy(item, s, k);
		item[k] = '\0';
		s += k;
		struct rnic_addr a;
		uint8_t len;
		if (strchr(item, '[') || rnic_addr_parse(item, &a, &len) != 0)
			return cfg_err(why, wlen, -EINVAL,
				       "is not an IPv4 or IPv6 address/prefix%s%s%s",
				       strcmp(item, val) ? " ('" : "", strcmp(item, val) ? item : "",
				       strcmp(item, val) ? "')" : "");
		int r = a.family == RNIC_AF_INET ? set_ip4(pc, a.v4, len, why, wlen)
						 : set_ip6(pc, a.v6, len, why, wlen);
		if (r != 0)
			return r;
		n++;
	}
	if (n == 0)
		return cfg_err(why, wlen, -EINVAL, "is empty");
	return 0;
}

/* Fault keys: "drop" means both directions, "rx_drop"/"tx_drop" one. */
static int set_fault(struct rnic_port_cfg *pc, const char *key, const char *val,
		     char *why, size_t wlen)
{
	static const char *const names[] = { "drop", "dup", "reorder", "corrupt", "delay",
					     "ce" };
	struct rnic_fault_cfg *f[2] = { &pc->rx_fault, &pc->tx_fault };
	bool rx = true, tx = true;

	if (!strncmp(key, "rx_", 3)) {
		tx = false;
		key += 3;
	} else if (!strncmp(key, "tx_", 3)) {
		rx = false;
		key += 3;
	}
	if (!strcmp(key, "delay_us")) {
		unsigned long us;
		if (parse_uint(val, 0, DELAY_US_MAX, &us) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not 0..%u (microseconds)",
				       DELAY_US_MAX);
		for (int d = 0; d < 2; d++)
			if (d == 0 ? rx : tx)
				f[d]->delay_us = (uint32_t)us;
		return 0;
	}
	for (size_t i = 0; i < RTE_DIM(names); i++) {
		if (strcmp(key, names[i]) != 0)
			continue;
		double v;
		if (parse_pct(val, &v) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not a percentage 0..100");
		for (int d = 0; d < 2; d++) {
			if (!(d == 0 ? rx : tx))
				continue;
			double *p[] = { &f[d]->drop, &f[d]->dup, &f[d]->reorder,
					&f[d]->corrupt, &f[d]->delay, &f[d]->ce };
			*p[i] = v;
		}
		return 0;
	}
	return -ENOENT;
}

/*
 * Apply one port key (file key or CLI option without its dashes).
 * @return 0; -ENOENT for an unknown key; -EINVAL with the reason ("is not
 * 68..9000") in @p why.
 */
static int port_key(struct rnic_port_cfg *pc, const char *key, const char *val,
		    char *why, size_t wlen)
{
	unsigned long u;
	uint8_t len;

	if (!strcmp(key, "vdev"))
		return set_str(pc->vdev, sizeof(pc->vdev), val, why, wlen);
	if (!strcmp(key, "pci"))
		return set_str(pc->pci, sizeof(pc->pci), val, why, wlen);
	if (!strcmp(key, "ring"))
		return set_str(pc->ring, sizeof(pc->ring), val, why, wlen);
	if (!strcmp(key, "pcap"))
		return set_str(pc->pcap, sizeof(pc->pcap), val, why, wlen);
	if (!strcmp(key, "ip"))
		return set_ip(pc, val, why, wlen);
	if (!strcmp(key, "gateway")) {
		if (strchr(val, '/') || rnic_parse_cidr(val, &pc->gateway, &len) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not an IPv4 address");
		return 0;
	}
	if (!strcmp(key, "mtu")) {
		if (parse_uint(val, MTU_MIN, MTU_MAX, &u) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not %d..%d", MTU_MIN, MTU_MAX);
		pc->mtu = (uint16_t)u;
		return 0;
	}
	if (!strcmp(key, "mbufs")) {
		if (parse_uint(val, MBUFS_MIN, MBUFS_MAX, &u) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not %u..%u", MBUFS_MIN, MBUFS_MAX);
		pc->mbufs = (uint32_t)u;
		return 0;
	}
	if (!strcmp(key, "rx_desc") || !strcmp(key, "tx_desc")) {
		if (parse_uint(val, DESC_MIN, DESC_MAX, &u) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not %d..%d", DESC_MIN, DESC_MAX);
		*(key[0] == 'r' ? &pc->rx_desc : &pc->tx_desc) = (uint16_t)u;
		return 0;
	}
	if (!strcmp(key, "sw_csum"))
		return set_onoff(&pc->sw_csum, val, why, wlen);
	if (!strcmp(key, "fault_seed")) {
		if (parse_u64(val, &pc->fault_seed) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not an unsigned 64-bit number");
		return 0;
	}
	return set_fault(pc, key, val, why, wlen);
}

static bool port_has_dev(const struct rnic_port_cfg *pc)
{
	return pc->vdev[0] || pc->pci[0] || pc->ring[0];
}

/* The gateway must be reachable on the port's own subnet. */
static bool gateway_on_link(const struct rnic_port_cfg *pc)
{
	uint32_t mask = pc->prefix_len ? UINT32_C(0xffffffff) << (32 - pc->prefix_len) : 0;
	return pc->gateway == 0 || (pc->ip != 0 && (pc->gateway & mask) == (pc->ip & mask));
}

/* Split the [eal] args value (or --eal's) on whitespace; one pair of
 * surrounding double quotes is allowed, as in args = "-m 512". */
static int load_eal(struct rnic_config *cfg, const char *val)
{
	char buf[CFG_VALUE_LEN * 4];
	size_t n = strlen(val);

	if (n >= sizeof(buf))
		return -EINVAL;
	if (n >= 2 && val[0] == '"' && val[n - 1] == '"') {
		val++;
		n -= 2;
	}
	memcpy(buf, val, n);
	buf[n] = '\0';
	for (char *save, *tok = strtok_r(buf, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (cfg->n_eal_args == RNIC_MAX_EAL_ARGS ||
		    strlen(tok) >= sizeof(cfg->eal_args[0]))
			return -EINVAL;
		snprintf(cfg->eal_args[cfg->n_eal_args++], sizeof(cfg->eal_args[0]),
			 "%s", tok);
	}
	return 0;
}

/* Trim leading and trailing white space in place. */
static char *trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/*
 * Check one line the way rte_cfgfile will read it (';' starts a comment
 * unless escaped; lines starting with '#' are comments too, rnic skips the
 * entries rte_cfgfile makes of them). Tracks the current section in @p sec.
 * @return 0 or -EINVAL with the error line.
 */
static int check_line(const char *path, int lineno, char *l, size_t raw_len,
		      char *sec, char *err, size_t errlen)
{
	char *c = l;

	if (raw_len > CFG_MAX_LINE)
		return cfg_err(err, errlen, -EINVAL, "%s: line %d: longer than %d characters",
			       path, lineno, CFG_MAX_LINE);
	while ((c = strchr(c, ';')) != NULL) {
		if (c == l || c[-1] != '\\') {
			*c = '\0';
			break;
		}
		c++;
	}
	l = trim(l);
	if (*l == '\0' || *l == '#')
		return 0;
	if (*l == '[') {
		char *end = strchr(l, ']');
		if (end == NULL || *trim(end + 1) != '\0')
			return cfg_err(err, errlen, -EINVAL,
				       "%s: line %d: '%s' is not a [section] header",
				       path, lineno, l);
		*end = '\0';
		char *name = trim(l + 1);
		if (*name == '\0' || strlen(name) >= CFG_NAME_LEN)
			return cfg_err(err, errlen, -EINVAL,
				       "%s: line %d: section name is empty or longer than %d",
				       path, lineno, CFG_NAME_LEN - 1);
		snprintf(sec, CFG_NAME_LEN, "%s", name);
		return 0;
	}
	char *eq = strchr(l, '=');
	if (eq == NULL || eq == l)
		return cfg_err(err, errlen, -EINVAL,
			       "%s: line %d: '%s' is neither [section] nor key = value",
			       path, lineno, l);
	if (sec[0] == '\0')
		return cfg_err(err, errlen, -EINVAL,
			       "%s: line %d: '%s' comes before any [section]", path, lineno, l);
	*eq = '\0';
	char *key = trim(l), *val = trim(eq + 1);
	if (strlen(key) >= CFG_NAME_LEN)
		return cfg_err(err, errlen, -EINVAL, "%s: [%s] %.20s...: key name too long",
			       path, sec, key);
	if (*val == '\0')
		return cfg_err(err, errlen, -EINVAL, "%s: [%s] %s: has no value", path, sec, key);
	if (strlen(val) >= CFG_VALUE_LEN)
		return cfg_err(err, errlen, -EINVAL,
			       "%s: [%s] %s: value longer than %d characters",
			       path, sec, key, CFG_VALUE_LEN - 1);
	return 0;
}

/* Check the whole file's syntax; also proves it is readable. */
static int check_syntax(const char *path, char *err, size_t errlen)
{
	char sec[CFG_NAME_LEN] = "";
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int lineno = 0, rc = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		int e = errno;
		return cfg_err(err, errlen, e == ENOENT ? -ENOENT : -EINVAL,
			       "%s: cannot open: %s", path, strerror(e));
	}
	while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
		if (memchr(line, '\0', (size_t)n) != NULL) {
			rc = cfg_err(err, errlen, -EINVAL, "%s: line %d: not text",
				     path, lineno + 1);
			break;
		}
		/* the newline counts towards rte_cfgfile's buffer too */
		rc = check_line(path, ++lineno, line, (size_t)n - (line[n - 1] == '\n'),
				sec, err, errlen);
	}
	if (rc == 0 && ferror(f))
		rc = cfg_err(err, errlen, -EINVAL, "%s: cannot read: %s", path, strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

/* Entries of one section, skipping '#' comment lines. Duplicated keys are
 * errors: which of the two was meant is a guess. */
static int section_entries(struct rte_cfgfile *cf, int idx, const char *path,
			   const char *sec, struct rte_cfgfile_entry **out,
			   int *count, char *err, size_t errlen)
{
	char name[CFG_NAME_LEN];
	int n = rte_cfgfile_section_num_entries_by_index(cf, name, idx);
	struct rte_cfgfile_entry *e = calloc(n > 0 ? (size_t)n : 1, sizeof(*e));
	int kept = 0;

	if (e == NULL)
		return cfg_err(err, errlen, -ENOMEM, "%s: out of memory", path);
	n = rte_cfgfile_section_entries_by_index(cf, idx, name, e, n);
	for (int i = 0; i < n; i++) {
		if (e[i].name[0] == '#')
			continue;
		for (int j = 0; j < kept; j++)
			if (!strcmp(e[j].name, e[i].name)) {
				int rc = cfg_err(err, errlen, -EINVAL, "%s: [%s] %s: given twice",
						 path, sec, e[i].name);
				free(e);   /* after the message: it names e[i] */
				return rc;
			}
		e[kept++] = e[i];
	}
	*out = e;
	*count = kept;
	return 0;
}

/* One [port.N] section into @p pc, complete and consistent. */
static int load_port(struct rnic_port_cfg *pc, const char *path, const char *sec,
		     const struct rte_cfgfile_entry *e, int n, char *err, size_t errlen)
{
	char why[128];

	rnic_port_cfg_init(pc);
	for (int i = 0; i < n; i++) {
		const char *k = e[i].name;
		bool dev = !strcmp(k, "vdev") || !strcmp(k, "pci") || !strcmp(k, "ring");
		if (dev && port_has_dev(pc))
			return cfg_err(err, errlen, -EINVAL,
				       "%s: [%s] %s: a port takes only one of vdev, pci or ring",
				       path, sec, k);
		int r = port_key(pc, k, e[i].value, why, sizeof(why));
		if (r == -ENOENT)
			return cfg_err(err, errlen, -EINVAL, "%s: [%s] %s: unknown key",
				       path, sec, k);
		if (r != 0)
			return cfg_err(err, errlen, -EINVAL, "%s: [%s] %s: '%s' %s",
				       path, sec, k, e[i].value, why);
	}
	if (!port_has_dev(pc))
		return cfg_err(err, errlen, -EINVAL,
			       "%s: [%s]: needs one of vdev, pci or ring", path, sec);
	if (pc->ip == 0 && pc->n_ip6 == 0)
		return cfg_err(err, errlen, -EINVAL,
			       "%s: [%s] ip: missing (required, A.B.C.D/len or X:X::X/len)",
			       path, sec);
	if (!gateway_on_link(pc))
		return cfg_err(err, errlen, -EINVAL,
			       "%s: [%s] gateway: not inside the port's subnet /%u",
			       path, sec, pc->prefix_len);
	return 0;
}

/* The [roce] keys: on/off switches and bounded integers. */
static const struct {
	const char *key;
	size_t off;             /* in struct rnic_roce_cc_cfg */
	bool flag;              /* on/off, else an integer in [min, max] */
	unsigned long min, max;
} roce_keys[] = {
#define RK_FLAG(k, f) { k, offsetof(struct rnic_roce_cc_cfg, f), true, 0, 1 }
#define RK_NUM(k, f, lo, hi) { k, offsetof(struct rnic_roce_cc_cfg, f), false, lo, hi }
	RK_FLAG("ecn", ecn),
	RK_NUM("cnp_interval_us", cnp_interval_us, 0, 1000000),
	RK_FLAG("dcqcn", dcqcn),
	RK_NUM("dcqcn_max_rate_mbps", max_rate_mbps, 1, 1000000),
	RK_NUM("dcqcn_min_rate_mbps", min_rate_mbps, 1, 1000000),
	RK_NUM("dcqcn_ai_rate_mbps", ai_rate_mbps, 1, 1000000),
	RK_NUM("dcqcn_hai_rate_mbps", hai_rate_mbps, 1, 1000000),
	RK_NUM("dcqcn_alpha_us", alpha_us, 1, 1000000),
	RK_NUM("dcqcn_rate_us", rate_us, 1, 1000000),
	RK_NUM("dcqcn_byte_reset", byte_reset, 1, 1u << 30),
	RK_NUM("dcqcn_f", f, 1, 100),
	RK_NUM("dcqcn_g_shift", g_shift, 1, 20),
#undef RK_FLAG
#undef RK_NUM
};

/* One [roce] key into @p rc. @return 0, -ENOENT (unknown key), -EINVAL
 * with the reason in @p why. */
static int roce_key(struct rnic_roce_cc_cfg *rc, const char *k, const char *v,
		    char *why, size_t wlen)
{
	for (size_t i = 0; i < RTE_DIM(roce_keys); i++) {
		if (strcmp(k, roce_keys[i].key) != 0)
			continue;
		void *field = (char *)rc + roce_keys[i].off;
		if (roce_keys[i].flag)
			return set_onoff((bool *)field, v, why, wlen);
		unsigned long u;
		if (parse_uint(v, roce_keys[i].min, roce_keys[i].max, &u) != 0)
			return cfg_err(why, wlen, -EINVAL, "is not %lu..%lu", roce_keys[i].min,
				       roce_keys[i].max);
		*(uint32_t *)field = (uint32_t)u;
		return 0;
	}
	return -ENOENT;
}

/* [roce] as a whole: the DCQCN floor may not exceed its ceiling. */
static int load_roce(struct rnic_config *cfg, const char *path,
		     const struct rte_cfgfile_entry *e, int n, char *err, size_t errlen)
{
	char why[64];
	for (int i = 0; i < n; i++) {
		int r = roce_key(&cfg->roce_cc, e[i].name, e[i].value, why, sizeof(why));
		if (r == -ENOENT)
			return cfg_err(err, errlen, -EINVAL, "%s: [roce] %s: unknown key",
				       path, e[i].name);
		if (r != 0)
			return cfg_err(err, errlen, -EINVAL, "%s: [roce] %s: '%s' %s", path,
				       e[i].name, e[i].value, why);
	}
	if (cfg->roce_cc.min_rate_mbps > cfg->roce_cc.max_rate_mbps)
		return cfg_err(err, errlen, -EINVAL,
			       "%s: [roce] dcqcn_min_rate_mbps: %u is above dcqcn_max_rate_mbps %u",
			       path, cfg->roce_cc.min_rate_mbps, cfg->roce_cc.max_rate_mbps);
	return 0;
}

/* [eal], [workers] and [gateway]. @return 0, -ENOENT if @p sec is none of
 * them, -EINVAL with the error line. */
static int load_global(struct rnic_config *cfg, const char *path, const char *sec,
		       const struct rte_cfgfile_entry *e, int n, char *err, size_t errlen)
{
	unsigned long u;

	if (strcmp(sec, "eal") && strcmp(sec, "workers") && strcmp(sec, "gateway"))
		return -ENOENT;
	for (int i = 0; i < n; i++) {
		const char *k = e[i].name, *v = e[i].value;
		if (!strcmp(sec, "eal") && !strcmp(k, "args")) {
			if (load_eal(cfg, v) != 0)
				return cfg_err(err, errlen, -EINVAL,
					       "%s: [eal] args: more than %d arguments, or one longer than %zu",
					       path, RNIC_MAX_EAL_ARGS, sizeof(cfg->eal_args[0]) - 1);
		} else if (!strcmp(sec, "workers") && !strcmp(k, "count")) {
			if (parse_uint(v, 1, RNIC_MAX_WORKERS, &u) != 0)
				return cfg_err(err, errlen, -EINVAL,
					       "%s: [workers] count: '%s' is not 1..%d",
					       path, v, RNIC_MAX_WORKERS);
			cfg->workers = (unsigned)u;
		} else if (!strcmp(sec, "workers") && !strcmp(k, "poll")) {
			if (strcmp(v, "busy") && strcmp(v, "adaptive"))
				return cfg_err(err, errlen, -EINVAL,
					       "%s: [workers] poll: '%s' is not busy or adaptive",
					       path, v);
			cfg->poll_mode = !strcmp(v, "busy") ? RNIC_POLL_BUSY : RNIC_POLL_ADAPTIVE;
		} else if (!strcmp(sec, "gateway") && !strcmp(k, "status_ms")) {
			if (parse_uint(v, 0, STATUS_MS_MAX, &u) != 0)
				return cfg_err(err, errlen, -EINVAL,
					       "%s: [gateway] status_ms: '%s' is not 0..%d",
					       path, v, STATUS_MS_MAX);
			cfg->status_interval_ms = (unsigned)u;
		} else if (!strcmp(sec, "gateway") && !strcmp(k, "backlog")) {
			if (parse_uint(v, 1, RNIC_CM_BACKLOG_MAX, &u) != 0)
				return cfg_err(err, errlen, -EINVAL,
					       "%s: [gateway] backlog: '%s' is not 1..%d",
					       path, v, RNIC_CM_BACKLOG_MAX);
			cfg->listen_backlog = (unsigned)u;
		} else {
			return cfg_err(err, errlen, -EINVAL, "%s: [%s] %s: unknown key",
				       path, sec, k);
		}
	}
	return 0;
}

/* Walk the sections of a parsed file. File ports go into @p ports by N. */
static int load_sections(struct rnic_config *cfg, struct rte_cfgfile *cf,
			 const char *path, bool (*extra_section)(const char *),
			 struct rnic_port_cfg *ports, bool *have, char *err, size_t errlen)
{
	int nsec = rte_cfgfile_num_sections(cf, NULL, 0);

	/* section 0 is the GLOBAL one rte_cfgfile made: only comments go there */
	for (int s = 1; s < nsec; s++) {
		char sec[CFG_NAME_LEN], other[CFG_NAME_LEN];
		struct rte_cfgfile_entry *e = NULL;
		unsigned long num = 0;
		int n = 0, rc;

		rte_cfgfile_section_num_entries_by_index(cf, sec, s);
		for (int t = 1; t < s; t++) {
			rte_cfgfile_section_num_entries_by_index(cf, other, t);
			if (!strcmp(sec, other))
				return cfg_err(err, errlen, -EINVAL, "%s: [%s]: section given twice",
					       path, sec);
		}
		bool port = !strncmp(sec, "port.", 5);
		if (!port && extra_section != NULL && extra_section(sec))
			continue; /* the application parses it */
		if (port && parse_uint(sec + 5, 0, RNIC_MAX_PORTS - 1, &num) != 0)
			return cfg_err(err, errlen, -EINVAL, "%s: [%s]: port number must be 0..%d",
				       path, sec, RNIC_MAX_PORTS - 1);
		rc = section_entries(cf, s, path, sec, &e, &n, err, errlen);
		if (rc != 0)
			return rc;
		if (port) {
			rc = load_port(&ports[num], path, sec, e, n, err, errlen);
			have[num] = true;
		} else {
			rc = !strcmp(sec, "roce") ? load_roce(cfg, path, e, n, err, errlen)
						  : load_global(cfg, path, sec, e, n, err, errlen);
			if (rc == -ENOENT)
				rc = cfg_err(err, errlen, -EINVAL, "%s: [%s]: unknown section",
					     path, sec);
		}
		free(e);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int rnic_config_load(struct rnic_config *cfg, const char *path,
		     bool (*extra_section)(const char *name),
		     char *err, size_t errlen)
{
	struct rnic_port_cfg ports[RNIC_MAX_PORTS];
	bool have[RNIC_MAX_PORTS] = { false };
	struct rnic_config tmp = *cfg;
	unsigned next_num = 0;
	int rc;

	if (path == NULL)
		return cfg_err(err, errlen, -EINVAL, "(null): cannot open: no file name");
	rc = check_syntax(path, err, errlen);
	if (rc != 0)
		return rc;
	/* with a GLOBAL section first, '#' comment lines holding '=' before the
	 * first [section] become entries there instead of failing the load */
	struct rte_cfgfile *cf = rte_cfgfile_load(path, CFG_FLAG_GLOBAL_SECTION);
	if (cf == NULL)
		return cfg_err(err, errlen, -EINVAL, "%s: rte_cfgfile cannot parse it", path);
	/* work on a copy so a bad file leaves @p cfg as it was */
	rc = load_sections(&tmp, cf, path, extra_section, ports, have, err, errlen);
	rte_cfgfile_close(cf);
	if (rc != 0)
		return rc;
	/* ports go after any the caller already has, in the order of N; each
	 * keeps N as its number unless an earlier port took it */
	for (unsigned k = 0; k < tmp.n_ports; k++)
		next_num = RTE_MAX(next_num, tmp.port_num[k] + 1u);
	for (unsigned num = 0; num < RNIC_MAX_PORTS; num++) {
		if (!have[num])
			continue;
		if (tmp.n_ports == RNIC_MAX_PORTS)
			return cfg_err(err, errlen, -EINVAL, "%s: [port.%u]: more than %d ports in all",
				       path, num, RNIC_MAX_PORTS);
		unsigned id = RTE_MAX(num, next_num);
		tmp.ports[tmp.n_ports] = ports[num];
		tmp.port_num[tmp.n_ports++] = (uint8_t)id;
		next_num = id + 1;
	}
	snprintf(tmp.path, sizeof(tmp.path), "%s", path);
	*cfg = tmp;
	return 0;
}

const char *rnic_config_usage(void)
{
	return
	"Port options (every rnic program):\n"
	"  --config FILE         INI configuration (see docs/user-guide.md)\n"
	"  --vdev SPEC           DPDK vdev for a new port, e.g. net_tap0,iface=rnictap0\n"
	"  --ring NAME           in-process net_ring end for a new port (NAME.a/NAME.b)\n"
	"  --pci ADDR            PCI device for a new port\n"
	"  --ip A.B.C.D/LEN      IPv4 address of the port (one per --vdev/--ring/--pci)\n"
	"  --ip X:X::X/LEN       an IPv6 address of the last port (repeatable)\n"
	"  --gateway A.B.C.D     default gateway of the last port\n"
	"  --mtu N               IP MTU of the last port (68..9000)\n"
	"  --workers N           poll-mode workers (1..16)\n"
	"  --busy-poll           never sleep when idle (benchmarks)\n"
	"  --ecn, --dcqcn        RoCE: send ECT(0); pace QPs by DCQCN ([roce] keys)\n"
	"  --fault-drop P, --fault-dup P, --fault-reorder P, --fault-corrupt P\n"
	"                        inject faults on the last port, percent, both ways\n"
	"  --fault-ce P          mark P percent of ECN-capable IPv4 frames CE, both ways\n"
	"  --fault-seed S        seed of the fault injector of the last port\n"
	"  --pcap FILE           pcapng capture of the last port\n"
	"  --eal \"ARGS\"          extra DPDK EAL arguments\n"
	"Each option takes its value as \"--opt VALUE\" or \"--opt=VALUE\".\n";
}

/* The options that take a value, and the port key each one sets (NULL when
 * it is not a port key). */
static const struct {
	const char *opt;
	const char *key;
} cli_opts[] = {
	{ "--config", NULL }, { "--workers", NULL }, { "--eal", NULL },
	{ "--vdev", "vdev" }, { "--ring", "ring" }, { "--pci", "pci" },
	{ "--ip", "ip" }, { "--gateway", "gateway" }, { "--mtu", "mtu" },
	{ "--fault-drop", "drop" }, { "--fault-dup", "dup" },
	{ "--fault-reorder", "reorder" }, { "--fault-corrupt", "corrupt" },
	{ "--fault-seed", "fault_seed" }, { "--pcap", "pcap" },
	{ "--fault-ce", "ce" },
};

/* A fresh port at the end of @p cfg, for --vdev/--ring/--pci or a lone --ip. */
static struct rnic_port_cfg *cli_new_port(struct rnic_config *cfg, const char *opt,
					  char *err, size_t errlen)
{
	unsigned num = 0;

	if (cfg->n_ports == RNIC_MAX_PORTS) {
		cfg_err(err, errlen, -EINVAL, "%s: at most %d ports", opt, RNIC_MAX_PORTS);
		return NULL;
	}
	for (unsigned k = 0; k < cfg->n_ports; k++)
		num = RTE_MAX(num, cfg->port_num[k] + 1u);
	struct rnic_port_cfg *pc = &cfg->ports[cfg->n_ports];
	rnic_port_cfg_init(pc);
	cfg->port_num[cfg->n_ports++] = (uint8_t)num;
	return pc;
}

/*
 * One option of the shared set with its value (NULL if none was given).
 * @return 1 when it consumed the value, 0 when it took none, -ENOENT when the
 * option is not one of ours, -EINVAL with the error line.
 */
static int cli_opt(struct rnic_config *cfg, const char *opt, const char *val,
		   bool inline_val, char *err, size_t errlen)
{
	struct rnic_port_cfg *last = cfg->n_ports ? &cfg->ports[cfg->n_ports - 1] : NULL;
	const char *key = NULL;
	unsigned long u;
	char why[128];
	size_t i;

	if (!strcmp(opt, "--busy-poll")) {
		if (inline_val)
			return cfg_err(err, errlen, -EINVAL, "--busy-poll: takes no value");
		cfg->poll_mode = RNIC_POLL_BUSY;
		return 0;
	}
	if (!strcmp(opt, "--ecn") || !strcmp(opt, "--dcqcn")) {
		if (inline_val)
			return cfg_err(err, errlen, -EINVAL, "%s: takes no value", opt);
		*(opt[2] == 'e' ? &cfg->roce_cc.ecn : &cfg->roce_cc.dcqcn) = true;
		return 0;
	}
	for (i = 0; i < RTE_DIM(cli_opts) && strcmp(opt, cli_opts[i].opt); i++)
		;
	if (i == RTE_DIM(cli_opts))
		return -ENOENT;
	key = cli_opts[i].key;
	if (val == NULL)
		return cfg_err(err, errlen, -EINVAL, "%s: needs a value", opt);
	if (!strcmp(opt, "--config")) {
		int r = rnic_config_load(cfg, val, NULL, err, errlen);
		return r != 0 ? -EINVAL : 1;
	}
	if (!strcmp(opt, "--workers")) {
		if (parse_uint(val, 1, RNIC_MAX_WORKERS, &u) != 0)
			return cfg_err(err, errlen, -EINVAL, "--workers: '%s' is not 1..%d",
				       val, RNIC_MAX_WORKERS);
		cfg->workers = (unsigned)u;
		return 1;
	}
	if (!strcmp(opt, "--eal")) {
		if (load_eal(cfg, val) != 0)
			return cfg_err(err, errlen, -EINVAL, "--eal: more than %d arguments, "
				       "or one longer than %zu", RNIC_MAX_EAL_ARGS,
				       sizeof(cfg->eal_args[0]) - 1);
		return 1;
	}
	/* a device opens a port unless a lone --ip is waiting for one; an
	 * IPv4 --ip completes the last port unless that one already has an
	 * IPv4 address; an IPv6 one adds to the last port (a port takes several) */
	bool dev = !strcmp(key, "vdev") || !strcmp(key, "ring") || !strcmp(key, "pci");
	bool ip6 = !strcmp(key, "ip") && strchr(val, ':') != NULL;
	if ((dev && (last == NULL || port_has_dev(last))) ||
	    (!strcmp(key, "ip") && (last == NULL || (!ip6 && last->ip != 0)))) {
		last = cli_new_port(cfg, opt, err, errlen);
		if (last == NULL)
			return -EINVAL;
	}
	if (last == NULL)
		return cfg_err(err, errlen, -EINVAL,
			       "%s: applies to a port: give --vdev, --ring or --pci first", opt);
	int r = port_key(last, key, val, why, sizeof(why));
	if (r != 0)
		return cfg_err(err, errlen, -EINVAL, "%s: '%s' %s", opt, val, why);
	return 1;
}

/* Every port the command line made must have a device and an address. */
static int cli_check_ports(const struct rnic_config *cfg, char *err, size_t errlen)
{
	for (unsigned k = 0; k < cfg->n_ports; k++) {
		const struct rnic_port_cfg *pc = &cfg->ports[k];
		const char *dev = pc->vdev[0] ? "--vdev" : pc->ring[0] ? "--ring" : "--pci";
		const char *name = pc->vdev[0] ? pc->vdev : pc->ring[0] ? pc->ring : pc->pci;
		if (!port_has_dev(pc)) {
			char a[RNIC_ADDRSTRLEN];
			struct rnic_addr ad = pc->ip ? rnic_addr_v4(pc->ip)
						     : rnic_addr_v6(pc->ip6[0].addr);
			return cfg_err(err, errlen, -EINVAL,
				       "--ip: %s/%u has no device (pair it with "
				       "--vdev, --ring or --pci)", rnic_addr_str(&ad, a, sizeof(a)),
				       pc->ip ? pc->prefix_len : pc->ip6[0].prefix_len);
		}
		if (pc->ip == 0 && pc->n_ip6 == 0)
			return cfg_err(err, errlen, -EINVAL,
				       "%s: '%s' has no address (pair it with --ip A.B.C.D/LEN or X:X::X/LEN)",
				       dev, name);
		if (!gateway_on_link(pc))
			return cfg_err(err, errlen, -EINVAL,
				       "--gateway: not inside the subnet of port %s", name);
	}
	return 0;
}

int rnic_config_parse_args(struct rnic_config *cfg, int *argc, char **argv,
			   char *err, size_t errlen)
{
	int out = 1, i;

	for (i = 1; i < *argc; i++) {
		const char *a = argv[i];
		const char *eq = strchr(a, '=');
		const char *val;
		char opt[32];

		if (!strcmp(a, "--"))
			break; /* the rest belongs to the application */
		if (strncmp(a, "--", 2) != 0 ||
		    (size_t)(eq != NULL ? eq - a : (ptrdiff_t)strlen(a)) >= sizeof(opt)) {
			argv[out++] = argv[i];
			continue;
		}
		if (eq != NULL) {
			memcpy(opt, a, (size_t)(eq - a));
			opt[eq - a] = '\0';
			val = eq + 1;
		} else {
			snprintf(opt, sizeof(opt), "%s", a);
			val = i + 1 < *argc ? argv[i + 1] : NULL;
		}
		int r = cli_opt(cfg, opt, val, eq != NULL, err, errlen);
		if (r == -ENOENT) {
			argv[out++] = argv[i];
			continue;
		}
		if (r < 0)
			return r;
		if (r == 1 && eq == NULL)
			i++;
	}
	for (; i < *argc; i++)
		argv[out++] = argv[i];
	*argc = out;
	argv[out] = NULL;
	return cli_check_ports(cfg, err, errlen);
}
