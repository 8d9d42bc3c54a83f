#ifndef CHIME_CECAL_SHIM_H
#define CHIME_CECAL_SHIM_H
/* Evolution Data Server's calendar library (libecal) for chime-eds only, the child that speaks to
   EDS: the daemon never links GLib. Swift cannot call GLib's cast and signal macros nor walk a
   GSList of libecal's types comfortably; the few operations the child needs are written here, each
   returning plain C strings and GErrors. */
#include <libecal/libecal.h>
#include <glib-unix.h>
#include <signal.h>
#include <sys/prctl.h>

/* The child ends with the process that started it (the daemon, killed or crashed): it is sent
   SIGTERM, and stops as it would on any. */
static inline void chime_eds_end_with_parent(void) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
}

/* The calendar sources EDS knows, as lines "uid\tdisplay name\tenabled\twritable\tbackend\tparent\n"
   (g_free the result). */
static inline gchar *chime_eds_sources(ESourceRegistry *registry) {
    GString *out = g_string_new(NULL);
    GList *sources = e_source_registry_list_sources(registry, E_SOURCE_EXTENSION_CALENDAR);
    for (GList *link = sources; link != NULL; link = link->next) {
        ESource *source = E_SOURCE(link->data);
        ESourceBackend *backend = E_SOURCE_BACKEND(e_source_get_extension(source, E_SOURCE_EXTENSION_CALENDAR));
        const gchar *parent = e_source_get_parent(source);
        gchar *name = e_source_dup_display_name(source);
        /* Tabs and newlines cannot be told from the separators: written as spaces. */
        for (gchar *c = name; c && *c; c++) if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
        g_string_append_printf(out, "%s\t%s\t%d\t%d\t%s\t%s\n", e_source_get_uid(source), name ? name : "",
                               e_source_registry_check_enabled(registry, source) ? 1 : 0, e_source_get_writable(source) ? 1 : 0,
                               e_source_backend_get_backend_name(backend) ? e_source_backend_get_backend_name(backend) : "",
                               parent ? parent : "");
        g_free(name);
    }
    g_list_free_full(sources, g_object_unref);
    return g_string_free(out, FALSE);
}

/* Whether the registry knows any source: a running EDS always has its built-in ones (the
   registry of a session without EDS is made all the same, empty). */
static inline gboolean chime_eds_has_sources(ESourceRegistry *registry) {
    GList *sources = e_source_registry_list_sources(registry, NULL);
    gboolean any = sources != NULL;
    g_list_free_full(sources, g_object_unref);
    return any;
}

/* The enabled calendar source whose UID or display name is `name` (a new reference), or NULL. */
static inline ESource *chime_eds_find_source(ESourceRegistry *registry, const gchar *name) {
    ESource *found = NULL;
    GList *sources = e_source_registry_list_enabled(registry, E_SOURCE_EXTENSION_CALENDAR);
    for (GList *link = sources; link != NULL && found == NULL; link = link->next) {
        ESource *source = E_SOURCE(link->data);
        gchar *display = e_source_dup_display_name(source);
        if (g_strcmp0(e_source_get_uid(source), name) == 0 || g_strcmp0(display, name) == 0) found = g_object_ref(source);
        g_free(display);
    }
    g_list_free_full(sources, g_object_unref);
    return found;
}

static inline ECalClient *chime_eds_connect(ESource *source, GError **error) {
    /* The local calendar never reports itself connected: the whole wait is taken unless it is the
       longest (as GNOME's own clients pass it). */
    EClient *client = e_cal_client_connect_sync(source, E_CAL_CLIENT_SOURCE_TYPE_EVENTS, (guint32)-1, NULL, error);
    return client ? E_CAL_CLIENT(client) : NULL;
}

static inline gboolean chime_eds_is_readonly(ECalClient *client) { return e_client_is_readonly(E_CLIENT(client)); }

typedef struct { ECalClient *client; ICalComponent *top; GHashTable *added; GHashTable *cache; } ChimeZoneWalk;

/* Whether a TZID names a zone of the system's tz database (itself, or the end of a path-like TZID
   such as Evolution's `/freeassociation.sourceforge.net/Europe/Berlin`): chime reads those by name,
   so their VTIMEZONE (Evolution's go back to 1893: several kilobytes an event) is left out. */
