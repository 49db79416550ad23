/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * INI files for the config tests, in a private temporary directory that a
 * cmocka group setup makes and its teardown removes.
 */
#ifndef RNIC_TEST_TMP_INI_H
#define RNIC_TEST_TMP_INI_H

/* Group setup: make the directory. @return 0 or -1. */
int tmp_ini_setup(void **state);

/* Group teardown: remove the file and the directory. @return 0 or -1. */
int tmp_ini_teardown(void **state);

/* Write @p text as the test's INI file (asserts). @return its path, the
 * same for every call. */
const char *tmp_ini_write(const char *text);

/* The directory, and the file tmp_ini_write() writes. */
const char *tmp_ini_dir(void);
const char *tmp_ini_path(void);

#endif
