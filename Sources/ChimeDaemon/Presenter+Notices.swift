// The presenter's notices and reminders before an occurrence: their words, their popups, and what
// their buttons do (Skip this one, Undo, Open) (Presenter.swift).
import ChimeCenter
import DBus
import Logging
import Notifications
import Posix
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

extension Presenter {
    /// A reminder's first line: "Reminder: in 15m · at 16:35", and for a repeating alarm its rule in
    /// words, as the user says it ("· every weekday at 16:35").
    static func reminderLine(_ trigger: Trigger, occurrence: Instant, lead: TimeSpan, language: PhraseLanguage) -> String {
        var line = tr("Reminder: in %s", lead.description) + " · " + tr("at %s", clockText(occurrence, in: trigger.wallClockZone))
        if trigger.repeats, let words = trigger.words(language) { line += " · " + words }
        return line
    }

    /// A notice's first line: "Rings on Sun 29 Nov 2026 at 07:00, in 2 hours", or once skipped,
    /// "Skipped: it does not ring on Sun 29 Nov 2026 at 07:00".
    static func noticeLine(_ trigger: Trigger, occurrence: Instant, lead: TimeSpan, skipped: Bool, language: PhraseLanguage) -> String {
        let zone = trigger.wallClockZone
        let when = Rule.instant(occurrence).words(language, zone: zone) ?? clockText(occurrence, in: zone)
        if skipped { return tr("Skipped: it does not ring %s", when) }
        let soon = Rule.interval(lead, repeats: false).words(language, zone: zone) ?? tr("in %s", lead.description)
        return tr("Rings %s", when) + ", " + soon
    }

    /// The popup of a notice (or a reminder) before an occurrence: quiet, in the reminder category,
    /// with Skip this one (Undo once skipped; a repeating alarm's) and, on a notice, Open (the app). Where the server
    /// shows no buttons, the body says how to skip it from a terminal.
    func noticeContent(_ popup: NoticePopup, capabilities: [Capability]) -> NotificationContent {
        let request = popup.request
        var content = NotificationContent(title: request.content.title)
        content.subtitle = popup.isNotice || popup.skipped
            ? Self.noticeLine(request.trigger, occurrence: popup.occurrence, lead: popup.lead, skipped: popup.skipped, language: .ofMessages)
            : Self.reminderLine(request.trigger, occurrence: popup.occurrence, lead: popup.lead, language: .ofMessages)
        content.body = request.content.body
        content.bodyIsMarkup = request.content.bodyIsMarkup
        content.label = request.content.label
        content.icon = request.content.icon
        content.category = AlarmDefaults.reminderCategory
        content.urgency = popup.isNotice ? .low : .normal
        // A one-off has no occurrence to skip but its only one (cancelling it is another thing).
        let skips = request.trigger.repeats
        content.actions = (skips ? [popup.skipped ? .undoSkip : .skipOccurrence] : []) + (popup.isNotice ? [.open] : [])
        if skips, !capabilities.contains(.actions) {
            let how = popup.skipped ? tr("chime skip --undo %s brings it back", request.identifier) : tr("chime skip %s skips it", request.identifier)
            content.body = content.body.isEmpty ? how : content.body + "\n" + how
        }
        return content
    }

    /// Shows a reminder `lead` before an occurrence (or the notice, when `lead` is the alarm's
    /// `--notice`): the alarm's title and body, "in 15m · at 16:35" (a notice: "Rings on Sun 29 Nov
    /// at 07:00, in 2 hours") above them, in the reminder category, without a sound, with Skip this
    /// one. Nothing is held or retried for it: without a server it is logged and let go.
    func remind(_ request: NotificationRequest, occurrence: Instant, lead: TimeSpan) {
        let identifier = request.identifier
        signals.reminded(identifier, occurrence: occurrence, lead: lead)
        guard session.present, let capabilities = session.capabilities else {
            logger.info("no notification server: a reminder is not shown", metadata: ["alarm.id": "\(identifier)"])
            return
        }
        showNotice(NoticePopup(request: request, occurrence: occurrence, lead: lead), replacing: 0, capabilities: capabilities)
        events.reminderShown(request.content.insist)
    }

