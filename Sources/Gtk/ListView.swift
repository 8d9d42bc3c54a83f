import CGtk

/// A list of strings as a GTK model (`GtkStringList`): the list view's items are identifiers,
/// and the rows read what to show from the app's own model.
public final class StringList: Object {
    public init(_ strings: [String] = []) {
        super.init(adopting: UnsafeMutableRawPointer(gtk_string_list_new(nil)))
        splice(at: 0, removing: 0, strings)
    }

    public var count: Int { Int(g_list_model_get_n_items(opaque)) }

    public subscript(position: Int) -> String {
        String(glib: gtk_string_list_get_string(opaque, UInt32(position))) ?? ""
    }

    /// Replaces `removing` items at `position` with `strings`, in one change the view sees once.
    public func splice(at position: Int, removing: Int, _ strings: [String]) {
        var cStrings: [UnsafePointer<CChar>?] = strings.map { UnsafePointer(strdup($0)) } + [nil]
        defer { cStrings.forEach { free(UnsafeMutableRawPointer(mutating: $0)) } }
        gtk_string_list_splice(opaque, UInt32(position), UInt32(removing), &cStrings)
    }
}

/// A scrolling list over a `StringList` that makes only the rows on screen (GtkListView with a
/// signal factory): 10,000 items cost 10,000 strings, not 10,000 widgets.
///
/// `makeRow` builds a row (called for as many rows as fit on screen and a few more); `bind` fills
/// a row for one item; rows are reused as the list scrolls.
public final class ListView<Row: AnyObject>: Widget {
    public let model: StringList
    private let factory: Object
    private var rows: [UnsafeMutableRawPointer: (row: Row, widget: Widget)] = [:]

    public init(model: StringList, name: String, makeRow: @escaping () -> (Row, Widget), bind: @escaping (Row, String, Int) -> Void) {
        self.model = model
        factory = Object(adopting: UnsafeMutableRawPointer(gtk_signal_list_item_factory_new()))
        g_object_ref(model.raw)  // the selection model takes a reference
        let selection = gtk_no_selection_new(model.opaque)
        g_object_ref(factory.raw)  // the view takes one too
        let view: UnsafeMutablePointer<GtkWidget> = gtk_list_view_new(selection, OpaquePointer(factory.raw))
        super.init(sinking: UnsafeMutableRawPointer(view))
        accessibleName = name
        factory.onPointer("setup") { [unowned self] item in
            guard let item else { return }
            let (row, widget) = makeRow()
            gtk_list_item_set_child(OpaquePointer(item), widget.widget)
            rows[item] = (row, widget)
        }
        factory.onPointer("bind") { [unowned self] item in
            guard let item, let row = rows[item]?.row else { return }
            let position = Int(gtk_list_item_get_position(OpaquePointer(item)))
            guard let object = gtk_list_item_get_item(OpaquePointer(item)), chime_g_is_string_object(object) != 0 else { return }
            bind(row, String(cString: gtk_string_object_get_string(OpaquePointer(object))), position)
        }
        factory.onPointer("teardown") { [unowned self] item in
            guard let item else { return }
            rows[item] = nil
        }
    }

    /// Runs `body` with an item's position when its row is activated (a click, Return).
    public func onActivate(_ body: @escaping (Int) -> Void) {
        gtk_list_view_set_single_click_activate(opaque, 1)
        onNumber("activate") { body(Int($0)) }
    }

    /// Every row that exists now (those on screen and the few GTK keeps around them).
    public func forEachRow(_ body: (Row) -> Void) {
        for entry in rows.values { body(entry.row) }
    }
}
