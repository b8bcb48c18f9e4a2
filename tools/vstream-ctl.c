/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vstream-ctl: add, remove and list vstream pipes.
 *
 * A thin front end to the module's configfs directory
 * (/sys/kernel/config/vstream/<name>/, see kmod/vstream-configfs.c) and
 * the nodes' sysfs "stats".  VSTREAM_SYSFS points it at another sysfs
 * root (the unit tests use a fake one).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_LEN 20		/* VSTREAM_NAME_MAX in kmod/vstream.h */
#define MAX_READERS 4
#define MAX_NODES 512

static const char *sysfs = "/sys";
static const char *prog = "vstream-ctl";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s add NAME [--readers N] [--max WxH] [--format FOURCC:WxH[@FPS]]\n"
		"                     [--label TEXT] [--mplane]\n"
		"       %s del NAME\n"
		"       %s list\n"
		"       %s load FILE\n"
		"\n"
		"add   makes a pipe: an output node NAME-output that a producer feeds and\n"
		"      N capture nodes (NAME-capture, or NAME-capture-0.. with N > 1);\n"
		"      --max bounds the frame size, --format fixes the one format the\n"
		"      nodes offer, --label is the card name applications show,\n"
		"      --mplane makes the nodes multi-planar (V4L2_BUF_TYPE_*_MPLANE).\n"
		"del   removes a pipe; nodes still open stop working (ENODEV) at once.\n"
		"list  shows every pipe, its nodes and their counters.\n"
		"load  makes the pipes FILE lists, one per line as add's words (\"quotes\"\n"
		"      keep spaces, # comments); pipes that exist are left as they are.\n",
		prog, prog, prog, prog);
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static const char *why(int err)
{
	if (err == EACCES || err == EPERM)
		return "permission denied (run it as root)";
	return strerror(err);
}

