// The alarms page: every alarm at a time of day (the dialog's and the command line's, and the
// alarm file's, marked as such), in a list view over a model of identifiers: only the rows on
// screen are widgets, so 10,000 alarms scroll as 10 do.
import AlarmsModel
import ChimeCenter
import Gtk
import Timekeeping

/// One row's widgets, reused as the list scrolls.
final class AlarmRowWidgets {
    let box = Box(vertical: false, spacing: 12)
    let time = Label()
    let name = Label()
    let status = Label()
    let onOff = Switch(name: nil)
    let delete = Button(icon: "user-trash-symbolic", name: tr("Delete"))
    let openFile = Button(icon: "document-edit-symbolic", name: tr("Open the alarm file"))
    var identifier = ""
    /// Whether the buttons' handlers are connected (once per row widget).
    var wired = false

    init() {
        box.margins(12, 12, 12, 12)
        let text = Box(vertical: true, spacing: 2)
        text.expandsHorizontally = true
        time.addClass("title-2")
        time.addClass("numeric")
        time.xAlignment = 0
        name.xAlignment = 0
        name.ellipsizes()
        status.xAlignment = 0
        status.addClass("dim-label")
        status.addClass("caption")
        status.ellipsizes()
        text.append(time)
        text.append(name)
        text.append(status)
        box.append(text)
        for button in [delete, openFile] {
            button.addClass("flat")
            button.verticalAlignment = .center
        }
        box.append(openFile)
        box.append(onOff)
        box.append(delete)
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
        // Rows whose content changed in place are bound again.
        for (position, id) in ids.enumerated() where old[id] != nil && old[id] != rows[id] {
            model.splice(at: position, removing: 1, [id])
        }
        root.visiblePage = ids.isEmpty ? "empty" : "list"
    }

    private func bind(_ widgets: AlarmRowWidgets, _ id: String) {
        guard let row = rows[id] else { return }
        widgets.identifier = id
        widgets.time.text = row.time
        widgets.name.text = row.name + " · " + row.days
        widgets.status.text = row.fromFile ? tr("From the alarm file") + (row.status.isEmpty ? "" : " · " + row.status) : row.status
        widgets.onOff.isOn = row.isOn
        widgets.onOff.isSensitive = !row.fromFile
        widgets.onOff.accessibleName = tr("Switch %s on or off", row.name)
        widgets.delete.isVisible = !row.fromFile
        widgets.delete.accessibleName = tr("Delete %s", row.name)
        widgets.openFile.isVisible = row.fromFile
        widgets.time.setClass("dim-label", !row.isOn)
        if !widgets.wired {
            widgets.wired = true
            widgets.onOff.onFlip { [unowned self, unowned widgets] on in window.setOn(widgets.identifier, on) }
            widgets.delete.onClick { [unowned self, unowned widgets] in window.delete(widgets.identifier) }
            widgets.openFile.onClick { [unowned self] in window.openAlarmFile() }
        }
    }

    private func open(_ id: String) {
        guard let row = rows[id] else { return }
        if row.fromFile { window.openAlarmFile() } else { window.edit(id) }
    }
}
