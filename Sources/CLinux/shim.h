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
#endif
