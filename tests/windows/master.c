/*
 * master.c: a minimal FMI 2.0 co-simulation master for Windows, as a Windows
 * user's tool would be: it loads an unpacked FMU's binaries/win64 DLL with
 * LoadLibrary, reads the value references and GUID from its
 * modelDescription.xml, and runs the attitude FMU (rfm_attitude) one of three
 * ways, checking every value it gets bit for bit:
 *
 *   master FMU_DIR self STEPS               one instance, its own peer
 *                                           (loopback:, lockstep lag 0)
 *   master FMU_DIR pair STEPS               two instances in one process
 *                                           (loopback:, lockstep lag 1)
 *   master FMU_DIR node ME STEPS DEVICE [WAIT [LIBRARY]]
 *                                           node ME (0 or 1) of a pair of
 *                                           processes in lockstep lag 0 over
 *                                           DEVICE (shm:NAME, \\.\rfm2gN, ...)
 *
 * FMU_DIR is the unpacked .fmu. Prints the median and p99 of a whole master
 * step (set + fmi2DoStep + get), timed in batches of 100 steps; exits 1 on the
 * first wrong value or failed call, after printing what the FMU logged.
 */
#include <windows.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* The FMI 2.0 C types this master uses (the standard's fmi2TypesPlatform.h
 * and fmi2FunctionTypes.h define them; these are the same ABI). */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef const char *fmi2String;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef unsigned int fmi2ValueReference;
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef struct {
    void (*logger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
    void *(*allocateMemory)(size_t, size_t);
    void (*freeMemory)(void *);
    void (*stepFinished)(fmi2ComponentEnvironment, fmi2Status);
    fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

typedef fmi2Component (*Instantiate)(fmi2String, fmi2Type, fmi2String, fmi2String,
                                     const fmi2CallbackFunctions *, fmi2Boolean, fmi2Boolean);
typedef fmi2Status (*SetupExperiment)(fmi2Component, fmi2Boolean, fmi2Real, fmi2Real,
                                      fmi2Boolean, fmi2Real);
typedef fmi2Status (*OneArg)(fmi2Component);
typedef fmi2Status (*SetReal)(fmi2Component, const fmi2ValueReference *, size_t, const fmi2Real *);
typedef fmi2Status (*GetReal)(fmi2Component, const fmi2ValueReference *, size_t, fmi2Real *);
typedef fmi2Status (*SetInteger)(fmi2Component, const fmi2ValueReference *, size_t,
                                 const fmi2Integer *);
typedef fmi2Status (*GetInteger)(fmi2Component, const fmi2ValueReference *, size_t, fmi2Integer *);
typedef fmi2Status (*SetString)(fmi2Component, const fmi2ValueReference *, size_t,
                                const fmi2String *);
typedef fmi2Status (*DoStep)(fmi2Component, fmi2Real, fmi2Real, fmi2Boolean);
typedef void (*FreeInstance)(fmi2Component);

static struct {
    Instantiate instantiate;
    SetupExperiment setup;
    OneArg enter, exit, terminate;
    SetReal set_real;
    GetReal get_real;
    SetInteger set_integer;
    GetInteger get_integer;
    SetString set_string;
    DoStep do_step;
    FreeInstance free_instance;
} fmi;

static char guid[128];
static char resources[MAX_PATH * 2];
static const double H = 1e-3;

/* Everything the FMU logs: its text is the format (every `%` doubled), with no arguments. */
static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
    (void)env;
    va_list args;
    va_start(args, message);
    if (status >= fmi2Warning) {
        printf("  [%s] %s (status %d): ", instance, category, (int)status);
        vprintf(message, args);
        putchar('\n');
    }
    va_end(args);
}

static void load(const char *dir) {
    HMODULE dll = load_dll(dir, "win64");
    attribute("guid", guid, sizeof guid);
    fmi.instantiate = (Instantiate)symbol(dll, "fmi2Instantiate");
    fmi.setup = (SetupExperiment)symbol(dll, "fmi2SetupExperiment");
    fmi.enter = (OneArg)symbol(dll, "fmi2EnterInitializationMode");
    fmi.exit = (OneArg)symbol(dll, "fmi2ExitInitializationMode");
    fmi.terminate = (OneArg)symbol(dll, "fmi2Terminate");
    fmi.set_real = (SetReal)symbol(dll, "fmi2SetReal");
    fmi.get_real = (GetReal)symbol(dll, "fmi2GetReal");
    fmi.set_integer = (SetInteger)symbol(dll, "fmi2SetInteger");
    fmi.get_integer = (GetInteger)symbol(dll, "fmi2GetInteger");
    fmi.set_string = (SetString)symbol(dll, "fmi2SetString");
    fmi.do_step = (DoStep)symbol(dll, "fmi2DoStep");
    fmi.free_instance = (FreeInstance)symbol(dll, "fmi2FreeInstance");
    /* file:///Z:/dir/resources: the URI of a Windows path. */
    char full[MAX_PATH * 2];
    if (!GetFullPathNameA(dir, sizeof full, full, NULL))
        die("GetFullPathName %s failed", dir);
    for (char *c = full; *c; c++)
        if (*c == '\\')
            *c = '/';
    snprintf(resources, sizeof resources, "file:///%s/resources", full);
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

static void check(fmi2Status status, const char *what, int node, long long k) {
    if (status != fmi2OK)
        die("node %d, step %lld: %s returned status %d", node, k, what, (int)status);
}

static fmi2Component instance(const char *name, const char *device, int me, int peer, int lag,
                              const char *wait, const char *library) {
    fmi2Component c = fmi.instantiate(name, fmi2CoSimulation, guid, resources, &callbacks, 0, 0);
    if (!c)
        die("fmi2Instantiate %s failed", name);
    fmi2ValueReference strings[] = {vr("device"), vr("waitStrategy"), vr("rfm2gLibrary")};
    fmi2String values[] = {device, wait ? wait : "spin", library};
    check(fmi.set_string(c, strings, library ? 3 : 2, values), "fmi2SetString", me, -1);
    fmi2ValueReference ints[] = {vr("nodeSlot"), vr("peerSlot"), vr("lag")};
    fmi2Integer slots[] = {me, peer, lag};
    check(fmi.set_integer(c, ints, 3, slots), "fmi2SetInteger", me, -1);
    const char *cpu = getenv("RFM_MASTER_CPU");
    if (cpu) {
        /* The real-time step: this thread on core CPU at a time-critical priority. */
        fmi2ValueReference affinity = vr("cpuAffinity"), priority = vr("realtimePriority");
        fmi2Integer ten = 10;
        check(fmi.set_string(c, &affinity, 1, &cpu), "fmi2SetString cpuAffinity", me, -1);
        check(fmi.set_integer(c, &priority, 1, &ten), "fmi2SetInteger realtimePriority", me, -1);
    }
    check(fmi.setup(c, 0, 0.0, 0.0, 0, 0.0), "fmi2SetupExperiment", me, -1);
    check(fmi.enter(c), "fmi2EnterInitializationMode", me, -1);
    return c;
}

static void expect(int reader, long long k, const double got[3], int sender, long long step) {
    double want[3];
    attitude(sender, step, want);
    if (memcmp(got, want, sizeof want) != 0)
        die("node %d, step %lld: got (%.17g, %.17g, %.17g), but node %d sent (%.17g, %.17g, "
            "%.17g) at step %lld",
            reader, k, got[0], got[1], got[2], sender, want[0], want[1], want[2], step);
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Steps timed together: Wine's performance counter ticks every 100 ns. */
#define BATCH 100

static void report(const char *what, double *ns, long long batches, long long steps) {
    long long warm = batches / 10;
    if (batches - warm < 1) {
        printf("%s: %lld steps, every value exact\n", what, steps);
        return;
    }
    qsort(ns + warm, (size_t)(batches - warm), sizeof *ns, by_value);
    printf("%s: %lld steps, every value exact; master step (set + fmi2DoStep + get), in batches "
           "of %d: median %.0f ns, p99 %.0f ns\n",
           what, steps, BATCH, ns[warm + (batches - warm) / 2],
           ns[warm + (batches - warm) * 99 / 100]);
}

/* This thread's cores (SetThreadAffinityMask returns the mask it replaces). */
static DWORD_PTR thread_cores(void) {
    DWORD_PTR process, system;
    GetProcessAffinityMask(GetCurrentProcess(), &process, &system);
    DWORD_PTR was = SetThreadAffinityMask(GetCurrentThread(), process);
    SetThreadAffinityMask(GetCurrentThread(), was);
    return was;
}

/* One instance stepping with `peer` as its own peer or another's, for `steps`
 * steps; `sender` is whose attitude it receives, `lag` steps late. */
static void run(fmi2Component *c, int n, const int *node, const int *sender, int lag,
                long long steps, const char *what) {
    fmi2ValueReference in[] = {vr("roll"), vr("pitch"), vr("yaw")};
    fmi2ValueReference out[] = {vr("peer.roll"), vr("peer.pitch"), vr("peer.yaw")};
    fmi2ValueReference step_vr = vr("peer.step");
    const char *cpu = getenv("RFM_MASTER_CPU");
    DWORD_PTR cores = thread_cores();
    int priority = GetThreadPriority(GetCurrentThread());
    for (int i = 0; i < n; i++)
        check(fmi.exit(c[i]), "fmi2ExitInitializationMode", node[i], -1);
    if (cpu) {
        DWORD_PTR want = (DWORD_PTR)1 << atoi(cpu);
        if (thread_cores() != want || GetThreadPriority(GetCurrentThread()) != THREAD_PRIORITY_TIME_CRITICAL)
            die("stepping: cores %#llx, priority %d; cpuAffinity %s asks %#llx and time-critical",
                (unsigned long long)thread_cores(), GetThreadPriority(GetCurrentThread()), cpu,
                (unsigned long long)want);
    }
    double *ns = malloc(sizeof(double) * (size_t)(steps / BATCH + 1));
    LARGE_INTEGER freq, t0, t1;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&t0);
    for (long long k = 0; k < steps; k++) {
        double own[3], got[3];
        for (int i = 0; i < n; i++) {
            attitude(node[i], k, own);
            check(fmi.set_real(c[i], in, 3, own), "fmi2SetReal", node[i], k);
        }
        for (int i = 0; i < n; i++)
            check(fmi.do_step(c[i], (double)k * H, H, 1), "fmi2DoStep", node[i], k);
        for (int i = 0; i < n; i++) {
            check(fmi.get_real(c[i], out, 3, got), "fmi2GetReal", node[i], k);
            if (k >= lag)
                expect(node[i], k, got, sender[i], k - lag);
        }
        if ((k + 1) % BATCH == 0) {
            QueryPerformanceCounter(&t1);
            ns[k / BATCH] = (double)(t1.QuadPart - t0.QuadPart) * 1e9 / (double)freq.QuadPart / BATCH;
            t0 = t1;
        }
        if (k == steps - 1) {
            fmi2Integer step;
            check(fmi.get_integer(c[0], &step_vr, 1, &step), "fmi2GetInteger", node[0], k);
            if (step != k - lag)
                die("node %d: peer.step is %d after step %lld at lag %d", node[0], step, k, lag);
        }
    }
    if (cpu) {
        fmi2ValueReference off_core = vr("cpu.offCore");
        fmi2Integer off;
        check(fmi.get_integer(c[0], &off_core, 1, &off), "fmi2GetInteger cpu.offCore", node[0], steps);
        if (off != 0)
            die("cpu.offCore is %d on core %s", off, cpu);
    }
    for (int i = 0; i < n; i++) {
        check(fmi.terminate(c[i]), "fmi2Terminate", node[i], steps);
        fmi.free_instance(c[i]);
    }
    if (cpu) {
        if (thread_cores() != cores || GetThreadPriority(GetCurrentThread()) != priority)
            die("after fmi2Terminate: cores %#llx, priority %d; before: %#llx, %d",
                (unsigned long long)thread_cores(), GetThreadPriority(GetCurrentThread()),
                (unsigned long long)cores, priority);
        printf("pinned on core %s, time-critical while stepping, cpu.offCore 0, put back at "
               "fmi2Terminate\n", cpu);
    }
    report(what, ns, steps / BATCH, steps);
    free(ns);
}

int main(int argc, char **argv) {
    if (argc < 4)
        die("usage: master FMU_DIR (self STEPS | pair STEPS | node ME STEPS DEVICE [WAIT "
            "[LIBRARY]])");
    load(argv[1]);
    const char *mode = argv[2];
    char device[64];
    snprintf(device, sizeof device, "loopback:master-%lu", GetCurrentProcessId());
    if (strcmp(mode, "self") == 0) {
        long long steps = atoll(argv[3]);
        fmi2Component c = instance("self", device, 0, 0, 0, NULL, NULL);
        int node = 0;
        run(&c, 1, &node, &node, 0, steps, "self-loop (loopback:, lag 0)");
    } else if (strcmp(mode, "pair") == 0) {
        long long steps = atoll(argv[3]);
        fmi2Component c[2] = {instance("a", device, 0, 1, 1, NULL, NULL),
                              instance("b", device, 1, 0, 1, NULL, NULL)};
        int node[2] = {0, 1}, sender[2] = {1, 0};
        run(c, 2, node, sender, 1, steps, "two instances in one process (loopback:, lag 1)");
    } else if (strcmp(mode, "node") == 0 && argc >= 6) {
        int me = atoi(argv[3]);
        long long steps = atoll(argv[4]);
        const char *wait = argc > 6 ? argv[6] : NULL;
        const char *library = argc > 7 ? argv[7] : NULL;
        char name[32], what[256];
        snprintf(name, sizeof name, "node%d", me);
        fmi2Component c = instance(name, argv[5], me, 1 - me, 0, wait, library);
        int peer = 1 - me;
        snprintf(what, sizeof what, "node %d of two processes (%s, lag 0, %s)", me, argv[5],
                 wait ? wait : "spin");
        run(&c, 1, &me, &peer, 0, steps, what);
    } else {
        die("unknown mode %s", mode);
    }
    return 0;
}
