/* SPDX-License-Identifier: BSD-3-Clause */
/* Every drop cause has a distinct, non-empty telemetry name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "common/drops.h"

static void names_unique(void **state)
{
	(void)state;
	for (int i = 0; i < RNIC_DROP_MAX; i++) {
		const char *a = rnic_drop_name(i);
		assert_non_null(a);
		assert_true(strlen(a) > 0);
		for (int j = i + 1; j < RNIC_DROP_MAX; j++)
			assert_string_not_equal(a, rnic_drop_name(j));
	}
	assert_string_equal(rnic_drop_name(RNIC_DROP_MAX), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(names_unique) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