static inline gboolean chime_eds_is_system_zone(const gchar *tzid) {
    const gchar *root = g_getenv("TZDIR") ? g_getenv("TZDIR") : "/usr/share/zoneinfo";
    gchar **parts = g_strsplit(tzid, "/", -1);
    guint count = g_strv_length(parts);
    gboolean found = FALSE;
    for (guint take = count < 3 ? count : 3; take >= 1 && !found; take--) {
        gchar *name = g_strjoinv("/", parts + (count - take));
        if (*name != '\0' && strstr(name, "..") == NULL) {
            gchar *path = g_build_filename(root, name, NULL);
            found = g_file_test(path, G_FILE_TEST_IS_REGULAR);
            g_free(path);
        }
        g_free(name);
    }
    g_strfreev(parts);
    return found;
}

/* Adds the VTIMEZONE of each TZID a component names to `top`, once (none for the system's zones); EDS is asked for a zone once
   per pass (`cache`: TZID -> its VTIMEZONE, or NULL where EDS has none). */
static inline void chime_eds_add_zone(ICalParameter *param, gpointer data) {
    ChimeZoneWalk *walk = data;
    const gchar *tzid = i_cal_parameter_get_tzid(param);
    if (tzid == NULL || g_hash_table_contains(walk->added, tzid)) return;
    g_hash_table_add(walk->added, g_strdup(tzid));
    if (chime_eds_is_system_zone(tzid)) return;
    ICalComponent *vtimezone = NULL;
    if (g_hash_table_contains(walk->cache, tzid)) {
        vtimezone = g_hash_table_lookup(walk->cache, tzid);
    } else {
        ICalTimezone *zone = NULL;
        if (e_cal_client_get_timezone_sync(walk->client, tzid, &zone, NULL, NULL) && zone != NULL) {
            ICalComponent *component = i_cal_timezone_get_component(zone);
            if (component != NULL) {
                vtimezone = i_cal_component_clone(component);
                g_object_unref(component);
            }
        }
        g_hash_table_insert(walk->cache, g_strdup(tzid), vtimezone);
    }
    if (vtimezone != NULL) i_cal_component_take_component(walk->top, i_cal_component_clone(vtimezone));
}

static inline GHashTable *chime_eds_zone_cache_new(void) {
    return g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_object_unref);
}

/* One VCALENDAR's text (g_free) of `comps` (ECalComponents of one UID) with the zones they name. */
static inline gchar *chime_eds_calendar_text(ECalClient *client, GSList *comps, GHashTable *cache) {
    ICalComponent *top = e_cal_util_new_top_level();
    ChimeZoneWalk walk = { client, top, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), cache };
    for (GSList *link = comps; link != NULL; link = link->next) {
        ICalComponent *comp = e_cal_component_get_icalcomponent(E_CAL_COMPONENT(link->data));
        i_cal_component_foreach_tzid(comp, chime_eds_add_zone, &walk);
    }
    for (GSList *link = comps; link != NULL; link = link->next) {
        ICalComponent *comp = e_cal_component_get_icalcomponent(E_CAL_COMPONENT(link->data));
        i_cal_component_take_component(top, i_cal_component_clone(comp));
    }
    g_hash_table_destroy(walk.added);
    gchar *text = i_cal_component_as_ical_string(top);
    g_object_unref(top);
    return text;
}

/* Every component of the event `uid` (its series and moved instances), with the time zones they
   name, as one VCALENDAR's text (g_free), or NULL: gone (error unset) or failed (error set). */
static inline gchar *chime_eds_calendar_for_uid(ECalClient *client, const gchar *uid, GError **error) {
    GSList *comps = NULL;
    GError *local = NULL;
    if (!e_cal_client_get_objects_for_uid_sync(client, uid, &comps, NULL, &local)) {
        if (g_error_matches(local, E_CAL_CLIENT_ERROR, E_CAL_CLIENT_ERROR_OBJECT_NOT_FOUND)) { g_clear_error(&local); return NULL; }
        g_propagate_error(error, local);
        return NULL;
    }
    if (comps == NULL) return NULL;
    GHashTable *cache = chime_eds_zone_cache_new();
    gchar *text = chime_eds_calendar_text(client, comps, cache);
    g_hash_table_destroy(cache);
    g_slist_free_full(comps, g_object_unref);
    return text;
}

