import CGtk

/// The app (`AdwApplication`): one instance per session; a second launch activates the first.
public final class Application: Object {
    private var actions: [Object] = []

    public init(id: String) {
        adw_init()
        super.init(adopting: UnsafeMutableRawPointer(adw_application_new(id, G_APPLICATION_DEFAULT_FLAGS)))
    }

    /// Runs the main loop until the last window closes; the process's exit status.
    public func run(_ arguments: [String]) -> Int32 {
        var cStrings = arguments.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        return cStrings.withUnsafeMutableBufferPointer { buffer in
            g_application_run(cast(), Int32(buffer.count), buffer.baseAddress)
        }
    }

    public func onActivate(_ body: @escaping () -> Void) { on("activate", body) }

    /// An action `app.NAME`, run by its shortcuts (`<Control>q`) and by buttons naming it.
    public func addAction(_ name: String, shortcuts: [String] = [], _ body: @escaping () -> Void) {
        let action = Object(adopting: UnsafeMutableRawPointer(g_simple_action_new(name, nil)))
        action.onPointer("activate") { _ in body() }
        g_action_map_add_action(OpaquePointer(raw), OpaquePointer(action.raw))
        actions.append(action)
        setShortcuts("app." + name, shortcuts)
    }

    /// Keyboard shortcuts of an action (a window's `win.NAME` too).
    public func setShortcuts(_ action: String, _ shortcuts: [String]) {
        guard !shortcuts.isEmpty else { return }
        var cStrings: [UnsafePointer<CChar>?] = shortcuts.map { UnsafePointer(strdup($0)) } + [nil]
        defer { cStrings.forEach { free(UnsafeMutableRawPointer(mutating: $0)) } }
        gtk_application_set_accels_for_action(cast(), action, &cStrings)
    }

    public func quit() { g_application_quit(cast()) }
}

/// A top-level window (`AdwApplicationWindow`, or `AdwWindow` for a dialog).
public final class Window: Bin {
    private var actions: [Object] = []
    private var controllers: [Object] = []
    private let isMainWindow: Bool

    /// The app's main window.
    public init(application: Application) {
        isMainWindow = true
        super.init(sinking: UnsafeMutableRawPointer(adw_application_window_new(application.cast())))
    }

    /// A dialog over `parent`: modal (unless said otherwise), closed with Escape. `alert`: it
    /// tells of something happening now (an alarm ringing), and assistive technologies say so.
    public init(dialogOver parent: Window, modal: Bool = true, alert: Bool = false) {
        isMainWindow = false
        var value = GValue()
        let role = gtk_accessible_role_get_type()
        g_value_init(&value, role)
        g_value_set_enum(&value, Int32(bitPattern: (alert ? GTK_ACCESSIBLE_ROLE_ALERT_DIALOG : GTK_ACCESSIBLE_ROLE_DIALOG).rawValue))
        var names: [UnsafePointer<CChar>?] = [UnsafePointer(strdup("accessible-role"))]
        defer { free(UnsafeMutableRawPointer(mutating: names[0])) }
        let window = g_object_new_with_properties(adw_window_get_type(), 1, &names, &value)
        g_value_unset(&value)
        super.init(sinking: UnsafeMutableRawPointer(window!))
        gtk_window_set_transient_for(cast(), parent.cast())
        gtk_window_set_modal(cast(), modal ? 1 : 0)
        gtk_window_set_destroy_with_parent(cast(), 1)
        addShortcut("Escape", action: "window.close")
    }

    public var title: String {
        get { String(glib: gtk_window_get_title(cast())) ?? "" }
        set { gtk_window_set_title(cast(), newValue) }
    }

    public func setDefaultSize(width: Int32, height: Int32) { gtk_window_set_default_size(cast(), width, height) }

    public func setContent(_ content: Widget) {
        if isMainWindow {
            adw_application_window_set_content(cast(), content.widget)
        } else {
            adw_window_set_content(cast(), content.widget)
        }
        child = content
    }

    public func present() { gtk_window_present(cast()) }
    public func close() { gtk_window_close(cast()) }
    public func destroy() { gtk_window_destroy(cast()) }

