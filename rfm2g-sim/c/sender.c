/*
 * sender.c: the article's sender (section 5) on Linux and Windows, against
 * rfm2g_api.h; builds as C and as C++.
 *
 *   sender [DEVICE [COUNT]]      defaults: /dev/rfm2g0, 1000 packets
 *
 * Opens the board, maps the first page, and writes COUNT FlightData packets at
 * 1 kHz, printing each. Two changes from the article, both for correctness:
 * packetId is written after the rest of the packet (a receiver that sees a new
 * id then reads a whole packet, not the previous attitude), and the sender
 * waits for the receiver's acknowledgement (the article's flag handshake) before
 * overwriting a packet. After each packet it sends network interrupt INTR1 with
 * the packet id to all nodes, for receivers that wait instead of polling.
 */
#define _POSIX_C_SOURCE 200809L
#define __USE_MINGW_ANSI_STDIO 1 /* C99 printf on Windows: the same lines as Linux */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flightdata.h"
#include "portable.h"
#include "rfm2g_api.h"

static double seconds_since(double t0) { return now_s() - t0; }

int main(int argc, char **argv) {
    char default_device[] = RFM2G_DEFAULT_DEVICE;
    char *device = argc > 1 ? argv[1] : default_device;
    unsigned long long count = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    RFM2GHANDLE handle = NULL;
    volatile void *mem = NULL;

    /* 1. Open the device. */
    RFM2G_STATUS st = RFM2gOpen(device, &handle);
    if (st != RFM2G_SUCCESS) {
        fprintf(stderr, "sender: cannot open %s: %s\n", device, RFM2gErrorMsg(st));
        fprintf(stderr, "  check: 1. the driver (or rfm2g-sim) is installed\n"
                        "         2. the device path is right\n"
                        "         3. you may open the device node\n");
        return 1;
    }
    /* 2. Map the memory (one page holds the packet and the acknowledgement). */
    st = RFM2gUserMemory(handle, &mem, 0, 1);
    if (st != RFM2G_SUCCESS) {
        fprintf(stderr, "sender: cannot map %s: %s\n", device, RFM2gErrorMsg(st));
        RFM2gClose(&handle);
        return 1;
    }
    volatile FlightData *data = (volatile FlightData *)mem;
    volatile uint32_t *ack = (volatile uint32_t *)((volatile char *)mem + ACK_OFFSET);
    data->header = 0;
    data->packetId = 0;
    *ack = 0;

    double t0 = now_s(), next = t0;
    int status = 0;
    /* 3. The update loop. */
    for (unsigned long long id = 1; id <= count; id++) {
        /* Wait (up to 5 s) until the receiver has processed the previous packet. */
        double waited_from = seconds_since(t0);
        while (*ack != (uint32_t)(id - 1)) {
            if (seconds_since(t0) - waited_from > 5.0) {
                fprintf(stderr, "sender: no acknowledgement of packet %llu within 5 s\n", id - 1);
                status = 2;
                goto done;
            }
        }
        FlightData p;
        memset(&p, 0, sizeof p);
        p.header = FLIGHTDATA_MAGIC;
        p.packetId = id;
        p.timestamp = seconds_since(t0);
        p.attitude[0] = (float)id * 0.001f;
        p.attitude[1] = -(float)id * 0.002f;
        p.attitude[2] = (float)(id % 360);
        p.status = (uint8_t)(id & 0xff);
        snprintf(p.msg, sizeof p.msg, "Hello RFM %llu", id);

        data->header = p.header;
        data->timestamp = p.timestamp;
        data->attitude[0] = p.attitude[0];
        data->attitude[1] = p.attitude[1];
        data->attitude[2] = p.attitude[2];
        data->status = p.status;
        for (size_t i = 0; i < sizeof p.msg; i++) data->msg[i] = p.msg[i];
        __sync_synchronize(); /* the packet before its id */
        data->packetId = p.packetId;

        printf(FLIGHTDATA_LINE, (unsigned long long)p.packetId, p.timestamp, p.attitude[0],
               p.attitude[1], p.attitude[2], (unsigned)p.status, p.msg);
        RFM2gSendEvent(handle, RFM2G_NODE_ALL, RFM2GEVENT_INTR1, (RFM2G_UINT32)id);

        /* 1 kHz, on absolute ticks so that the rate does not drift. */
        next += 0.001;
        sleep_until(next);
    }
    { /* The last packet must be processed too. */
        double waited_from = seconds_since(t0);
        while (*ack != (uint32_t)count && status == 0) {
            if (seconds_since(t0) - waited_from > 5.0) {
                fprintf(stderr, "sender: no acknowledgement of packet %llu within 5 s\n", count);
                status = 2;
            }
        }
    }
done:
    /* 4. Clean up. */
    RFM2gUnMapUserMemory(handle, &mem, 1);
    RFM2gClose(&handle);
    fprintf(stderr, "sender: %s, %llu packets at 1 kHz\n", status ? "failed" : "done", count);
    return status;
}
