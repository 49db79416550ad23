/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Configuration: the INI file (read with rte_cfgfile, which needs no EAL)
 * and the options every rnic program shares. Every error is one line that
 * names the file, section and key.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "rnic/rnic.h"

static int cfg_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
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
}

int rnic_parse_cidr(const char *s, uint32_t *ip, uint8_t *prefix_len)
{
	unsigned a[4], len = 24;
	char tail[4];
	int n;

	if (s == NULL)
		return -EINVAL;
	n = sscanf(s, "%3u.%3u.%3u.%3u%3s", &a[0], &a[1], &a[2], &a[3], tail);
	if (n == 5) {
		if (sscanf(s, "%3u.%3u.%3u.%3u/%u%1s", &a[0], &a[1], &a[2], &a[3],
			   &len, tail) != 5 || len > 32)
			return -EINVAL;
		if (strchr(s, '/')[1] < '0' || strchr(s, '/')[1] > '9')
			return -EINVAL;
	} else if (n != 4) {
		return -EINVAL;
	}
	for (int i = 0; i < 4; i++)
		if (a[i] > 255)
			return -EINVAL;
	/* only digits, dots and one slash */
	for (const char *c = s; *c; c++)
		if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == '/'))
			return -EINVAL;
	*ip = (a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3];
	*prefix_len = (uint8_t)len;
	return 0;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	char *end;
	errno = 0;
	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	if (s == NULL || *s == '\0')
		return -EINVAL;
	double v = strtod(s, &end);
	if (*end != '\0' || !(v >= 0 && v <= 100))
		return -EINVAL;
	*out = v;
	return 0;
}

/* Apply one port key. @return 0, -ENOENT (unknown key), -EINVAL (value). */
static int port_key(struct rnic_port_cfg *pc, const char *key, const char *val)
{
	unsigned long u;
	uint8_t plen;
	uint32_t ip;
	struct { const char *name; double *rx, *tx; } faults[] = {
		{ "drop", &pc->rx_fault.drop, &pc->tx_fault.drop },
		{ "dup", &pc->rx_fault.dup, &pc->tx_fault.dup },
		{ "reorder", &pc->rx_fault.reorder, &pc->tx_fault.reorder },
		{ "corrupt", &pc->rx_fault.corrupt, &pc->tx_fault.corrupt },
		{ "delay", &pc->rx_fault.delay, &pc->tx_fault.delay },
	};

	if (!strcmp(key, "vdev") || !strcmp(key, "pci") || !strcmp(key, "ring")) {
		char *dst = !strcmp(key, "vdev") ? pc->vdev :
			    !strcmp(key, "pci") ? pc->pci : pc->ring;
		size_t cap = !strcmp(key, "vdev") ? sizeof(pc->vdev) :
			     !strcmp(key, "pci") ? sizeof(pc->pci) : sizeof(pc->ring);
		if (val[0] == '\0' || strlen(val) >= cap)
			return -EINVAL;
		snprintf(dst, cap, "%s", val);
		return 0;
	}
	if (!strcmp(key, "ip")) {
		if (rnic_parse_cidr(val, &ip, &plen) != 0 || ip == 0)
			return -EINVAL;
		pc->ip = ip;
		pc->prefix_len = plen;
		return 0;
	}
	if (!strcmp(key, "gateway"))
		return rnic_parse_cidr(val, &pc->gateway, &plen) == 0 &&
		       !strchr(val, '/') ? 0 : -EINVAL;
	if (!strcmp(key, "mtu")) {
		if (parse_uint(val, 68, 9000, &u))
			return -EINVAL;
		pc->mtu = (uint16_t)u;
		return 0;
	}
	if (!strcmp(key, "mbufs")) {
		if (parse_uint(val, 1024, 16u << 20, &u))
			return -EINVAL;
		pc->mbufs = (uint32_t)u;
		return 0;
	}
	if (!strcmp(key, "rx_desc") || !strcmp(key, "tx_desc")) {
		if (parse_uint(val, 64, 16384, &u))
			return -EINVAL;
		*(key[0] == 'r' ? &pc->rx_desc : &pc->tx_desc) = (uint16_t)u;
		return 0;
	}
	if (!strcmp(key, "fault_seed")) {
		if (parse_uint(val, 0, ULONG_MAX, &u))
			return -EINVAL;
		pc->fault_seed = u;
		return 0;
	}
	if (!strcmp(key, "pcap")) {
		if (val[0] == '\0' || strlen(val) >= sizeof(pc->pcap))
			return -EINVAL;
		snprintf(pc->pcap, sizeof(pc->pcap), "%s", val);
		return 0;
	}
	if (!strcmp(key, "rx_delay_us") || !strcmp(key, "tx_delay_us") ||
	    !strcmp(key, "delay_us")) {
		if (parse_uint(val, 0, 10000000, &u))
			return -EINVAL;
		if (key[0] != 't')
			pc->rx_fault.delay_us = (uint32_t)u;
		if (key[0] != 'r')
			pc->tx_fault.delay_us = (uint32_t)u;
		return 0;
	}
	for (size_t i = 0; i < RTE_DIM(faults); i++) {
		const char *k = key;
		bool rx = true, tx = true;
		if (!strncmp(k, "rx_", 3)) { tx = false; k += 3; }
		else if (!strncmp(k, "tx_", 3)) { rx = false; k += 3; }
		if (strcmp(k, faults[i].name))
			continue;
		double v;
		if (parse_pct(val, &v))
			return -EINVAL;
		if (rx)
			*faults[i].rx = v;
		if (tx)
			*faults[i].tx = v;
		return 0;
	}
	return -ENOENT;
}

