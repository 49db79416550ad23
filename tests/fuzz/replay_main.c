/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Corpus replay driver: a main() for the fuzz harnesses without libFuzzer.
 * Calls LLVMFuzzerTestOneInput() once per regular file of every directory
 * (or file) named on the command line, in name order so that runs are
 * reproducible, and LLVMFuzzerInitialize() first when the harness has one.
 * A harness property that fails aborts, which fails the test. Exits 1 when
 * nothing was replayed: an empty or missing corpus is an error, not a pass.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Run one file through the harness. @return 0, or -errno if unreadable. */
static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	int rc = 0;

	if (f == NULL)
		return -errno;
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		rc = -EIO;
		goto out;
	}
	/* An exact-size heap copy: a read past the input is an ASan report
	 * when the replay is built with sanitizers. */
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		rc = -EIO;
		goto out;
	}
	LLVMFuzzerTestOneInput(buf, (size_t)len);
out:
	free(buf);
	fclose(f);
	return rc;
}

static int
name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replay every regular file of @p dir. @return files run, or -errno. */
static int
replay_dir(const char *dir)
{
	struct dirent **ents;
	int n, i, runs = 0, rc = 0;

	n = scandir(dir, &ents, NULL, name_cmp);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		char path[4096];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (rc == 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
			rc = replay_file(path);
			if (rc == 0)
				runs++;
			else
				fprintf(stderr, "%s: %s\n", path, strerror(-rc));
		}
		free(ents[i]);
	}
	free(ents);
	return rc < 0 ? rc : runs;
}

int
main(int argc, char **argv)
{
	struct stat sb;
	int i, total = 0;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		int n;

		if (stat(argv[i], &sb) != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(sb.st_mode)) {
			n = replay_dir(argv[i]);
		} else {
			n = replay_file(argv[i]);
			n = n == 0 ? 1 : n;
		}
		if (n < 0)
			return 1;
		total += n;
	}
	printf("replayed %d inputs\n", total);
	return total > 0 ? 0 : 1;
}
