/*
 * portable.h: the few OS calls of sender.c and receiver.c, on Linux and on
 * Windows (MinGW-w64, as C or C++). Windows follows the article: Sleep and the
 * performance counter; the receiver's poll yields with SwitchToThread, the
 * article's Sleep(0).
 */
#ifndef PORTABLE_H
#define PORTABLE_H

#ifdef _WIN32
#include <windows.h>

/* Seconds on a monotonic clock. */
static inline double now_s(void) {
    LARGE_INTEGER frequency, count;
    QueryPerformanceFrequency(&frequency);
    QueryPerformanceCounter(&count);
    return (double)count.QuadPart / (double)frequency.QuadPart;
}

/* Gives the CPU to another ready thread, if any. */
static inline void yield_cpu(void) { SwitchToThread(); }

/* Sleeps until now_s() reaches `t`: Sleep(1) lasts 1-15 ms (the article's table),
 * so it only covers waits longer than 2 ms; the rest yields. */
static inline void sleep_until(double t) {
    for (;;) {
        double left = t - now_s();
        if (left <= 0)
            return;
        if (left > 0.002)
            Sleep(1);
        else
            SwitchToThread();
    }
}
#else
#include <sched.h>
#include <time.h>

static inline double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline void yield_cpu(void) { sched_yield(); }

static inline void sleep_until(double t) {
    struct timespec at;
    at.tv_sec = (time_t)t;
    at.tv_nsec = (long)((t - (double)at.tv_sec) * 1e9);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
}
#endif

#endif