/* What a port needs before it can be used. */
static const char *port_incomplete(const struct rnic_port_cfg *pc)
{
	int devs = !!pc->vdev[0] + !!pc->pci[0] + !!pc->ring[0];
	if (devs == 0)
		return "needs one of vdev, pci or ring";
	if (devs > 1)
		return "takes only one of vdev, pci or ring";
	if (pc->ip == 0)
		return "needs ip = A.B.C.D/len";
	return NULL;
}

static int load_eal(struct rnic_config *cfg, const char *val)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", val);
	for (char *save, *tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (cfg->n_eal_args == RNIC_MAX_EAL_ARGS || strlen(tok) >= 128)
			return -EINVAL;
		snprintf(cfg->eal_args[cfg->n_eal_args++], 128, "%s", tok);
	}
	return 0;
}

int rnic_config_load(struct rnic_config *cfg, const char *path,
		     bool (*extra_section)(const char *name),
		     char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		int e = errno;
		cfg_err(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return e == ENOENT ? -ENOENT : -EINVAL;
	}
	/* rte_cfgfile skips some malformed lines silently: check the syntax
	 * first so a typo never goes unnoticed */
	char line[1024];
	int lineno = 0;
	bool in_section = false;
	while (fgets(line, sizeof(line), f)) {
		char *l = line + strspn(line, " \t\r\n");
		lineno++;
		if (*l == '\0' || *l == ';' || *l == '#')
			continue;
		if (*l == '[' && strchr(l, ']')) {
			in_section = true;
			continue;
		}
		if (!in_section || strchr(l, '=') == NULL || *l == '=') {
			fclose(f);
			return cfg_err(err, errlen, "%s:%d: not a valid INI line "
				       "(expected [section] or key = value%s)", path,
				       lineno, in_section ? "" : " inside a section");
		}
	}
	fclose(f);
	struct rte_cfgfile *cf = rte_cfgfile_load(path, 0);
	if (cf == NULL)
		return cfg_err(err, errlen, "%s: not a valid INI file "
			       "(a line outside [section], or a line without '=')", path);
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);

	int nsec = rte_cfgfile_num_sections(cf, NULL, 0);
	int rc = 0;
	char **names = calloc(nsec > 0 ? nsec : 1, sizeof(char *));
	for (int i = 0; i < nsec; i++)
		names[i] = calloc(1, CFG_NAME_LEN);
	rte_cfgfile_sections(cf, names, nsec);

	for (int s = 0; s < nsec && rc == 0; s++) {
		const char *sec = names[s];
		int nent = rte_cfgfile_section_num_entries(cf, sec);
		struct rte_cfgfile_entry *ent = calloc(nent > 0 ? nent : 1, sizeof(*ent));
		rte_cfgfile_section_entries(cf, sec, ent, nent);
		unsigned long u;

		if (!strncmp(sec, "port.", 5)) {
			if (parse_uint(sec + 5, 0, RNIC_MAX_PORTS - 1, &u)) {
				rc = cfg_err(err, errlen, "%s: [%s]: port number must be 0..%d",
					     path, sec, RNIC_MAX_PORTS - 1);
			} else {
				/* ports are kept in the order of their numbers */
				struct rnic_port_cfg pc;
				rnic_port_cfg_init(&pc);
				for (int e = 0; e < nent && rc == 0; e++) {
					int r = port_key(&pc, ent[e].name, ent[e].value);
					if (r == -ENOENT)
						rc = cfg_err(err, errlen, "%s: [%s] %s: unknown key",
							     path, sec, ent[e].name);
					else if (r)
						rc = cfg_err(err, errlen, "%s: [%s] %s: '%s' is not a valid value%s",
							     path, sec, ent[e].name, ent[e].value,
							     !strcmp(ent[e].name, "ip") ?
							     " (IPv4 address/prefix)" : "");
				}
				const char *why = rc ? NULL : port_incomplete(&pc);
				if (why)
					rc = cfg_err(err, errlen, "%s: [%s]: %s", path, sec, why);
				if (rc == 0) {
					unsigned at = cfg->n_ports;
					while (at > 0 && cfg->port_num[at - 1] > u) {
						cfg->ports[at] = cfg->ports[at - 1];
						cfg->port_num[at] = cfg->port_num[at - 1];
						at--;
					}
					for (unsigned k = 0; k < cfg->n_ports; k++)
						if (cfg->port_num[k] == u)
							rc = cfg_err(err, errlen, "%s: [%s]: defined twice", path, sec);
					if (rc == 0) {
						cfg->ports[at] = pc;
						cfg->port_num[at] = (uint8_t)u;
						cfg->n_ports++;
					}
				}
			}
		} else if (!strcmp(sec, "eal")) {
			for (int e = 0; e < nent && rc == 0; e++) {
				if (strcmp(ent[e].name, "args"))
					rc = cfg_err(err, errlen, "%s: [eal] %s: unknown key", path, ent[e].name);
				else if (load_eal(cfg, ent[e].value))
					rc = cfg_err(err, errlen, "%s: [eal] args: too many or too long arguments", path);
			}
		} else if (!strcmp(sec, "workers")) {
			for (int e = 0; e < nent && rc == 0; e++) {
				const char *k = ent[e].name, *v = ent[e].value;
				if (!strcmp(k, "count")) {
					if (parse_uint(v, 1, RNIC_MAX_WORKERS, &u))
						rc = cfg_err(err, errlen, "%s: [workers] count: '%s' is not 1..%d",
							     path, v, RNIC_MAX_WORKERS);
					else
						cfg->workers = (unsigned)u;
				} else if (!strcmp(k, "poll")) {
					if (!strcmp(v, "busy"))
						cfg->poll_mode = RNIC_POLL_BUSY;
					else if (!strcmp(v, "adaptive"))
						cfg->poll_mode = RNIC_POLL_ADAPTIVE;
					else
						rc = cfg_err(err, errlen, "%s: [workers] poll: '%s' is not busy or adaptive",
							     path, v);
				} else {
					rc = cfg_err(err, errlen, "%s: [workers] %s: unknown key", path, k);
				}
			}
		} else if (!strcmp(sec, "gateway")) {
			for (int e = 0; e < nent && rc == 0; e++) {
				if (strcmp(ent[e].name, "status_ms"))
					rc = cfg_err(err, errlen, "%s: [gateway] %s: unknown key", path, ent[e].name);
				else if (parse_uint(ent[e].value, 0, 3600000, &u))
					rc = cfg_err(err, errlen, "%s: [gateway] status_ms: '%s' is not 0..3600000",
						     path, ent[e].value);
				else
					cfg->status_interval_ms = (unsigned)u;
			}
		} else if (extra_section == NULL || !extra_section(sec)) {
			rc = cfg_err(err, errlen, "%s: [%s]: unknown section", path, sec);
		}
		free(ent);
	}
	for (int i = 0; i < nsec; i++)
		free(names[i]);
	free(names);
	rte_cfgfile_close(cf);
	return rc;
}

