/* The same Notify calls as chime-bench, on raw libdbus: the peer for the
 * in-process benchmark. Prints "latency_us_median p99 throughput_per_s". */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static DBusMessage *make_notify(void) {
    DBusMessage *m = dbus_message_new_method_call("org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                                  "org.freedesktop.Notifications", "Notify");
    DBusMessageIter iter, actions, hints, entry, variant;
    const char *app = "bench", *icon = "", *summary = "Summary", *body = "Body", *key = "urgency", *pid_key = "sender-pid";
    dbus_uint32_t replaces = 0;
    dbus_int32_t expire = 5000;
    unsigned char urgency = 1;
    dbus_int64_t pid = getpid();
    dbus_message_iter_init_append(m, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &app);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT32, &replaces);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &icon);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &summary);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &body);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &actions);
    dbus_message_iter_close_container(&iter, &actions);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &hints);
    dbus_message_iter_open_container(&hints, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &pid_key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "x", &variant);
    dbus_message_iter_append_basic(&variant, DBUS_TYPE_INT64, &pid);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&hints, &entry);
    dbus_message_iter_open_container(&hints, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "y", &variant);
    dbus_message_iter_append_basic(&variant, DBUS_TYPE_BYTE, &urgency);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&hints, &entry);
    dbus_message_iter_close_container(&iter, &hints);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_INT32, &expire);
    return m;
}

static dbus_uint32_t read_id(DBusMessage *reply) {
    dbus_uint32_t id = 0;
    DBusMessageIter iter;
    if (dbus_message_iter_init(reply, &iter) && dbus_message_iter_get_arg_type(&iter) == DBUS_TYPE_UINT32)
        dbus_message_iter_get_basic(&iter, &id);
    return id;
}

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 2000;
    int pipelined = argc > 2 ? atoi(argv[2]) : 20000;
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *c = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    if (!c) { fprintf(stderr, "%s\n", error.message); return 1; }
    dbus_connection_set_exit_on_disconnect(c, FALSE);
    double *samples = malloc(sizeof(double) * calls);
    unsigned long check = 0;
    for (int i = 0; i < calls + 100; i++) {
        double start = now_us();
        DBusMessage *m = make_notify();
        DBusMessage *reply = dbus_connection_send_with_reply_and_block(c, m, 5000, &error);
        if (!reply) { fprintf(stderr, "%s\n", error.message); return 1; }
        check += read_id(reply);
        dbus_message_unref(reply);
        dbus_message_unref(m);
        if (i >= 100) samples[i - 100] = now_us() - start; /* the first 100 warm up */
    }
    qsort(samples, calls, sizeof(double), compare);
    /* Pipelined: up to WINDOW calls in flight (the bus limits pending replies per connection). */
    enum { WINDOW = 100 };
    DBusPendingCall **pending = malloc(sizeof(DBusPendingCall *) * pipelined);
    double start = now_us();
    int collected = 0;
    for (int i = 0; i < pipelined; i++) {
        if (i - collected == WINDOW) {
            dbus_pending_call_block(pending[collected]);
            DBusMessage *reply = dbus_pending_call_steal_reply(pending[collected]);
            check += read_id(reply);
            dbus_message_unref(reply);
            dbus_pending_call_unref(pending[collected]);
            collected++;
        }
        DBusMessage *m = make_notify();
        dbus_connection_send_with_reply(c, m, &pending[i], 25000);
        dbus_message_unref(m);
    }
    for (; collected < pipelined; collected++) {
        dbus_pending_call_block(pending[collected]);
        DBusMessage *reply = dbus_pending_call_steal_reply(pending[collected]);
        check += read_id(reply);
        dbus_message_unref(reply);
        dbus_pending_call_unref(pending[collected]);
    }
    double elapsed = now_us() - start;
    printf("%.1f %.1f %.0f %lu\n", samples[calls / 2], samples[calls * 99 / 100], pipelined / (elapsed / 1e6), check > 0 ? 1UL : 0UL);
    return 0;
}
