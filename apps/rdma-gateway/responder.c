/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway's [responder.KIND] sections, parsed and checked strictly:
 * one table row per kind says its port, transports and keys.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "responder.h"

#define RESP_ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* What a kind takes. */
struct resp_kind {
	const char *name;
	uint16_t port;                   /* listen default: its tool's default */
	bool iwarp, roce;                /* transports it serves, all by default */
	bool has_size, has_iters;        /* keys besides listen and transport */
	bool has_idle;
	uint32_t size, size_min, size_max;
	uint32_t iters;
	uint32_t idle_s;
};

static const struct resp_kind kinds[GW_RESP_KINDS] = {
	/* rnic-perf --server: the client's run names test, size and QPs */
	[GW_RESP_PERF] = { .name = "perf", .port = 18520, .iwarp = true, .roce = true,
			   .has_idle = true, .idle_s = 30 },
	/* rping -s: a QP of the request's transport */
	[GW_RESP_PING] = { .name = "ping", .port = 7174, .iwarp = true, .roce = true,
			   .has_size = true,
			   .size = 64u << 10, .size_min = 32, .size_max = 64u << 20 },
	/* ibv_rc_pingpong: its protocol is RoCE's */
	[GW_RESP_PINGPONG] = { .name = "pingpong", .port = 18515, .roce = true,
			       .has_size = true,
			       .has_iters = true, .size = 4096, .size_min = 1,
			       .size_max = 64u << 20, .iters = 1000 },
};

bool gw_responder_section(const char *name)
{
	return strncmp(name, "responder.", 10) == 0;
}

const char *gw_responder_name(enum gw_resp_kind kind)
{
	return kind < GW_RESP_KINDS ? kinds[kind].name : "?";
}

static const char *transports(const struct resp_kind *k)
{
	return k->iwarp && k->roce ? "a list of iwarp and roce" : k->iwarp ? "iwarp" : "roce";
}

/* One key. @return 0, -ENOENT (not a key of this kind), -EINVAL (reason
 * in @p why). */
static int resp_key(const struct resp_kind *k, struct gw_responder *r, const char *key,
		    const char *v, char *why, size_t wlen)
{
	if (!strcmp(key, "listen"))
		return gw_parse_port(v, &r->listen, why, wlen);
	if (!strcmp(key, "transport")) {
		bool iw, ro;
		if (gw_parse_transports(v, &iw, &ro) == 0 && (k->iwarp || !iw) && (k->roce || !ro)) {
			r->iwarp = iw;
			r->roce = ro;
			return 0;
		}
		snprintf(why, wlen, "'%s' is not %s", v, transports(k));
		return -EINVAL;
	}
	if (k->has_size && !strcmp(key, "size")) {
		uint64_t n;
		if (gw_parse_size(v, &n) == 0 && n >= k->size_min && n <= k->size_max) {
			r->size = (uint32_t)n;
			return 0;
		}
		snprintf(why, wlen, "'%s' is not a size %u..%u (K, M allowed)", v, k->size_min,
			 k->size_max);
		return -EINVAL;
	}
	if ((k->has_iters && !strcmp(key, "iters")) || (k->has_idle && !strcmp(key, "idle_s"))) {
		bool iters = key[0] == 'i' && key[1] == 't';
		unsigned long max = iters ? 1ul << 30 : 3600, n;
		char *end;
		n = strtoul(v, &end, 10);
		if (*v >= '0' && *v <= '9' && *end == '\0' && n >= 1 && n <= max) {
			*(iters ? &r->iters : &r->idle_s) = (uint32_t)n;
			return 0;
		}
		snprintf(why, wlen, "'%s' is not a number 1..%lu", v, max);
		return -EINVAL;
	}
	return -ENOENT;
}

/* What gw_section_keys() fills: one responder of one kind. */
struct resp_sec {
	const struct resp_kind *k;
	struct gw_responder *r;
};

static int resp_key_fn(void *obj, const char *key, const char *v, char *why, size_t wlen)
{
	struct resp_sec *rs = obj;
	return resp_key(rs->k, rs->r, key, v, why, wlen);
}

/* One [responder.KIND] section into its kind's slot of @p arg. */
static int load_one(void *arg, const char *path, const char *sec,
		    const struct rte_cfgfile_entry *e, int n, char *err, size_t errlen)
{
	struct gw_responder *all = arg;
	int kind = 0;

	while (kind < GW_RESP_KINDS && strcmp(sec + 10, kinds[kind].name) != 0)
		kind++;
	if (kind == GW_RESP_KINDS)
		return RESP_ERR("%s: [%s]: unknown responder (perf, ping or pingpong)", path, sec);
	const struct resp_kind *k = &kinds[kind];
	struct resp_sec rs = { .k = k, .r = &all[kind] };
	*rs.r = (struct gw_responder){ .on = true, .listen = k->port, .iwarp = k->iwarp,
				       .roce = k->roce, .size = k->size, .iters = k->iters,
				       .idle_s = k->idle_s };
	return gw_section_keys(path, sec, e, n, resp_key_fn, &rs, err, errlen);
}

int gw_responders_load(const char *path, struct gw_responder r[GW_RESP_KINDS],
		       char *err, size_t errlen)
{
	return gw_sections_load(path, gw_responder_section, load_one, r, err, errlen);
}

int gw_responders_check(const struct gw_responder r[GW_RESP_KINDS],
			const struct gw_target *t, unsigned nt, char *err, size_t errlen)
{
	for (int a = 0; a < GW_RESP_KINDS; a++) {
		if (!r[a].on)
			continue;
		for (int b = 0; b < a; b++)
			if (r[b].on && r[b].listen == r[a].listen)
				return RESP_ERR("[responder.%s] listen: port %u is also "
						"[responder.%s]'s", kinds[a].name, r[a].listen,
						kinds[b].name);
		for (unsigned i = 0; i < nt; i++)
			if (t[i].listen == r[a].listen)
				return RESP_ERR("[responder.%s] listen: port %u is also "
						"[target.%s]'s", kinds[a].name, r[a].listen,
						t[i].name);
	}
	return 0;
}