const char *rnic_config_usage(void)
{
	return
	"Port options (every rnic program):\n"
	"  --config FILE         INI configuration (see docs/user-guide.md)\n"
	"  --vdev SPEC           DPDK vdev for a new port, e.g. net_tap0,iface=rnictap0\n"
	"  --ring NAME           in-process net_ring end for a new port\n"
	"  --pci ADDR            PCI device for a new port\n"
	"  --ip A.B.C.D/LEN      address of the port (one per --vdev/--ring/--pci)\n"
	"  --gateway A.B.C.D     default gateway of the last port\n"
	"  --mtu N               IP MTU of the last port (68..9000)\n"
	"  --workers N           poll-mode workers (1..16)\n"
	"  --busy-poll           never sleep when idle (benchmarks)\n"
	"  --fault-drop P, --fault-dup P, --fault-reorder P, --fault-corrupt P\n"
	"                        inject faults on the last port, percent, both ways\n"
	"  --fault-seed S        seed of the fault injector\n"
	"  --pcap FILE           pcapng capture of the last port\n"
	"  --eal \"ARGS\"          extra DPDK EAL arguments\n";
}

/* One option of the shared set; @return 1 when consumed with a value,
 * 0 when consumed alone, -ENOENT when not ours, -EINVAL on error. */
