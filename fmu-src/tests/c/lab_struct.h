/*
 * lab_struct.h: the struct lab_writer.c writes, as a lab's header declares it
 * (natural alignment: the compiler pads), and the values of write n. The
 * interface file of tests/lab_program.rs declares its fields up to `name`;
 * tests/interfaces/lab_struct.toml and lab_exact.toml all of them.
 */
#ifndef LAB_STRUCT_H
#define LAB_STRUCT_H

#include <stdint.h>
#include <stdio.h>

#define LAB_OFFSET 4096u  /* where the struct lies on the card */
#define STOP_OFFSET 8192u /* the FMU's master sets this word to stop the writer */
#define LAB_FLAG 0x600DF00Du

typedef struct LabStruct {
    uint32_t marker; /* the handshake's: a seqlock counter, or the flag */
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16[3];
    uint32_t u32;
    uint64_t u64;
    float f[2];
    double d[3];
    uint8_t on; /* a one-byte boolean */
    char name[7];
    uint64_t count; /* past 2^53: exact in FMI 3.0's UInt64, not in a Real */
    uint8_t flags[5];
} LabStruct;

/* The values of write n (the marker aside), host order. */
static inline void lab_values(LabStruct *v, uint64_t n) {
    v->i8 = (int8_t)(n % 256 - 128);
    v->i16 = (int16_t)(n * 3 % 65536 - 32768);
    v->i32 = (int32_t)(n * 7) - 1000000;
    v->i64 = -(int64_t)n * 1000000007;
    v->u8 = (uint8_t)(n & 0xff);
    for (int j = 0; j < 3; j++) v->u16[j] = (uint16_t)(n + (uint64_t)j);
    v->u32 = 4000000000u - (uint32_t)n;
    v->u64 = (1ull << 52) + n;
    for (int j = 0; j < 2; j++) v->f[j] = (float)n * 0.5f + (float)j;
    for (int j = 0; j < 3; j++) v->d[j] = (double)n * 0.001 + j;
    v->on = (uint8_t)(n & 1);
    snprintf(v->name, sizeof v->name, "n%05u", (unsigned)(n % 100000));
    v->count = (1ull << 60) + 2 * n + 1;
    for (int j = 0; j < 5; j++) v->flags[j] = (uint8_t)(n * 7 + (uint64_t)j);
}

#endif
