/*
 * A minimal RFM2g library with the vendor's ABI, for rfm-core's tests only.
 *
 * Boards are in-process memory keyed by device path: any path beginning with
 * "/dev/rfm2g" is a board (size FAKE_RFM2G_SIZE bytes, default 1 MiB); any other
 * path gives RFM2G_NO_RFM2G_BOARD, as the vendor library does for a missing device
 * node. Each open of a board is another node on its ring (node ids FAKE_RFM2G_NODE,
 * default 0, then 1, 2, ...), so two instances in one process can exchange network
 * interrupts. RFM2gUserMemory enforces the vendor's rules (page-aligned offset,
 * Pages > 0, in range); events follow the vendor's: off until enabled, RESET and
 * INTR1-4 only, not to oneself, one queued per type. The counters exported at the
 * end let tests check that every handle is closed and every map unmapped.
 *
 * The project's full emulator (rfm2g-sim, shared across processes) replaces this
 * fixture for multi-process tests.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../include/rfm2g_api.h"

#define MAX_BOARDS 128
#define MAX_NODES 16
#define PAGE 4096u
#define EVENTS RFM2GEVENT_LAST

struct RFM2GHANDLE_s;
struct board {
    char path[256];
    unsigned char *mem;
    RFM2G_UINT32 size;
    int opens;
    struct RFM2GHANDLE_s *nodes[MAX_NODES];
};
struct RFM2GHANDLE_s {
    struct board *board;
    RFM2G_NODE node;
    int enabled[EVENTS], pending[EVENTS], canceled[EVENTS];
    RFM2G_UINT32 data[EVENTS];
    RFM2G_NODE from[EVENTS];
};

static struct board boards[MAX_BOARDS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t signaled = PTHREAD_COND_INITIALIZER;
static int live_handles, live_maps;

static unsigned long env_or(const char *name, unsigned long dflt) {
    const char *v = getenv(name);
    return v ? strtoul(v, NULL, 0) : dflt;
}

RFM2G_STATUS RFM2gOpen(char *DevicePath, RFM2GHANDLE *rh) {
    if (DevicePath == NULL) return RFM2G_BAD_PARAMETER_1;
    if (rh == NULL) return RFM2G_BAD_PARAMETER_2;
    if (*rh != NULL) return RFM2G_HANDLE_NOT_NULL;
    if (strncmp(DevicePath, "/dev/rfm2g", 10) != 0 || strlen(DevicePath) >= 256)
        return RFM2G_NO_RFM2G_BOARD;
    struct board *b = NULL;
    for (int i = 0; i < MAX_BOARDS && b == NULL; i++) {
        if (boards[i].mem != NULL && strcmp(boards[i].path, DevicePath) == 0) b = &boards[i];
    }
    for (int i = 0; i < MAX_BOARDS && b == NULL; i++) {
        if (boards[i].mem == NULL) {
            b = &boards[i];
            b->size = (RFM2G_UINT32)env_or("FAKE_RFM2G_SIZE", 1u << 20);
            if (posix_memalign((void **)&b->mem, PAGE, b->size) != 0) return RFM2G_LOW_MEMORY;
            memset(b->mem, 0, b->size);
            strcpy(b->path, DevicePath);
        }
    }
    if (b == NULL) return RFM2G_LOW_MEMORY;
    struct RFM2GHANDLE_s *h = calloc(1, sizeof *h);
    if (h == NULL) return RFM2G_LOW_MEMORY;
    h->board = b;
    pthread_mutex_lock(&lock);
    h->node = (RFM2G_NODE)(env_or("FAKE_RFM2G_NODE", 0) + (unsigned long)b->opens++);
    for (int i = 0; i < MAX_NODES; i++) {
        if (b->nodes[i] == NULL) { b->nodes[i] = h; break; }
    }
    pthread_mutex_unlock(&lock);
    *rh = h;
    live_handles++;
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gClose(RFM2GHANDLE *rh) {
    if (rh == NULL || *rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_NODES; i++) {
        if ((*rh)->board->nodes[i] == *rh) (*rh)->board->nodes[i] = NULL;
    }
    pthread_mutex_unlock(&lock);
    free(*rh);
    *rh = NULL;
    live_handles--;
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gSize(RFM2GHANDLE rh, RFM2G_UINT32 *Size) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (Size == NULL) return RFM2G_BAD_PARAMETER_2;
    *Size = rh->board->size;
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gNodeID(RFM2GHANDLE rh, RFM2G_NODE *NodeIdPtr) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (NodeIdPtr == NULL) return RFM2G_BAD_PARAMETER_2;
    *NodeIdPtr = rh->node;
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gUserMemory(RFM2GHANDLE rh, volatile void **UserMemoryPtr, RFM2G_UINT64 Offset,
                             RFM2G_UINT32 Pages) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (UserMemoryPtr == NULL) return RFM2G_BAD_PARAMETER_2;
    if (Offset % PAGE != 0) return RFM2G_MEM_NOT_MAPPED;
    if (Pages == 0) return RFM2G_BAD_PARAMETER_4;
    if (Offset + (RFM2G_UINT64)Pages * PAGE > rh->board->size) return RFM2G_OUT_OF_RANGE;
    *UserMemoryPtr = rh->board->mem + Offset;
    live_maps++;
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gUnMapUserMemory(RFM2GHANDLE rh, volatile void **UserMemoryPtr, RFM2G_UINT32 Pages) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (UserMemoryPtr == NULL || *UserMemoryPtr == NULL) return RFM2G_BAD_PARAMETER_2;
    if (Pages == 0) return RFM2G_BAD_PARAMETER_3;
    *UserMemoryPtr = NULL;
    live_maps--;
    return RFM2G_SUCCESS;
}

static int bad_event(RFM2GEVENTTYPE t) { return t < 0 || t >= EVENTS; }

RFM2G_STATUS RFM2gEnableEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (bad_event(EventType)) return RFM2G_BAD_PARAMETER_2;
    pthread_mutex_lock(&lock);
    int was = rh->enabled[EventType];
    rh->enabled[EventType] = 1;
    pthread_mutex_unlock(&lock);
    return was ? RFM2G_ALREADY_ENABLED : RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gDisableEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (bad_event(EventType)) return RFM2G_BAD_PARAMETER_2;
    pthread_mutex_lock(&lock);
    rh->enabled[EventType] = 0;
    rh->pending[EventType] = 0;
    pthread_mutex_unlock(&lock);
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gSendEvent(RFM2GHANDLE rh, RFM2G_NODE ToNode, RFM2GEVENTTYPE EventType,
                            RFM2G_UINT32 ExtendedData) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (EventType < RFM2GEVENT_RESET || EventType > RFM2GEVENT_INTR4) return RFM2G_BAD_PARAMETER_3;
    if (ToNode == rh->node) return RFM2G_NODE_ID_SELF;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_NODES; i++) {
        struct RFM2GHANDLE_s *to = rh->board->nodes[i];
        if (to == NULL || to == rh || !to->enabled[EventType]) continue;
        if (ToNode != RFM2G_NODE_ALL && to->node != ToNode) continue;
        to->pending[EventType] = 1; /* one queued per type: a newer one replaces it */
        to->data[EventType] = ExtendedData;
        to->from[EventType] = rh->node;
    }
    pthread_cond_broadcast(&signaled);
    pthread_mutex_unlock(&lock);
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gWaitForEvent(RFM2GHANDLE rh, RFM2GEVENTINFO *EventInfo) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (EventInfo == NULL) return RFM2G_BAD_PARAMETER_2;
    RFM2GEVENTTYPE t = EventInfo->Event;
    if (bad_event(t)) return RFM2G_BAD_PARAMETER_2;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += EventInfo->Timeout / 1000;
    deadline.tv_nsec += (long)(EventInfo->Timeout % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
    RFM2G_STATUS status = RFM2G_SUCCESS;
    pthread_mutex_lock(&lock);
    if (!rh->enabled[t]) {
        status = RFM2G_NOT_ENABLED;
    } else {
        while (!rh->pending[t] && !rh->canceled[t]) {
            if (EventInfo->Timeout == RFM2G_NO_WAIT) { status = RFM2G_TIMED_OUT; break; }
            int rc = EventInfo->Timeout == RFM2G_INFINITE_TIMEOUT
                         ? pthread_cond_wait(&signaled, &lock)
                         : pthread_cond_timedwait(&signaled, &lock, &deadline);
            if (rc == ETIMEDOUT) { status = RFM2G_TIMED_OUT; break; }
        }
        if (status == RFM2G_SUCCESS && rh->canceled[t]) {
            rh->canceled[t] = 0;
            status = RFM2G_WAIT_EVENT_CANCELED;
        } else if (status == RFM2G_SUCCESS) {
            rh->pending[t] = 0;
            EventInfo->ExtendedInfo = rh->data[t];
            EventInfo->NodeId = rh->from[t];
        }
    }
    pthread_mutex_unlock(&lock);
    return status;
}

