// While an alarm rings and the app is open: a window of its own over the app's, with the alarm's
// title and large Snooze and Stop buttons, as a clock app shows, and under Snooze the lengths one may
// snooze for instead of the alarm's own (5 min to 1 h: the daemon's SnoozeFor). It goes when the ring
// ends, however it ends (answered here, in the popup, or rung out).
import AlarmsModel
import ChimeCenter
import DBus
import Gtk
import Notifications
import Timekeeping

final class RingingPage {
    private var window: Window?
    private var page: StatusPage?
    private var identifier: String?
    unowned let owner: MainWindow

    init(window owner: MainWindow) {
        self.owner = owner
    }

    /// Shows the ring (the first of those ringing), or takes the window down when none rings.
    func show(_ ring: (identifier: String, title: String, due: Instant)?) {
        identifier = ring?.identifier
        guard let ring else {
            window?.destroy()
            window = nil
            page = nil
            return
        }
        let (window, page) = self.window.flatMap { window in self.page.map { (window, $0) } } ?? make()
        window.title = ring.title
        page.title = ring.title
        let civil = owner.zone.civil(at: ring.due.seconds)
        page.text = tr("Ringing since %s", ClockAlarm(hour: civil.hour, minute: civil.minute).timeText)
        window.present()
    }

    private func make() -> (Window, StatusPage) {
        let window = Window(dialogOver: owner.window, modal: false, alert: true)
        // (On a phone, the screen's height: Stop under the snooze lengths, without scrolling.)
        let size = Touch.wanted ? MainWindow.dialogSize(360, 720) : MainWindow.dialogSize(400, 480)
        window.setDefaultSize(width: size.width, height: size.height)
        let page = StatusPage(icon: "alarm-symbolic", title: "")
        let snooze = Button(label: tr("_Snooze"))
        let stop = Button(label: tr("S_top"))
        let buttons = Box(vertical: true, spacing: 12)
        buttons.horizontalAlignment = .center
        for button in [snooze, stop] {
            button.addClass("pill")
            button.sizeRequest(width: 240)
        }
        // Snooze for a length of one's choosing, under Snooze (on a phone in two lines: five
        // finger-sized buttons are wider than its screen).
        let lengths = Box(vertical: Touch.wanted, spacing: 6)
        var line = Box(vertical: false, spacing: 6)
        for (index, minutes) in [Int64(5), 10, 15, 30, 60].enumerated() {
            if index == 0 || (Touch.wanted && index == 3) {
                line = Box(vertical: false, spacing: 6)
                line.horizontalAlignment = .center
                lengths.append(line)
            }
            let span = TimeSpan.seconds(minutes * 60)
            let button = Button(label: durationWords(span))
            button.addClass("flat")
            button.tooltip = tr("Snooze for %s", durationWords(span))
            button.onClick { [unowned self] in self.snooze(for: span) }
            line.append(button)
        }
        lengths.horizontalAlignment = .center
        buttons.append(snooze)
        buttons.append(lengths)
        buttons.append(stop)
        snooze.addClass("suggested-action")
        stop.addClass("destructive-action")
        snooze.onClick { [unowned self] in answer(NotificationAction.snooze.identifier) }
        stop.onClick { [unowned self] in answer(NotificationAction.dismiss.identifier) }
        page.setChild(buttons)
        page.expandsVertically = true
        let header = HeaderBar()
        header.addClass("flat")
        header.setTitle(Label(""))  // the page below says the title, large
        let body = Box(vertical: true)
        body.append(header)
        body.append(page)
        window.setContent(body)
        window.setDefault(snooze)
        // Closing the window leaves the alarm ringing (its popup still answers it); it shows again
        // with the next ring.
        window.onCloseRequest { [unowned self] in
            self.window = nil
            self.page = nil
            return false
        }
        self.window = window
        self.page = page
        snooze.grabFocus()
        return (window, page)
    }

    private func snooze(for span: TimeSpan) {
        guard let identifier else { return }
        owner.send(tr("Snoozing"), Scheduler1.snooze(identifier, for: span))
    }

    private func answer(_ action: String) {
        guard let identifier else { return }
        owner.send(action == "snooze" ? tr("Snoozing") : tr("Stopping"), Scheduler1.answer(identifier, action: action))
    }
}

extension ClockAlarm {
    init(hour: Int, minute: Int) {
        self.init()
        self.hour = hour
        self.minute = minute
    }
}
