#ifndef CHIME_COUNT_MODEL_H
#define CHIME_COUNT_MODEL_H
/* A GListModel that is only a count: its items are made when a view asks for one (the rows on
   screen), so a list of 100,000 costs nothing until it is scrolled to. The app's list view reads
   what to show from each row's position, in its own array. */
#include <gio/gio.h>

/* A new, empty model (one reference, the caller's). */
GListModel *chime_count_model_new(void);

/* Replaces `removed` items at `position` with `added` new ones, and says so (items-changed) once. */
void chime_count_model_splice(GListModel *model, guint position, guint removed, guint added);
#endif
