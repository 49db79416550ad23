/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [target.NAME] sections of the gateway's configuration:
 *
 *   size = 64M             bytes, with an optional K, M, G or T (powers of 1024)
 *   file = /path           optional; otherwise anonymous memory
 *   access = rw | ro       default rw
 *   transport = iwarp,roce default both
 *   listen = PORT          default 4791
 *   allow = CIDR,...       default any address
 *
 * Every key is checked now; serving the targets is issue 7.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cfgfile.h>

#include "rnic/rnic.h"
#include "target.h"

#define TGT_ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* The reason part of an error line; values may be cut to fit the buffer. */
static int __attribute__((format(printf, 3, 4)))
why_set(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int gw_parse_port(const char *v, uint16_t *port, char *why, size_t wlen)
{
	char *end;
	unsigned long p = strtoul(v, &end, 10);

	if (isdigit((unsigned char)*v) && *end == '\0' && p >= 1 && p <= 65535) {
		*port = (uint16_t)p;
		return 0;
	}
	return why_set(why, wlen, "'%s' is not a port 1..65535", v);
}

bool gw_target_section(const char *name)
{
	return strncmp(name, "target.", 7) == 0;
}

/* "64M" -> 67108864; digits then at most one of K M G T. */
int gw_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	uint64_t v = 0;
	unsigned shift = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s != '\0') {
		const char *u = strchr(units, toupper((unsigned char)*s));
		if (u == NULL || s[1] != '\0')
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (v == 0 || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* "iwarp,roce": each at most once, at least one. */
int gw_parse_transports(const char *s, bool *iwarp, bool *roce)
{
	char buf[CFG_VALUE_LEN];

	snprintf(buf, sizeof(buf), "%s", s);
	*iwarp = *roce = false;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		size_t n = strlen(tok);
		while (n > 0 && isspace((unsigned char)tok[n - 1]))
			tok[--n] = '\0';
		bool *flag = !strcmp(tok, "iwarp") ? iwarp : !strcmp(tok, "roce") ? roce : NULL;
		if (flag == NULL || *flag)
			return -EINVAL;
		*flag = true;
	}
	return *iwarp || *roce ? 0 : -EINVAL;
}

/* Does @p a lie in @p net/@p len (both of one family)? */
static bool addr_in(const struct rnic_addr *a, const struct rnic_addr *net, unsigned len)
{
	if (a->family != net->family)
		return false;
	if (a->family == RNIC_AF_INET) {
		uint32_t mask = len ? UINT32_C(0xffffffff) << (32 - len) : 0;
		return (a->v4 & mask) == (net->v4 & mask);
	}
	for (unsigned i = 0; i < 16 && len > 0; i++, len = len > 8 ? len - 8 : 0) {
		uint8_t mask = len >= 8 ? 0xff : (uint8_t)(0xff00 >> len);
		if ((a->v6[i] ^ net->v6[i]) & mask)
			return false;
	}
	return true;
}

bool gw_allowed(const struct gw_target *t, const struct rnic_addr *a)
{
	if (t->n_allow == 0)
		return true;
	for (unsigned i = 0; i < t->n_allow; i++)
		if (addr_in(a, &t->allow[i].net, t->allow[i].len))
			return true;
	return false;
}

/* Host bits of @p a under /@p len: set ones are a likely typo. */
static bool host_bits(const struct rnic_addr *a, unsigned len)
{
	struct rnic_addr net = *a;
	if (a->family == RNIC_AF_INET) {
		net.v4 &= len ? UINT32_C(0xffffffff) << (32 - len) : 0;
	} else {
		for (unsigned i = 0; i < 16; i++) {
			unsigned l = len > 8 * i ? len - 8 * i : 0;
			net.v6[i] &= l >= 8 ? 0xff : (uint8_t)(0xff00 >> l);
		}
	}
	return !rnic_addr_eq(&net, a);
}

/* "10.0.0.0/8, 192.0.2.7, 2001:db8::/32": a bare address is one host (/32,
 * /128); host bits set under the prefix are refused as a likely typo.
 * Reason in @p why. */
static int parse_allow(const char *s, struct gw_target *t, char *why, size_t wlen)
{
	char buf[CFG_VALUE_LEN];

	snprintf(buf, sizeof(buf), "%s", s);
	t->n_allow = 0;
	for (char *save, *tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		struct rnic_addr ip;
		uint8_t len;
		while (isspace((unsigned char)*tok))
			tok++;
		size_t n = strlen(tok);
		while (n > 0 && isspace((unsigned char)tok[n - 1]))
			tok[--n] = '\0';
		if (strchr(tok, '[') != NULL || rnic_addr_parse(tok, &ip, &len) != 0) {
			why_set(why, wlen, "'%s' is not an IPv4 or IPv6 address/prefix", tok);
			return -EINVAL;
		}
		if (strchr(tok, '/') == NULL)
			len = ip.family == RNIC_AF_INET ? 32 : 128;
		if (host_bits(&ip, len)) {
			why_set(why, wlen, "'%s' has host bits set under /%u", tok, len);
			return -EINVAL;
		}
		if (t->n_allow == GW_MAX_ALLOW) {
			why_set(why, wlen, "more than %d networks", GW_MAX_ALLOW);
			return -EINVAL;
		}
		t->allow[t->n_allow].net = ip;
		t->allow[t->n_allow++].len = len;
	}
	if (t->n_allow == 0) {
		why_set(why, wlen, "'%s' lists no network", s);
		return -EINVAL;
	}
	return 0;
}

/* One key of one target. @return 0, -ENOENT (unknown key), -EINVAL. */
static int target_key(struct gw_target *t, const char *k, const char *v,
		      char *why, size_t wlen)
{
	if (!strcmp(k, "size")) {
		if (gw_parse_size(v, &t->size) == 0)
			return 0;
		why_set(why, wlen, "'%s' is not a size like 4096, 64K, 64M or 2G", v);
		return -EINVAL;
	}
	if (!strcmp(k, "file")) {
		if (strlen(v) < sizeof(t->file)) {
			snprintf(t->file, sizeof(t->file), "%s", v);
			return 0;
		}
		why_set(why, wlen, "is longer than %zu characters", sizeof(t->file) - 1);
		return -EINVAL;
	}
	if (!strcmp(k, "access")) {
		if (!strcmp(v, "rw") || !strcmp(v, "ro")) {
			t->read_only = v[1] == 'o';
			return 0;
		}
		why_set(why, wlen, "'%s' is not rw or ro", v);
		return -EINVAL;
	}
	if (!strcmp(k, "transport")) {
		if (gw_parse_transports(v, &t->iwarp, &t->roce) == 0)
			return 0;
		why_set(why, wlen, "'%s' is not a list of iwarp and roce", v);
		return -EINVAL;
	}
	if (!strcmp(k, "listen"))
		return gw_parse_port(v, &t->listen, why, wlen);
	if (!strcmp(k, "allow"))
		return parse_allow(v, t, why, wlen);
	return -ENOENT;
}

/* NAME of [target.NAME]: letters, digits, '-' and '_', as it goes into
 * rdma:// URLs and telemetry names. */
static bool name_ok(const char *n)
{
	if (*n == '\0' || strlen(n) >= GW_TARGET_NAME_LEN)
		return false;
	for (; *n; n++)
		if (!isalnum((unsigned char)*n) && *n != '-' && *n != '_')
			return false;
	return true;
}

int gw_section_keys(const char *path, const char *sec, const struct rte_cfgfile_entry *e,
		    int n, gw_key_fn fn, void *obj, char *err, size_t errlen)
{
	char why[160];

	for (int i = 0; i < n; i++) {
		if (e[i].name[0] == '#')
			continue; /* a '#' comment line */
		for (int j = 0; j < i; j++)
			if (!strcmp(e[i].name, e[j].name))
				return TGT_ERR("%s: [%s] %s: given twice", path, sec, e[i].name);
		int r = fn(obj, e[i].name, e[i].value, why, sizeof(why));
		if (r == -ENOENT)
			return TGT_ERR("%s: [%s] %s: unknown key", path, sec, e[i].name);
		if (r != 0)
			return TGT_ERR("%s: [%s] %s: %s", path, sec, e[i].name, why);
	}
	return 0;
}

int gw_sections_load(const char *path, bool (*match)(const char *name), gw_section_fn fn,
		     void *arg, char *err, size_t errlen)
{
	struct rte_cfgfile *cf = rte_cfgfile_load(path, CFG_FLAG_GLOBAL_SECTION);
	int rc = 0;

	if (cf == NULL)
		return TGT_ERR("%s: cannot parse", path);
	int nsec = rte_cfgfile_num_sections(cf, NULL, 0);
	for (int s = 1; s < nsec && rc == 0; s++) {
		char sec[CFG_NAME_LEN];
		int n = rte_cfgfile_section_num_entries_by_index(cf, sec, s);
		if (!match(sec))
			continue;
		struct rte_cfgfile_entry *e = calloc(n > 0 ? (size_t)n : 1, sizeof(*e));
		if (e == NULL) {
			rc = TGT_ERR("%s: out of memory", path);
			break;
		}
		n = rte_cfgfile_section_entries_by_index(cf, s, sec, e, n);
		rc = fn(arg, path, sec, e, n, err, errlen);
		free(e);
	}
	rte_cfgfile_close(cf);
	return rc;
}

/* gw_section_keys() for a target. */
static int target_key_fn(void *obj, const char *k, const char *v, char *why, size_t wlen)
{
	return target_key(obj, k, v, why, wlen);
}

/* Where gw_targets_load() puts the next target. */
struct target_list {
	struct gw_target *t;
	unsigned count, max;
};

/* One [target.NAME] section into the list. */
static int load_one(void *arg, const char *path, const char *sec,
		    const struct rte_cfgfile_entry *e, int n, char *err, size_t errlen)
{
	struct target_list *l = arg;

	if (!name_ok(sec + 7))
		return TGT_ERR("%s: [%s]: target name must be 1..%d letters, digits, '-' or '_'",
			       path, sec, GW_TARGET_NAME_LEN - 1);
	if (l->count == l->max)
		return TGT_ERR("%s: [%s]: more than %u targets", path, sec, l->max);
	struct gw_target *t = &l->t[l->count];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%.*s", GW_TARGET_NAME_LEN - 1, sec + 7);
	t->iwarp = t->roce = true;
	t->listen = GW_DEFAULT_LISTEN;
	int rc = gw_section_keys(path, sec, e, n, target_key_fn, t, err, errlen);
	if (rc != 0)
		return rc;
	if (t->size == 0)
		return TGT_ERR("%s: [%s] size: missing (required, e.g. size = 64M)", path, sec);
	l->count++;
	return 0;
}

int gw_targets_load(const char *path, struct gw_target *t, unsigned max,
		    char *err, size_t errlen)
{
	struct target_list l = { .t = t, .max = max };
	int rc = gw_sections_load(path, gw_target_section, load_one, &l, err, errlen);

	return rc != 0 ? rc : (int)l.count;
}