/* Calls `died` when the calendar's backend goes away (EDS stopped or crashed). */
static inline void chime_eds_on_backend_died(ECalClient *client, GCallback died, gpointer data) {
    g_signal_connect(client, "backend-died", died, data);
}

/* Writes the events of a VCALENDAR's text into EDS: each VEVENT modified where EDS has it, created
   where not (its time zones added first). FALSE with `error` on the first that fails. */
static inline gboolean chime_eds_put(ECalClient *client, const gchar *text, GError **error) {
    ICalComponent *top = i_cal_component_new_from_string(text);
    if (top == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not iCalendar");
        return FALSE;
    }
    gboolean ok = TRUE;
    for (ICalComponent *zone = i_cal_component_get_first_component(top, I_CAL_VTIMEZONE_COMPONENT); ok && zone != NULL;) {
        ICalTimezone *tz = i_cal_timezone_new();
        if (i_cal_timezone_set_component(tz, zone)) ok = e_cal_client_add_timezone_sync(client, tz, NULL, error);
        g_object_unref(tz);
        g_object_unref(zone);
        zone = i_cal_component_get_next_component(top, I_CAL_VTIMEZONE_COMPONENT);
    }
    for (ICalComponent *event = i_cal_component_get_first_component(top, I_CAL_VEVENT_COMPONENT); ok && event != NULL;) {
        const gchar *uid = i_cal_component_get_uid(event);
        ICalComponent *existing = NULL;
        gchar *rid = NULL;
        ICalTime *recurrence = i_cal_component_get_recurrenceid(event);
        if (recurrence != NULL && !i_cal_time_is_null_time(recurrence)) rid = i_cal_time_as_ical_string(recurrence);
        g_clear_object(&recurrence);
        if (uid != NULL && e_cal_client_get_object_sync(client, uid, rid, &existing, NULL, NULL)) {
            ok = e_cal_client_modify_object_sync(client, event, rid ? E_CAL_OBJ_MOD_THIS : E_CAL_OBJ_MOD_ALL, E_CAL_OPERATION_FLAG_NONE, NULL, error);
            g_object_unref(existing);
        } else {
            ok = e_cal_client_create_object_sync(client, event, E_CAL_OPERATION_FLAG_NONE, NULL, NULL, error);
        }
        g_free(rid);
        g_object_unref(event);
        event = ok ? i_cal_component_get_next_component(top, I_CAL_VEVENT_COMPONENT) : NULL;
    }
    g_object_unref(top);
    return ok;
}

static inline gboolean chime_eds_remove(ECalClient *client, const gchar *uid, GError **error) {
    GError *local = NULL;
    if (e_cal_client_remove_object_sync(client, uid, NULL, E_CAL_OBJ_MOD_ALL, E_CAL_OPERATION_FLAG_NONE, NULL, &local)) return TRUE;
    if (g_error_matches(local, E_CAL_CLIENT_ERROR, E_CAL_CLIENT_ERROR_OBJECT_NOT_FOUND)) { g_clear_error(&local); return TRUE; }
    g_propagate_error(error, local);
    return FALSE;
}

/* A change EDS reports: the UID of an event added, changed or removed. */
typedef void (*ChimeEdsChanged)(const gchar *uid, gpointer data);
/* An event of the view's first population, as its VCALENDAR's text (valid during the call). */
typedef void (*ChimeEdsInitial)(const gchar *uid, const gchar *text, gpointer data);
/* Whether the folder already holds `uid` as EDS had it at the revision the watch trusts. */
typedef gboolean (*ChimeEdsKnown)(const gchar *uid, gpointer data);
/* The first population is over (`error_message` NULL), or failed. */
typedef void (*ChimeEdsComplete)(const gchar *error_message, gpointer data);

/* How many events of the first population are fetched in one turn of the loop. */
#define CHIME_EDS_FETCHES 32