    /// Runs `body` when the window is asked to close; true keeps it open.
    public func onCloseRequest(_ body: @escaping () -> Bool) { onReturning("close-request", body) }

    /// An action `win.NAME`, for the window's buttons and shortcuts.
    public func addAction(_ name: String, _ body: @escaping () -> Void) {
        let action = Object(adopting: UnsafeMutableRawPointer(g_simple_action_new(name, nil)))
        action.onPointer("activate") { _ in body() }
        // An application window is an action map itself; a dialog gets a group of its own under "win".
        let map: UnsafeMutableRawPointer
        if isMainWindow {
            map = raw
        } else {
            if dialogActions == nil {
                let group = Object(adopting: UnsafeMutableRawPointer(g_simple_action_group_new()))
                gtk_widget_insert_action_group(widget, "win", OpaquePointer(group.raw))
                dialogActions = group
            }
            map = dialogActions!.raw
        }
        g_action_map_add_action(OpaquePointer(map), OpaquePointer(action.raw))
        actions.append(action)
    }

    private var dialogActions: Object?

    /// A key (`Escape`, `<Control>Return`) that runs a named action (`window.close`, `win.save`) in this window.
    public func addShortcut(_ trigger: String, action: String) {
        let controller = Object(sinking: UnsafeMutableRawPointer(gtk_shortcut_controller_new()))
        let shortcut = gtk_shortcut_new(gtk_shortcut_trigger_parse_string(trigger), gtk_named_action_new(action))
        gtk_shortcut_controller_add_shortcut(controller.opaque, shortcut)
        gtk_shortcut_controller_set_scope(controller.opaque, GTK_SHORTCUT_SCOPE_LOCAL)
        g_object_ref(controller.raw)  // gtk_widget_add_controller takes a reference of its own
        gtk_widget_add_controller(widget, OpaquePointer(controller.raw))
        controllers.append(controller)
    }

    /// The button a plain Return presses (the dialog's Save).
    public func setDefault(_ button: Button) { gtk_window_set_default_widget(cast(), button.widget) }
}

/// The bar at the top of a window: a title (or a view switcher) and buttons at either end.
public final class HeaderBar: Widget {
    private var items: [Widget] = []

    public init() { super.init(sinking: UnsafeMutableRawPointer(adw_header_bar_new())) }

    public func packStart(_ item: Widget) {
        adw_header_bar_pack_start(opaque, item.widget)
        items.append(item)
    }

    public func packEnd(_ item: Widget) {
        adw_header_bar_pack_end(opaque, item.widget)
        items.append(item)
    }

    public func setTitle(_ title: Widget) {
        adw_header_bar_set_title_widget(opaque, title.widget)
        items.append(title)
    }

    /// A dialog's bar: no window buttons (Cancel and Save stand for them).
    public func hidesWindowButtons() {
        adw_header_bar_set_show_start_title_buttons(opaque, 0)
        adw_header_bar_set_show_end_title_buttons(opaque, 0)
    }
}

/// The app's pages, one at a time, switched from the header bar where the window is wide and
/// from a bar at the bottom where it is narrow (libadwaita's adaptive view switcher).
public final class ViewStack: Widget {
    private var pages: [Widget] = []
    public let switcherTitle: Widget
    public let switcherBar: Widget

    public init(title: String) {
        let stack = adw_view_stack_new()!
        let switcherTitle = Widget(sinking: UnsafeMutableRawPointer(adw_view_switcher_title_new()))
        let switcherBar = Widget(sinking: UnsafeMutableRawPointer(adw_view_switcher_bar_new()))
        self.switcherTitle = switcherTitle
        self.switcherBar = switcherBar
        super.init(sinking: UnsafeMutableRawPointer(stack))
        adw_view_switcher_title_set_stack(switcherTitle.opaque, opaque)
        adw_view_switcher_title_set_title(switcherTitle.opaque, title)
        adw_view_switcher_bar_set_stack(switcherBar.opaque, opaque)
        // The bottom bar shows when the title has no room for the switcher.
        g_object_bind_property(switcherTitle.raw, "title-visible", switcherBar.raw, "reveal", G_BINDING_SYNC_CREATE)
        expandsVertically = true
    }

