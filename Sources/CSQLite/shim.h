#ifndef CHIME_CSQLITE_SHIM_H
#define CHIME_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast Swift cannot import: SQLite copies the bound text. */
static inline sqlite3_destructor_type chime_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/* Before SQLite's first use: no count of the memory it uses (sqlite3_status, which chime never
 * asks for), and with it no process-wide lock around every allocation. sqlite3_config is
 * variadic, which Swift cannot call. */
static inline int chime_sqlite_configure(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
