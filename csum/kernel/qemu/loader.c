/*
 * csum prog loader: the /init of the initramfs that `csum prog --debian` boots (part of csum, not kernel code).
 *
 * It loads the user's BPF object with libbpf (linked statically: Debian's libbpf.a), as `csum prog` loads it on
 * the running kernel, and runs every packet through BPF_PROG_TEST_RUN. It reads a plan (default /plan.txt), one
 * command per line:
 *
 *   obj PATH                   bpf_object__open_file (every map's pin path cleared: nothing is pinned)
 *   prog NAME TYPE             the program to load (only it); TYPE: enum bpf_prog_type to set, 0 to keep libbpf's
 *   init MAP HEX               bpf_map__set_initial_value (a .rodata/.data/.bss map with the globals set)
 *   load                       bpf_object__load -> "LOAD 0", or "LOAD -errno" and the libbpf log as "LOG ..." lines
 *   map MAP KEYHEX VALUEHEX    bpf_map__update_elem after load -> "MAP MAP 0" or "MAP MAP -errno"
 *   ctx HEX                    the struct __sk_buff of every tc test run (none: no ctx)
 *   pkt ID HEX                 BPF_PROG_TEST_RUN of the packet -> "RES ID RETVAL HEXOUT" or "ERR ID -errno";
 *                              a tc program runs again with BPF_F_TEST_SKB_CHECKSUM_COMPLETE -> "CPL ID 0|-errno"
 *
 * Before the plan it prints "CSUM-LOADER 1", "UNAME" (uname(2)), "CPU LINE" (each line of /proc/cpuinfo), on riscv64
 * "HWPROBE KEY VALUE" (riscv_hwprobe(2) keys 5 and 9: the CPU facts that choose a checksum code path, as runner.c
 * prints them) and "PROBE RC": the return of bpf_csum_diff with
 * a 1-byte `from` (-22 on kernels whose helper is the legacy one, which takes only multiples of 4), and at the end
 * "DONE". As PID 1 it mounts /proc and /sys first and powers the machine off last.
 * Built statically by csum/kernel/qemu/loader.py with the guest architecture's gcc against Debian's libbpf.a,
 * libelf.a, libz.a and libzstd.a of that architecture.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/reboot.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef BPF_F_TEST_SKB_CHECKSUM_COMPLETE
#define BPF_F_TEST_SKB_CHECKSUM_COMPLETE (1U << 2) /* include/uapi/linux/bpf.h since 6.11 */
#endif
#define MAX_PACKET (1 << 16)
#define SKB_CTX_SIZE 192 /* sizeof(struct __sk_buff) as csum/kernel/syscall.py uses it */
#define LOG_LINES 60

static struct bpf_object *obj;
static struct bpf_program *prog;
static unsigned char ctx[SKB_CTX_SIZE];
static int have_ctx, prog_fd = -1, is_tc;
static char logged[LOG_LINES][512];
static int nlogged;

static void print_file(const char *path, const char *tag)
{
	char line[512];
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("%s -%d\n", tag, errno);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		printf("%s %s\n", tag, line);
	}
	fclose(f);
}

static void print_hwprobe(void)
{
#if defined(__riscv) && __riscv_xlen == 64
	/* struct riscv_hwprobe { __s64 key; __u64 value; }; __NR_riscv_hwprobe is 258 (asm-generic table). */
	struct { int64_t key; uint64_t value; } pairs[2] = { { 5, 0 }, { 9, 0 } };
	int i;
	if (syscall(258, pairs, 2, 0, NULL, 0) != 0) {
		printf("HWPROBE - -%d\n", errno);
		return;
	}
	for (i = 0; i < 2; i++)
		printf("HWPROBE %lld %llu\n", (long long)pairs[i].key, (unsigned long long)pairs[i].value);
#endif
}

static int keep_log(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char *nl;
	(void)level;
	if (nlogged == LOG_LINES) {
		memmove(logged[0], logged[1], sizeof(logged[0]) * (LOG_LINES - 1));
		nlogged--;
	}
	vsnprintf(logged[nlogged], sizeof(logged[0]), fmt, args);
	while ((nl = strchr(logged[nlogged], '\n')))
		*nl = ' ';
	nlogged++;
	return 0;
}

static int unhex(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex), i;
	if (n % 2 || n / 2 > max)
		return -1;
	for (i = 0; i < n / 2; i++) {
		unsigned int byte;
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return -1;
		out[i] = (unsigned char)byte;
	}
	return (int)(n / 2);
}

static void puthex(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;
	for (i = 0; i < n; i++) {
		putchar(digits[p[i] >> 4]);
		putchar(digits[p[i] & 15]);
	}
}

/* bpf_csum_diff(from = 1 byte on the stack, 0, to = NULL, 0, seed 0): -EINVAL on the legacy helper. */
static void probe(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_5, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_csum_diff },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned char pkt[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = pkt, .data_size_in = sizeof(pkt), .repeat = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "probe", "GPL", insns, sizeof(insns) / sizeof(insns[0]), NULL);
	if (fd < 0) {
		printf("PROBE ? %d\n", fd);
		return;
	}
	if (bpf_prog_test_run_opts(fd, &run))
		printf("PROBE ? %d\n", -errno);
	else
		printf("PROBE %d\n", (int)run.retval);
	close(fd);
}

static void open_obj(const char *path)
{
	struct bpf_map *m;
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		printf("OPEN %d\n", -errno);
		return;
	}
	bpf_object__for_each_map(m, obj)
		bpf_map__set_pin_path(m, NULL);
	printf("OPEN 0\n");
}