    public func add(_ page: Widget, name: String, title: String, icon: String) {
        let stackPage = adw_view_stack_add_titled(opaque, page.widget, name, title)
        adw_view_stack_page_set_icon_name(stackPage, icon)
        pages.append(page)
    }

    /// Runs `body` when another page shows.
    public func onPageChange(_ body: @escaping () -> Void) { onChange(of: "visible-child-name", body) }

    public var visiblePage: String {
        get { String(glib: adw_view_stack_get_visible_child_name(opaque)) ?? "" }
        set { adw_view_stack_set_visible_child_name(opaque, newValue) }
    }
}

// MARK: - Toasts

/// Shows toasts over its child.
public final class ToastOverlay: Bin {
    public init(_ content: Widget) {
        super.init(sinking: UnsafeMutableRawPointer(adw_toast_overlay_new()))
        adw_toast_overlay_set_child(opaque, content.widget)
        child = content
    }

    public func show(_ toast: Toast) {
        g_object_ref(toast.raw)  // adw_toast_overlay_add_toast takes the reference it is given
        adw_toast_overlay_add_toast(opaque, toast.opaque)
    }
}

/// A short message at the bottom of a window, with at most one button (Undo).
public final class Toast: Object {
    /// `urgent`: shown at once, the toast on screen going back to wait behind it (libadwaita's
    /// high priority); otherwise it waits for the ones before it.
    public init(_ title: String, button: String? = nil, seconds: UInt32 = 5, urgent: Bool = false) {
        super.init(adopting: UnsafeMutableRawPointer(adw_toast_new(title)))
        if let button { adw_toast_set_button_label(opaque, button) }
        adw_toast_set_timeout(opaque, seconds)
        if urgent { adw_toast_set_priority(opaque, ADW_TOAST_PRIORITY_HIGH) }
    }

    public func onButton(_ body: @escaping () -> Void) { on("button-clicked", body) }
    public func onDismissed(_ body: @escaping () -> Void) { on("dismissed", body) }
}

// MARK: - Preferences-style rows

/// A page of grouped rows (a dialog's body).
public final class PreferencesPage: Widget {
    private var groups: [Widget] = []
    public init() { super.init(sinking: UnsafeMutableRawPointer(adw_preferences_page_new())) }
    public func add(_ group: PreferencesGroup) {
        adw_preferences_page_add(cast(), group.cast())
        groups.append(group)
    }
}

/// Rows under a title, as one rounded list.
public final class PreferencesGroup: Widget {
    private var rows: [Widget] = []
    public init(title: String = "", description: String = "") {
        super.init(sinking: UnsafeMutableRawPointer(adw_preferences_group_new()))
        if !title.isEmpty { adw_preferences_group_set_title(cast(), title) }
        if !description.isEmpty { adw_preferences_group_set_description(cast(), description) }
    }

    public func add(_ row: Widget) {
        adw_preferences_group_add(cast(), row.widget)
        rows.append(row)
    }

    public func remove(_ row: Widget) {
        adw_preferences_group_remove(cast(), row.widget)
        rows.removeAll { $0 === row }
    }

    /// A widget at the end of the group's title (an Add button).
    public func setHeaderSuffix(_ suffix: Widget) {
        adw_preferences_group_set_header_suffix(cast(), suffix.widget)
        rows.append(suffix)
    }
}

/// A row with a title, a subtitle, and widgets at its start and end.
public class ActionRow: Widget {
    private var parts: [Widget] = []

    public init(title: String, subtitle: String = "") {
        super.init(sinking: UnsafeMutableRawPointer(adw_action_row_new()))
        self.title = title
        self.subtitle = subtitle
    }

    package override init(sinking raw: UnsafeMutableRawPointer) { super.init(sinking: raw) }

    public var title: String {
        get { String(glib: adw_preferences_row_get_title(cast())) ?? "" }
        set {
            adw_preferences_row_set_use_markup(cast(), 0)
            adw_preferences_row_set_title(cast(), newValue)
        }
    }

