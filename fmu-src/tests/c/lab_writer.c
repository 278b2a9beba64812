/*
 * lab_writer.c: a lab's existing RFM program, as the FMU meets it: it writes a
 * big-endian struct of every C type the interface file knows (arrays and
 * natural-alignment padding included) in place, field by field, at 1 kHz,
 * marking whole structs as its handshake says, until the FMU's master sets the
 * stop word. Built by the tests with cc against the RFM2g API (the emulator).
 *
 *   lab_writer DEVICE counter|flag|none
 *
 * Write n (1, 2, ...) holds values derived from n alone (lab_struct.h), so a
 * reader can tell a whole struct from a torn one. Prints the writes made.
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
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: lab_writer DEVICE counter|flag|none\n");
        return 1;
    }
    const char *mode = argv[2];
    RFM2GHANDLE handle = NULL;
    volatile void *mem = NULL;
    RFM2G_STATUS st = RFM2gOpen(argv[1], &handle);
    if (st == RFM2G_SUCCESS) st = RFM2gUserMemory(handle, &mem, 0, 4);
    if (st != RFM2G_SUCCESS) {
        fprintf(stderr, "lab_writer: %s: %s\n", argv[1], RFM2gErrorMsg(st));
        return 1;
    }
    volatile LabStruct *s = (volatile LabStruct *)((volatile char *)mem + LAB_OFFSET);
    volatile uint32_t *stop = (volatile uint32_t *)((volatile char *)mem + STOP_OFFSET);
    double next = now_s();
    uint64_t n = 0;
    while (*stop == 0) {
        n++;
        if (strcmp(mode, "counter") == 0) {
            s->marker = be32((uint32_t)(2 * n - 1)); /* odd: writing */
            __sync_synchronize();
            fields(s, n);
            __sync_synchronize();
            s->marker = be32((uint32_t)(2 * n)); /* even: whole */
        } else if (strcmp(mode, "flag") == 0) {
            s->marker = 0;
            __sync_synchronize();
            fields(s, n);
            __sync_synchronize();
            s->marker = be32(LAB_FLAG);
        } else {
            fields(s, n);
        }
        next += 0.001;
        sleep_until(next);
    }
    RFM2gUnMapUserMemory(handle, &mem, 4);
    RFM2gClose(&handle);
    printf("%llu\n", (unsigned long long)n);
    return 0;
}
