/* A notification server that only replies, on raw libdbus: the peer for
 * benchmarks, so what is measured is the client's cost.
 * With --log it prints "SUMMARY REALTIME_NS" for every Notify the moment it
 * is dispatched (the lateness benchmark's clock on the receiving side).
 * With --hang it never answers Notify (a hung server); with --delay MS it
 * answers each Notify MS milliseconds after receiving it (a slow one). */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int log_notify = 0;
static int hang = 0;
static int delay_ms = 0;

/* Answers held back by --delay, oldest first. */
static struct { DBusMessage *answer; long long due_ns; } delayed[4096];
static int delayed_count = 0;

static long long realtime_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static const char *INTERFACE = "org.freedesktop.Notifications";

static void reply(DBusConnection *connection, DBusMessage *call) {
    static dbus_uint32_t next_id = 1;
    DBusMessage *answer = dbus_message_new_method_return(call);
    DBusMessageIter iter;
    dbus_message_iter_init_append(answer, &iter);
    const char *member = dbus_message_get_member(call);
    if (strcmp(member, "Notify") == 0) {
        if (log_notify) {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            const char *app, *summary;
            dbus_uint32_t replaces;
            const char *icon;
            if (dbus_message_get_args(call, NULL, DBUS_TYPE_STRING, &app, DBUS_TYPE_UINT32, &replaces,
                                      DBUS_TYPE_STRING, &icon, DBUS_TYPE_STRING, &summary, DBUS_TYPE_INVALID)) {
                printf("%s %lld\n", summary, (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
                fflush(stdout);
            }
        }
        dbus_uint32_t id = next_id++;
        dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT32, &id);
        if (hang) {
            dbus_message_unref(answer);
            return;
        }
        if (delay_ms > 0 && delayed_count < 4096) {
            delayed[delayed_count].answer = answer;
            delayed[delayed_count].due_ns = realtime_ns() + (long long)delay_ms * 1000000LL;
            delayed_count++;
            return;
        }
    } else if (strcmp(member, "GetCapabilities") == 0) {
        DBusMessageIter array;
        const char *caps[] = {"actions", "body", "body-markup", "persistence"};
        dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &array);
        for (int i = 0; i < 4; i++) dbus_message_iter_append_basic(&array, DBUS_TYPE_STRING, &caps[i]);
        dbus_message_iter_close_container(&iter, &array);
    } else if (strcmp(member, "GetServerInformation") == 0) {
        const char *info[] = {"trivial", "chime bench", "1", "1.3"};
        for (int i = 0; i < 4; i++) dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &info[i]);
    }
    if (!dbus_message_get_no_reply(call)) dbus_connection_send(connection, answer, NULL);
    dbus_message_unref(answer);
}

static DBusHandlerResult filter(DBusConnection *connection, DBusMessage *message, void *data) {
    (void)data;
    if (dbus_message_get_type(message) == DBUS_MESSAGE_TYPE_METHOD_CALL &&
        dbus_message_has_interface(message, INTERFACE)) {
        reply(connection, message);
        return DBUS_HANDLER_RESULT_HANDLED;
    }
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--log") == 0) log_notify = 1;
        else if (strcmp(argv[i], "--hang") == 0) hang = 1;
        else if (strcmp(argv[i], "--delay") == 0 && i + 1 < argc) delay_ms = atoi(argv[++i]);
    }
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    if (!connection) { fprintf(stderr, "%s\n", error.message); return 1; }
    if (dbus_bus_request_name(connection, INTERFACE, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error) !=
        DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "cannot own %s\n", INTERFACE);
        return 1;
    }
    dbus_connection_add_filter(connection, filter, NULL, NULL);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        int timeout = -1;
        if (delayed_count > 0) {
            long long left = delayed[0].due_ns - realtime_ns();
            timeout = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
        }
        if (!dbus_connection_read_write_dispatch(connection, timeout)) break;
        long long now = realtime_ns();
        int sent = 0;
        while (sent < delayed_count && delayed[sent].due_ns <= now) {
            dbus_connection_send(connection, delayed[sent].answer, NULL);
            dbus_message_unref(delayed[sent].answer);
            sent++;
        }
        if (sent > 0) {
            memmove(delayed, delayed + sent, (size_t)(delayed_count - sent) * sizeof delayed[0]);
            delayed_count -= sent;
            dbus_connection_flush(connection);
        }
    }
    return 0;
}
