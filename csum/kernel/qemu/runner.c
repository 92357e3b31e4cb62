/*
 * csum kernel-check runner: the /init of the one-file initramfs that
 * `csum kernel-check --qemu` boots (part of csum, not kernel code).
 *
 * It knows nothing about checksums. It reads a plan (default /plan.txt),
 * one command per line, and answers each on stdout (the kernel console):
 *
 *   jit N                          write N to /proc/sys/net/core/bpf_jit_enable
 *                                  -> "JIT-SET N 0" or "JIT-SET N -errno"
 *   prog NAME HEX                  BPF_PROG_LOAD (BPF_PROG_TYPE_SCHED_CLS) of the
 *                                  instructions HEX (already in this CPU's byte order)
 *                                  -> "PROG NAME 0" or "PROG NAME -errno" + "LOG ..." lines
 *   run ID NAME OUT C0 C1 C2 C3 C4 HEX
 *                                  BPF_PROG_TEST_RUN of program NAME on packet HEX with
 *                                  __sk_buff.cb[0..4] = C0..C4 (decimal u32), keeping
 *                                  OUT bytes of the packet it leaves
 *                                  -> "RES ID RETVAL C0 C1 C2 C3 C4 HEXOUT" or "ERR ID -errno"
 *
 * Before the plan it prints "UNAME" (uname(2)), "CPU" (every line of
 * /proc/cpuinfo), "JIT" (the current bpf_jit_enable, or -errno) and, on
 * riscv64, "HWPROBE KEY VALUE" for riscv_hwprobe(2) keys 5 (CPUPERF_0) and 9
 * (MISALIGNED_SCALAR_PERF): whether the kernel found unaligned access fast,
 * which selects its csum code path; at the end "DONE". As PID 1 it mounts /proc first and powers the machine off last.
 * Built statically by csum/kernel/qemu/guest.py with the Debian cross gcc of
 * the guest's architecture, or clang against that architecture's Debian libc
 * (csum/kernel/qemu/toolchain.py).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/reboot.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_PROGS 64
#define LOG_SIZE (1 << 16)
#define SKB_CTX_SIZE 192 /* sizeof(struct __sk_buff) as csum/kernel/syscall.py uses it */
#define SKB_CB 48

static struct { char name[32]; int fd; } progs[MAX_PROGS];
static int nprogs;
static char logbuf[LOG_SIZE];

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
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

static void set_jit(const char *value)
{
	int fd = open("/proc/sys/net/core/bpf_jit_enable", O_WRONLY), rc = 0;
	if (fd < 0 || write(fd, value, strlen(value)) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	printf("JIT-SET %s %d\n", value, rc);
}

static void load(const char *name, const char *hex)
{
	static unsigned char insns[1 << 16];
	union bpf_attr attr;
	int n = unhex(hex, insns, sizeof(insns)), fd;
	if (n < 0 || nprogs == MAX_PROGS || strlen(name) >= sizeof(progs[0].name)) {
		printf("PROG %s -%d\n", name, EINVAL);
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.insn_cnt = (unsigned)n / 8;
	attr.insns = (uintptr_t)insns;
	attr.license = (uintptr_t)"GPL";
	attr.log_buf = (uintptr_t)logbuf;
	attr.log_size = LOG_SIZE;
	attr.log_level = 1;
	logbuf[0] = 0;
	fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		char *line, *save;
		printf("PROG %s -%d\n", name, errno);
		for (line = strtok_r(logbuf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			printf("LOG %s\n", line);
		return;
	}
	strcpy(progs[nprogs].name, name);
	progs[nprogs++].fd = fd;
	printf("PROG %s 0\n", name);
}

static void run(char *args)
{
	static unsigned char in[1 << 16], out[1 << 16];
	unsigned char ctx_in[SKB_CTX_SIZE], ctx_out[SKB_CTX_SIZE];
	static char hex[(1 << 17) + 1];
	char id[64], name[32];
	unsigned long cb[5], size_out;
	union bpf_attr attr;
	uint32_t cbv[5];
	int i, fd = -1, n;

	if (sscanf(args, "%63s %31s %lu %lu %lu %lu %lu %lu %131072s", id, name, &size_out, &cb[0], &cb[1], &cb[2],
		   &cb[3], &cb[4], hex) != 9 || size_out > sizeof(out)) {
		printf("ERR ? -%d\n", EINVAL);
		return;
	}
	for (i = 0; i < nprogs; i++)
		if (!strcmp(progs[i].name, name))
			fd = progs[i].fd;
	n = unhex(hex, in, sizeof(in));
	if (fd < 0 || n < 0) {
		printf("ERR %s -%d\n", id, fd < 0 ? ENOENT : EINVAL);
		return;
	}
	memset(ctx_in, 0, sizeof(ctx_in));
	memset(ctx_out, 0, sizeof(ctx_out));
	for (i = 0; i < 5; i++)
		cbv[i] = (uint32_t)cb[i];
	memcpy(ctx_in + SKB_CB, cbv, sizeof(cbv));
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	attr.test.data_in = (uintptr_t)in;
	attr.test.data_size_in = (unsigned)n;
	attr.test.data_out = size_out ? (uintptr_t)out : 0;
	attr.test.data_size_out = (unsigned)size_out;
	attr.test.repeat = 1;
	attr.test.ctx_in = (uintptr_t)ctx_in;
	attr.test.ctx_size_in = sizeof(ctx_in);
	attr.test.ctx_out = (uintptr_t)ctx_out;
	attr.test.ctx_size_out = sizeof(ctx_out);
	if (sys_bpf(BPF_PROG_TEST_RUN, &attr) < 0) {
		printf("ERR %s -%d\n", id, errno);
		return;
	}
	memcpy(cbv, ctx_out + SKB_CB, sizeof(cbv));
	printf("RES %s %u %u %u %u %u %u ", id, attr.test.retval, cbv[0], cbv[1], cbv[2], cbv[3], cbv[4]);
	puthex(out, size_out < attr.test.data_size_out ? size_out : attr.test.data_size_out);
	putchar('\n');
}

int main(int argc, char **argv)
{
	static char line[(1 << 18)];
	const char *plan = argc > 1 ? argv[1] : "/plan.txt";
	int init = getpid() == 1;
	struct utsname u;
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (init) {
		mkdir("/proc", 0555);
		mount("proc", "/proc", "proc", 0, NULL);
	}
	printf("CSUM-RUNNER 1\n");
	if (uname(&u) == 0)
		printf("UNAME %s|%s|%s|%s\n", u.sysname, u.release, u.version, u.machine);
	print_file("/proc/cpuinfo", "CPU");
	print_file("/proc/sys/net/core/bpf_jit_enable", "JIT");
	print_hwprobe();
	f = fopen(plan, "r");
	if (!f) {
		printf("PLAN -%d\n", errno);
	} else {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!strncmp(line, "jit ", 4)) {
				set_jit(line + 4);
			} else if (!strncmp(line, "prog ", 5)) {
				char *name = line + 5, *hex = strchr(name, ' ');
				if (hex) {
					*hex++ = 0;
					load(name, hex);
				}
			} else if (!strncmp(line, "run ", 4)) {
				run(line + 4);
			}
		}
		fclose(f);
	}
	printf("DONE\n");
	fflush(stdout);
	if (init) {
		sync();
		reboot(RB_POWER_OFF);
	}
	return 0;
}
