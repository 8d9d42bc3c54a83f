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
    /// Skip next, or Undo skip where an occurrence is skipped.
    let skip = Button(icon: "media-skip-forward-symbolic", name: tr("Skip next"))
    var skipped = false
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
        skip.addClass("flat")
        skip.verticalAlignment = .center
        box.append(skip)
        box.append(onOff)
        box.append(trailing)
    }
}

final class AlarmsPage {
    /// The banner of time away above the list (or the empty page).
    let root = Box(vertical: true)
    let pages: Stack
    /// "Alarms off until Mon 2027-01-04" and Turn On, while alarms are off.
    private let banner = Box(vertical: false, spacing: 12)
    private let bannerText = Label()
    private let turnOn = Button(label: tr("Turn _On"))
    /// "The calendar personal is not syncing: …", while a calendar's sync fails.
    private let syncBanner = Label()
    let model = StringList()
    let list: ListView<AlarmRowWidgets>
    private(set) var rows: [String: AlarmRow] = [:]
    unowned let window: MainWindow

    init(window: MainWindow) {
        self.window = window
        pages = Stack()
        var bindRow: (AlarmRowWidgets, String, Int) -> Void = { _, _, _ in }
        list = ListView(model: model, name: tr("Alarms"), makeRow: {
            let row = AlarmRowWidgets()
            return (row, row.box)
        }, bind: { row, id, position in bindRow(row, id, position) })
        bindRow = { [unowned self] row, id, _ in bind(row, id) }
        list.addClass("navigation-sidebar")
        list.onActivate { [unowned self] position in open(model[position]) }
        let empty = StatusPage(icon: "alarm-symbolic", title: tr("No Alarms"), description: tr("Add an alarm with the + button"))
        pages.add(ScrolledWindow(Clamp(list, maximum: 720)), name: "list")
        pages.add(empty, name: "empty")
        pages.visiblePage = "empty"
        pages.expandsVertically = true
        bannerText.expandsHorizontally = true
        bannerText.xAlignment = 0
        bannerText.wraps = true
        banner.append(bannerText)
        turnOn.verticalAlignment = .center
        turnOn.onClick { [unowned self] in self.window.endAway() }
        banner.append(turnOn)
        banner.margins(6, 12, 6, 12)
        banner.addClass("card")
        banner.isVisible = false
        root.append(banner)
        syncBanner.xAlignment = 0
        syncBanner.wraps = true
        syncBanner.margins(6, 12, 6, 12)
        syncBanner.addClass("card")
        syncBanner.addClass("warning")
        syncBanner.isVisible = false
        root.append(syncBanner)
        root.append(pages)
    }

    /// Says which calendars' syncs fail (their alarms ring from this machine's copy); hides the
    /// note when `text` is nil.
    func showSyncFailing(_ text: String?) {
        syncBanner.isVisible = text != nil
        syncBanner.text = text ?? ""
    }

    /// Says that alarms are off until `until` (every alarm), or for some of them; hides the banner
    /// when `text` is nil.
    func showAway(_ text: String?) {
        banner.isVisible = text != nil
        bannerText.text = text ?? ""
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
        pages.visiblePage = ids.isEmpty ? "empty" : "list"
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
        widgets.skip.isVisible = row.canSkip
        widgets.skipped = row.skipped != nil
        widgets.skip.iconName = row.skipped == nil ? "media-skip-forward-symbolic" : "edit-undo-symbolic"
        let skipAction = row.skipped == nil ? tr("Skip the next time %s rings", row.name) : tr("Undo the skip of %s", row.name)
        widgets.skip.accessibleName = skipAction
        widgets.skip.tooltip = skipAction
        if !widgets.wired {
            widgets.wired = true
            widgets.onOff.onFlip { [unowned self, unowned widgets] on in window.setOn(widgets.identifier, on) }
            widgets.skip.onClick { [unowned self, unowned widgets] in window.skip(widgets.identifier, undo: widgets.skipped) }
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
        if row.fromFile { window.openFileAlarm(id) } else { window.edit(id) }
    }
}
