/*
 * master3.c: a minimal FMI 3.0 co-simulation master for Windows, as
 * master.c is for FMI 2.0: it loads an unpacked FMI 3.0 FMU's
 * binaries/x86_64-windows DLL with LoadLibrary, reads the value references
 * and instantiation token from its modelDescription.xml, and runs the
 * attitude FMU's FMI 3.0 face (build-fmu --fmi 3) one of three ways,
 * checking every value it gets bit for bit:
 *
 *   master3 FMU_DIR pair STEPS              two instances in one process
 *                                           (loopback:, lockstep lag 1)
 *   master3 FMU_DIR early STEPS             two instances at lag 0 stepped by
 *                                           one thread, which only an early
 *                                           return allows: node 0's step
 *                                           returns early, node 1 steps, node
 *                                           0's next call ends its step
 *   master3 FMU_DIR node ME STEPS DEVICE [LIBRARY]
 *                                           node ME (0 or 1) of a pair of
 *                                           processes in lockstep lag 0 over
 *                                           DEVICE (shm:NAME, \\.\rfm2gN, ...)
 *
 * Exits 1 on the first wrong value or failed call, after printing what the
 * FMU logged.
 */
#include <stdbool.h>
#include <stdint.h>

#include "common.h"

/* The FMI 3.0 C types this master uses (fmi3PlatformTypes.h and
 * fmi3FunctionTypes.h define them; these are the same ABI). */
typedef void *fmi3Instance;
typedef uint32_t fmi3ValueReference;
typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;
typedef void (*LogMessage)(void *env, fmi3Status status, const char *category,
                           const char *message);
typedef fmi3Instance (*Instantiate)(const char *, const char *, const char *, bool, bool, bool,
                                    bool, const fmi3ValueReference *, size_t, void *,
                                    LogMessage, void *);
typedef fmi3Status (*EnterInit)(fmi3Instance, bool, double, double, bool, double);
typedef fmi3Status (*OneArg)(fmi3Instance);
typedef fmi3Status (*Float64s)(fmi3Instance, const fmi3ValueReference *, size_t, double *,
                               size_t);
typedef fmi3Status (*SetFloat64)(fmi3Instance, const fmi3ValueReference *, size_t,
                                 const double *, size_t);
typedef fmi3Status (*Int32s)(fmi3Instance, const fmi3ValueReference *, size_t, int32_t *,
                             size_t);
typedef fmi3Status (*SetInt32)(fmi3Instance, const fmi3ValueReference *, size_t,
                               const int32_t *, size_t);
typedef fmi3Status (*SetString)(fmi3Instance, const fmi3ValueReference *, size_t,
                                const char *const *, size_t);
typedef fmi3Status (*DoStep)(fmi3Instance, double, double, bool, bool *, bool *, bool *,
                             double *);
typedef void (*FreeInstance)(fmi3Instance);

static struct {
    Instantiate instantiate;
    EnterInit enter;
    OneArg exit, terminate;
    SetFloat64 set_float64;
    Float64s get_float64;
    SetInt32 set_int32;
    Int32s get_int32;
    SetString set_string;
    DoStep do_step;
    FreeInstance free_instance;
} fmi;

static char token[128];
static char resources[MAX_PATH * 2];
static const double H = 1e-3;

static void logger(void *env, fmi3Status status, const char *category, const char *message) {
    (void)env;
    if (status >= fmi3Warning)
        printf("  %s (status %d): %s\n", category, (int)status, message);
}

static void load(const char *dir) {
    HMODULE dll = load_dll(dir, "x86_64-windows");
    if (!strstr(description, "fmiVersion=\"3.0\""))
        die("%s's description is no FMI 3.0 one", dir);
    attribute("instantiationToken", token, sizeof token);
    fmi.instantiate = (Instantiate)symbol(dll, "fmi3InstantiateCoSimulation");
    fmi.enter = (EnterInit)symbol(dll, "fmi3EnterInitializationMode");
    fmi.exit = (OneArg)symbol(dll, "fmi3ExitInitializationMode");
    fmi.terminate = (OneArg)symbol(dll, "fmi3Terminate");
    fmi.set_float64 = (SetFloat64)symbol(dll, "fmi3SetFloat64");
    fmi.get_float64 = (Float64s)symbol(dll, "fmi3GetFloat64");
    fmi.set_int32 = (SetInt32)symbol(dll, "fmi3SetInt32");
    fmi.get_int32 = (Int32s)symbol(dll, "fmi3GetInt32");
    fmi.set_string = (SetString)symbol(dll, "fmi3SetString");
    fmi.do_step = (DoStep)symbol(dll, "fmi3DoStep");
    fmi.free_instance = (FreeInstance)symbol(dll, "fmi3FreeInstance");
    /* FMI 3.0's resourcePath is a native path with its separator at the end. */
    char path[MAX_PATH * 2];
    snprintf(path, sizeof path, "%s\\resources\\", dir);
    if (!GetFullPathNameA(path, sizeof resources, resources, NULL))
        die("GetFullPathName %s failed", path);
}

static void check(fmi3Status status, const char *what, int node, long long k) {
    if (status != fmi3OK)
        die("node %d, step %lld: %s returned status %d", node, k, what, (int)status);
}

