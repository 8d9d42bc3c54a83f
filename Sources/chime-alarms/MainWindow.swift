// The main window: the alarms, timers and "this desktop" pages in an adaptive view switcher, toasts
// over them; while an alarm rings, the ringing window over it.
import AlarmsModel
import ChimeCenter
import ChimeClient
import DBus
import Gtk
import Notifications
import Posix
import Timekeeping

final class MainWindow {
    let app: Application
    let window: Window
    let link: SchedulerLink?
    private let toasts: ToastOverlay
    private let top = Stack()
    private let views: ViewStack
    private(set) var alarms: AlarmsPage!
    /// The timers and this desktop's pages are made the first time they show: the window's first
    /// frame waits for neither (nor for the calls that fill them).
    private var timers: TimersPage?
    private var desktop: DesktopPage?
    private let timersSlot = Box(vertical: true)
    private let desktopSlot = Box(vertical: true)
    /// The timers as last read, for the timers page (made or not).
    private var timerRows: [AlarmRow] = []
    private var ringing: RingingPage!
    private var startUp: Source?
    /// The pending alarms as last read.
    private var summaries: [PendingSummary] = []
    /// The alarms with an occurrence skipped ahead (the earliest), and the time away, as last read.
    private var skipped: [String: Instant] = [:]
    private var away: [DaysOff.Away] = []
    /// The calendars chime writes to (the dialog's Lives On choices), as last listed.
    private(set) var writableCalendars: [String] = []
    /// The alarm file's `[defaults] calendar`: where a new alarm lives unless chosen otherwise.
    private(set) var defaultCalendar: String?
    /// Says "rings in 5 min" anew each minute, on the minute.
    private var minuteTicker: Source?
    /// A closed dialog is let go on the next turn of the loop, not inside its own close signal.
    private var release: Source?
    private var dialog: AlarmDialog?
    /// Keeps toasts (and their Undo closures) alive while they show.
    private var liveToasts: [Toast] = []
    let zone = Zone.system()
    /// CHIME_TRACE: when the list changed and when that was drawn, on standard error (the tests and
    /// the benchmark measure with it).
    private let tracing = Sys.environment("CHIME_TRACE") != nil
    private var drawnFirst = false
    private var changeToDraw = false

    /// The listing started before the window (taken by the first `refresh`).
    private var firstListing: Background<FirstListing>?

    /// CHIME_ALARMS_SIZE=360x720: the screen the windows are sized for (a phone's, for the tests
    /// and the screenshots: a phone's shell gives each window the screen anyway); the dialogs are
    /// no bigger.
    static let screen: (width: Int32, height: Int32)? = {
        guard let size = Sys.environment("CHIME_ALARMS_SIZE")?.split(separator: "x").compactMap({ Int32($0) }), size.count == 2,
            (360...4096).contains(size[0]), (400...4096).contains(size[1]) else { return nil }
        return (size[0], size[1])
    }()

    /// A dialog's size: as asked, no bigger than the screen it is for.
    static func dialogSize(_ width: Int32, _ height: Int32) -> (width: Int32, height: Int32) {
        guard let screen else { return (width, height) }
        return (min(width, screen.width), height < 0 ? height : min(height, screen.height))
    }

