#ifndef CHIME_CGTK_SHIM_H
#define CHIME_CGTK_SHIM_H
/* GTK 4 and libadwaita, for the Gtk module only (the desktop app's thin layer). Swift cannot call
   variadic C functions nor GLib's cast and signal macros; the few the layer needs are here. */
#include <adwaita.h>
#include <glib-unix.h>

static inline void chime_gtk_set_accessible_label(GtkAccessible *accessible, const char *label) {
    gtk_accessible_update_property(accessible, GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}
#endif