static void path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(buf, size, "%s/", sysfs);
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* Whole file into @buf (trailing newline dropped); -errno on failure. */
static int read_file(const char *p, char *buf, size_t size)
{
	FILE *f = fopen(p, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return 0;
}

/* Write @val to attribute @attr of pipe @name; -errno on failure. */
static int write_attr(const char *name, const char *attr, const char *val)
{
	char p[PATH_MAX];
	FILE *f;
	int err = 0;

	path(p, sizeof(p), "kernel/config/vstream/%s/%s", name, attr);
	f = fopen(p, "w");
	if (!f)
		return -errno;
	/* unbuffered: the kernel's answer comes from this one write */
	setvbuf(f, NULL, _IONBF, 0);
	if (fputs(val, f) == EOF)
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static bool module_loaded(void)
{
	char p[PATH_MAX];
	struct stat st;

	path(p, sizeof(p), "module/vstream");
	return !stat(p, &st);
}

/*
 * The configfs directory, mounting configfs if it is not (systemd mounts
 * it at boot; a minimal system may not).  0 or an exit status.
 */
static int need_configfs(void)
{
	char p[PATH_MAX];
	struct stat st;

	if (!module_loaded())
		return fail("the vstream module is not loaded (modprobe vstream)");
	path(p, sizeof(p), "kernel/config/vstream");
	if (!stat(p, &st))
		return 0;
	if (!strcmp(sysfs, "/sys") &&
	    mount("configfs", "/sys/kernel/config", "configfs", 0, NULL) && errno != EBUSY)
		return fail("configfs is not mounted on /sys/kernel/config and mounting it failed: %s",
			    why(errno));
	if (!stat(p, &st))
		return 0;
	return fail("%s is missing: is configfs mounted on %s/kernel/config?", p, sysfs);
}

static bool reserved_name(const char *name)
{
	unsigned int n;
	char c;

	return sscanf(name, "vstream-%u%c", &n, &c) == 1;
}

/* The kernel's rule (vstream_name_valid()), checked first for a clear error. */
static int check_name(const char *name)
{
	const char *c;

	if (!*name || strlen(name) > NAME_MAX_LEN || !isalnum((unsigned char)name[0]))
		goto bad;
	for (c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			goto bad;
	if (reserved_name(name)) {
		fprintf(stderr, "%s: \"%s\": names vstream-N belong to the module's own pipes\n",
			prog, name);
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, "%s: \"%s\": a pipe name is 1-%d letters, digits, '-' or '_', "
		"starting with a letter or digit\n", prog, name, NAME_MAX_LEN);
	return 2;
}

/* NAME checked, configfs there, @p its directory: 0 or an exit status. */
static int pipe_dir(const char *name, char *p, size_t size)
{
	int ret = check_name(name);

	if (!ret)
		ret = need_configfs();
	if (!ret)
		path(p, size, "kernel/config/vstream/%s", name);
	return ret;
}

static int parse_uint(const char *s, unsigned int *v)
{
	char *end;
	unsigned long l;

	errno = 0;
	l = strtoul(s, &end, 10);
	if (errno || end == s || *end || !isdigit((unsigned char)*s) || l > UINT_MAX)
		return -1;
	*v = l;
	return 0;
}

static int parse_size(const char *s, unsigned int *w, unsigned int *h)
{
	char ws[16], hs[16];
	const char *x = strchr(s, 'x');

	if (!x || x - s >= (long)sizeof(ws) || strlen(x + 1) >= sizeof(hs))
		return -1;
	memcpy(ws, s, x - s);
	ws[x - s] = 0;
	strcpy(hs, x + 1);
	return parse_uint(ws, w) || parse_uint(hs, h) ? -1 : 0;
}

/* What "add" was asked for. */
struct add_args {
	const char *name, *format, *label;
	unsigned int readers, w, h;
	int mplane;
};

/*
 * Parse "add"'s arguments (@argv[0] is "add") into @a: 0, -1 for --help
 * (usage printed), or 2 (a usage error, said).  Nothing is touched.
 */
static int parse_add(int argc, char **argv, struct add_args *a)
{
	static const struct option opts[] = {
		{ "readers", required_argument, NULL, 'r' },
		{ "max", required_argument, NULL, 'm' },
		{ "format", required_argument, NULL, 'f' },
		{ "label", required_argument, NULL, 'l' },
		{ "mplane", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	optind = 0;	/* getopt starts afresh: load parses many */
	while ((c = getopt_long(argc, argv, "r:m:f:l:Mh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_uint(optarg, &a->readers) || !a->readers ||
			    a->readers > MAX_READERS) {
				fprintf(stderr, "%s: --readers: a number from 1 to %d, not \"%s\"\n",
					prog, MAX_READERS, optarg);
				return 2;
			}
			break;
		case 'm':
			if (parse_size(optarg, &a->w, &a->h) || a->w < 16 || a->h < 16 ||
			    a->w > 16384 || a->h > 16384) {
				fprintf(stderr, "%s: --max: WIDTHxHEIGHT from 16x16 to 16384x16384, not \"%s\"\n",
					prog, optarg);
				return 2;
			}
			break;
		case 'f':
			a->format = optarg;
			break;
		case 'l':
			if (strlen(optarg) > 31) {
				fprintf(stderr, "%s: --label: at most 31 characters\n", prog);
				return 2;
			}
			a->label = optarg;
			break;
		case 'M':
			a->mplane = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	a->name = argv[optind];
	return check_name(a->name);
}

/* Make the pipe @a describes: 0, or 1 with nothing of it left. */
static int make_pipe(const struct add_args *a)
{
	const char *name = a->name, *format = a->format, *label = a->label;
	unsigned int readers = a->readers, w = a->w, h = a->h;
	char p[PATH_MAX], num[16], devs[1024];
	int err, ret;

	ret = pipe_dir(name, p, sizeof(p));
	if (ret)
		return ret;
	if (mkdir(p, 0755)) {
		if (errno == EEXIST)
			return fail("pipe \"%s\" exists (vstream-ctl list)", name);
		return fail("cannot make pipe \"%s\": %s", name, why(errno));
	}
	/* size limits before the format, which must fit in them */
	err = 0;
	if (w) {
		snprintf(num, sizeof(num), "%u", w);
		err = write_attr(name, "max_width", num);
		snprintf(num, sizeof(num), "%u", h);
		if (!err)
			err = write_attr(name, "max_height", num);
		if (err)
			fail("--max %ux%u: %s", w, h, why(-err));
	}
	if (!err && readers) {
		snprintf(num, sizeof(num), "%u", readers);
		err = write_attr(name, "readers", num);
		if (err)
			fail("--readers %u: %s", readers, why(-err));
	}
	if (!err && label) {
		err = write_attr(name, "label", label);
		if (err)
			fail("--label \"%s\": %s", label, err == -EINVAL ?
			     "printable ASCII only" : why(-err));
	}
	if (!err && a->mplane) {
		err = write_attr(name, "mplane", "1");
		if (err)
			fail("--mplane: %s", err == -ENOENT ?
			     "this vstream module has no multi-planar pipes" : why(-err));
	}
	if (!err && format) {
		err = write_attr(name, "format", format);
		if (err)
			fail("--format \"%s\": %s", format, err == -EINVAL ?
			     "not FOURCC:WxH[@FPS] with a format the driver has, a size it "
			     "allows and at most the --max size, 1-240 fps" : why(-err));
	}
	if (!err) {
		err = write_attr(name, "enabled", "1");
		if (err)
			fail("cannot register the nodes of \"%s\": %s", name,
			     err == -EBUSY ? "too many pipes (64)" :
			     err == -ENFILE ? "no free /dev/video numbers (256 in all)" :
			     why(-err));
	}
	if (err) {
		rmdir(p);
		return 1;
	}
	path(p, sizeof(p), "kernel/config/vstream/%s/devices", name);
	if (!read_file(p, devs, sizeof(devs)))
		printf("%s\n", devs);
	return 0;
}

static int cmd_add(int argc, char **argv)
{
	struct add_args a;
	int ret = parse_add(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	return make_pipe(&a);
}

#define LOAD_MAX_PIPES 64	/* VSTREAM_MAX_PIPES in kmod/vstream.h */
#define LOAD_MAX_ARGS 16

/*
 * Split @line in place into words: blanks separate them, "double quotes"
 * keep blanks in one, # outside quotes starts a comment.  The count, or
 * -1 for an unclosed quote or too many words.
 */
static int split_words(char *line, char **words, int max)
{
	char *r = line, *w, sep;
	int n = 0;

	for (;;) {
		while (*r == ' ' || *r == '\t' || *r == '\r')
			r++;
		if (!*r || *r == '#')
			return n;
		if (n == max)
			return -1;
		words[n++] = w = r;
		while (*r && *r != ' ' && *r != '\t' && *r != '\r') {
			if (*r != '"') {
				*w++ = *r++;
				continue;
			}
			for (r++; *r && *r != '"'; )
				*w++ = *r++;
			if (!*r)
				return -1;
			r++;
		}
		sep = *r;
		*w = 0;
		if (sep)
			r++;
	}
}

/*
 * load FILE: make the pipes FILE lists, a line each in "add"'s words
 * (NAME [--readers N] ...).  The whole file is checked first: a line that
 * does not parse is a usage error and nothing is made.  A pipe that exists
 * is left as it is, so loading again (a restarted unit) changes nothing.
 */
static int cmd_load(int argc, char **argv)
{
	static char text[64 * 1024 + 1];
	static char *words[LOAD_MAX_PIPES][LOAD_MAX_ARGS + 2];
	char *w[LOAD_MAX_ARGS + 2];
	struct add_args args[LOAD_MAX_PIPES];
	int lineno[LOAD_MAX_PIPES], n = 0, i, line = 0, ret, failed = 0;
	char p[PATH_MAX], *cur, *next;
	struct stat st;
	size_t len;
	FILE *f;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f)
		return fail("%s: %s", argv[1], why(errno));
	len = fread(text, 1, sizeof(text), f);
	ret = ferror(f) || len == sizeof(text);
	fclose(f);
	if (ret)
		return fail("%s: unreadable or over %zu bytes", argv[1], sizeof(text) - 1);
	text[len] = 0;
	for (cur = text; cur; cur = next) {
		int nw;

		next = strchr(cur, '\n');
		if (next)
			*next++ = 0;
		line++;
		w[0] = "add";
		nw = split_words(cur, w + 1, LOAD_MAX_ARGS);
		if (nw == 0)
			continue;
		if (nw < 0 || n == LOAD_MAX_PIPES) {
			fprintf(stderr, "%s: %s:%d: %s\n", prog, argv[1], line, nw < 0 ?
				"an unclosed quote or over 16 words" : "over 64 pipes");
			return 2;
		}
		w[nw + 1] = NULL;
		memcpy(words[n], w, sizeof(w));
		ret = parse_add(nw + 1, words[n], &args[n]);
		if (ret) {
			fprintf(stderr, "%s: %s:%d: not a pipe (NAME [--readers N] [--max WxH] "
				"[--format FOURCC:WxH[@FPS]] [--label TEXT] [--mplane])\n",
				prog, argv[1], line);
			return 2;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(args[i].name, args[n].name)) {
				fprintf(stderr, "%s: %s:%d: pipe \"%s\" listed twice (line %d)\n",
					prog, argv[1], line, args[n].name, lineno[i]);
				return 2;
			}
		lineno[n++] = line;
	}
	for (i = 0; i < n; i++) {
		ret = pipe_dir(args[i].name, p, sizeof(p));
		if (ret)
			return ret;	/* the module or configfs is missing */
		if (!stat(p, &st)) {
			printf("%s: exists, left as it is\n", args[i].name);
			continue;
		}
		if (make_pipe(&args[i])) {
			fprintf(stderr, "%s: %s:%d: pipe \"%s\" not made\n", prog, argv[1],
				lineno[i], args[i].name);
			failed++;
		}
	}
	return failed ? 1 : 0;
}

static int cmd_del(int argc, char **argv)
{
	char p[PATH_MAX];
	const char *name;
	struct stat st;
	int err, ret;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	name = argv[1];
	if (reserved_name(name))
		return fail("\"%s\" is made by the module's parameters: it goes with the module (modprobe -r vstream)",
			    name);
	ret = pipe_dir(name, p, sizeof(p));
	if (ret)
		return ret;
	if (stat(p, &st))
		return fail("no pipe \"%s\" (vstream-ctl list)", name);
	err = write_attr(name, "enabled", "0");
	if (err)
		return fail("cannot disable \"%s\": %s", name, why(-err));
	if (rmdir(p))
		return fail("cannot remove \"%s\": %s", name, why(errno));
	return 0;
}

struct node {
	char dev[256];		/* videoN */
	char name[64];		/* sysfs name: PIPE-output, PIPE-capture[-N] */
	char pipe[64];
	bool output;
	unsigned long long frames, drops, zerocopy, copies;
	int streaming;
	unsigned int num, den;
};

static int node_cmp(const void *a, const void *b)
{
	const struct node *x = a, *y = b;
	int c = strcmp(x->pipe, y->pipe);

	if (c)
		return c;
	if (x->output != y->output)
		return x->output ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool is_vstream(const char *dev)
{
	char p[PATH_MAX], link[PATH_MAX];
	ssize_t n;
	const char *base;

	path(p, sizeof(p), "class/video4linux/%s/device/driver", dev);
	n = readlink(p, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	base = strrchr(link, '/');
	return !strcmp(base ? base + 1 : link, "vstream");
}

static void read_stats(struct node *n)
{
	char p[PATH_MAX], buf[512], *line, *save;

	path(p, sizeof(p), "class/video4linux/%s/stats", n->dev);
	if (read_file(p, buf, sizeof(buf)))
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sscanf(line, "frames %llu", &n->frames);
		sscanf(line, "drops %llu", &n->drops);
		sscanf(line, "zerocopy %llu", &n->zerocopy);
		sscanf(line, "copies %llu", &n->copies);
		sscanf(line, "streaming %d", &n->streaming);
		sscanf(line, "interval %u/%u", &n->num, &n->den);
	}
}

/* Split "PIPE-output" / "PIPE-capture[-N]"; false for other names. */
static bool split_name(struct node *n)
{
	size_t len = strlen(n->name);
	char *s;

	strcpy(n->pipe, n->name);
	/* the suffix: a pipe may be called "tv-output" */
	if (len > 7 && !strcmp(n->pipe + len - 7, "-output")) {
		n->pipe[len - 7] = 0;
		n->output = true;
		return true;
	}
	s = strrchr(n->pipe, '-');
	if (s && !strcmp(s, "-capture")) {
		*s = 0;
		return true;
	}
	if (s && s > n->pipe && isdigit((unsigned char)s[1])) {
		*s = 0;
		s = strrchr(n->pipe, '-');
		if (s && !strcmp(s, "-capture")) {
			*s = 0;
			return true;
		}
	}
	return false;
}

static void print_pipe_head(const char *pipe, const struct node *out)
{
	char p[PATH_MAX], label[64] = "";
	bool runtime;
	struct stat st;

	path(p, sizeof(p), "kernel/config/vstream/%s", pipe);
	runtime = !stat(p, &st);
	if (runtime) {
		path(p, sizeof(p), "kernel/config/vstream/%s/label", pipe);
		read_file(p, label, sizeof(label));
	}
	printf("%s (%s%s%s%s): ", pipe, runtime ? "runtime" : "module parameters",
	       label[0] ? ", label \"" : "", label, label[0] ? "\"" : "");
	if (!out)
		printf("no output node\n");
	else if (out->streaming && out->num)
		printf("producer streaming at %.2f fps\n", (double)out->den / out->num);
	else
		printf("no producer\n");
}

/* Runtime pipes that are configured but not enabled have no nodes. */
static unsigned int print_disabled(void)
{
	char p[PATH_MAX], en[8];
	unsigned int count = 0;
	struct dirent *e;
	DIR *d;

	path(p, sizeof(p), "kernel/config/vstream");
	d = opendir(p);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		path(p, sizeof(p), "kernel/config/vstream/%s/enabled", e->d_name);
		if (!read_file(p, en, sizeof(en)) && !strcmp(en, "0")) {
			printf("%s (runtime): disabled, no nodes\n", e->d_name);
			count++;
		}
	}
	closedir(d);
	return count;
}

static int cmd_list(int argc, char **argv)
{
	static struct node nodes[MAX_NODES];
	char p[PATH_MAX];
	struct dirent *e;
	unsigned int count = 0, i, j;
	DIR *d;

	if (argc != 1) {
		usage(stderr);
		return 2;
	}
	if (!module_loaded())
		return fail("the vstream module is not loaded (modprobe vstream)");
	path(p, sizeof(p), "class/video4linux");
	d = opendir(p);
	while (d && (e = readdir(d)) && count < MAX_NODES) {
		struct node *n = &nodes[count];

		if (strncmp(e->d_name, "video", 5) || !is_vstream(e->d_name))
			continue;
		memset(n, 0, sizeof(*n));
		snprintf(n->dev, sizeof(n->dev), "%s", e->d_name);
		path(p, sizeof(p), "class/video4linux/%s/name", n->dev);
		if (read_file(p, n->name, sizeof(n->name)) || !split_name(n))
			continue;
		read_stats(n);
		count++;
	}
	if (d)
		closedir(d);
	qsort(nodes, count, sizeof(nodes[0]), node_cmp);
	for (i = 0; i < count; i = j) {
		print_pipe_head(nodes[i].pipe, nodes[i].output ? &nodes[i] : NULL);
		for (j = i; j < count && !strcmp(nodes[j].pipe, nodes[i].pipe); j++) {
			const struct node *n = &nodes[j];

			printf("  %-22s /dev/%-8s %s frames %llu drops %llu zerocopy %llu copies %llu\n",
			       n->name, n->dev, n->streaming ? "streaming" : "idle     ",
			       n->frames, n->drops, n->zerocopy, n->copies);
		}
	}
	if (!print_disabled() && !count)
		printf("no pipes (vstream-ctl add NAME)\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("VSTREAM_SYSFS");

	if (env && *env)
		sysfs = env;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "add"))
		return cmd_add(argc - 1, argv + 1);
	if (!strcmp(argv[1], "del") || !strcmp(argv[1], "delete"))
		return cmd_del(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "load"))
		return cmd_load(argc - 1, argv + 1);
	fprintf(stderr, "%s: unknown command \"%s\"\n", prog, argv[1]);
	usage(stderr);
	return 2;
}
