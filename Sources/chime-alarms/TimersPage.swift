// Timers: the alarm file's presets and a custom duration; the running ones, each with a live
// countdown, Pause/Resume (the daemon keeps a paused timer's time left, across restarts too) and Cancel.
import AlarmsModel
import ChimeCenter
import DBus
import Gtk
import Timekeeping

/// A running or paused timer's row.
final class TimerRowWidgets {
    let row: ActionRow
    let countdown = Label()
    let pauseResume = Button(icon: "media-playback-pause-symbolic", name: tr("Pause"))
    let cancel = Button(icon: "window-close-symbolic", name: tr("Cancel"))
    var identifier: String
    /// What the row last showed (nil: nothing yet), so names change only when the state does.
    var shown: (paused: Bool, name: String)?

    init(identifier: String) {
        self.identifier = identifier
        row = ActionRow(title: "")
        countdown.addClass("title-2")
        countdown.addClass("numeric")
        row.addPrefix(countdown)
        for button in [pauseResume, cancel] {
            button.addClass("circular")
            button.verticalAlignment = .center
            row.addSuffix(button)
        }
    }
}

final class TimersPage {
    let root: ScrolledWindow
    private(set) var rows: [String: AlarmRow] = [:]
    private var order: [String] = []
    private var paused: [String: TimeSpan] = [:]
    private var widgets: [String: TimerRowWidgets] = [:]
    private let running = ListBox()
    private let runningGroup = PreferencesGroup(title: tr("Running"))
    private let presets = ListBox()
    private let presetsGroup = PreferencesGroup(title: tr("From the alarm file"))
    private var presetRows: [Widget] = []
    private let hours = SpinButton(range: 0...99, step: 1, name: tr("Hours"))
    private let minutes = SpinButton(range: 0...59, step: 1, name: tr("Minutes"))
    private let seconds = SpinButton(range: 0...59, step: 1, name: tr("Seconds"))
    private let label = EntryRow(title: tr("Name"))
    private var ticker: Source?
    unowned let window: MainWindow

    init(window: MainWindow) {
        self.window = window
        let page = Box(vertical: true, spacing: 24)
        page.margins(24, 12, 24, 12)
        root = ScrolledWindow(Clamp(page, maximum: 600))

        let custom = PreferencesGroup(title: tr("New Timer"))
        let clock = Box(vertical: false, spacing: 6)
        clock.horizontalAlignment = .center
        for (index, spin) in [hours, minutes, seconds].enumerated() {
            spin.vertical()
            spin.twoDigits()
            spin.addClass("title-2")
            if index > 0 { clock.append(Label(":")) }
            clock.append(spin)
        }
        minutes.value = 5
        custom.add(clock)
        custom.add(label)
        let start = Button(label: tr("_Start"))
        start.addClass("suggested-action")
        start.addClass("pill")
        start.horizontalAlignment = .center
        start.margins(12, 0, 0, 0)
        start.onClick { [unowned self] in startCustom() }
        let customBox = Box(vertical: true, spacing: 6)
        customBox.append(custom)
        customBox.append(start)

        runningGroup.add(running)
        runningGroup.isVisible = false
        presetsGroup.add(presets)
        presetsGroup.isVisible = false
        page.append(runningGroup)
        page.append(customBox)
        page.append(presetsGroup)
    }

    func refreshPresets() {
        window.send(tr("Reading the timer presets"), Scheduler1.listTimerPresets, reading: true) { [unowned self] list in
            showPresets(list)
        }
    }

    private func showPresets(_ list: [(name: String, duration: TimeSpan, title: String)]) {
        presets.removeAll()
        presetRows.removeAll()
        for preset in list {
            let row = ActionRow(title: preset.title, subtitle: durationWords(preset.duration) + " · " + preset.name)
            let start = Button(icon: "media-playback-start-symbolic", name: tr("Start %s", preset.name))
            start.addClass("circular")
            start.verticalAlignment = .center
            start.onClick { [unowned self] in
                window.send(tr("Starting the timer"), Scheduler1.startTimer(preset.name)) { [unowned self] _ in
                    window.toast(tr("Timer %s started", preset.name))
                }
            }
            row.addSuffix(start)
            presets.append(row)
            presetRows.append(row)
        }
        presetsGroup.isVisible = !list.isEmpty
    }

