#ifndef CHIME_CSQLITE_SHIM_H
#define CHIME_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast Swift cannot import: SQLite copies the bound text. */
static inline sqlite3_destructor_type chime_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
#endif
