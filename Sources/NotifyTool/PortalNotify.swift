import DBus
import Notifications
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// `chime notify` and notify-send inside a sandbox: through `org.freedesktop.portal.Notification`,
/// as libnotify's notify-send goes (inside Flatpak or Snap, or with `NOTIFY_FORCE_PORTAL` set; never
/// with `NOTIFY_IGNORE_PORTAL` set; and only where a portal answers, else to the server directly).
///
/// What the portal cannot do, and what chime does instead:
/// - no server-given ids: each notification is named `libnotify-flatpak.APP-PROGRAM-N` as libnotify
///   names it, where N is 1 (a process shows one notification) or the `-r` number; `-p` prints N.
///   So `-r N` replaces notification N of the same program in the same sandbox, and a second
///   notification without `-r` replaces the first, as with libnotify;
/// - no capabilities and no server information;
/// - no close signal: a wait ends when an action is invoked (the portal takes the notification down),
///   when the expire time passes (chime withdraws it then, as libnotify does), on Ctrl-C, or when the
///   portal leaves the bus;
/// - no hints but what version 2 has a field for: the category (one the portal defines), `transient`
///   and `resident` as display hints, the sound (a file's bytes, or the default sound for a named one;
///   `suppress-sound` is silence); version 1 takes none of them.
extension NotifyRunner {
    /// The name libnotify puts in portal ids: the program's, not `-a`'s.
    var portalProgramName: String { asNotifySend ? "notify-send" : "chime" }

    /// The number of this process's notification: `-r`'s, else 1 (libnotify counts from 1 per process).
    var portalNumber: UInt32 { options.replaceID > 0 ? UInt32(options.replaceID) : 1 }

    /// Shows the notification through the portal, waits if asked, prints, and exits.
    func runThroughPortal(_ portal: PortalClient, version: UInt32) -> Never {
        let supported = version >= 2 ? portal.supportedOptions() : [:]
        let notification = reportingErrors { try makePortalNotification(version: version, supported: supported) }
        let id = sandbox.portalID(programName: portalProgramName, number: portalNumber)
        var status = ExitStatus.success
        if options.wait || !options.actions.isEmpty {
            status = reportingErrors { try waitThroughPortal(portal, version: version, id: id, notification) }
        } else {
            reportingErrors { try showThroughPortal(portal, version: version, id: id, notification) }
            if options.json { RecordReport(fields: [Field("id", "", .count(Int64(portalNumber))), Field("portalID", "", .text(id))]).print(json: true) }
        }
        Sys.exit(asNotifySend && status != .success ? 1 : status.rawValue)
    }

    /// `AddNotification` (after `RemoveNotification` when replacing, as libnotify does), then the id
    /// to whoever asked.
    func showThroughPortal(_ portal: PortalClient, version: UInt32, id: String, _ notification: PortalNotification) throws {
        if options.replaceID > 0 { try? portal.remove(id: id) }
        do {
            try portal.add(id: id, notification, version: version)
        } catch let error as DBusError where error.name != .noReply && error.name != .timeout && error.name != .disconnected {
            throw PortalRefusalError(underlying: error)
        }
        if options.printID && !options.json { printLine(String(portalNumber)) }
        if let fd = options.idFD { writeLine(String(portalNumber), to: fd) }
    }

    /// `-C ID` through the portal: withdraws this program's notification number ID.
    func closeThroughPortal(_ portal: PortalClient, number: UInt32) -> Never {
        reportingErrors { try portal.remove(id: sandbox.portalID(programName: portalProgramName, number: number)) }
        Sys.exit(ExitStatus.success.rawValue)
    }

    /// The notification the options describe, as the portal of `version` takes it.
    func makePortalNotification(version: UInt32, supported: [String: [String]]) throws -> PortalNotification {
        // The same checks as for a server (summary, hints' syntax, the sound file), before anything is sent.
        let checked = try makeNotification(specVersion: "1.2")
        let actions = checked.actions
        var notification = PortalNotification(title: checked.summary, body: checked.body)
        notification.priority = switch options.urgency {
        case .low: .low
        case .normal: .normal
        case .critical: .urgent
        }
        if let path = options.rawIcon {
            // -I: the PNG's own bytes, which the portal takes as they are.
            notification.icon = .bytes(try Self.portalFile(path, what: "-I"))
        } else if !options.icon.isEmpty {
            notification.icon = try Self.portalIcon(options.icon)
        }
        // libnotify: the default action is the click ("default", else "DEFAULT"); buttons are every
        // action, the default one too, when there is any other.
        if actions.contains(where: { $0.key == "default" }) {
            notification.defaultAction = "default"
        } else if actions.contains(where: { $0.key == "DEFAULT" }) {
            notification.defaultAction = "DEFAULT"
        }
        let purposes = try NotifyOptions.buttonPurposes(options.buttonPurposes)
        if actions.contains(where: { $0.key != "default" && $0.key != "DEFAULT" }) {
            notification.buttons = actions.map { action in
                let purpose = purposes.last(where: { $0.action == action.key })?.purpose
                return PortalNotification.Button(
                    label: action.label, action: action.key,
                    purpose: purpose.flatMap { Self.portalKnows($0, in: PortalNotification.purposes, supported["button-purpose"]) ? $0 : nil })
            }
        }
        guard version >= 2 else { return notification }
        // Version 2: what the hints say, where the portal has a field for it.
        if isPortalMarkup(checked.body) {
            notification.markupBody = checked.body
            notification.body = stripMarkup(checked.body)
        }
        for hint in checked.hints.map({ Hint(name: $0.name, value: $0.value) }) {
            switch hint {
            case .category(let category):
                if Self.portalKnows(category, in: PortalNotification.categories, supported["category"]) { notification.category = category }
            case .transient(true): notification.displayHints.append("transient")
            case .resident(true): notification.displayHints.append("persistent")
            case .soundFile(let path): notification.sound = .bytes(try Self.portalFile(path, what: "the sound file"))
            case .soundName: if notification.sound == nil { notification.sound = .default }
            case .suppressSound(true): notification.sound = .silent
            default: break
            }
        }
        return notification
    }