typedef struct {
    ChimeEdsChanged changed;
    ChimeEdsInitial initial;
    ChimeEdsComplete complete;
    gpointer data;
    ECalClient *client;
    ECalClientView *view;
    /* The view has listed every UID (its first population), and every UID listed was fetched. */
    gboolean listed;
    gboolean populated;
    gboolean stopped;
    gchar *failure;
    /* UIDs listed during the first population, those still to fetch, the idle source fetching
       them, and the zones asked of EDS meanwhile. */
    GHashTable *seen;
    GQueue *queue;
    guint pumping;
    GHashTable *zones;
    /* The calendar's revision when the mirror's folder last held all of it, when EDS's is the same
       now (NULL: none): the events the folder holds are then not fetched again, unless the
       revision moved before the view had listed them all (then they are). `known` says which the
       folder holds (given to `initial` with a NULL text); `skipped` keeps them meanwhile. */
    gchar *revision;
    ChimeEdsKnown known;
    GPtrArray *skipped;
} ChimeEdsWatch;

/* The calendar's revision as its backend says it (every change moves it), or NULL. */
static inline gchar *chime_eds_revision(ECalClient *client) {
    gchar *revision = NULL;
    if (!e_client_get_backend_property_sync(E_CLIENT(client), CLIENT_BACKEND_PROPERTY_REVISION, &revision, NULL, NULL)) return NULL;
    if (revision != NULL && *revision == '\0') g_clear_pointer(&revision, g_free);
    return revision;
}

static void chime_eds_watch_free(gpointer pointer) {
    ChimeEdsWatch *watch = pointer;
    if (watch->pumping) g_source_remove(watch->pumping);
    if (watch->seen) g_hash_table_destroy(watch->seen);
    if (watch->zones) g_hash_table_destroy(watch->zones);
    if (watch->queue) g_queue_free_full(watch->queue, g_free);
    if (watch->skipped) g_ptr_array_free(watch->skipped, TRUE);
    g_free(watch->revision);
    g_free(watch->failure);
    g_free(watch);
}

/* The first population is over once the view has listed every UID and each was fetched. */
static void chime_eds_maybe_populated(ChimeEdsWatch *watch) {
    if (watch->stopped || watch->populated || !watch->listed || watch->pumping || !g_queue_is_empty(watch->queue)) return;
    watch->populated = TRUE;
    g_hash_table_remove_all(watch->seen);
    g_hash_table_remove_all(watch->zones);
    watch->complete(watch->failure, watch->data);
}

/* Fetches a few of the UIDs waiting, whole (series and moved instances), one by one, then gives
   the loop back (a stop, a change, the folder's events are taken between turns): the events come
   as fast as EDS gives them one at a time, and no more of them are held than one (a calendar of
   100,000 events costs its UIDs, never its events, however fast EDS lists them; given whole by
   the view, EDS's own client held 700 MB of them). */
static gboolean chime_eds_pump_turn(gpointer pointer) {
    ChimeEdsWatch *watch = pointer;
    for (guint i = 0; i < CHIME_EDS_FETCHES && !watch->stopped && !g_queue_is_empty(watch->queue); i++) {
        gchar *uid = g_queue_pop_head(watch->queue);
        GSList *comps = NULL;
        GError *error = NULL;
        if (e_cal_client_get_objects_for_uid_sync(watch->client, uid, &comps, NULL, &error) && comps != NULL) {
            gchar *text = chime_eds_calendar_text(watch->client, comps, watch->zones);
            watch->initial(uid, text, watch->data);
            g_free(text);
        } else if (error != NULL && !g_error_matches(error, E_CAL_CLIENT_ERROR, E_CAL_CLIENT_ERROR_OBJECT_NOT_FOUND)) {
            /* Asked again later, as a change is. */
            watch->changed(uid, watch->data);
        }
        g_slist_free_full(comps, g_object_unref);
        g_clear_error(&error);
        g_free(uid);
    }
    if (!watch->stopped && !g_queue_is_empty(watch->queue)) return G_SOURCE_CONTINUE;
    watch->pumping = 0;
    chime_eds_maybe_populated(watch);
    return G_SOURCE_REMOVE;
}

static void chime_eds_pump(ChimeEdsWatch *watch) {
    if (watch->stopped || watch->pumping || g_queue_is_empty(watch->queue)) return;
    watch->pumping = g_idle_add(chime_eds_pump_turn, watch);
}

