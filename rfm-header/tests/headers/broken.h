#include <stdint.h>
struct Broken {
    uint32_t seq
    double x;
};
