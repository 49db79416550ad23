/* SPDX-License-Identifier: BSD-3-Clause */
/* INI files for the config tests (tmp_ini.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "tmp_ini.h"

static char dir[64];
static char path[128];

int tmp_ini_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rnic-cfg-XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

int tmp_ini_teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

const char *tmp_ini_write(const char *text)
{
	snprintf(path, sizeof(path), "%s/t.ini", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

const char *tmp_ini_dir(void)
{
	return dir;
}

const char *tmp_ini_path(void)
{
	snprintf(path, sizeof(path), "%s/t.ini", dir);
	return path;
}
