/*
 * lab_writer.c: a lab's existing RFM program, as the FMU meets it: it writes a
 * big-endian struct of every C type the interface file knows (arrays and
 * natural-alignment padding included) in place, field by field, at 1 kHz,
 * marking whole structs as its handshake says, until the FMU's master sets the
 * stop word. Built by the tests with cc against the RFM2g API (the emulator).
 *
 *   lab_writer DEVICE[+DEVICE] counter|after|flag|none
 *
 * Write n (1, 2, ...) holds values derived from n alone (lab_struct.h), so a
 * reader can tell a whole struct from a torn one. Prints the writes made.
 * With two devices (the boards of a redundant pair of rings) each write goes
 * to the first, then the second, as a lab's program writes both rings; the
 * stop word of either stops it (a ring may be cut).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_struct.h"
#include "portable.h"
#include "rfm2g_api.h"

static uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }
static uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
static uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }
static uint32_t bits32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static uint64_t bits64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* Every field but the marker, for write n, stored one by one as a program
 * writing its struct in place does. */
static void fields(volatile LabStruct *s, uint64_t n) {
    LabStruct v;
    lab_values(&v, n);
    s->i8 = v.i8;
    s->i16 = (int16_t)be16((uint16_t)v.i16);
    s->i32 = (int32_t)be32((uint32_t)v.i32);
    s->i64 = (int64_t)be64((uint64_t)v.i64);
    s->u8 = v.u8;
    for (int j = 0; j < 3; j++) s->u16[j] = be16(v.u16[j]);
    s->u32 = be32(v.u32);
    s->u64 = be64(v.u64);
    for (int j = 0; j < 2; j++) {
        uint32_t b = be32(bits32(v.f[j]));
        memcpy((void *)&s->f[j], &b, 4);
    }
    for (int j = 0; j < 3; j++) {
        uint64_t b = be64(bits64(v.d[j]));
        memcpy((void *)&s->d[j], &b, 8);
    }
    s->on = v.on;
    for (size_t j = 0; j < sizeof v.name; j++) s->name[j] = v.name[j];
    s->count = be64(v.count);
    for (int j = 0; j < 5; j++) s->flags[j] = v.flags[j];
}

/* Write n into one ring's struct, marked as `mode` says. */
static void write_struct(volatile LabStruct *s, const char *mode, uint64_t n) {
    if (strcmp(mode, "counter") == 0) {
        s->marker = be32((uint32_t)(2 * n - 1)); /* odd: writing */
        __sync_synchronize();
        fields(s, n);
        __sync_synchronize();
        s->marker = be32((uint32_t)(2 * n)); /* even: whole */
    } else if (strcmp(mode, "after") == 0) {
        fields(s, n);
        __sync_synchronize();
        s->marker = be32((uint32_t)n); /* counted once the struct is whole */
    } else if (strcmp(mode, "flag") == 0) {
        s->marker = 0;
        __sync_synchronize();
        fields(s, n);
        __sync_synchronize();
        s->marker = be32(LAB_FLAG);
    } else {
        fields(s, n);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: lab_writer DEVICE[+DEVICE] counter|after|flag|none\n");
        return 1;
    }
    const char *mode = argv[2];
    char *devices[2] = {argv[1], NULL};
    char *plus = strchr(argv[1], '+');
    if (plus != NULL) {
        *plus = '\0';
        devices[1] = plus + 1;
    }
    int rings = devices[1] != NULL ? 2 : 1;
    RFM2GHANDLE handle[2] = {NULL, NULL};
    volatile void *mem[2] = {NULL, NULL};
    volatile LabStruct *s[2];
    volatile uint32_t *stop[2];
    for (int r = 0; r < rings; r++) {
        RFM2G_STATUS st = RFM2gOpen(devices[r], &handle[r]);
        if (st == RFM2G_SUCCESS) st = RFM2gUserMemory(handle[r], &mem[r], 0, 4);
        if (st != RFM2G_SUCCESS) {
            fprintf(stderr, "lab_writer: %s: %s\n", devices[r], RFM2gErrorMsg(st));
            return 1;
        }
        s[r] = (volatile LabStruct *)((volatile char *)mem[r] + LAB_OFFSET);
        stop[r] = (volatile uint32_t *)((volatile char *)mem[r] + STOP_OFFSET);
    }
    double next = now_s();
    uint64_t n = 0;
    while (*stop[0] == 0 && (rings == 1 || *stop[1] == 0)) {
        n++;
        for (int r = 0; r < rings; r++) write_struct(s[r], mode, n);
        next += 0.001;
        sleep_until(next);
    }
    for (int r = 0; r < rings; r++) {
        RFM2gUnMapUserMemory(handle[r], &mem[r], 4);
        RFM2gClose(&handle[r]);
    }
    printf("%llu\n", (unsigned long long)n);
    return 0;
}
