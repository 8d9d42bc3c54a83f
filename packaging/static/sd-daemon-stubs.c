/* chime links libdbus statically (Makefile: STATIC_DBUS=1, the default for release builds).
 * Debian's libdbus-1.a refers to two libsystemd functions, used only by a bus *server* started
 * through socket activation (dbus-daemon); chime is a client and never calls them. These stand in,
 * answering as libsystemd does in a process that was passed no sockets, so libsystemd (and the
 * libgcrypt, liblz4, libzstd, liblzma, libcap and libgpg-error it brings) is not loaded at all. */
#include <errno.h>

int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0; /* no sockets were passed */
}

int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd;
    (void)family;
    (void)type;
    (void)listening;
    return -ENOTSOCK;
}
