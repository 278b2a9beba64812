#include <stdint.h>
struct Node {
    uint32_t seq;
    const char *name;
};
