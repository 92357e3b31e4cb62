/*
 * bench/verify_floor.c: the floor under `csum verify` in process (bench.verify_pcap's "C floor" rows): a bare C
 * loop that mmaps a classic little-endian pcap of Ethernet frames and checks what a plain capture holds, with
 * nothing else around it: no chunks, no Python, no reassembly, no tunnels, no rows.
 *
 *   verify_floor FILE      prints "packets P fields F bad B ns T cpu_ns C" (T: the loop's time, the mmap included;
 *                          C: the CPU time the process spent over the same span, user and system)
 *
 * Checked: the IPv4 header checksum (options included), and the TCP or UDP checksum of an IPv4 packet that is not
 * a fragment or of an IPv6 packet whose next header is TCP or UDP, behind Ethernet and up to two 802.1Q/802.1ad
 * tags. A UDP checksum of 0 over IPv4 counts as absent (RFC 768). Packets it does not know (IPv6 extension
 * headers, tunnels' inner packets, fragments) are counted and passed over: it does less than csum, never more, so
 * it is a floor. Its bad packets are csum's on the workloads where it sees every checksum (the bench compares
 * them). The one's-complement sum is RFC 1071's, 32-bit words into a 64-bit accumulator.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline uint32_t be16(const uint8_t *p) { return ((uint32_t)p[0] << 8) | p[1]; }

/* The 16-bit one's-complement sum of p[0:n] (big-endian words, an odd last byte padded), added to `s`. */
static uint64_t sum(const uint8_t *p, size_t n, uint64_t s)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        s += ((uint64_t)be16(p + i) << 16 | be16(p + i + 2));
    for (; i + 2 <= n; i += 2)
        s += be16(p + i);
    if (i < n)
        s += (uint64_t)p[i] << 8;
    return s;
}

static inline uint32_t fold(uint64_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint32_t)s;
}

/* 1 when the transport checksum of seg[0:len] over `pseudo` is right, 0 when wrong, -1 when absent. */
static int transport(const uint8_t *seg, size_t len, int proto, uint64_t pseudo, int v4)
{
    if (proto == 17 && len >= 8 && v4 && be16(seg + 6) == 0)
        return -1;
    if ((proto == 6 && len < 20) || (proto == 17 && len < 8))
        return -1;
    return fold(sum(seg, len, pseudo + (uint64_t)proto + len)) == 0xffff;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: verify_floor FILE\n");
        return 2;
    }
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 24) {
        perror(argv[1]);
        return 2;
    }
    const uint8_t *b = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (b == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    uint32_t magic;
    memcpy(&magic, b, 4);
    if (magic != 0xa1b2c3d4u) {
        fprintf(stderr, "%s: not a little-endian microsecond pcap\n", argv[1]);
        return 2;
    }
    size_t at = 24, size = (size_t)st.st_size;
    unsigned long packets = 0, fields = 0, bad = 0;
    while (at + 16 <= size) {
        uint32_t caplen;
        memcpy(&caplen, b + at + 8, 4);
        const uint8_t *f = b + at + 16;
        at += 16 + (size_t)caplen;
        if (at > size)
            break;
        packets++;
        size_t l3 = 12;
        uint32_t type = caplen >= 14 ? be16(f + l3) : 0;
        for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8) && l3 + 6 <= caplen; tags++) {
            l3 += 4;
            type = be16(f + l3);
        }
        l3 += 2;
        int bad_here = 0;
        if (type == 0x0800 && l3 + 20 <= caplen && f[l3] >> 4 == 4) {
            const uint8_t *ip = f + l3;
            size_t ihl = (size_t)(ip[0] & 15) * 4, total = be16(ip + 2);
            if (ihl < 20 || total < ihl || l3 + total > caplen)
                continue;
            fields++;
            bad_here |= fold(sum(ip, ihl, 0)) != 0xffff;
            if ((be16(ip + 6) & 0x3fff) == 0 && (ip[9] == 6 || ip[9] == 17)) {
                int ok = transport(ip + ihl, total - ihl, ip[9], sum(ip + 12, 8, 0), 1);
                fields += ok >= 0;
                bad_here |= ok == 0;
            }
        } else if (type == 0x86dd && l3 + 40 <= caplen && f[l3] >> 4 == 6) {
            const uint8_t *ip = f + l3;
            size_t len = be16(ip + 4);
            if (l3 + 40 + len <= caplen && (ip[6] == 6 || ip[6] == 17)) {
                int ok = transport(ip + 40, len, ip[6], sum(ip + 8, 32, 0), 0);
                fields += ok >= 0;
                bad_here |= ok == 0;
            }
        }
        bad += bad_here;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    long long ns = (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    long long cpu = (long long)(c1.tv_sec - c0.tv_sec) * 1000000000LL + (c1.tv_nsec - c0.tv_nsec);
    printf("packets %lu fields %lu bad %lu ns %lld cpu_ns %lld\n", packets, fields, bad, ns, cpu);
    munmap((void *)b, size);
    close(fd);
    return 0;
}
