/*
 * rfm2g_api.h: the GE/Abaco RFM2g C API as this project uses and emulates it.
 *
 * Written by this project from the public facts collected in
 * shared/reference/rfm2g-api.md (vendor driver/API release R09.00). It is NOT the
 * vendor's header: the SDK is proprietary. Types, argument order, enum values and
 * the RFM2GEVENTINFO field order follow the vendor's rfm2g_*.h headers so that a
 * library built from the SDK, or the project's emulator rfm2g-sim (librfm2g.so),
 * is ABI-compatible. A program that includes this header and links -lrfm2g runs
 * against either.
 *
 * RFM2GCONFIG has the layout of release R09.00's header (its rfm2g_defs.h), the
 * one the Linux driver fills: the local control and status register (Lcsr1) is
 * the card's view of its ring, which the health watch of a redundant device
 * reads. Releases before it laid the struct out otherwise; the accessors
 * (RFM2gNodeID, RFM2gBoardID, RFM2gSize) are the same in every release.
 *
 * rfm-core's Rust bindings (src/backend/rfm2g/ffi.rs) are generated from this file
 * by bindgen; `cargo test -p rfm-core --test bindings` checks they are current.
 */
#ifndef RFM2G_API_H
#define RFM2G_API_H

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned char RFM2G_UINT8;
typedef unsigned short RFM2G_UINT16;
/* `unsigned long` on Windows, `unsigned int` on Linux: 32 bits on both. */
typedef unsigned int RFM2G_UINT32;
typedef unsigned long long RFM2G_UINT64;
typedef unsigned char RFM2G_BOOL;
typedef RFM2G_UINT16 RFM2G_NODE;
typedef char RFM2G_CHAR;

/* Opaque board handle. */
typedef struct RFM2GHANDLE_s *RFM2GHANDLE;

/* A plain C enum in the vendor header: 4 bytes, bound as an integer. */
typedef int RFM2G_STATUS;
#define RFM2G_SUCCESS 0
#define RFM2G_NOT_IMPLEMENTED 1
#define RFM2G_DRIVER_ERROR 2
#define RFM2G_TIMED_OUT 3
#define RFM2G_LOW_MEMORY 4
#define RFM2G_MEM_NOT_MAPPED 5
#define RFM2G_OS_ERROR 6
#define RFM2G_EVENT_IN_USE 7
#define RFM2G_NOT_SUPPORTED 8
#define RFM2G_NOT_OPEN 9
#define RFM2G_NO_RFM2G_BOARD 10
#define RFM2G_BAD_PARAMETER_1 11
#define RFM2G_BAD_PARAMETER_2 12
#define RFM2G_BAD_PARAMETER_3 13
#define RFM2G_BAD_PARAMETER_4 14
#define RFM2G_BAD_PARAMETER_5 15
#define RFM2G_BAD_PARAMETER_6 16
#define RFM2G_BAD_PARAMETER_7 17
#define RFM2G_BAD_PARAMETER_8 18
#define RFM2G_BAD_PARAMETER_9 19
#define RFM2G_OUT_OF_RANGE 20
#define RFM2G_MAP_NOT_ALLOWED 21
#define RFM2G_LINK_TEST_FAIL 22
#define RFM2G_MEM_READ_ONLY 23
#define RFM2G_UNALIGNED_OFFSET 24
#define RFM2G_UNALIGNED_ADDRESS 25
#define RFM2G_LSEEK_ERROR 26
#define RFM2G_READ_ERROR 27
#define RFM2G_WRITE_ERROR 28
#define RFM2G_HANDLE_NOT_NULL 29
#define RFM2G_MODULE_NOT_LOADED 30
#define RFM2G_NOT_ENABLED 31
#define RFM2G_ALREADY_ENABLED 32
#define RFM2G_EVENT_NOT_IN_USE 33
#define RFM2G_BAD_RFM2G_BOARD_ID 34
#define RFM2G_NULL_DESCRIPTOR 35
#define RFM2G_WAIT_EVENT_CANCELED 36
#define RFM2G_DMA_FAILED 37
#define RFM2G_NOT_INITIALIZED 38
#define RFM2G_UNALIGNED_LENGTH 39
#define RFM2G_SIGNALED 40
#define RFM2G_NODE_ID_SELF 41
#define RFM2G_MAX_ERROR_CODE 42