    public var subtitle: String {
        get { String(glib: adw_action_row_get_subtitle(cast())) ?? "" }
        set { adw_action_row_set_subtitle(cast(), newValue) }
    }

    public func addPrefix(_ widget: Widget) {
        adw_action_row_add_prefix(cast(), widget.widget)
        parts.append(widget)
    }

    public func addSuffix(_ widget: Widget) {
        adw_action_row_add_suffix(cast(), widget.widget)
        parts.append(widget)
    }

    /// Activating the row (a click, Return) activates `widget` (flips its switch).
    public func activates(_ widget: Widget) { adw_action_row_set_activatable_widget(cast(), widget.widget) }

    /// The row itself is activatable: `body` runs on a click or Return.
    public func onActivate(_ body: @escaping () -> Void) {
        gtk_list_box_row_set_activatable(cast(), 1)
        on("activated", body)
    }
}

/// A row whose title is the label of a text field.
public final class EntryRow: Widget {
    public init(title: String) {
        super.init(sinking: UnsafeMutableRawPointer(adw_entry_row_new()))
        adw_preferences_row_set_title(cast(), title)
    }

    public var text: String {
        get { String(cString: gtk_editable_get_text(opaque)) }
        set { gtk_editable_set_text(opaque, newValue) }
    }
}

/// A row with a drop-down list of choices.
public final class ComboRow: Widget {
    private let model: StringList

    public init(title: String, choices: [String]) {
        model = StringList(choices)
        super.init(sinking: UnsafeMutableRawPointer(adw_combo_row_new()))
        adw_preferences_row_set_title(cast(), title)
        adw_combo_row_set_model(cast(), model.opaque)
    }

    /// The chosen item's position.
    public var selected: Int {
        get { Int(adw_combo_row_get_selected(cast())) }
        set { adw_combo_row_set_selected(cast(), UInt32(newValue)) }
    }

    /// A line under the title (a combo row is an action row).
    public var subtitle: String {
        get { String(glib: adw_action_row_get_subtitle(cast())) ?? "" }
        set { adw_action_row_set_subtitle(cast(), newValue) }
    }

    /// One more choice, last.
    public func append(_ choice: String) { model.splice(at: model.count, removing: 0, [choice]) }

}

/// A vertical list of rows (a few: each row is a widget), in libadwaita's rounded style.
public final class ListBox: Widget {
    private var rows: [Widget] = []

    public init() {
        super.init(sinking: UnsafeMutableRawPointer(gtk_list_box_new()))
        gtk_list_box_set_selection_mode(opaque, GTK_SELECTION_NONE)
        addClass("boxed-list")
    }

    public func append(_ row: Widget) {
        gtk_list_box_append(opaque, row.widget)
        rows.append(row)
    }

    public func remove(_ row: Widget) {
        gtk_list_box_remove(opaque, row.widget)
        rows.removeAll { $0 === row }
    }

    public func removeAll() {
        for row in rows { gtk_list_box_remove(opaque, row.widget) }
        rows.removeAll()
    }

    public var count: Int { rows.count }
}

/// A row that opens to show more rows (a choice among a few, each a row of its own).
public final class ExpanderRow: Widget {
    private var rows: [Widget] = []

    public init(title: String) {
        super.init(sinking: UnsafeMutableRawPointer(adw_expander_row_new()))
        adw_preferences_row_set_title(cast(), title)
    }

    public var subtitle: String {
        get { String(glib: adw_expander_row_get_subtitle(cast())) ?? "" }
        set { adw_expander_row_set_subtitle(cast(), newValue) }
    }

    public func add(_ row: Widget) {
        adw_expander_row_add_row(cast(), row.widget)
        rows.append(row)
    }

    public func remove(_ row: Widget) {
        adw_expander_row_remove(cast(), row.widget)
        rows.removeAll { $0 === row }
    }

    public func addSuffix(_ widget: Widget) {
        adw_expander_row_add_action(cast(), widget.widget)
        rows.append(widget)
    }
}
