import CGtk
import CListModel

/// A list of strings as a GTK model (`GtkStringList`): a combo row's choices.
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

/// A list model that is only a count (`chime_count_model`): the list view's items are positions,
/// and the rows read what to show from the app's own array. Filling it with 100,000 costs one
/// call; the items of the rows on screen are made as the view asks for them.
public final class CountModel: Object {
    public private(set) var count = 0

    public init() {
        super.init(adopting: UnsafeMutableRawPointer(chime_count_model_new()))
    }

    /// Replaces `removing` items at `position` with `adding` new ones, in one change the view sees once.
    public func splice(at position: Int, removing: Int, adding: Int) {
        precondition(position >= 0 && removing >= 0 && adding >= 0 && position + removing <= count)
        count += adding - removing
        chime_count_model_splice(opaque, UInt32(position), UInt32(removing), UInt32(adding))
    }
}

/// A scrolling list over a `CountModel` that makes only the rows on screen (GtkListView with a
/// signal factory): 100,000 items cost no widgets, and no objects until scrolled to.
///
/// `makeRow` builds a row (called for as many rows as fit on screen and a few more); `bind` fills
/// a row for one position; rows are reused as the list scrolls.
public final class ListView<Row: AnyObject>: Widget {
    public let model: CountModel
    private let factory: Object
    private var rows: [UnsafeMutableRawPointer: (row: Row, widget: Widget)] = [:]

    public init(model: CountModel, name: String, makeRow: @escaping () -> (Row, Widget), bind: @escaping (Row, Int) -> Void) {
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
            let position = gtk_list_item_get_position(OpaquePointer(item))
            guard position != GTK_INVALID_LIST_POSITION, Int(position) < model.count else { return }
            bind(row, Int(position))
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

    /// Every row bound now (those on screen and the few GTK keeps around them), with its position.
    public func forEachRow(_ body: (Row, Int) -> Void) {
        for (item, entry) in rows {
            let position = gtk_list_item_get_position(OpaquePointer(item))
            guard position != GTK_INVALID_LIST_POSITION, Int(position) < model.count,
                  gtk_list_item_get_item(OpaquePointer(item)) != nil else { continue }
            body(entry.row, Int(position))
        }
    }
}
