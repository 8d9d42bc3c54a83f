#ifndef CHIME_CZLIB_SHIM_H
#define CHIME_CZLIB_SHIM_H
/* zlib's header only: libz is opened with dlopen the first time a PNG is decoded (`chime notify -I`),
   so that the `chime` binary, whose every start counts, does not load it for each notification. */
#include <dlfcn.h>
#include <stddef.h>
#include <zlib.h>

struct chime_zlib {
    __typeof__(crc32) *crc32;
    __typeof__(inflateInit_) *inflateInit_;
    __typeof__(inflate) *inflate;
    __typeof__(inflateEnd) *inflateEnd;
};

/* Opens libz.so.1 and fills `t`: NULL on success, else what went wrong (dlerror's words, or the
   name of the function not found). */
static inline const char *chime_load_zlib(struct chime_zlib *t) {
    void *handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return dlerror();
    if ((t->crc32 = (__typeof__(t->crc32))dlsym(handle, "crc32")) == NULL) return "crc32";
    if ((t->inflateInit_ = (__typeof__(t->inflateInit_))dlsym(handle, "inflateInit_")) == NULL) return "inflateInit_";
    if ((t->inflate = (__typeof__(t->inflate))dlsym(handle, "inflate")) == NULL) return "inflate";
    if ((t->inflateEnd = (__typeof__(t->inflateEnd))dlsym(handle, "inflateEnd")) == NULL) return "inflateEnd";
    return NULL;
}

/* inflateInit is a macro (the version and the stream's size, checked by zlib); give Swift a function. */
static inline int chime_inflate_init(const struct chime_zlib *t, z_stream *stream) {
    return t->inflateInit_(stream, ZLIB_VERSION, (int)sizeof(z_stream));
}
#endif
