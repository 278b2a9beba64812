/*
 * flightdata.h: the article's packet (section 4.1), shared by sender.c and
 * receiver.c. 65 bytes, packed, little-endian on x86 as on the ring.
 */
#ifndef FLIGHTDATA_H
#define FLIGHTDATA_H

#include <stdint.h>

#define FLIGHTDATA_MAGIC 0x55AA55AAu

#pragma pack(push, 1)
typedef struct FlightData {
    uint32_t header;     /* FLIGHTDATA_MAGIC once a packet is there */
    uint64_t packetId;   /* 1, 2, 3 ...; written last (see sender.c) */
    double timestamp;    /* seconds since the sender started */
    float attitude[3];   /* roll, pitch, yaw */
    uint8_t status;
    char msg[32];
} FlightData;
#pragma pack(pop)

#ifdef __cplusplus
static_assert(sizeof(FlightData) == 65, "FlightData is the article's 65-byte packet");
#else
_Static_assert(sizeof(FlightData) == 65, "FlightData is the article's 65-byte packet");
#endif

/* The board a program opens when given none: the article's on Windows. */
#ifdef _WIN32
#define RFM2G_DEFAULT_DEVICE "\\\\.\\rfm2g0"
#else
#define RFM2G_DEFAULT_DEVICE "/dev/rfm2g0"
#endif

/* The article's flag handshake (section 7.1): the receiver writes here the low
 * 32 bits of the last packetId it processed, and the sender waits for it before
 * overwriting the packet, so that no packet is lost however the two are
 * scheduled. Kept away from the packet, in the same mapped page. */
#define ACK_OFFSET 128u

/* One line per packet; sender and receiver print the same for the same packet. */
#define FLIGHTDATA_LINE "%llu %.17g %.9g %.9g %.9g %u %s\n"

#endif
