/* The count model (see count_model.h). Each item is a plain GObject made when asked for: the view
   keeps those of its rows, nothing else holds any. */
#include "count_model.h"

typedef struct {
    GObject parent;
    guint count;
} ChimeCountModel;

typedef struct {
    GObjectClass parent;
} ChimeCountModelClass;

static GType chime_count_model_get_type(void);

static GType item_type(GListModel *model) {
    (void)model;
    return G_TYPE_OBJECT;
}

static guint n_items(GListModel *model) {
    return ((ChimeCountModel *)model)->count;
}

static gpointer get_item(GListModel *model, guint position) {
    if (position >= ((ChimeCountModel *)model)->count) return NULL;
    return g_object_new(G_TYPE_OBJECT, NULL);
}

static void list_model_init(GListModelInterface *iface) {
    iface->get_item_type = item_type;
    iface->get_n_items = n_items;
    iface->get_item = get_item;
}

G_DEFINE_TYPE_WITH_CODE(ChimeCountModel, chime_count_model, G_TYPE_OBJECT,
                        G_IMPLEMENT_INTERFACE(G_TYPE_LIST_MODEL, list_model_init))

static void chime_count_model_class_init(ChimeCountModelClass *class) { (void)class; }

static void chime_count_model_init(ChimeCountModel *self) { self->count = 0; }

GListModel *chime_count_model_new(void) {
    return G_LIST_MODEL(g_object_new(chime_count_model_get_type(), NULL));
}

void chime_count_model_splice(GListModel *model, guint position, guint removed, guint added) {
    ChimeCountModel *self = (ChimeCountModel *)model;
    if (position > self->count) position = self->count;
    if (removed > self->count - position) removed = self->count - position;
    if (removed == 0 && added == 0) return;
    self->count = self->count - removed + added;
    g_list_model_items_changed(model, position, removed, added);
}
