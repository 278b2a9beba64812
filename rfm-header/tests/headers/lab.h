/* A lab's memory map, as its programs include it. */
#ifndef LAB_H
#define LAB_H

#include <stdint.h>
#include <stdbool.h>

#define NAME_LEN 12

typedef enum { MODE_OFF, MODE_READY, MODE_ENGAGED } MotionMode;

typedef struct {
    double x, y, z;
} Vec3;

struct Wheel {
    float pressure;
    uint8_t brake;
};

/* The flight model's state: natural alignment, nested structs. */
typedef struct FlightState {
    uint32_t seq;
    char callsign[NAME_LEN];
    Vec3 position;
    struct Wheel wheels[3];
    MotionMode mode;
    int16_t gear;
    long ticks;
    bool onGround;
    unsigned char flags;
    float dcm[3][3];
    int64_t utc;
    unsigned long long frames;
} FlightState;

#pragma pack(push, 1)
/* The visual system's eye point, packed. */
struct EyePoint {
    uint8_t valid;
    double lat, lon;
    float hpr[3];
    uint16_t viewport;
    int8_t lod;
};
#pragma pack(pop)

#pragma pack(push, 2)
/* Packed to 2: sizeof is not what natural or packed alignment give. */
struct Cue {
    uint8_t id;
    int32_t surge;
    uint8_t tail;
};
#pragma pack(pop)

#endif