static void choose(const char *name, int type)
{
	struct bpf_program *p;
	if (!obj)
		return;
	bpf_object__for_each_program(p, obj) {
		int me = !strcmp(bpf_program__name(p), name);
		bpf_program__set_autoload(p, me);
		if (me)
			prog = p;
	}
	if (prog && type)
		bpf_program__set_type(prog, (enum bpf_prog_type)type);
	if (prog) {
		enum bpf_prog_type t = bpf_program__type(prog);
		is_tc = t == BPF_PROG_TYPE_SCHED_CLS || t == BPF_PROG_TYPE_SCHED_ACT;
	}
	printf("PROG %s %d\n", name, prog ? 0 : -ENOENT);
}

static void set_init(char *args)
{
	static unsigned char value[1 << 20];
	char *hex = strchr(args, ' ');
	struct bpf_map *m;
	int n, rc = -EINVAL;
	if (obj && hex) {
		*hex++ = 0;
		m = bpf_object__find_map_by_name(obj, args);
		n = unhex(hex, value, sizeof(value));
		rc = !m ? -ENOENT : n < 0 ? -EINVAL : bpf_map__set_initial_value(m, value, (size_t)n);
	}
	printf("INIT %s %d\n", args, rc);
}

static void load(void)
{
	int rc, i;
	if (!obj || !prog) {
		printf("LOAD %d\n", -ENOENT);
		return;
	}
	nlogged = 0;
	rc = bpf_object__load(obj);
	if (rc) {
		printf("LOAD %d\n", rc);
		for (i = 0; i < nlogged; i++)
			printf("LOG %s\n", logged[i]);
		return;
	}
	prog_fd = bpf_program__fd(prog);
	printf("LOAD 0\n");
}

static void update(char *args)
{
	static unsigned char key[4096], value[1 << 16];
	char name[256], khex[8193], vhex[(1 << 17) + 1];
	struct bpf_map *m;
	int nk, nv, rc = -EINVAL;
	if (sscanf(args, "%255s %8192s %131072s", name, khex, vhex) == 3 && obj) {
		m = bpf_object__find_map_by_name(obj, name);
		nk = unhex(khex, key, sizeof(key));
		nv = unhex(vhex, value, sizeof(value));
		rc = !m ? -ENOENT : nk < 0 || nv < 0 ? -EINVAL
			: bpf_map__update_elem(m, key, (size_t)nk, value, (size_t)nv, BPF_ANY);
	}
	printf("MAP %s %d\n", name, rc);
}

static int test_run(const unsigned char *in, int n, unsigned char *out, unsigned *size_out, unsigned *retval,
		    unsigned flags)
{
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = in, .data_size_in = (unsigned)n, .data_out = out,
		    .data_size_out = MAX_PACKET, .repeat = 1, .flags = flags);
	if (is_tc && have_ctx) {
		run.ctx_in = ctx;
		run.ctx_size_in = sizeof(ctx);
	}
	if (bpf_prog_test_run_opts(prog_fd, &run))
		return -errno;
	*size_out = run.data_size_out;
	*retval = run.retval;
	return 0;
}

static void packet(char *args)
{
	static unsigned char in[MAX_PACKET], out[MAX_PACKET];
	char *hex = strchr(args, ' ');
	unsigned size_out = 0, retval = 0;
	int n, rc;
	if (!hex || prog_fd < 0)
		return;
	*hex++ = 0;
	n = unhex(hex, in, sizeof(in));
	if (n < 0) {
		printf("ERR %s %d\n", args, -EINVAL);
		return;
	}
	rc = test_run(in, n, out, &size_out, &retval, 0);
	if (rc) {
		printf("ERR %s %d\n", args, rc);
		return;
	}
	printf("RES %s %u ", args, retval);
	puthex(out, size_out < MAX_PACKET ? size_out : MAX_PACKET);
	putchar('\n');
	if (is_tc) {
		static unsigned char spare[MAX_PACKET];
		unsigned size2, retval2;
		printf("CPL %s %d\n", args, test_run(in, n, spare, &size2, &retval2, BPF_F_TEST_SKB_CHECKSUM_COMPLETE));
	}
}

int main(int argc, char **argv)
{
	static char line[(1 << 18) + 512];
	const char *plan = argc > 1 ? argv[1] : "/plan.txt";
	int init = getpid() == 1;
	struct utsname u;
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (init) {
		mkdir("/proc", 0555);
		mount("proc", "/proc", "proc", 0, NULL);
		mkdir("/sys", 0555);
		mount("sysfs", "/sys", "sysfs", 0, NULL);
	}
	libbpf_set_print(keep_log);
	printf("CSUM-LOADER 1\n");
	if (uname(&u) == 0)
		printf("UNAME %s|%s|%s|%s\n", u.sysname, u.release, u.version, u.machine);
	print_file("/proc/cpuinfo", "CPU");
	print_hwprobe();
	probe();
	f = fopen(plan, "r");
	if (!f) {
		printf("PLAN %d\n", -errno);
	} else {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!strncmp(line, "obj ", 4))
				open_obj(line + 4);
			else if (!strncmp(line, "prog ", 5)) {
				char name[256];
				int type = 0;
				if (sscanf(line + 5, "%255s %d", name, &type) >= 1)
					choose(name, type);
			} else if (!strncmp(line, "init ", 5))
				set_init(line + 5);
			else if (!strcmp(line, "load"))
				load();
			else if (!strncmp(line, "map ", 4))
				update(line + 4);
			else if (!strncmp(line, "ctx ", 4))
				have_ctx = unhex(line + 4, ctx, sizeof(ctx)) == SKB_CTX_SIZE;
			else if (!strncmp(line, "pkt ", 4))
				packet(line + 4);
		}
		fclose(f);
	}
	if (obj)
		bpf_object__close(obj);
	printf("DONE\n");
	fflush(stdout);
	if (init) {
		sync();
		reboot(RB_POWER_OFF);
	}
	return 0;
}
