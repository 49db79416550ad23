/* SPDX-License-Identifier: BSD-3-Clause */
#include "common/drops.h"

static const char *const drop_names[RNIC_DROP_MAX] = {
#define RNIC_DROP_NAME(sym, name) [RNIC_DROP_##sym] = name,
	RNIC_DROP_CAUSES(RNIC_DROP_NAME)
#undef RNIC_DROP_NAME
};

const char *rnic_drop_name(enum rnic_drop_cause c)
{
	return (unsigned)c < RNIC_DROP_MAX ? drop_names[c] : "unknown";
}