    init(app: Application, link: SchedulerLink?, linkError: String?, firstListing: Background<FirstListing>? = nil) {
        self.firstListing = firstListing
        self.app = app
        self.link = link
        window = Window(application: app)
        window.title = tr("Alarms")
        window.setDefaultSize(width: 480, height: 640)
        if let screen = Self.screen { window.setDefaultSize(width: screen.width, height: screen.height) }
        window.sizeRequest(width: 360, height: 400)
        views = ViewStack(title: tr("Alarms"))
        let header = HeaderBar()
        header.setTitle(views.switcherTitle)
        let add = Button(icon: "list-add-symbolic", name: tr("New Alarm"))
        add.setAction("win.new-alarm")
        header.packStart(add)
        let off = Button(icon: "media-playback-pause-symbolic", name: tr("Alarms Off Until…"))
        off.tooltip = tr("Alarms Off Until…")
        off.setAction("win.alarms-off")
        header.packEnd(off)
        let body = Box(vertical: true)
        body.append(header)
        toasts = ToastOverlay(top)
        toasts.expandsVertically = true
        body.append(toasts)
        body.append(views.switcherBar)
        window.setContent(body)

        alarms = AlarmsPage(window: self)
        ringing = RingingPage(window: self)
        views.add(alarms.root, name: "alarms", title: tr("Alarms"), icon: "alarm-symbolic")
        views.add(timersSlot, name: "timers", title: tr("Timers"), icon: "org.chime.Alarms-timer-symbolic")
        views.add(desktopSlot, name: "desktop", title: tr("This Desktop"), icon: "computer-symbolic")
        views.onPageChange { [unowned self] in makeShownPage() }
        top.add(views, name: "main")
        if let linkError {
            let failed = StatusPage(icon: "dialog-error-symbolic", title: tr("No Connection to chime"), description: linkError)
            top.add(failed, name: "failed")
            top.visiblePage = "failed"
            add.isSensitive = false
        } else {
            top.visiblePage = "main"
        }

        if tracing {
            // Each frame's work (its layout and drawing), for the benchmark's scrolling.
            var frameStart: Int64 = 0
            window.onFrameStart { frameStart = monotonicMicroseconds() }
            window.onPaint { [unowned self] in
                if frameStart != 0 {
                    trace("frame \(frameStart) \(monotonicMicroseconds())")
                    frameStart = 0
                }
                if !drawnFirst {
                    drawnFirst = true
                    trace("first frame at \(monotonicMicroseconds())")
                }
                if changeToDraw {
                    changeToDraw = false
                    trace("drawn at \(monotonicMicroseconds())")
                }
            }
        }
        window.addAction("new-alarm") { [unowned self] in newAlarm() }
        window.addAction("alarms-off") { [unowned self] in alarmsOff() }
        window.addAction("show-alarms") { [unowned self] in views.visiblePage = "alarms" }
        window.addAction("show-timers") { [unowned self] in views.visiblePage = "timers" }
        window.addAction("show-desktop") { [unowned self] in views.visiblePage = "desktop" }
        app.setShortcuts("win.new-alarm", ["<Control>n"])
        app.setShortcuts("win.show-alarms", ["<Alt>1"])
        app.setShortcuts("win.show-timers", ["<Alt>2"])
        app.setShortcuts("win.show-desktop", ["<Alt>3"])
        app.setShortcuts("window.close", ["<Control>w"])

        if let link {
            // What the daemon announces is read without waiting; the first listing (below) waits, so
            // the first frame shows the alarms.
            link.pendingChanged = { [unowned self] in refreshLater() }
            link.ringingChanged = { [unowned self] in refreshRingingLater() }
            link.calendarsChanged = { [unowned self] in refreshCalendars() }
            link.missedChanged = { [unowned self] in desktop?.refreshMissed() }
            link.daemonChanged = { [unowned self] running in
                if running {
                    desktop?.refresh()
                } else {
                    // The alarms are the daemon's, and safe in its store; the next call starts it again.
                    toast(tr("The chime daemon stopped; it starts again with the next change"))
                }
            }
            refresh()
            // What rings now, once the window has drawn (RingingChanged tells of the rest).
            startUp = Source(idle: { [unowned self] in
                startUp = nil
                refreshRingingLater()
                startMinuteTicker()
            })
        }
    }

    /// The rows' "rings in ..." follow the clock: each minute, just after the minute turns.
    private func startMinuteTicker() {
        let now = WallClock.system.now()
        let intoMinute = (now.seconds % 60 + 60) % 60
        minuteTicker = Source(after: UInt32((60 - intoMinute) * 1000 + 50)) { [unowned self] in
            render()
            startMinuteTicker()
        }
    }

    /// Makes the page that shows now, the first time it does.
    private func makeShownPage() {
        guard link != nil else { return }
        switch views.visiblePage {
        case "timers" where timers == nil:
            let page = TimersPage(window: self)
            timersSlot.append(page.root)
            timers = page
            page.show(timerRows)
            page.refreshPresets()
        case "desktop" where desktop == nil:
            let page = DesktopPage(window: self)
            desktopSlot.append(page.root)
            desktop = page
            page.refresh()
        default:
            break
        }
    }

    func present() { window.present() }

    // MARK: - Calls