    func show(_ newRows: [AlarmRow]) {
        rows = Dictionary(newRows.map { ($0.identifier, $0) }, uniquingKeysWith: { a, _ in a })
        // A paused timer's time left is the daemon's (ListPaused); until it answers, the row says what it said.
        paused = paused.filter { id, _ in rows[id]?.state == .paused }
        if newRows.contains(where: { $0.state == .paused }) {
            window.send(tr("Reading paused timers"), Scheduler1.listPaused, reading: true) { [unowned self] timers in
                paused = Dictionary(timers.map { ($0.identifier, $0.remaining) }, uniquingKeysWith: { a, _ in a })
                tick()
            }
        }
        let ids = newRows.map(\.identifier)
        if ids != order {
            running.removeAll()
            var kept: [String: TimerRowWidgets] = [:]
            for id in ids {
                let row = widgets[id] ?? makeRow(id)
                kept[id] = row
                running.append(row.row)
            }
            widgets = kept
            order = ids
        }
        runningGroup.isVisible = !ids.isEmpty
        tick()
        if !ids.isEmpty, ticker == nil {
            ticker = Source(every: 250) { [unowned self] in
                tick()
                return true
            }
        } else if ids.isEmpty {
            ticker = nil
        }
    }

    private func makeRow(_ id: String) -> TimerRowWidgets {
        let row = TimerRowWidgets(identifier: id)
        row.pauseResume.onClick { [unowned self, unowned row] in
            if paused[row.identifier] != nil {
                window.send(tr("Resuming the timer"), Scheduler1.resume([row.identifier]))
            } else {
                window.send(tr("Pausing the timer"), Scheduler1.pause([row.identifier]))
            }
        }
        row.cancel.onClick { [unowned self, unowned row] in window.delete(row.identifier) }
        return row
    }

    /// Every countdown, as of now.
    private func tick() {
        let now = WallClock.system.now()
        for (id, row) in widgets {
            guard let timer = rows[id] else { continue }
            let isPaused = paused[id] != nil
            let left = paused[id] ?? timer.nextFire.map { $0 - now } ?? .zero
            row.countdown.text = countdown(left)
            row.row.title = timer.name
            row.row.subtitle = isPaused ? tr("Paused") : (timer.duration.map { tr("%s timer", durationWords($0)) } ?? "")
            row.countdown.accessibleName = tr("%s left", countdown(left))
            if row.shown?.paused != isPaused || row.shown?.name != timer.name {
                row.shown = (isPaused, timer.name)
                row.pauseResume.iconName = isPaused ? "media-playback-start-symbolic" : "media-playback-pause-symbolic"
                let name = isPaused ? tr("Resume %s", timer.name) : tr("Pause %s", timer.name)
                row.pauseResume.accessibleName = name
                row.pauseResume.tooltip = name
                row.cancel.accessibleName = tr("Cancel %s", timer.name)
                row.cancel.tooltip = tr("Cancel %s", timer.name)
            }
        }
    }

    private func startCustom() {
        let total = Int64(hours.intValue * 3600 + minutes.intValue * 60 + seconds.intValue)
        guard total > 0 else {
            window.toast(tr("A timer needs a duration"))
            return
        }
        do {
            let request = try timerRequest(duration: .seconds(total), label: label.text, now: WallClock.system.now())
            window.send(tr("Starting the timer"), Scheduler1.add(request)) { [unowned self] _ in
                window.toast(tr("Timer started: %s", countdown(.seconds(total))))
            }
        } catch {
            window.toast(error.message)
        }
    }
}
