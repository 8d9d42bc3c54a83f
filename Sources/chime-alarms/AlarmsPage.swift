// The alarms page: every alarm at a time of day (the dialog's and the command line's, and the
// alarm file's and its calendars', marked as such), in a list view over a model that is only a
// count: only the rows on screen are widgets, and a row's words are made when it is bound, so
// 100,000 alarms open and scroll as 10 do.
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
    /// What the row shows now (compared with the alarm as read again, so only a changed row is redone).
    var shown: AlarmRow?
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
        // (On a phone's narrow screen the words wrap: cut short, they would say little.)
        if Touch.wanted { details.wraps = true } else { details.ellipsizes() }
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
    let model = CountModel()
    let list: ListView<AlarmRowWidgets>
    /// The alarms as last shown, soonest first (the model's positions), and how one becomes a row.
    private var summaries: [PendingSummary] = []
    private var makeRow: (PendingSummary) -> AlarmRow = { AlarmRow($0, now: Instant(seconds: 0), zone: .utc) }
    unowned let window: MainWindow

    init(window: MainWindow) {
        self.window = window
        pages = Stack()
        var bindRow: (AlarmRowWidgets, Int) -> Void = { _, _ in }
        list = ListView(model: model, name: tr("Alarms"), makeRow: {
            let row = AlarmRowWidgets()
            return (row, row.box)
        }, bind: { row, position in bindRow(row, position) })
        bindRow = { [unowned self] widgets, position in bind(widgets, makeRow(summaries[position])) }
        list.addClass("navigation-sidebar")
        list.onPaint { [unowned self] in firstFrameDrawn() }
        list.onActivate { [unowned self] position in
            guard position < summaries.count else { return }
            open(summaries[position])
        }
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

    /// How many rows a list that starts empty gets before its first frame: a screenful. GTK 4.8's
    /// list view makes up to 200 rows around what is on screen, and each costs as much to make and
    /// measure as one shown, so the rest come in once that frame is drawn.
    private static let firstScreen = 40
    /// The rest of a long list, waiting for the first frame of its first screenful.
    private var restAfterFrame = false
    private var addRest: Source?

    /// Shows these alarms (soonest first), each made into a row by `makeRow` when it is on screen;
    /// only the rows that changed change.
    func show(_ newSummaries: [PendingSummary], makeRow: @escaping (PendingSummary) -> AlarmRow) {
        // What the model holds now (all of the last list, or its first screenful).
        let old = summaries[..<model.count]
        var shown = newSummaries.count
        if old.isEmpty && shown > Self.firstScreen && !list.isMapped {
            shown = Self.firstScreen
            restAfterFrame = true
        } else {
            restAfterFrame = false
            addRest = nil
        }
        summaries = newSummaries
        self.makeRow = makeRow
        let new = newSummaries[..<shown]
        if !old.elementsEqual(new, by: { $0.identifier == $1.identifier }) {
            // The common prefix and suffix stay; what lies between is replaced in one change.
            var start = 0
            while start < min(old.count, new.count), old[start].identifier == new[start].identifier { start += 1 }
            var end = 0
            while end < min(old.count, new.count) - start, old[old.count - 1 - end].identifier == new[new.count - 1 - end].identifier { end += 1 }
            model.splice(at: start, removing: old.count - start - end, adding: new.count - start - end)
        }
        // What changed in place (each minute every "rings in" does) is said again in the rows on
        // screen; a row GTK binds later is made from `summaries` as it is bound.
        list.forEachRow { widgets, position in
            let row = makeRow(summaries[position])
            if row.identifier != widgets.identifier || row != widgets.shown { bind(widgets, row) }
        }
        pages.visiblePage = newSummaries.isEmpty ? "empty" : "list"
    }

    /// After the first frame of a long list's first screenful: the rest, on the next turn of the loop.
    private func firstFrameDrawn() {
        guard restAfterFrame else { return }
        restAfterFrame = false
        addRest = Source(idle: { [unowned self] in
            addRest = nil
            if model.count < summaries.count { model.splice(at: model.count, removing: 0, adding: summaries.count - model.count) }
        })
    }

    /// The row of `identifier` as shown on screen now (its buttons are what ask), or nil.
    func shownRow(_ identifier: String) -> AlarmRow? {
        var found: AlarmRow?
        list.forEachRow { widgets, _ in if widgets.identifier == identifier { found = widgets.shown } }
        return found
    }

    private func bind(_ widgets: AlarmRowWidgets, _ row: AlarmRow) {
        widgets.shown = row
        widgets.identifier = row.identifier
        widgets.fromFile = row.fromFile
        widgets.time.text = row.time
        let status = row.fromFile ? tr("From the alarm file") + (row.status.isEmpty ? "" : " · " + row.status) : row.status
        widgets.details.setMarkup(escapedMarkup(row.name + " · " + row.days) + "\n<small><span alpha=\"60%\">" + escapedMarkup(status) + "</span></small>")
        widgets.onOff.isOn = row.isOn
        widgets.onOff.isSensitive = !row.fromFile
        widgets.onOff.accessibleName = tr("Switch %s on or off", row.name)
        widgets.trailing.iconName = row.fromFile ? "document-edit-symbolic" : "user-trash-symbolic"
        // The tooltips say what a button does (the row says which alarm); the names, which
        // assistive technologies read without the row, say which alarm too.
        widgets.trailing.accessibleName = row.fromFile ? tr("Open the alarm file") : tr("Delete %s", row.name)
        widgets.trailing.tooltip = row.fromFile ? tr("Open the alarm file") : tr("Delete")
        widgets.time.setClass("dim-label", !row.isOn)
        widgets.skip.isVisible = row.canSkip
        widgets.skipped = row.skipped != nil
        widgets.skip.iconName = row.skipped == nil ? "media-skip-forward-symbolic" : "edit-undo-symbolic"
        let skipAction = row.skipped == nil ? tr("Skip the next time %s rings", row.name) : tr("Undo the skip of %s", row.name)
        widgets.skip.accessibleName = skipAction
        widgets.skip.tooltip = row.skipped == nil ? tr("Skip next") : tr("Undo")
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
        list.forEachRow { widgets, position in
            if widgets.identifier == id, position < summaries.count { bind(widgets, makeRow(summaries[position])) }
        }
    }

    private func open(_ summary: PendingSummary) {
        if summary.origin == .file { window.openFileAlarm(summary.identifier) } else { window.edit(summary.identifier) }
    }
}