    /// Makes a call without waiting (the window goes on); `then` gets its answer. An error, or no
    /// answer within the center's timeout, becomes a toast naming `what` (`reading`: a read the
    /// window makes on its own, said as `failure(_:_:reading:)` says).
    func send<T>(_ what: String, _ call: SchedulerCall<T>, reading: Bool = false, then: @escaping (T) -> Void = { _ in },
                 failed: @escaping () -> Void = {}) {
        guard let link else { return }
        link.later(call) { [unowned self] result in
            switch result {
            case .success(let value): then(value)
            case .failure(let error):
                failure(what, error, reading: reading)
                failed()
            }
        }
    }

    /// Runs a call to the daemon, a read the window makes on its own; an error becomes a toast
    /// and nil.
    @discardableResult
    func call<T>(_ what: String, _ body: (UserNotificationCenter) throws -> T) -> T? {
        guard let link else { return nil }
        do { return try link.run(body) } catch {
            failure(what, error, reading: true)
            return nil
        }
    }

    /// Says that `what` failed and why. What the person did is said at once, ahead of any toast
    /// already up (which waits its turn again): it answers what they just did. A read the window
    /// made on its own is said once per reason: when the daemon does not answer, every page's read
    /// fails for the one reason, and a queue of toasts saying so, ten seconds each, would hide the
    /// failure of what the person did next behind them.
    func failure(_ what: String, _ error: any Error, reading: Bool) {
        let reason = describe(error)
        if reading, failureReasons.values.contains(reason) { return }
        let toast = Toast(tr("%s failed", what) + ": " + reason, seconds: 10, urgent: !reading)
        let key = ObjectIdentifier(toast)
        failureReasons[key] = reason
        toast.onDismissed { [unowned self] in failureReasons[key] = nil }
        show(toast)
    }

    /// The reasons the failure toasts shown or waiting to be shown give, by toast.
    private var failureReasons: [ObjectIdentifier: String] = [:]

    /// Shows `text` for a moment: 4 s, 8 s with an Undo button. (A failure, `failure(_:_:reading:)`,
    /// stays 10 s: a sentence saying what went wrong and why takes longer to read than "Alarm set".)
    func toast(_ text: String, undo: (() -> Void)? = nil) {
        let toast = Toast(text, button: undo == nil ? nil : tr("_Undo"), seconds: undo == nil ? 4 : 8)
        if let undo { toast.onButton(undo) }
        show(toast)
    }

    private func show(_ toast: Toast) {
        toast.onDismissed { [unowned self, unowned toast] in liveToasts.removeAll { $0 === toast } }
        liveToasts.append(toast)
        toasts.show(toast)
    }

    /// Reads the pending alarms, waiting for the answer (at start, so the first frame shows them;
    /// the first time, the listing started with the app).
    func refresh() {
        let started = monotonicMicroseconds()
        let listed: [PendingSummary]?
        if let early = firstListing {
            firstListing = nil
            let first = early.wait()
            switch first.result {
            case .success(let read): listed = read
            case .failure: listed = call(tr("Reading the alarms"), { try $0.pendingSummaries() })
            }
            // The window follows PendingChanged by now: one that came since the first listing was
            // asked for is read now.
            if first.changedMeanwhile() { refreshLater() }
        } else {
            listed = call(tr("Reading the alarms"), { try $0.pendingSummaries() })
        }
        guard let summaries = listed else { return }
        if tracing { trace("listed \(summaries.count) in \(monotonicMicroseconds() - started) us") }
        self.summaries = summaries
        render()
        refreshSkipsAndAway()
    }