static void chime_eds_changed_objects(ECalClientView *view, const GSList *objects, gpointer unused) {
    ChimeEdsWatch *watch = g_object_get_data(G_OBJECT(view), "chime-watch");
    if (watch == NULL || watch->stopped) return;
    for (const GSList *link = objects; link != NULL; link = link->next) {
        const gchar *uid = i_cal_component_get_uid((ICalComponent *)link->data);
        if (uid == NULL) continue;
        /* The view gives UIDs alone (its fields of interest): during the first population each is
           fetched once, whole (its series and moved instances); a change is the mirror's to read. */
        if (!watch->populated && !g_hash_table_contains(watch->seen, uid)) {
            g_hash_table_add(watch->seen, g_strdup(uid));
            if (watch->revision != NULL && !watch->listed && watch->known(uid, watch->data)) {
                g_ptr_array_add(watch->skipped, g_strdup(uid));
                watch->initial(uid, NULL, watch->data);
            } else {
                g_queue_push_tail(watch->queue, g_strdup(uid));
            }
        } else {
            watch->changed(uid, watch->data);
        }
    }
    chime_eds_pump(watch);
}

static void chime_eds_removed_objects(ECalClientView *view, const GSList *ids, gpointer unused) {
    ChimeEdsWatch *watch = g_object_get_data(G_OBJECT(view), "chime-watch");
    if (watch == NULL || watch->stopped) return;
    for (const GSList *link = ids; link != NULL; link = link->next) {
        const gchar *uid = e_cal_component_id_get_uid((const ECalComponentId *)link->data);
        if (uid != NULL) watch->changed(uid, watch->data);
    }
}

static void chime_eds_view_complete(ECalClientView *view, const GError *error, gpointer unused) {
    ChimeEdsWatch *watch = g_object_get_data(G_OBJECT(view), "chime-watch");
    if (watch == NULL || watch->stopped || watch->listed) return;
    watch->listed = TRUE;
    if (error != NULL) watch->failure = g_strdup(error->message);
    if (watch->revision != NULL) {
        /* Changed between the revision read and the view's start: what was not fetched is. */
        gchar *now = chime_eds_revision(watch->client);
        if (g_strcmp0(now, watch->revision) != 0) {
            for (guint i = 0; i < watch->skipped->len; i++) g_queue_push_tail(watch->queue, g_strdup(g_ptr_array_index(watch->skipped, i)));
        }
        g_free(now);
        g_ptr_array_set_size(watch->skipped, 0);
        chime_eds_pump(watch);
    }
    chime_eds_maybe_populated(watch);
}

/* A started view of every event: its first population given event by event to `initial` (then
   `complete`), and from then on each UID EDS adds, changes or removes to `changed` (stopped with
   chime_eds_unwatch), or NULL with `error`. */
static inline ECalClientView *chime_eds_watch(ECalClient *client, ChimeEdsChanged changed, ChimeEdsInitial initial,
                                              ChimeEdsComplete complete, const gchar *trusted_revision, ChimeEdsKnown known,
                                              gpointer data, GError **error) {
    ECalClientView *view = NULL;
    if (!e_cal_client_get_view_sync(client, "#t", &view, NULL, error)) return NULL;
    e_cal_client_view_set_flags(view, E_CAL_CLIENT_VIEW_FLAGS_NOTIFY_INITIAL, NULL);
    /* UIDs alone: EDS sends a whole calendar's first population as fast as it can, and the
       client holds what it has not handed on yet (700 MB for 100,000 events given whole). */
    GSList uid_only = { .data = (gpointer)"UID", .next = NULL };
    e_cal_client_view_set_fields_of_interest(view, &uid_only, NULL);
    ChimeEdsWatch *watch = g_new0(ChimeEdsWatch, 1);
    watch->changed = changed;
    watch->initial = initial;
    watch->complete = complete;
    watch->data = data;
    watch->client = client;
    watch->view = view;
    watch->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    watch->queue = g_queue_new();
    watch->zones = chime_eds_zone_cache_new();
    watch->revision = trusted_revision != NULL && known != NULL ? g_strdup(trusted_revision) : NULL;
    watch->known = known;
    watch->skipped = g_ptr_array_new_with_free_func(g_free);
    g_object_set_data_full(G_OBJECT(view), "chime-watch", watch, chime_eds_watch_free);
    g_signal_connect(view, "objects-added", G_CALLBACK(chime_eds_changed_objects), data);
    g_signal_connect(view, "objects-modified", G_CALLBACK(chime_eds_changed_objects), data);
    g_signal_connect(view, "objects-removed", G_CALLBACK(chime_eds_removed_objects), data);
    g_signal_connect(view, "complete", G_CALLBACK(chime_eds_view_complete), data);
    e_cal_client_view_start(view, error);
    if (error != NULL && *error != NULL) { g_object_unref(view); return NULL; }
    return view;
}

