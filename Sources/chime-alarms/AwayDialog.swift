// Alarms Off Until…: time away from the app. A day is picked on a calendar (tomorrow at first); Turn
// Off makes every alarm silent until that day starts, as `chime off --until DAY` does, and the
// alarms page says so with Turn On until then.
import AlarmsModel
import ChimeCenter
import Gtk
import Timekeeping

final class AwayDialog {
    private let dialog: Window
    private unowned let owner: MainWindow
    private let calendar = Calendar(name: tr("The day alarms ring again"))
    private let said = Label()
    private let problem = Label()
    private let turnOff = Button(label: tr("Turn _Off"))

    init(window owner: MainWindow) {
        self.owner = owner
        dialog = Window(dialogOver: owner.window)
        dialog.title = tr("Alarms Off Until…")
        let size = MainWindow.dialogSize(360, -1)
        dialog.setDefaultSize(width: size.width, height: size.height)
        let header = HeaderBar()
        header.hidesWindowButtons()
        let cancel = Button(label: tr("_Cancel"))
        cancel.onClick { [unowned self] in dialog.close() }
        turnOff.addClass("destructive-action")
        turnOff.onClick { [unowned self] in commit() }
        header.packStart(cancel)
        header.packEnd(turnOff)
        dialog.setDefault(turnOff)

        let body = Box(vertical: true, spacing: 12)
        body.append(header)
        let explained = Label(tr("No alarm rings until the day you pick starts; what they would have rung is not missed."))
        explained.wraps = true
        explained.margins(0, 18, 0, 18)
        body.append(explained)
        calendar.margins(0, 18, 0, 18)
        body.append(calendar)
        said.margins(0, 18, 0, 18)
        body.append(said)
        problem.wraps = true
        problem.addClass("error")
        problem.isVisible = false
        problem.margins(0, 18, 12, 18)
        body.append(problem)
        dialog.setContent(body)

        // Tomorrow, at first.
        let today = owner.zone.civil(at: WallClock.system.now().seconds)
        let tomorrow = civilFromDays(today.dayNumber + 1)
        calendar.day = (tomorrow.year, tomorrow.month, tomorrow.day)
        calendar.onDayPicked { [unowned self] in refresh() }
        refresh()
    }

    func present() {
        dialog.present()
        calendar.grabFocus()
    }

    /// When the picked day starts, in the app's zone; nil for a day that has begun already.
    private var until: Instant? {
        let picked = calendar.day
        let start: Int64 = switch owner.zone.resolve(CivilTime(year: picked.year, month: picked.month, day: picked.day)) {
        case .unique(let t): t
        case .ambiguous(let earlier, _): earlier
        case .gap(let end): end
        }
        let until = Instant(seconds: start)
        return until > WallClock.system.now() ? until : nil
    }

    private func refresh() {
        let picked = calendar.day
        let day = dayText(CivilTime(year: picked.year, month: picked.month, day: picked.day))
        turnOff.isSensitive = until != nil
        said.text = until == nil ? tr("Pick a day after today") : tr("Alarms off until %s", day)
    }

    private func commit() {
        guard let until else { return }
        turnOff.isSensitive = false
        owner.link?.later(Scheduler1.setAway(from: nil, until: until, identifiers: [])) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                owner.toast(said.text) { [owner] in owner.endAway() }
                dialog.close()
            case .failure(let error):
                turnOff.isSensitive = true
                problem.text = describe(error)
                problem.isVisible = true
            }
        }
    }
}
