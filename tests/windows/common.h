/*
 * common.h: what tests/windows/master.c (FMI 2.0) and master3.c (FMI 3.0)
 * both need: failing with a message, reading the unpacked FMU's
 * modelDescription.xml, its attributes and value references, loading the
 * DLL and resolving its
 * exports, and the attitude each node sends (exact in binary floating point,
 * so that a peer's copy is compared bit for bit).
 */
#ifndef MASTER_COMMON_H
#define MASTER_COMMON_H

#include <windows.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* modelDescription.xml, read by the master's load(). */
static char *description;

static void die(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("master: ", stdout);
    vprintf(fmt, args);
    fputc('\n', stdout);
    va_end(args);
    fflush(stdout);
    exit(1);
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n)
        die("cannot read %s", path);
    text[n] = 0;
    fclose(f);
    return text;
}

/* The value reference of variable `name`, from modelDescription.xml. */
static unsigned int vr(const char *name) {
    char needle[128];
    snprintf(needle, sizeof needle, "name=\"%s\" valueReference=\"", name);
    const char *at = strstr(description, needle);
    if (!at)
        die("modelDescription.xml has no variable %s", name);
    return (unsigned int)strtoul(at + strlen(needle), NULL, 10);
}

/* The value of attribute `key` (`guid`, `modelIdentifier`...) in
 * modelDescription.xml, copied into `out`. */
static void attribute(const char *key, char *out, size_t size) {
    char needle[64];
    snprintf(needle, sizeof needle, "%s=\"", key);
    const char *at = strstr(description, needle);
    if (!at)
        die("modelDescription.xml has no %s", key);
    at += strlen(needle);
    size_t n = strcspn(at, "\"");
    if (n >= size)
        die("%s too long", key);
    memcpy(out, at, n);
    out[n] = 0;
}

/* Reads DIR's modelDescription.xml and loads its binary under `platform`
 * (binaries/PLATFORM/ID.dll). */
static HMODULE load_dll(const char *dir, const char *platform) {
    char path[MAX_PATH * 2], id[128];
    snprintf(path, sizeof path, "%s\\modelDescription.xml", dir);
    description = read_file(path);
    attribute("modelIdentifier", id, sizeof id);
    snprintf(path, sizeof path, "%s\\binaries\\%s\\%s.dll", dir, platform, id);
    HMODULE dll = LoadLibraryA(path);
    if (!dll)
        die("LoadLibrary %s failed: error %lu", path, GetLastError());
    return dll;
}

static void *symbol(HMODULE dll, const char *name) {
    void *f = (void *)GetProcAddress(dll, name);
    if (!f)
        die("the DLL does not export %s", name);
    return f;
}

/* Node `node`'s attitude at step k: exact in binary floating point, so the
 * peer's copy must equal it bit for bit. */
static void attitude(int node, long long k, double out[3]) {
    out[0] = node * 1000.0 + (double)k * 0.25;
    out[1] = -(double)k * 0.5 - node;
    out[2] = (double)(k % 4096) + node * 0.125;
}

#endif