    /// Whether a category or button purpose is one the portal may take: one it defines, one the
    /// server behind it says it supports, or a vendor's (`x-`).
    static func portalKnows(_ value: String, in defined: [String], _ supported: [String]?) -> Bool {
        value.hasPrefix("x-") || defined.contains(value) || supported?.contains(value) == true
    }

    /// `-i` for the portal, as libnotify sends it: a file (a path that exists, or a `file://` URI)
    /// as its bytes, since the server cannot read the sandbox's files; anything else as a themed
    /// icon's name and its symbolic variant (as GLib's themed icons list them).
    static func portalIcon(_ icon: String) throws -> PortalNotification.Icon {
        if icon.hasPrefix("file://") {
            return .bytes(try portalFile(String(icon.dropFirst("file://".count)), what: "-i"))
        }
        if icon.contains(Character("/")), Sys.isReadable(icon) {
            return .bytes(try portalFile(icon, what: "-i"))
        }
        let symbolic = "-symbolic"
        if icon.hasSuffix(symbolic) { return .themed([icon, String(icon.dropLast(symbolic.count))]) }
        return .themed([icon, icon + symbolic])
    }

    /// A file sent to the portal as bytes (an icon or a sound): at most 16 MiB.
    static func portalFile(_ path: String, what: String) throws -> [UInt8] {
        let limit = 16 << 20
        let bytes: [UInt8]
        do {
            bytes = try Sys.readFile(path, limit: limit)
        } catch {
            throw InputError(message: "\(what) \(path): cannot send it through the portal: \(error)")
        }
        guard bytes.count <= limit else {
            throw InputError(message: "\(what) \(path): cannot send it through the portal: it is larger than 16 MiB")
        }
        return bytes
    }

    /// Shows the notification and waits for an action, the expire time, Ctrl-C, or the portal leaving.
    func waitThroughPortal(_ portal: PortalClient, version: UInt32, id: String, _ notification: PortalNotification) throws -> ExitStatus {
        let connection = portal.connection
        var invoked: [String] = []
        var portalGone = false
        try portal.subscribe { event in
            if event.id == id { invoked.append(event.action) }
        }
        try connection.watchNameOwner(PortalClient.busName) { old, _ in
            if !old.isEmpty { portalGone = true }
        }
        let signals = try? SignalDescriptor([SIGINT, SIGTERM])
        try showThroughPortal(portal, version: version, id: id, notification)

        let offered = notification.buttons.map(\.action) + (notification.defaultAction.map { [$0] } ?? [])
        // The portal never expires a notification: chime withdraws it when its expire time passes, as
        // libnotify does; otherwise the wait has chime's limits (notify-send's: none).
        let expiry: Duration? = options.expireTime > 0 ? .milliseconds(Int64(options.expireTime)) : nil
        let limit = expiry ?? (asNotifySend ? nil : waitLimit(for: Expiration(wireValue: options.expireTime)))
        let deadline = limit.map { Deadline.now + $0 }
        var action: String? = nil
        var unknown: String? = nil
        let result = connection.run(until: deadline, wakeOn: signals?.fd) {
            for name in invoked {
                if offered.contains(name) { action = action ?? name } else { unknown = unknown ?? name }
            }
            invoked.removeAll()
            return action == nil && unknown == nil && !portalGone
        }

        var fields = [Field("id", "", .count(Int64(portalNumber))), Field("portalID", "", .text(id))]
        let status: ExitStatus
        if let action {
            if options.json { fields.append(Field("action", "", .text(action))) } else { printLine(action) }
            if let fd = options.selectedActionFD { writeLine(action, to: fd) }
            status = .success
        } else if let unknown {
            // The portal took the notification down with the click, whatever the action was.
            printError(asNotifySend ? "Received unknown action \(unknown)" : "chime: received unknown action \(unknown); the portal closed the notification")
            fields.append(Self.closedField(.dismissed))
            status = .success
        } else if portalGone || result == .disconnected {
            fields.append(Field("serverGone", "", .flag(true)))
            printError("chime: the notification portal left the bus while waiting")
            status = .serverVanished
        } else if result == .woken {
            sayWaitCancelled()
            try? portal.remove(id: id)
            fields.append(Field("interrupted", "", .flag(true)))
            status = asNotifySend ? .success : .interrupted
        } else if expiry != nil {
            // Its expire time passed: withdrawn, and closed as expired.
            try? portal.remove(id: id)
            fields.append(Self.closedField(.expired))
            status = .success
        } else {
            // Only chime's own limits end a wait here (notify-send has none without an expire time).
            fields.append(Field("timedOut", "", .flag(true)))
            printError("chime: stopped waiting after \(limit.map { "\($0.components.seconds)" } ?? "0") s without an action")
            status = .waitTimedOut
        }
        if options.json { RecordReport(fields: fields).print(json: true) }
        return status
    }
}

/// The notification portal answered `AddNotification` with an error (xdg-desktop-portal refuses
/// a program outside any sandbox, or one the user has not allowed to notify).
package struct PortalRefusalError: Error {
    package var underlying: DBusError
}
