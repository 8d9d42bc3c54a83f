#ifndef CHIME_CLINUX_SHIM_H
#define CHIME_CLINUX_SHIM_H
/* Linux interfaces Glibc's Swift module does not bring in. */
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>
#endif