/* Stops a view chime_eds_watch started: nothing more is said of it, and the view is let go. */
static inline void chime_eds_unwatch(ECalClientView *view) {
    ChimeEdsWatch *watch = g_object_get_data(G_OBJECT(view), "chime-watch");
    if (watch != NULL) {
        watch->stopped = TRUE;
        if (watch->pumping) g_source_remove(watch->pumping);
        watch->pumping = 0;
    }
    e_cal_client_view_stop(view, NULL);
    g_object_unref(view);
}

/* Calls `changed` whenever a source is added, removed, switched on or off (an account added in
   GNOME Settings, a calendar made or removed in GNOME Calendar). */
typedef void (*ChimeEdsSourcesChanged)(gpointer data);

static void chime_eds_source_signal(ESourceRegistry *registry, ESource *source, gpointer data) {
    ChimeEdsSourcesChanged changed = (ChimeEdsSourcesChanged)g_object_get_data(G_OBJECT(registry), "chime-sources-changed");
    if (changed != NULL) changed(data);
}

static inline void chime_eds_on_sources_changed(ESourceRegistry *registry, ChimeEdsSourcesChanged changed, gpointer data) {
    g_object_set_data(G_OBJECT(registry), "chime-sources-changed", (gpointer)changed);
    const gchar *signals[] = { "source-added", "source-removed", "source-enabled", "source-disabled", "source-changed" };
    for (guint i = 0; i < G_N_ELEMENTS(signals); i++) g_signal_connect(registry, signals[i], G_CALLBACK(chime_eds_source_signal), data);
}

/* The enabled calendar sources, as lines "uid\tdisplay name\n" (g_free). */
static inline gchar *chime_eds_enabled_calendars(ESourceRegistry *registry) {
    GString *out = g_string_new(NULL);
    GList *sources = e_source_registry_list_enabled(registry, E_SOURCE_EXTENSION_CALENDAR);
    for (GList *link = sources; link != NULL; link = link->next) {
        ESource *source = E_SOURCE(link->data);
        gchar *name = e_source_dup_display_name(source);
        for (gchar *c = name; c && *c; c++) if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
        g_string_append_printf(out, "%s\t%s\n", e_source_get_uid(source), name ? name : "");
        g_free(name);
    }
    g_list_free_full(sources, g_object_unref);
    return g_string_free(out, FALSE);
}


/* Calls `changed(data)` whenever the source changes (its name, its switches). */
typedef void (*ChimeEdsSourceChanged)(gpointer data);
static inline void chime_eds_source_changed_signal(ESource *source, gpointer data) {
    ChimeEdsSourceChanged changed = (ChimeEdsSourceChanged)g_object_get_data(G_OBJECT(source), "chime-source-changed");
    if (changed) changed(data);
}
static inline void chime_eds_on_source_changed(ESource *source, ChimeEdsSourceChanged changed, gpointer data) {
    g_object_set_data(G_OBJECT(source), "chime-source-changed", (gpointer)changed);
    g_signal_connect(source, "changed", G_CALLBACK(chime_eds_source_changed_signal), data);
}

/* GNOME's own reminders (EReminderWatcher, which evolution-alarm-notify shows) for a calendar:
   whether they include it (its ESourceAlarms "include-me", the switch Evolution's preferences show
   as the calendars selected for reminders). */
static inline gboolean chime_eds_reminders_included(ESource *source) {
    /* Asked of the extension even where the source has none yet (it is made here, holding the
       default, and nothing is written): a change made elsewhere later reaches only an extension
       that exists, and only then is the source's "changed" signal sent. */
    return e_source_alarms_get_include_me(E_SOURCE_ALARMS(e_source_get_extension(source, E_SOURCE_EXTENSION_ALARMS)));
}