    /// The alarms as last read, and the rows' words (when each rings, from now) said again.
    private func render() {
        defer {
            if tracing {
                trace("rendered at \(monotonicMicroseconds())")
                changeToDraw = true
            }
        }
        let now = WallClock.system.now()
        var timerRows: [AlarmRow] = []
        let current = away.filter { $0.contains(now) }
        let (zone, skipped) = (zone, skipped)
        // A row's words are made when it shows (a timer's now: the timers are few).
        let makeRow = { (summary: PendingSummary) -> AlarmRow in
            let offUntil = current.filter { $0.alarms?.contains(summary.identifier) ?? true }.map(\.until).max()
            return AlarmRow(summary, now: now, zone: zone, language: .ofUser, skipped: skipped[summary.identifier], offUntil: offUntil)
        }
        // The list shares the summaries as read unless timers are to be taken out.
        let timerIndices = summaries.indices.filter { AlarmRow.isTimer(summaries[$0]) }
        var alarmSummaries = summaries
        if !timerIndices.isEmpty {
            timerRows = timerIndices.map { makeRow(summaries[$0]) }
            let timerSet = Set(timerIndices)
            alarmSummaries = summaries.indices.filter { !timerSet.contains($0) }.map { summaries[$0] }
        }
        alarms.show(alarmSummaries, makeRow: makeRow)
        if tracing { trace("shown at \(monotonicMicroseconds())") }
        self.timerRows = timerRows
        timers?.show(timerRows)
        // Time away for every alarm, now or ahead: the banner says until when.
        if let all = away.filter({ $0.alarms == nil && $0.until > now }).max(by: { $0.until < $1.until }) {
            let civil = zone.civil(at: all.until.seconds)
            let day = dayText(civil)
            alarms.showAway(all.from > now ? tr("Alarms off from %s", relativeTime(from: now, to: all.from, zone: zone)) + " " + tr("until %s", day)
                                           : tr("Alarms off until %s", day))
        } else {
            alarms.showAway(nil)
        }
    }

    /// Reads the calendars chime writes to (the dialog's Lives On) and says which fail to sync: their
    /// alarms ring from this machine's copy, and the other machines hear nothing answered here.
    private func refreshCalendars() {
        link?.later(Scheduler1.listCalendars) { [unowned self] result in
            guard case .success(let calendars) = result else { return }
            writableCalendars = calendars.filter(\.write).map(\.name)
            defaultCalendar = calendars.first(where: \.isDefault)?.name
            let failing = calendars.filter { !$0.failing.isEmpty }
            alarms.showSyncFailing(failing.isEmpty ? nil : failing.map {
                tr("The calendar %s is not syncing; its alarms ring from this computer's copy.", $0.name) + " (" + $0.failing + ")"
            }.joined(separator: "\n"))
        }
    }

    /// Reads which alarms have a skip ahead and the time away (after each listing: a skip or time
    /// away changes the pending alarms, which PendingChanged announces).
    private func refreshSkipsAndAway() {
        link?.later(Scheduler1.listSkipped) { [unowned self] result in
            guard case .success(let list) = result else { return }
            let read = Dictionary(list.map { ($0.identifier, $0.occurrence) }, uniquingKeysWith: min)
            guard read != skipped else { return }
            skipped = read
            render()
        }
        refreshCalendars()
        link?.later(Scheduler1.listAway) { [unowned self] result in
            guard case .success(let list) = result else { return }
            let read = list.map(\.away)
            guard read != away else { return }
            away = read
            render()
        }
    }

    /// Whether a listing is in flight, and whether another change came meanwhile.
    private var listing = false
    private var listAgain = false

    /// Reads the pending alarms without waiting, one listing at a time (a change that comes while
    /// one is in flight is read right after it).
    private func refreshLater() {
        guard let link else { return }
        if listing {
            listAgain = true
            return
        }
        listing = true
        link.later(Scheduler1.listPending) { [unowned self] result in
            listing = false
            switch result {
            case .success(let summaries):
                // (Said for the tests: a listing this method makes follows a PendingChanged, and
                // only one.)
                if tracing { trace("listed \(summaries.count) after PendingChanged at \(monotonicMicroseconds())") }
                self.summaries = summaries
                render()
                refreshSkipsAndAway()
            case .failure(let error):
                failure(tr("Reading the alarms"), error, reading: true)
            }
            if listAgain {
                listAgain = false
                refreshLater()
            }
        }
    }

    private func refreshRingingLater() {
        link?.later(Scheduler1.listRinging) { [unowned self] result in
            switch result {
            case .success(let ringingNow):
                ringing.show(ringingNow.first.map { (identifier: $0.identifier, title: $0.title, due: $0.due) })
            case .failure(let error):
                failure(tr("Reading what rings"), error, reading: true)
            }
        }
    }

    // MARK: - What rows and dialogs ask

