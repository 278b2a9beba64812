/*
 * receiver.c: the article's receiver (section 6) on Linux and Windows, against
 * rfm2g_api.h; builds as C and as C++.
 *
 *   receiver [DEVICE [COUNT [poll|event]]]    defaults: /dev/rfm2g0, 1000, poll
 *
 * Polls the FlightData packet for a new packetId (poll: busy-waiting with a
 * yield, the article's "Sleep(0)"; event: waiting for the sender's INTR1
 * network interrupt), prints each new packet, and acknowledges it (the flag
 * handshake, see flightdata.h). Exits 0 after COUNT packets with none missing.
 */
#define _POSIX_C_SOURCE 200809L
#define __USE_MINGW_ANSI_STDIO 1 /* C99 printf on Windows: the same lines as Linux */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flightdata.h"
#include "portable.h"
#include "rfm2g_api.h"

int main(int argc, char **argv) {
    char default_device[] = RFM2G_DEFAULT_DEVICE;
    char *device = argc > 1 ? argv[1] : default_device;
    unsigned long long count = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
    int use_events = argc > 3 && strcmp(argv[3], "event") == 0;
    RFM2GHANDLE handle = NULL;
    volatile void *mem = NULL;

    RFM2G_STATUS st = RFM2gOpen(device, &handle);
    if (st != RFM2G_SUCCESS) {
        fprintf(stderr, "receiver: cannot open %s: %s\n", device, RFM2gErrorMsg(st));
        return 1;
    }
    st = RFM2gUserMemory(handle, &mem, 0, 1);
    if (st != RFM2G_SUCCESS) {
        fprintf(stderr, "receiver: cannot map %s: %s\n", device, RFM2gErrorMsg(st));
        RFM2gClose(&handle);
        return 1;
    }
    if (use_events && (st = RFM2gEnableEvent(handle, RFM2GEVENT_INTR1)) != RFM2G_SUCCESS) {
        fprintf(stderr, "receiver: cannot enable INTR1: %s\n", RFM2gErrorMsg(st));
        RFM2gClose(&handle);
        return 1;
    }
    volatile FlightData *data = (volatile FlightData *)mem;
    volatile uint32_t *ack = (volatile uint32_t *)((volatile char *)mem + ACK_OFFSET);

    unsigned long long last = 0, received = 0, lost = 0, wakeups = 0;
    double deadline = now_s() + 10.0;
    while (received < count && now_s() < deadline) {
        uint64_t id = data->header == FLIGHTDATA_MAGIC ? data->packetId : 0;
        if (id == 0 || id == last) {
            if (use_events) {
                /* Memory first, then sleep until the next interrupt (or 100 ms). */
                RFM2GEVENTINFO info;
                memset(&info, 0, sizeof info);
                info.Event = RFM2GEVENT_INTR1;
                info.Timeout = 100;
                if (RFM2gWaitForEvent(handle, &info) == RFM2G_SUCCESS) wakeups++;
            } else {
                yield_cpu();
            }
            continue;
        }
        __sync_synchronize(); /* the id before the packet it guards */
        FlightData p;
        p.header = data->header;
        p.packetId = id;
        p.timestamp = data->timestamp;
        p.attitude[0] = data->attitude[0];
        p.attitude[1] = data->attitude[1];
        p.attitude[2] = data->attitude[2];
        p.status = data->status;
        for (size_t i = 0; i < sizeof p.msg; i++) p.msg[i] = data->msg[i];
        p.msg[sizeof p.msg - 1] = '\0';
        if (id != last + 1) {
            fprintf(stderr, "receiver: packets %llu..%llu missing\n", last + 1,
                    (unsigned long long)id - 1);
            lost += id - last - 1;
        }
        printf(FLIGHTDATA_LINE, (unsigned long long)p.packetId, p.timestamp, p.attitude[0],
               p.attitude[1], p.attitude[2], (unsigned)p.status, p.msg);
        last = id;
        received++;
        __sync_synchronize();
        *ack = (uint32_t)id;
        deadline = now_s() + 10.0;
    }
    if (use_events) RFM2gDisableEvent(handle, RFM2GEVENT_INTR1);
    RFM2gUnMapUserMemory(handle, &mem, 1);
    RFM2gClose(&handle);
    fprintf(stderr, "receiver: %llu packets, %llu missing, %llu interrupts\n", received, lost,
            wakeups);
    return received == count && lost == 0 ? 0 : 2;
}