/* Network and board events (a plain C enum in the vendor header). */
typedef int RFM2GEVENTTYPE;
#define RFM2GEVENT_RESET 0
#define RFM2GEVENT_INTR1 1
#define RFM2GEVENT_INTR2 2
#define RFM2GEVENT_INTR3 3
#define RFM2GEVENT_INTR4 4
#define RFM2GEVENT_BAD_DATA 5
#define RFM2GEVENT_RXFIFO_FULL 6
#define RFM2GEVENT_ROGUE_PKT 7
#define RFM2GEVENT_RXFIFO_AFULL 8
#define RFM2GEVENT_SYNC_LOSS 9
#define RFM2GEVENT_MEM_WRITE_INHIBITED 10
#define RFM2GEVENT_LOCAL_MEM_PARITY_ERR 11
#define RFM2GEVENT_LAST 12

#define RFM2G_NODE_ALL 0xFFFF
#define RFM2G_NODE_UNKNOWN 0xFFFE
#define RFM2G_INFINITE_TIMEOUT 0xFFFFFFFFu
#define RFM2G_NO_WAIT 0u

/* In/out argument of RFM2gWaitForEvent, in the vendor header's field order. */
typedef struct RFM2GEVENTINFO {
    RFM2G_UINT32 ExtendedInfo;
    RFM2GEVENTTYPE Event;
    RFM2G_UINT32 Timeout; /* milliseconds */
    RFM2G_NODE NodeId;
    void *pDrvSpec;
} RFM2GEVENTINFO;

/* The PCI side of a board, inside RFM2GCONFIG (44 bytes). */
typedef struct RFM2GPCICONFIG {
    RFM2G_UINT32 rfm2gOrWindowSize;
    RFM2G_UINT32 rfm2gOrRegSize;
    RFM2G_UINT32 rfm2gCsWindowSize;
    RFM2G_UINT32 rfm2gCsRegSize;
    RFM2G_UINT32 rfm2gWindowSize;
    RFM2G_UINT32 devfn;
    RFM2G_UINT16 type;
    RFM2G_UINT8 interruptNumber;
    RFM2G_UINT8 bus;
    RFM2G_UINT8 function;
    RFM2G_UINT8 revision;
    RFM2G_UINT32 rfm2gBase;
    RFM2G_UINT32 rfm2gCsBase;
    RFM2G_UINT32 rfm2gOrBase;
} RFM2GPCICONFIG;

/* RFM2gGetConfig's result, in release R09.00's field order (244 bytes). */
typedef struct RFM2GCONFIG {
    RFM2G_NODE NodeId;
    RFM2G_UINT8 BoardId;
    RFM2G_UINT8 Unit;
    RFM2G_UINT8 PlxRevision;
    RFM2G_UINT32 MemorySize;
    char Device[128];
    char Name[32];
    char DriverVersion[16];
    RFM2G_UINT8 BoardRevision;
    RFM2G_UINT8 RevisionId;
    RFM2G_UINT32 Lcsr1; /* a copy of the local control and status register */
    RFM2GPCICONFIG PciConfig;
    RFM2G_UINT16 BuildId;
} RFM2GCONFIG;

/* Bits of Lcsr1 that say how the board sees its ring (PCIE-5565). */
#define RFM2G_LCSR_OWNDATA (1u << 0)  /* own data came back around the ring */
#define RFM2G_LCSR_BADDATA (1u << 1)  /* bad data received */
#define RFM2G_LCSR_SIGDET (1u << 2)   /* a receive signal is detected */
#define RFM2G_LCSR_SNCLOST (1u << 3)  /* receive sync lost */
#define RFM2G_LCSR_RCVFULL (1u << 5)  /* receive FIFO full */
#define RFM2G_LCSR_REDUNDANT (1u << 26) /* redundant mode (a switch on the card) */
#define RFM2G_LCSR_DOD (1u << 29)     /* dark-on-dark */
#define RFM2G_LCSR_XMTDIS (1u << 30)  /* transmitter disabled */

RFM2G_STATUS RFM2gOpen(char *DevicePath, RFM2GHANDLE *rh);
RFM2G_STATUS RFM2gClose(RFM2GHANDLE *rh);
RFM2G_STATUS RFM2gSize(RFM2GHANDLE rh, RFM2G_UINT32 *Size);
RFM2G_STATUS RFM2gNodeID(RFM2GHANDLE rh, RFM2G_NODE *NodeIdPtr);
RFM2G_STATUS RFM2gBoardID(RFM2GHANDLE rh, RFM2G_UINT8 *BoardIdPtr);
RFM2G_STATUS RFM2gFirst(RFM2GHANDLE rh, RFM2G_UINT32 *FirstPtr);
RFM2G_STATUS RFM2gGetConfig(RFM2GHANDLE rh, RFM2GCONFIG *Config);

/* Mapping: Offset page-aligned (4096), Pages > 0, inside the memory. The Bytes
 * variants round the byte count up to whole pages. */
RFM2G_STATUS RFM2gUserMemory(RFM2GHANDLE rh, volatile void **UserMemoryPtr,
                             RFM2G_UINT64 Offset, RFM2G_UINT32 Pages);