    /// A row's switch: the daemon switches the alarm on or off; the switch shows the change as
    /// pending until the daemon's PendingChanged brings the row back (or, refused, shows it as it was).
    func setOn(_ identifier: String, _ on: Bool) -> Bool {
        send(on ? tr("Switching the alarm on") : tr("Switching the alarm off"), on ? Scheduler1.enable([identifier]).ignoringAnswer : Scheduler1.disable([identifier]).ignoringAnswer,
             failed: { [unowned self] in alarms.rebind(identifier) })
        return false
    }

    /// Skip next (or Undo skip) on a row: the daemon skips its next occurrence, as `chime skip`.
    func skip(_ identifier: String, undo: Bool) {
        let name = alarms.shownRow(identifier)?.name ?? identifier
        send(undo ? tr("Bringing the skipped time back") : tr("Skipping the next time"), Scheduler1.skip(identifier, undo: undo)) { [unowned self] answer in
            guard !undo else { return }
            toast(tr("“%s” skipped", name) + " (" + relativeTime(from: WallClock.system.now(), to: answer.occurrence, zone: zone) + ")") { [unowned self] in
                send(tr("Bringing the skipped time back"), Scheduler1.skip(identifier, undo: true))
            }
        }
    }

    /// Alarms Off Until…: a day is picked, and every alarm is off until it starts.
    func alarmsOff() {
        guard link != nil else { return }
        let dialog = AwayDialog(window: self)
        awayDialog = dialog
        dialog.present()
    }

    private var awayDialog: AwayDialog?

    /// Turn On: the time away set here or by `chime off` ends.
    func endAway() {
        send(tr("Turning the alarms on"), Scheduler1.endAway([])) { [unowned self] _ in refreshSkipsAndAway() }
    }

    /// Deletes an alarm, with Undo: the request is read in full first, and added back as it was.
    func delete(_ identifier: String) {
        let wasOff = alarms.shownRow(identifier).map { !$0.isOn } ?? timerRows.first { $0.identifier == identifier }.map { !$0.isOn } ?? false
        send(tr("Reading the alarm"), Scheduler1.get(identifier)) { [unowned self] request in
            send(tr("Deleting the alarm"), Scheduler1.remove([identifier])) { [unowned self] _ in
                let name = request.content.label.isEmpty ? request.content.title : request.content.label
                toast(tr("“%s” deleted", name)) { [unowned self] in
                    send(tr("Restoring the alarm"), Scheduler1.add(request)) { [unowned self] _ in
                        if wasOff { send(tr("Switching the alarm off"), Scheduler1.disable([identifier])) }
                    }
                }
            }
        }
    }

    func newAlarm() {
        guard link != nil else { return }
        showDialog(AlarmDialog(window: self, editing: nil, alarm: ClockAlarm()))
    }

    func edit(_ identifier: String) {
        send(tr("Reading the alarm"), Scheduler1.get(identifier)) { [unowned self] request in
            guard let alarm = ClockAlarm(request: request) else {
                toast(tr("This alarm's rule (%s) is changed with the chime command", request.summaryRule))
                return
            }
            showDialog(AlarmDialog(window: self, editing: identifier, alarm: alarm))
        }
    }

    /// An alarm the alarm file gave: one that lives in a calendar chime writes to opens in the
    /// dialog (which says where it lives, and saves into its calendar); any other opens the file.
    func openFileAlarm(_ identifier: String) {
        send(tr("Reading the alarm"), Scheduler1.get(identifier)) { [unowned self] request in
            guard request.content.userInfo[CalendarKeys.calendar] != nil, let alarm = ClockAlarm(request: request) else {
                openAlarmFile()
                return
            }
            showDialog(AlarmDialog(window: self, editing: identifier, alarm: alarm))
        }
    }

    private func showDialog(_ new: AlarmDialog) {
        dialog = new
        new.onClosed = { [unowned self, unowned new] in
            release = Source(idle: { [unowned self] in
                release = nil
                if dialog === new { dialog = nil }
            })
        }
        new.present()
    }

    func openAlarmFile() {
        send(tr("Reading the alarm file's status"), Scheduler1.alarmFileStatus) { [unowned self] status in
            guard !status.path.isEmpty else {
                toast(tr("The daemon follows no alarm file"))
                return
            }
            openInDefaultApp(path: status.path, over: window)
        }
    }
}