static int common_opt(struct rnic_config *cfg, const char *opt, const char *val,
		      char *err, size_t errlen)
{
	struct rnic_port_cfg *last = cfg->n_ports ? &cfg->ports[cfg->n_ports - 1] : NULL;
	unsigned long u;
	int r;

	if (!strcmp(opt, "--busy-poll")) {
		cfg->poll_mode = RNIC_POLL_BUSY;
		return 0;
	}
	static const char *const with_val[] = { "--config", "--vdev", "--ring", "--pci",
		"--ip", "--gateway", "--mtu", "--workers", "--fault-drop", "--fault-dup",
		"--fault-reorder", "--fault-corrupt", "--fault-seed", "--pcap", "--eal" };
	bool known = false;
	for (size_t i = 0; i < RTE_DIM(with_val); i++)
		known |= !strcmp(opt, with_val[i]);
	if (!known)
		return -ENOENT;
	if (val == NULL)
		return cfg_err(err, errlen, "%s: needs a value", opt);
	if (!strcmp(opt, "--config")) {
		r = rnic_config_load(cfg, val, NULL, err, errlen);
		return r ? r : 1;
	}
	if (!strcmp(opt, "--workers")) {
		if (parse_uint(val, 1, RNIC_MAX_WORKERS, &u))
			return cfg_err(err, errlen, "--workers: '%s' is not 1..%d", val, RNIC_MAX_WORKERS);
		cfg->workers = (unsigned)u;
		return 1;
	}
	if (!strcmp(opt, "--eal"))
		return load_eal(cfg, val) ? cfg_err(err, errlen, "--eal: too many arguments") : 1;
	bool newdev = !strcmp(opt, "--vdev") || !strcmp(opt, "--ring") ||
		      !strcmp(opt, "--pci");
	bool has_dev = last && (last->vdev[0] || last->pci[0] || last->ring[0]);
	/* a device opens a port unless a lone --ip is waiting for one; an --ip
	 * completes the last port unless it already has an address */
	if ((newdev && (last == NULL || has_dev)) ||
	    (!strcmp(opt, "--ip") && (last == NULL || last->ip != 0))) {
		if (cfg->n_ports == RNIC_MAX_PORTS)
			return cfg_err(err, errlen, "%s: at most %d ports", opt, RNIC_MAX_PORTS);
		last = &cfg->ports[cfg->n_ports];
		rnic_port_cfg_init(last);
		cfg->port_num[cfg->n_ports] = (uint8_t)cfg->n_ports;
		cfg->n_ports++;
	}
	const char *key = opt + 2;
	char kbuf[64];
	if (!strncmp(key, "fault-", 6)) {
		snprintf(kbuf, sizeof(kbuf), "%s", key + 6);
		if (!strcmp(kbuf, "seed"))
			snprintf(kbuf, sizeof(kbuf), "fault_seed");
		key = kbuf;
	}
	if (last == NULL)
		return cfg_err(err, errlen, "%s: give --vdev, --ring or --pci first", opt);
	r = port_key(last, key, val);
	if (r)
		return cfg_err(err, errlen, "%s: '%s' is not a valid value%s", opt, val,
			       !strcmp(opt, "--ip") ? " (IPv4 address/prefix)" : "");
	return 1;
}

int rnic_config_parse_args(struct rnic_config *cfg, int *argc, char **argv,
			   char *err, size_t errlen)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		char opt[64];
		const char *val = NULL;
		const char *a = argv[i];
		const char *eq = strchr(a, '=');
		if (strncmp(a, "--", 2) || strlen(a) >= sizeof(opt)) {
			argv[out++] = argv[i];
			continue;
		}
		if (eq && (size_t)(eq - a) < sizeof(opt)) {
			memcpy(opt, a, eq - a);
			opt[eq - a] = '\0';
			val = eq + 1;
		} else {
			snprintf(opt, sizeof(opt), "%s", a);
			val = i + 1 < *argc ? argv[i + 1] : NULL;
		}
		int r = common_opt(cfg, opt, val, err, errlen);
		if (r == -ENOENT) {
			argv[out++] = argv[i];
			continue;
		}
		if (r < 0)
			return r;
		if (r == 1 && !eq)
			i++;
	}
	*argc = out;
	argv[out] = NULL;
	for (unsigned k = 0; k < cfg->n_ports; k++) {
		const char *why = port_incomplete(&cfg->ports[k]);
		if (why)
			return cfg_err(err, errlen, "port %u: %s (use --vdev/--ring/--pci with --ip)",
				       k, why);
	}
	return 0;
}
