#ifndef CHIME_CLINUX_SHIM_H
#define CHIME_CLINUX_SHIM_H
/* Linux interfaces Glibc's Swift module does not bring in. */
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <sys/inotify.h>
#include <sys/eventfd.h>

#include <fcntl.h>
#include <libintl.h>
#include <locale.h>

/* pipe2 is a GNU extension the Glibc module leaves out: both ends close-on-exec, made at once
   (a thread of a test runner may spawn between pipe() and fcntl()). */
extern int pipe2(int pipefd[2], int flags);
static inline int chime_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

/* posix_spawn_file_actions_addclosefrom_np (glibc 2.34) is a GNU extension the Glibc module
   leaves out: the child closes every descriptor from `from` on before it runs the program. */
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int chime_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/* prctl is variadic, which Swift cannot call. */
static inline int chime_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

/* Whether this process may gain no privileges on exec (NoNewPrivileges=yes in a unit): file
   capabilities are then never honoured. */
static inline int chime_no_new_privs(void) {
    return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
}

/* Empties the ambient capability set, so programs this process starts inherit none. */
static inline int chime_clear_ambient_capabilities(void) {
    return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

/* A file in memory that, once sealed, nobody can change: how the daemon hands a long listing to a
   client beside the bus (memfd_create is a GNU extension the Glibc module leaves out; fcntl's
   sealing commands are variadic). */
extern int memfd_create(const char *name, unsigned int flags);
static inline int chime_sealable_memfd(const char *name) {
    return memfd_create(name, 0x0001U /* MFD_CLOEXEC */ | 0x0002U /* MFD_ALLOW_SEALING */);
}
static inline int chime_seal_all(int fd) {
    /* F_ADD_SEALS: F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE */
    return fcntl(fd, 1033, 0x0001 | 0x0002 | 0x0004 | 0x0008);
}
static inline int chime_seals(int fd) {
    return fcntl(fd, 1034 /* F_GET_SEALS */);
}
#endif