    /// Sends a notice's popup (in place of `replacing`, when not 0), and keeps what its buttons are for.
    private func showNotice(_ popup: NoticePopup, replacing: UInt32, capabilities: [Capability]) {
        let identifier = popup.request.identifier
        var rendered = render(noticeContent(popup, capabilities: capabilities), for: capabilities, replacesID: replacing)
        // Kept on screen when a button is pressed, so it can say what the button did.
        if capabilities.contains(.actions) { rendered.notification.hints.append(.resident(true)) }
        do {
            let call = try session.beginNotify(rendered.notification)
            remindersSent.append(call)
            try call.whenAnswered { [weak self, logger] answer in
                guard let self else { return }
                remindersSent.removeAll { $0 === call }
                do {
                    let id = try answer.get().id
                    if replacing != 0, replacing != id { forgetNotice(replacing) }
                    if notices[id] == nil { noticeOrder.append(id) }
                    notices[id] = popup
                    while noticeOrder.count > Self.noticeLimit { notices[noticeOrder.removeFirst()] = nil }
                } catch {
                    logger.warning("the server refused a reminder: \(error)", metadata: ["alarm.id": "\(identifier)"])
                }
            }
        } catch {
            logger.warning("could not send a reminder: \(error)", metadata: ["alarm.id": "\(identifier)"])
        }
    }

    func forgetNotice(_ id: UInt32) {
        notices[id] = nil
        noticeOrder.removeAll { $0 == id }
    }

    /// A button of a notice or reminder was pressed: Skip this one skips its occurrence (as `chime
    /// skip` does) and the popup says so in place, with Undo; Undo brings it back; Open starts the app.
    func noticeAnswered(_ id: UInt32, key: String, _ popup: NoticePopup) {
        let identifier = popup.request.identifier
        switch key {
        case NotificationAction.skipOccurrence.identifier, NotificationAction.undoSkip.identifier:
            let undo = key == NotificationAction.undoSkip.identifier
            // An alarm of a calendar chime writes to: the occurrence is excluded in its event.
            if events.skipInCalendar(identifier, popup.occurrence, undo, { [weak self] result in
                switch result {
                case .success: self?.noticeSkipped(id, popup, undo: undo)
                case .failure(let error): self?.logger.warning("\(undo ? "Undo" : "Skip this one") on a notice: \(error)", metadata: ["alarm.id": "\(identifier)"])
                }
            }) { return }
            do throws(SchedulerError) {
                try schedule.skip(identifier, occurrence: popup.occurrence, undo: undo)
            } catch {
                logger.warning("\(undo ? "Undo" : "Skip this one") on a notice: \(error)", metadata: ["alarm.id": "\(identifier)"])
                return
            }
            noticeSkipped(id, popup, undo: undo)
        case NotificationAction.open.identifier:
            openApp()
        default:
            break
        }
    }

    /// A notice's occurrence was skipped (or brought back): its popup says so, in place.
    private func noticeSkipped(_ id: UInt32, _ popup: NoticePopup, undo: Bool) {
        let identifier = popup.request.identifier
        logger.info(undo ? "skip undone from its notice" : "skipped from its notice", metadata: ["alarm.id": "\(identifier)", "occurrence": "\(popup.occurrence)"])
        var changed = popup
        changed.skipped = !undo
        if let request = schedule.load(identifier) { changed.request = request }
        guard session.present, let capabilities = session.capabilities else { return }
        showNotice(changed, replacing: id, capabilities: capabilities)
    }

    /// Starts the app (`chime-alarms`: on PATH, else beside the daemon's own program); one already
    /// running comes forward (GTK's single instance).
    private func openApp() {
        var program = "chime-alarms"
        let onPath = (Sys.environment("PATH") ?? "").split(separator: ":").contains { Sys.isExecutable(String($0) + "/chime-alarms") }
        if !onPath, let binary = Sys.linkTarget("/proc/self/exe"), let slash = binary.lastIndex(of: "/") {
            let beside = String(binary[..<slash]) + "/chime-alarms"
            if Sys.isExecutable(beside) { program = beside }
        }
        do {
            // The app lives as long as the person keeps it open: no time limit of ours.
            _ = try children.start([program], captureOutput: false, outputLimit: 0, timeLimit: .seconds(100 * 366 * 86_400)) { [logger] child in
                if let status = child.waitStatus, status != 0 { logger.info("chime-alarms ended with status \(status >> 8)") }
            }
        } catch {
            logger.warning("Open on a notice: \(error)")
        }
    }
}
