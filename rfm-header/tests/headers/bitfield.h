#include <stdint.h>
struct Status {
    uint32_t seq;
    unsigned ready : 1;
    unsigned mode : 3;
};
