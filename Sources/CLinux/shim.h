#ifndef CHIME_CLINUX_SHIM_H
#define CHIME_CLINUX_SHIM_H
/* Linux interfaces Glibc's Swift module does not bring in. */
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <sys/inotify.h>

/* prctl is variadic, which Swift cannot call. */
static inline int chime_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}
#endif
