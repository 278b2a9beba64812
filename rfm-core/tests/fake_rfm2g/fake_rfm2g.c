/*
 * A minimal RFM2g library with the vendor's ABI, for rfm-core's tests only.
 *
 * Boards are in-process memory keyed by device path: any path beginning with
 * "/dev/rfm2g" is a board (size FAKE_RFM2G_SIZE bytes, default 1 MiB, node id
 * FAKE_RFM2G_NODE, default 0); any other path gives RFM2G_NO_RFM2G_BOARD, as the
 * vendor library does for a missing device node. RFM2gUserMemory enforces the
 * vendor's rules (page-aligned offset, Pages > 0, in range). The counters exported
 * at the end let tests check that every handle is closed and every map unmapped.
 *
 * The project's full emulator (rfm2g-sim, shared across processes) replaces this
 * fixture for multi-process tests.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/rfm2g_api.h"

#define MAX_BOARDS 128
#define PAGE 4096u

struct board { char path[256]; unsigned char *mem; RFM2G_UINT32 size; };
struct RFM2GHANDLE_s { struct board *board; RFM2G_NODE node; };

static struct board boards[MAX_BOARDS];
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
    h->node = (RFM2G_NODE)env_or("FAKE_RFM2G_NODE", 0);
    *rh = h;
    live_handles++;
    return RFM2G_SUCCESS;
}

RFM2G_STATUS RFM2gClose(RFM2GHANDLE *rh) {
    if (rh == NULL || *rh == NULL) return RFM2G_NULL_DESCRIPTOR;
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

RFM2G_CHAR *RFM2gErrorMsg(RFM2G_STATUS ErrorCode) {
    switch (ErrorCode) {
    case RFM2G_SUCCESS: return "Success";
    case RFM2G_NO_RFM2G_BOARD: return "No RFM2g board at that device path";
    case RFM2G_MEM_NOT_MAPPED: return "Memory not mapped (offset not page aligned)";
    case RFM2G_OUT_OF_RANGE: return "Offset and length exceed board memory";
    case RFM2G_BAD_PARAMETER_4: return "Bad parameter 4";
    default: return "Fake RFM2g error";
    }
}

int fake_rfm2g_live_handles(void) { return live_handles; }
int fake_rfm2g_live_maps(void) { return live_maps; }