/* Switches GNOME's reminders for the calendar on or off, written through the registry. */
static inline gboolean chime_eds_set_reminders_included(ESource *source, gboolean included, GError **error) {
    ESourceAlarms *alarms = E_SOURCE_ALARMS(e_source_get_extension(source, E_SOURCE_EXTENSION_ALARMS));
    if (e_source_alarms_get_include_me(alarms) == included) return TRUE;
    e_source_alarms_set_include_me(alarms, included);
    return e_source_write_sync(source, NULL, error);
}

/* An answer made in chime (ACKNOWLEDGED at `acknowledged`, seconds since the epoch) in
   EReminderWatcher's own state: the calendar's reminders count as notified up to then (its
   "last-notified", which only moves forward, never past now), and the event's reminders that
   triggered by then leave its past and snoozed lists (GSettings org.gnome.evolution-data-server.calendar,
   reminders-past and reminders-snoozed: one entry each, "source UID\nalarm UID\ntrigger\nstart\nend\niCalendar").
   Answers how many entries left the lists, or -1 when the settings' schema is not installed. */
static inline gint chime_eds_answered(ESource *source, const gchar *uid, gint64 acknowledged) {
    const gchar *source_uid = e_source_get_uid(source);
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;
    if (acknowledged > now) acknowledged = now;
    ESourceAlarms *alarms = E_SOURCE_ALARMS(e_source_get_extension(source, E_SOURCE_EXTENSION_ALARMS));
    gchar *last = e_source_alarms_dup_last_notified(alarms);
    GDateTime *previous = last && *last ? g_date_time_new_from_iso8601(last, NULL) : NULL;
    g_free(last);
    if (!previous || g_date_time_to_unix(previous) < acknowledged) {
        GDateTime *moment = g_date_time_new_from_unix_utc(acknowledged);
        gchar *text = g_date_time_format_iso8601(moment);
        e_source_alarms_set_last_notified(alarms, text);
        e_source_write_sync(source, NULL, NULL);
        g_free(text);
        g_date_time_unref(moment);
    }
    if (previous) g_date_time_unref(previous);

    GSettingsSchema *schema = g_settings_schema_source_lookup(g_settings_schema_source_get_default(),
                                                              "org.gnome.evolution-data-server.calendar", TRUE);
    if (!schema) return -1;
    g_settings_schema_unref(schema);
    GSettings *settings = g_settings_new("org.gnome.evolution-data-server.calendar");
    gint removed = 0;
    const gchar *keys[] = { "reminders-past", "reminders-snoozed" };
    for (guint k = 0; k < G_N_ELEMENTS(keys); k++) {
        gchar **entries = g_settings_get_strv(settings, keys[k]);
        GPtrArray *kept = g_ptr_array_new();
        gint here = 0;
        for (gchar **entry = entries; entry && *entry; entry++) {
            gchar **fields = g_strsplit(*entry, "\n", 6);
            gboolean answered = FALSE;
            if (g_strv_length(fields) == 6 && g_strcmp0(fields[0], source_uid) == 0
                && g_ascii_strtoll(fields[2], NULL, 10) <= acknowledged) {
                ICalComponent *component = i_cal_component_new_from_string(fields[5]);
                if (component) {
                    ICalComponent *event = i_cal_component_isa(component) == I_CAL_VCALENDAR_COMPONENT
                        ? i_cal_component_get_first_component(component, I_CAL_VEVENT_COMPONENT) : g_object_ref(component);
                    answered = event && g_strcmp0(i_cal_component_get_uid(event), uid) == 0;
                    if (event) g_object_unref(event);
                    g_object_unref(component);
                }
            }
            g_strfreev(fields);
            if (answered) here++; else g_ptr_array_add(kept, *entry);
        }
        if (here > 0) {
            g_ptr_array_add(kept, NULL);
            g_settings_set_strv(settings, keys[k], (const gchar * const *)kept->pdata);
            removed += here;
        }
        g_ptr_array_free(kept, TRUE);
        g_strfreev(entries);
    }
    g_settings_sync();
    g_object_unref(settings);
    return removed;
}

static inline const gchar *chime_error_message(const GError *error) { return error ? error->message : "unknown error"; }
#endif
