#ifndef CHIME_CZLIB_SHIM_H
#define CHIME_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit is a macro; give Swift a function. */
static inline int cz_inflate_init(z_stream *stream) {
    return inflateInit(stream);
}
#endif