RFM2G_STATUS RFM2gUserMemoryBytes(RFM2GHANDLE rh, volatile void **UserMemoryPtr,
                                  RFM2G_UINT64 Offset, RFM2G_UINT32 Bytes);
RFM2G_STATUS RFM2gUnMapUserMemory(RFM2GHANDLE rh, volatile void **UserMemoryPtr,
                                  RFM2G_UINT32 Pages);
RFM2G_STATUS RFM2gUnMapUserMemoryBytes(RFM2GHANDLE rh, volatile void **UserMemoryPtr,
                                       RFM2G_UINT32 Bytes);

/* Copies and single accesses (natural alignment; Peek64/Poke64 are not
 * implemented on Linux R09.00 and return RFM2G_NOT_IMPLEMENTED). */
RFM2G_STATUS RFM2gRead(RFM2GHANDLE rh, RFM2G_UINT32 Offset, void *Buffer, RFM2G_UINT32 Length);
RFM2G_STATUS RFM2gWrite(RFM2GHANDLE rh, RFM2G_UINT32 Offset, void *Buffer, RFM2G_UINT32 Length);
RFM2G_STATUS RFM2gPeek8(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT8 *Value);
RFM2G_STATUS RFM2gPeek16(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT16 *Value);
RFM2G_STATUS RFM2gPeek32(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT32 *Value);
RFM2G_STATUS RFM2gPeek64(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT64 *Value);
RFM2G_STATUS RFM2gPoke8(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT8 Value);
RFM2G_STATUS RFM2gPoke16(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT16 Value);
RFM2G_STATUS RFM2gPoke32(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT32 Value);
RFM2G_STATUS RFM2gPoke64(RFM2GHANDLE rh, RFM2G_UINT32 Offset, RFM2G_UINT64 Value);

/* Network interrupts: off until enabled; SendEvent takes RESET and INTR1-4 to one
 * node or RFM2G_NODE_ALL, never to itself; one event per type is queued. */
RFM2G_STATUS RFM2gEnableEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType);
RFM2G_STATUS RFM2gDisableEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType);
RFM2G_STATUS RFM2gSendEvent(RFM2GHANDLE rh, RFM2G_NODE ToNode, RFM2GEVENTTYPE EventType,
                            RFM2G_UINT32 ExtendedData);
RFM2G_STATUS RFM2gWaitForEvent(RFM2GHANDLE rh, RFM2GEVENTINFO *EventInfo);
RFM2G_STATUS RFM2gCancelWaitForEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType);
RFM2G_STATUS RFM2gClearEvent(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType);
RFM2G_STATUS RFM2gGetEventCount(RFM2GHANDLE rh, RFM2GEVENTTYPE EventType,
                                RFM2G_UINT32 *Count);

/* Diagnostics and board settings. */
RFM2G_STATUS RFM2gCheckRingCont(RFM2GHANDLE rh);
/* Returns the own-data bit (RFM2G_LCSR_OWNDATA) in *State and clears it: a node
 * that clears it, writes a word and later finds it set knows its ring is closed. */
RFM2G_STATUS RFM2gClearOwnData(RFM2GHANDLE rh, RFM2G_BOOL *State);
RFM2G_STATUS RFM2gSetDMAByteSwap(RFM2GHANDLE rh, RFM2G_BOOL Enable);
RFM2G_STATUS RFM2gGetDMAByteSwap(RFM2GHANDLE rh, RFM2G_BOOL *Enabled);
RFM2G_STATUS RFM2gSetPIOByteSwap(RFM2GHANDLE rh, RFM2G_BOOL Enable);
RFM2G_STATUS RFM2gGetPIOByteSwap(RFM2GHANDLE rh, RFM2G_BOOL *Enabled);
/* DMA: RFM2gRead and RFM2gWrite of more than Threshold bytes move by the board's
 * DMA engine (when the driver has its buffer), shorter ones by PIO in the driver.
 * The driver's default leaves DMA off. */
RFM2G_STATUS RFM2gSetDMAThreshold(RFM2GHANDLE rh, RFM2G_UINT32 Threshold);
RFM2G_STATUS RFM2gGetDMAThreshold(RFM2GHANDLE rh, RFM2G_UINT32 *Threshold);
RFM2G_STATUS RFM2gSetLed(RFM2GHANDLE rh, RFM2G_BOOL Led);
RFM2G_STATUS RFM2gGetLed(RFM2GHANDLE rh, RFM2G_BOOL *Led);
RFM2G_CHAR *RFM2gErrorMsg(RFM2G_STATUS ErrorCode);

#ifdef __cplusplus
}
#endif

#endif /* RFM2G_API_H */
