// While an alarm rings and the app is open: its title and large Snooze and Stop buttons.
import AlarmsModel
import ChimeCenter
import Gtk
import Notifications
import Timekeeping

final class RingingPage {
    let root: StatusPage
    private let snooze = Button(label: tr("_Snooze"))
    private let stop = Button(label: tr("S_top"))
    private var identifier: String?
    unowned let window: MainWindow

    init(window: MainWindow) {
        self.window = window
        root = StatusPage(icon: "alarm-symbolic", title: "")
        let buttons = Box(vertical: true, spacing: 12)
        buttons.horizontalAlignment = .center
        for button in [snooze, stop] {
            button.addClass("pill")
            button.sizeRequest(width: 240)
            buttons.append(button)
        }
        snooze.addClass("suggested-action")
        stop.addClass("destructive-action")
        snooze.accessibleName = tr("Snooze")
        stop.accessibleName = tr("Stop")
        snooze.onClick { [unowned self] in answer(NotificationAction.snooze.identifier) }
        stop.onClick { [unowned self] in answer(NotificationAction.dismiss.identifier) }
        root.setChild(buttons)
    }

    func show(_ ring: (identifier: String, title: String, due: Instant)?) {
        identifier = ring?.identifier
        guard let ring else { return }
        root.title = ring.title
        let civil = window.zone.civil(at: ring.due.seconds)
        root.text = tr("Ringing since %s", ClockAlarm(hour: civil.hour, minute: civil.minute).timeText)
        snooze.grabFocus()
    }

    private func answer(_ action: String) {
        guard let identifier else { return }
        window.call(action == "snooze" ? tr("Snoozing") : tr("Stopping"), { try $0.answer(identifier, action: action) })
    }
}

extension ClockAlarm {
    init(hour: Int, minute: Int) {
        self.init()
        self.hour = hour
        self.minute = minute
    }
}
