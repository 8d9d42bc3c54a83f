// What this desktop can do, from the daemon's Settings and Status: the notification server, sounds,
// buttons, do-not-disturb, waking; the alarm file; and the alarms that were missed.
import AlarmsModel
import ChimeCenter
import DBus
import Gtk
import Notifications
import Timekeeping

final class DesktopPage {
    let root: ScrolledWindow
    private let server = PreferencesGroup(title: tr("Notification Server"))
    private let abilities = PreferencesGroup(title: tr("What It Can Do"))
    private let machine = PreferencesGroup(title: tr("This Computer"))
    private let file = PreferencesGroup(title: tr("Alarm File"))
    private let missed = PreferencesGroup(title: tr("Missed Alarms"))
    private var rows: [ObjectIdentifier: [Widget]] = [:]
    unowned let window: MainWindow

    init(window: MainWindow) {
        self.window = window
        let page = Box(vertical: true, spacing: 24)
        page.margins(24, 12, 24, 12)
        root = ScrolledWindow(Clamp(page, maximum: 720))
        for group in [missed, server, abilities, machine, file] { page.append(group) }
        let open = Button(label: tr("_Open"))
        open.addClass("flat")
        open.onClick { [unowned window] in window.openAlarmFile() }
        file.setHeaderSuffix(open)
    }

    private func set(_ group: PreferencesGroup, _ items: [(String, String)]) {
        for row in rows[ObjectIdentifier(group)] ?? [] { group.remove(row) }
        let made: [Widget] = items.map { title, value in
            let row = ActionRow(title: title, subtitle: value)
            row.addClass("property")
            group.add(row)
            return row
        }
        rows[ObjectIdentifier(group)] = made
    }

    /// Asks the daemon (without waiting: Settings waits for the notification server's answer) and
    /// fills each group as its answer comes.
    func refresh() {
        window.send(tr("Reading what the server can do"), Scheduler1.settings, reading: true) {
            [unowned self] settings in show(settings)
        }
        window.send(tr("Reading the daemon's status"), Scheduler1.status, reading: true) { [unowned self] status in
            set(machine, [(tr("Waking from suspend"), status.wake), (tr("Sleep"), status.sleep),
                          (tr("During Do Not Disturb"), status.doNotDisturb), (tr("chime"), status.version)])
        }
        window.send(tr("Reading the alarm file's status"), Scheduler1.alarmFileStatus, reading: true) {
            [unowned self] status in
            var items = [(tr("File"), status.path.isEmpty ? tr("None") : status.path),
                         (tr("Alarms"), "\(status.alarms)")]
            for problem in status.problems { items.append((tr("Problem"), problem)) }
            // GNOME's calendars: how each is followed, and how to leave their ringing to chime.
            for calendar in status.calendars { items.append((tr("GNOME calendar"), calendar)) }
            set(file, items)
        }
        refreshMissed()
    }

    private func show(_ settings: NotificationSettings) {
        if let info = settings.server {
            set(server, [(tr("Name"), info.name), (tr("Vendor"), info.vendor), (tr("Version"), info.version),
                         (tr("Specification"), info.specVersion)])
        } else {
            set(server, [(tr("Name"), tr("No notification server is running; alarms wait for one"))])
        }
        let yes = tr("Yes"), no = tr("No")
        let sound = switch settings.sound {
        case .byServer: tr("The server plays them")
        case .localPlayer(let name, _): tr("chime plays them with %s", name)
        case .soundServer(let name): tr("chime plays them through the sound server (%s)", name)
        case .notSupported: tr("Nothing here can play them")
        }
        var items = [(tr("Sounds"), sound),
                     (tr("Buttons (Snooze, Dismiss)"), settings.actions == .enabled ? yes : no),
                     (tr("Popups that stay until closed"), settings.persistence == .enabled ? yes : no)]
        if let dnd = settings.doNotDisturb {
            items.append((tr("Do Not Disturb"), dnd ? tr("On") : tr("Off")))
        } else {
            items.append((tr("Do Not Disturb"), tr("This server does not say")))
        }
        set(abilities, items)
    }

    func refreshMissed() {
        window.send(tr("Reading missed alarms"), Scheduler1.listMissed, reading: true) { [unowned self] list in
            show(missed: list)
        }
    }

    private func show(missed list: [MissedOccurrence]) {
        let now = WallClock.system.now()
        let shown = list.suffix(20).reversed().map { occurrence in
            (occurrence.identifier, relativePast(occurrence.due, now: now) + (occurrence.reason.map { $0.isEmpty ? "" : " · " + $0 } ?? ""))
        }
        set(missed, shown)
        missed.isVisible = !list.isEmpty
    }

    private func relativePast(_ then: Instant, now: Instant) -> String {
        let civil = window.zone.civil(at: then.seconds)
        return "\(civil.year)-\(civil.month < 10 ? "0" : "")\(civil.month)-\(civil.day < 10 ? "0" : "")\(civil.day) "
            + ClockAlarm(hour: civil.hour, minute: civil.minute).timeText
    }
}
