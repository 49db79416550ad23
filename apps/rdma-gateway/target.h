/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma-gateway's [target.NAME] sections: named memory regions the gateway
 * serves to RDMA clients (serve.c), parsed and checked strictly.
 */
#ifndef GW_TARGET_H
#define GW_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_cfgfile.h>

#include "rnic/rnic.h"
#include "rnic_gw.h"

#define GW_MAX_TARGETS 32
#define GW_MAX_ALLOW 16
#define GW_TARGET_NAME_LEN 33
#define GW_DEFAULT_LISTEN RNIC_GW_DEFAULT_PORT /**< listen port when the key is missing */

/** One allow entry: an IPv4 or IPv6 network. */
struct gw_allow {
	struct rnic_addr net; /**< network address */
	uint8_t len;          /**< prefix length */
};


/** One [target.NAME] section. */
struct gw_target {
	char name[GW_TARGET_NAME_LEN]; /**< NAME of [target.NAME] */
	uint64_t size;                 /**< bytes, from "64M" etc. */
	char file[256];                /**< backing file, "" = anonymous memory */
	bool read_only;                /**< access = ro */
	bool iwarp, roce;              /**< transports it is offered on */
	uint16_t listen;               /**< port clients connect to */
	unsigned n_allow;              /**< 0 = any address */
	struct gw_allow allow[GW_MAX_ALLOW]; /**< admitted client networks */
};

/** Is @p a inside one of @p t's allowed networks (any address when the
 *  list is empty)? An address matches networks of its own family only. */
bool gw_allowed(const struct gw_target *t, const struct rnic_addr *a);

/** "64M" -> 67108864: digits, then at most one of K M G T (powers of
 *  1024). @return 0 or -EINVAL (also for 0 and overflow). */
int gw_parse_size(const char *s, uint64_t *out);

/** A TCP port 1..65535 into @p port. @return 0, or -EINVAL with the reason
 *  in @p why ("'70000' is not a port 1..65535"). */
int gw_parse_port(const char *v, uint16_t *port, char *why, size_t wlen);

/** "iwarp", "roce" or both, comma-separated, each at most once.
 *  @return 0 or -EINVAL. */
int gw_parse_transports(const char *s, bool *iwarp, bool *roce);

/** One key of a section into @p obj. @return 0, -ENOENT (not a key of
 *  this section), or -EINVAL with the reason in @p why. */
typedef int (*gw_key_fn)(void *obj, const char *key, const char *value, char *why,
			 size_t wlen);

/** Every entry of section @p sec through @p fn, '#' comment lines skipped;
 *  a key given twice or unknown is an error. @return 0 or -EINVAL with one
 *  line in @p err ("FILE: [SEC] KEY: reason"). */
int gw_section_keys(const char *path, const char *sec, const struct rte_cfgfile_entry *e,
		    int n, gw_key_fn fn, void *obj, char *err, size_t errlen);

/** One section's entries: @return 0 or -EINVAL with one line in @p err. */
typedef int (*gw_section_fn)(void *arg, const char *path, const char *sec,
			     const struct rte_cfgfile_entry *e, int n, char *err, size_t errlen);

/** Every section of @p path whose name @p match accepts, in file order,
 *  through @p fn, until one fails. @return 0 or its -EINVAL (line in @p err). */
int gw_sections_load(const char *path, bool (*match)(const char *name), gw_section_fn fn,
		     void *arg, char *err, size_t errlen);

/** True for a section name this module parses ("target.NAME"). */
bool gw_target_section(const char *name);

/**
 * Read every [target.NAME] section of @p path (already syntax-checked by
 * rnic_config_load()) into @p t.
 * @return the number of targets, or -EINVAL with one line in @p err
 *   ("FILE: [target.x] access: 'rx' is not rw or ro").
 */
int gw_targets_load(const char *path, struct gw_target *t, unsigned max,
		    char *err, size_t errlen);

#endif /* GW_TARGET_H */
