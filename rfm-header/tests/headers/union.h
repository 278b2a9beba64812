#include <stdint.h>
struct Packet {
    uint32_t kind;
    union {
        float f;
        int32_t i;
    } value;
};