RFM2G_STATUS RFM2gCancelWaitForEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (bad_event(EventType)) return RFM2G_BAD_PARAMETER_2;
    pthread_mutex_lock(&lock);
    rh->canceled[EventType] = 1;
    pthread_cond_broadcast(&signaled);
    pthread_mutex_unlock(&lock);
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gClearEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType) {
    if (rh == NULL) return RFM2G_NULL_DESCRIPTOR;
    if (bad_event(EventType)) return RFM2G_BAD_PARAMETER_2;
    pthread_mutex_lock(&lock);
    rh->pending[EventType] = 0;
    pthread_mutex_unlock(&lock);
    return RFM2G_SUCCESS;
}

RFM2G_CHAR *RFM2gErrorMsg(RFM2G_STATUS ErrorCode) {
    switch (ErrorCode) {
    case RFM2G_SUCCESS: return "Success";
    case RFM2G_NO_RFM2G_BOARD: return "No RFM2g board at that device path";
    case RFM2G_MEM_NOT_MAPPED: return "Memory not mapped (offset not page aligned)";
    case RFM2G_OUT_OF_RANGE: return "Offset and length exceed board memory";
    case RFM2G_BAD_PARAMETER_4: return "Bad parameter 4";
    case RFM2G_TIMED_OUT: return "Timed out";
    case RFM2G_NOT_ENABLED: return "Event not enabled";
    case RFM2G_NODE_ID_SELF: return "Cannot send an event to this node";
    default: return "Fake RFM2g error";
    }
}

int fake_rfm2g_live_handles(void) { return live_handles; }
int fake_rfm2g_live_maps(void) { return live_maps; }
