// The alarms page: every alarm at a time of day (the dialog's and the command line's, and the
// alarm file's, marked as such), in a list view over a model of identifiers: only the rows on
// screen are widgets, so 10,000 alarms scroll as 10 do.
import AlarmsModel
import ChimeCenter
import Gtk
import Timekeeping

/// One row's widgets, reused as the list scrolls: few, as each alarm on screen (and GTK's ~200
/// rows around it) costs them.
final class AlarmRowWidgets {
    let box = Box(vertical: false, spacing: 12)
    let time = Label()
    /// The name and days, and below them when it rings (or why not), smaller.
    let details = Label()
    let onOff = Switch(name: nil)
    /// Delete, or for the alarm file's alarms, open the file.
    let trailing = Button(icon: "user-trash-symbolic", name: tr("Delete"))
    var identifier = ""
    var fromFile = false
    /// Whether the buttons' handlers are connected (once per row widget).
    var wired = false

    init() {
        box.margins(12, 12, 12, 12)
        let text = Box(vertical: true, spacing: 2)
        text.expandsHorizontally = true
        time.addClass("title-2")
        time.addClass("numeric")
        time.xAlignment = 0
        details.xAlignment = 0
        details.ellipsizes()
        text.append(time)
        text.append(details)
        box.append(text)
        trailing.addClass("flat")
        trailing.verticalAlignment = .center
        box.append(onOff)
        box.append(trailing)
    }
}

final class AlarmsPage {
    let root: Stack
    let model = StringList()
    let list: ListView<AlarmRowWidgets>
    private(set) var rows: [String: AlarmRow] = [:]
    unowned let window: MainWindow

    init(window: MainWindow) {
        self.window = window
        root = Stack()
        var bindRow: (AlarmRowWidgets, String, Int) -> Void = { _, _, _ in }
        list = ListView(model: model, name: tr("Alarms"), makeRow: {
            let row = AlarmRowWidgets()
            return (row, row.box)
        }, bind: { row, id, position in bindRow(row, id, position) })
        bindRow = { [unowned self] row, id, _ in bind(row, id) }
        list.addClass("navigation-sidebar")
        list.onActivate { [unowned self] position in open(model[position]) }
        let empty = StatusPage(icon: "alarm-symbolic", title: tr("No Alarms"), description: tr("Add an alarm with the + button"))
        root.add(ScrolledWindow(Clamp(list, maximum: 720)), name: "list")
        root.add(empty, name: "empty")
        root.visiblePage = "empty"
    }

    /// Shows these alarms (soonest first), changing only the rows that changed.
    func show(_ newRows: [AlarmRow]) {
        let old = rows
        rows = Dictionary(newRows.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        let ids = newRows.map(\.identifier)
        var current = (0..<model.count).map { model[$0] }
        if current != ids {
            // The common prefix and suffix stay; what lies between is replaced in one change.
            var start = 0
            while start < min(current.count, ids.count), current[start] == ids[start] { start += 1 }
            var end = 0
            while end < min(current.count, ids.count) - start, current[current.count - 1 - end] == ids[ids.count - 1 - end] { end += 1 }
            model.splice(at: start, removing: current.count - start - end, Array(ids[start..<(ids.count - end)]))
            current = ids
        }
        // What changed in place (each minute every "rings in" does) is said again in the rows on
        // screen; the model is not touched, so the list keeps its place. A row made later reads
        // `rows` as it is bound.
        list.forEachRow { widgets in
            let id = widgets.identifier
            if let now = rows[id], old[id] != now { bind(widgets, id) }
        }
        root.visiblePage = ids.isEmpty ? "empty" : "list"
    }

    private func bind(_ widgets: AlarmRowWidgets, _ id: String) {
        guard let row = rows[id] else { return }
        widgets.identifier = id
        widgets.fromFile = row.fromFile
        widgets.time.text = row.time
        let status = row.fromFile ? tr("From the alarm file") + (row.status.isEmpty ? "" : " · " + row.status) : row.status
        widgets.details.setMarkup(escapedMarkup(row.name + " · " + row.days) + "\n<small><span alpha=\"60%\">" + escapedMarkup(status) + "</span></small>")
        widgets.onOff.isOn = row.isOn
        widgets.onOff.isSensitive = !row.fromFile
        widgets.onOff.accessibleName = tr("Switch %s on or off", row.name)
        widgets.trailing.iconName = row.fromFile ? "document-edit-symbolic" : "user-trash-symbolic"
        let action = row.fromFile ? tr("Open the alarm file") : tr("Delete %s", row.name)
        widgets.trailing.accessibleName = action
        widgets.trailing.tooltip = action
        widgets.time.setClass("dim-label", !row.isOn)
        if !widgets.wired {
            widgets.wired = true
            widgets.onOff.onFlip { [unowned self, unowned widgets] on in window.setOn(widgets.identifier, on) }
            widgets.trailing.onClick { [unowned self, unowned widgets] in
                if widgets.fromFile { window.openAlarmFile() } else { window.delete(widgets.identifier) }
            }
        }
    }

    /// Shows `id`'s row as the daemon has it again (after the daemon refused a change made in it).
    func rebind(_ id: String) {
        list.forEachRow { widgets in if widgets.identifier == id { bind(widgets, id) } }
    }

    private func open(_ id: String) {
        guard let row = rows[id] else { return }
        if row.fromFile { window.openAlarmFile() } else { window.edit(id) }
    }
}
