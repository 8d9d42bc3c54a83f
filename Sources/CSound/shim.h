#ifndef CHIME_CSOUND_SHIM_H
#define CHIME_CSOUND_SHIM_H
/* libsndfile and libpulse, opened with dlopen when the daemon first plays a sound, never linked:
   `chime notify` and every other command start without them (linking libsndfile alone doubles a
   do-nothing program's start, 0.5 to 1.3 ms, and its 12 libraries), and a machine without them
   still rings alarms through a player program.

   Only the headers are used: each table below holds typed pointers to the functions chime calls,
   declared with the headers' own types (__typeof__), so no signature is written out by hand. */
#include <dlfcn.h>
#include <stddef.h>
#include <sndfile.h>
#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>

#define CHIME_FN(name) __typeof__(name) *name

struct chime_sndfile {
    CHIME_FN(sf_open);
    CHIME_FN(sf_open_fd);
    CHIME_FN(sf_close);
    CHIME_FN(sf_readf_float);
    CHIME_FN(sf_seek);
    CHIME_FN(sf_strerror);
};

struct chime_pulse {
    CHIME_FN(pa_strerror);
    CHIME_FN(pa_threaded_mainloop_new);
    CHIME_FN(pa_threaded_mainloop_free);
    CHIME_FN(pa_threaded_mainloop_start);
    CHIME_FN(pa_threaded_mainloop_stop);
    CHIME_FN(pa_threaded_mainloop_lock);
    CHIME_FN(pa_threaded_mainloop_unlock);
    CHIME_FN(pa_threaded_mainloop_get_api);
    CHIME_FN(pa_proplist_new);
    CHIME_FN(pa_proplist_sets);
    CHIME_FN(pa_proplist_free);
    CHIME_FN(pa_context_new_with_proplist);
    CHIME_FN(pa_context_unref);
    CHIME_FN(pa_context_connect);
    CHIME_FN(pa_context_disconnect);
    CHIME_FN(pa_context_get_state);
    CHIME_FN(pa_context_errno);
    CHIME_FN(pa_context_set_state_callback);
    CHIME_FN(pa_context_get_server_info);
    CHIME_FN(pa_context_get_sink_info_by_name);
    CHIME_FN(pa_context_get_sink_info_by_index);
    CHIME_FN(pa_context_set_sink_mute_by_name);
    CHIME_FN(pa_context_set_sink_volume_by_name);
    CHIME_FN(pa_operation_unref);
    CHIME_FN(pa_operation_cancel);
    CHIME_FN(pa_stream_new_with_proplist);
    CHIME_FN(pa_stream_unref);
    CHIME_FN(pa_stream_connect_playback);
    CHIME_FN(pa_stream_disconnect);
    CHIME_FN(pa_stream_get_state);
    CHIME_FN(pa_stream_get_context);
    CHIME_FN(pa_stream_set_state_callback);
    CHIME_FN(pa_stream_set_write_callback);
    CHIME_FN(pa_stream_set_started_callback);
    CHIME_FN(pa_stream_begin_write);
    CHIME_FN(pa_stream_cancel_write);
    CHIME_FN(pa_stream_write);
    CHIME_FN(pa_stream_drain);
    CHIME_FN(pa_stream_get_device_index);
    CHIME_FN(pa_stream_update_timing_info);
    CHIME_FN(pa_stream_get_timing_info);
    CHIME_FN(pa_channel_map_init_extend);
    CHIME_FN(pa_cvolume_set);
};

#undef CHIME_FN

/* Fills a table from `handle` (dlopen's): NULL when every function was found, else the name of the
   first that was not. */
#define CHIME_LOAD(table, handle, name) \
    if (((table)->name = (__typeof__((table)->name))dlsym((handle), #name)) == NULL) return #name;

static inline const char *chime_load_sndfile(void *handle, struct chime_sndfile *t) {
    CHIME_LOAD(t, handle, sf_open)
    CHIME_LOAD(t, handle, sf_open_fd)
    CHIME_LOAD(t, handle, sf_close)
    CHIME_LOAD(t, handle, sf_readf_float)
    CHIME_LOAD(t, handle, sf_seek)
    CHIME_LOAD(t, handle, sf_strerror)
    return NULL;
}

static inline const char *chime_load_pulse(void *handle, struct chime_pulse *t) {
    CHIME_LOAD(t, handle, pa_strerror)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_new)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_free)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_start)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_stop)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_lock)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_unlock)
    CHIME_LOAD(t, handle, pa_threaded_mainloop_get_api)
    CHIME_LOAD(t, handle, pa_proplist_new)
    CHIME_LOAD(t, handle, pa_proplist_sets)
    CHIME_LOAD(t, handle, pa_proplist_free)
    CHIME_LOAD(t, handle, pa_context_new_with_proplist)
    CHIME_LOAD(t, handle, pa_context_unref)
    CHIME_LOAD(t, handle, pa_context_connect)
    CHIME_LOAD(t, handle, pa_context_disconnect)
    CHIME_LOAD(t, handle, pa_context_get_state)
    CHIME_LOAD(t, handle, pa_context_errno)
    CHIME_LOAD(t, handle, pa_context_set_state_callback)
    CHIME_LOAD(t, handle, pa_context_get_server_info)
    CHIME_LOAD(t, handle, pa_context_get_sink_info_by_name)
    CHIME_LOAD(t, handle, pa_context_get_sink_info_by_index)
    CHIME_LOAD(t, handle, pa_context_set_sink_mute_by_name)
    CHIME_LOAD(t, handle, pa_context_set_sink_volume_by_name)
    CHIME_LOAD(t, handle, pa_operation_unref)
    CHIME_LOAD(t, handle, pa_operation_cancel)
    CHIME_LOAD(t, handle, pa_stream_new_with_proplist)
    CHIME_LOAD(t, handle, pa_stream_unref)
    CHIME_LOAD(t, handle, pa_stream_connect_playback)
    CHIME_LOAD(t, handle, pa_stream_disconnect)
    CHIME_LOAD(t, handle, pa_stream_get_state)
    CHIME_LOAD(t, handle, pa_stream_get_context)
    CHIME_LOAD(t, handle, pa_stream_set_state_callback)
    CHIME_LOAD(t, handle, pa_stream_set_write_callback)
    CHIME_LOAD(t, handle, pa_stream_set_started_callback)
    CHIME_LOAD(t, handle, pa_stream_begin_write)
    CHIME_LOAD(t, handle, pa_stream_cancel_write)
    CHIME_LOAD(t, handle, pa_stream_write)
    CHIME_LOAD(t, handle, pa_stream_drain)
    CHIME_LOAD(t, handle, pa_stream_get_device_index)
    CHIME_LOAD(t, handle, pa_stream_update_timing_info)
    CHIME_LOAD(t, handle, pa_stream_get_timing_info)
    CHIME_LOAD(t, handle, pa_channel_map_init_extend)
    CHIME_LOAD(t, handle, pa_cvolume_set)
    return NULL;
}

#undef CHIME_LOAD

/* Macros with casts, which Swift does not import. */
static const pa_volume_t chime_volume_norm = PA_VOLUME_NORM;
static const unsigned chime_channels_max = PA_CHANNELS_MAX;
#endif