static fmi3Instance instance(const char *name, const char *device, int me, int lag, bool early,
                             const char *library) {
    fmi3Instance c = fmi.instantiate(name, token, resources, false, true, false, early, NULL, 0,
                                     NULL, logger, NULL);
    if (!c)
        die("fmi3InstantiateCoSimulation %s failed", name);
    fmi3ValueReference strings[] = {vr("device"), vr("rfm2gLibrary")};
    const char *values[] = {device, library};
    check(fmi.set_string(c, strings, library ? 2 : 1, values, library ? 2 : 1),
          "fmi3SetString", me, -1);
    fmi3ValueReference ints[] = {vr("nodeSlot"), vr("peerSlot"), vr("lag")};
    int32_t slots[] = {me, 1 - me, lag};
    check(fmi.set_int32(c, ints, 3, slots, 3), "fmi3SetInt32", me, -1);
    check(fmi.enter(c, false, 0.0, 0.0, false, 0.0), "fmi3EnterInitializationMode", me, -1);
    return c;
}

/* A step of node `me` at step k: whether it returned early; the time it
 * reached must be k's end, or its start for an early return. */
static bool step(fmi3Instance c, int me, long long k) {
    bool event = true, terminate = true, early = true;
    double reached = -1.0, t = (double)k * H;
    check(fmi.do_step(c, t, H, true, &event, &terminate, &early, &reached), "fmi3DoStep", me, k);
    if (event || terminate)
        die("node %d, step %lld: eventHandlingNeeded %d, terminateSimulation %d", me, k,
            event, terminate);
    if (reached != (early ? t : t + H))
        die("node %d, step %lld: lastSuccessfulTime %.17g (earlyReturn %d)", me, k, reached,
            early);
    return early;
}

static void expect(fmi3Instance c, int me, long long k, long long step_of_peer) {
    fmi3ValueReference out[] = {vr("peer.roll"), vr("peer.pitch"), vr("peer.yaw")};
    double got[3], want[3];
    check(fmi.get_float64(c, out, 3, got, 3), "fmi3GetFloat64", me, k);
    attitude(1 - me, step_of_peer, want);
    if (memcmp(got, want, sizeof want) != 0)
        die("node %d, step %lld: got (%.17g, %.17g, %.17g), but node %d sent (%.17g, %.17g, "
            "%.17g) at step %lld",
            me, k, got[0], got[1], got[2], 1 - me, want[0], want[1], want[2], step_of_peer);
}

static void feed(fmi3Instance c, int me, long long k) {
    fmi3ValueReference in[] = {vr("roll"), vr("pitch"), vr("yaw")};
    double own[3];
    attitude(me, k, own);
    check(fmi.set_float64(c, in, 3, own, 3), "fmi3SetFloat64", me, k);
}

static void end(fmi3Instance *c, int n, long long steps) {
    for (int i = 0; i < n; i++) {
        check(fmi.terminate(c[i]), "fmi3Terminate", i, steps);
        fmi.free_instance(c[i]);
    }
}

int main(int argc, char **argv) {
    if (argc < 4)
        die("usage: master3 FMU_DIR (pair STEPS | early STEPS | node ME STEPS DEVICE "
            "[LIBRARY])");
    load(argv[1]);
    const char *mode = argv[2];
    char device[64];
    snprintf(device, sizeof device, "loopback:master3-%lu", GetCurrentProcessId());
    if (strcmp(mode, "pair") == 0) {
        long long steps = atoll(argv[3]);
        fmi3Instance c[2] = {instance("a", device, 0, 1, false, NULL),
                             instance("b", device, 1, 1, false, NULL)};
        for (int i = 0; i < 2; i++)
            check(fmi.exit(c[i]), "fmi3ExitInitializationMode", i, -1);
        for (long long k = 0; k < steps; k++) {
            for (int i = 0; i < 2; i++) {
                feed(c[i], i, k);
                if (step(c[i], i, k))
                    die("node %d, step %lld returned early, which it was not allowed", i, k);
            }
            for (int i = 0; i < 2; i++)
                if (k >= 1)
                    expect(c[i], i, k, k - 1);
        }
        end(c, 2, steps);
        printf("two FMI 3.0 instances in one process (loopback:, lag 1): %lld steps, every "
               "value exact\n", steps);
    } else if (strcmp(mode, "early") == 0) {
        long long steps = atoll(argv[3]), early = 0;
        fmi3Instance c[2] = {instance("early", device, 0, 0, true, NULL),
                             instance("plain", device, 1, 0, false, NULL)};
        for (int i = 0; i < 2; i++)
            check(fmi.exit(c[i]), "fmi3ExitInitializationMode", i, -1);
        for (long long k = 0; k < steps; k++) {
            feed(c[0], 0, k);
            feed(c[1], 1, k);
            /* Node 1 has not stepped: node 0's step waits, then returns early. */
            if (!step(c[0], 0, k))
                die("node 0, step %lld did not return early, though node 1 had not stepped", k);
            early++;
            if (step(c[1], 1, k) || step(c[0], 0, k))
                die("step %lld returned early with both frames there", k);
            expect(c[0], 0, k, k);
            expect(c[1], 1, k, k);
        }
        end(c, 2, steps);
        printf("two FMI 3.0 instances at lag 0 stepped by one thread: %lld steps, %lld early "
               "returns, every value exact\n", steps, early);
    } else if (strcmp(mode, "node") == 0 && argc >= 6) {
        int me = atoi(argv[3]);
        long long steps = atoll(argv[4]);
        fmi3Instance c = instance(me ? "node1" : "node0", argv[5], me, 0, false,
                                  argc > 6 ? argv[6] : NULL);
        check(fmi.exit(c), "fmi3ExitInitializationMode", me, -1);
        for (long long k = 0; k < steps; k++) {
            feed(c, me, k);
            step(c, me, k);
            expect(c, me, k, k);
        }
        end(&c, 1, steps);
        printf("FMI 3.0 node %d of two processes (%s, lag 0): %lld steps, every value exact\n",
               me, argv[5], steps);
    } else {
        die("unknown mode %s", mode);
    }
    return 0;
}
