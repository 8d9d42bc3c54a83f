import DBus
import Posix

/// A notification as `org.freedesktop.portal.Notification` takes it: what a sandboxed program (Flatpak,
/// Snap) can show, through xdg-desktop-portal, on whatever server the desktop runs. Version 1 has a
/// title, a plain body, an icon, a priority, buttons and a default action; version 2 adds a markup
/// body, a sound, a category, display hints and button purposes.
public struct PortalNotification: Hashable, Sendable {
    /// How the portal ranks notifications (`priority`).
    public enum Priority: String, Hashable, Sendable {
        case low, normal, high, urgent
    }

    /// An icon (`icon`): a themed icon's names, or an image's bytes (PNG, JPEG or SVG), which a
    /// sandboxed program sends because the server cannot read the sandbox's files.
    public enum Icon: Hashable, Sendable {
        case themed([String])
        case bytes([UInt8])
    }

    /// A sound (`sound`, version 2): the server's default, none, or a file's bytes (Ogg or WAV).
    public enum Sound: Hashable, Sendable {
        case `default`
        case silent
        case bytes([UInt8])
    }

    /// A button (`buttons`): its label, the action the portal reports when it is pressed, and
    /// (version 2) what it is for, such as `call.accept`.
    public struct Button: Hashable, Sendable {
        public var label: String
        public var action: String
        public var purpose: String?

        public init(label: String, action: String, purpose: String? = nil) {
            self.label = label
            self.action = action
            self.purpose = purpose
        }
    }

    public var title: String
    public var body: String
    /// The body in the markup the portal reads (`<b>`, `<i>`, `<a href>`), sent to version 2 only.
    public var markupBody: String?
    public var icon: Icon?
    public var priority: Priority?
    /// The action the portal reports when the notification itself is clicked.
    public var defaultAction: String?
    public var buttons: [Button]
    /// Version 2: one of the portal's categories (`im.received`, `alarm.ringing`...) or an `x-` one.
    public var category: String?
    /// Version 2: `transient`, `tray`, `persistent`, `hide-on-lockscreen`, `hide-content-on-lockscreen`,
    /// `show-as-new`.
    public var displayHints: [String]
    public var sound: Sound?

    public init(
        title: String, body: String = "", markupBody: String? = nil, icon: Icon? = nil, priority: Priority? = nil,
        defaultAction: String? = nil, buttons: [Button] = [], category: String? = nil, displayHints: [String] = [],
        sound: Sound? = nil
    ) {
        self.title = title
        self.body = body
        self.markupBody = markupBody
        self.icon = icon
        self.priority = priority
        self.defaultAction = defaultAction
        self.buttons = buttons
        self.category = category
        self.displayHints = displayHints
        self.sound = sound
    }

    /// The `a{sv}` for a portal of `version`: version 1 gets only its own keys (it would drop the
    /// others, and some versions refuse what they do not know), in the order libnotify writes them.
    public func wireValue(version: UInt32) -> Value {
        var entries: [(String, Value)] = [("title", .string(title)), ("body", .string(body))]
        if version >= 2, let markupBody { entries.append(("markup-body", .string(markupBody))) }
        if let defaultAction { entries.append(("default-action", .string(defaultAction))) }
        if !buttons.isEmpty {
            let serialized: [Value] = buttons.map { button in
                var fields: [(String, Value)] = [("action", .string(button.action)), ("label", .string(button.label))]
                if version >= 2, let purpose = button.purpose { fields.append(("purpose", .string(purpose))) }
                return .vardict(fields)
            }
            entries.append(("buttons", .array(element: .dictionary(key: .string, value: .variant), serialized)))
        }
        if let priority { entries.append(("priority", .string(priority.rawValue))) }
        switch icon {
        case .themed(let names)?: entries.append(("icon", .structure([.string("themed"), .variant(.strings(names))])))
        case .bytes(let bytes)?: entries.append(("icon", .structure([.string("bytes"), .variant(.array(element: .byte, bytes.map(Value.byte)))])))
        case nil: break
        }
        if version >= 2 {
            if let category { entries.append(("category", .string(category))) }
            if !displayHints.isEmpty { entries.append(("display-hint", .strings(displayHints))) }
            switch sound {
            case .default?: entries.append(("sound", .string("default")))
            case .silent?: entries.append(("sound", .string("silent")))
            case .bytes(let bytes)?: entries.append(("sound", .structure([.string("bytes"), .variant(.array(element: .byte, bytes.map(Value.byte)))])))
            case nil: break
            }
        }
        return .vardict(entries)
    }

    /// The categories version 2 of the portal defines; others (but `x-` ones) it may refuse.
    public static let categories: [String] = [
        "im.received", "alarm.ringing", "call.incoming", "call.ongoing", "call.unanswered", "weather.warning.extreme",
        "cellbroadcast.danger.presidential", "cellbroadcast.danger.extreme", "cellbroadcast.danger.severe",
        "cellbroadcast.public-safety", "cellbroadcast.amber-alert", "cellbroadcast.test", "os.battery.low",
        "browser.web-notification",
    ]

    /// The button purposes version 2 of the portal defines.
    public static let purposes: [String] = [
        "im.reply-with-text", "call.accept", "call.decline", "call.hang-up", "call.enable-speakerphone",
        "call.disable-speakerphone", "system.custom-alert",
    ]
}

/// What the portal reports about a notification: `ActionInvoked` (its id, the action, and the
/// action's target, if it had one).
public struct PortalActionInvoked: Hashable, Sendable {
    public var id: String
    public var action: String
}

/// A typed client of `org.freedesktop.portal.Notification` (xdg-desktop-portal).
///
/// The portal has no capabilities, no server information, no close signal and no server-given
/// ids: the program names each notification (an id it chooses, reused to replace it) and hears only
/// which action was invoked.
public final class PortalClient {
    public let connection: Connection
    public var timeout: CallTimeout

    public static let busName: BusName = "org.freedesktop.portal.Desktop"
    public static let objectPath: ObjectPath = "/org/freedesktop/portal/desktop"
    public static let interface: InterfaceName = "org.freedesktop.portal.Notification"

    public init(connection: Connection, timeout: CallTimeout = .default) {
        self.connection = connection
        self.timeout = timeout
    }

    /// The portal's `version`, or nil when there is no portal to use: nobody owns its name and none
    /// can be started, or what owns it has no notification interface (libnotify then falls back to
    /// `org.freedesktop.Notifications`, and so does chime).
    public func version() throws -> UInt32? {
        let value: Value?
        do {
            value = try property("version")
        } catch let error as DBusError where Self.meansNoPortal(error) {
            return nil
        }
        guard case .uint32(let version)? = value, version > 0 else { return nil }
        return version
    }

    /// `SupportedOptions` (version 2): what the server behind the portal understands, by option
    /// (`category`, `button-purpose`); empty when the portal does not say.
    public func supportedOptions() -> [String: [String]] {
        guard let entries = (try? property("SupportedOptions"))??.dictionaryEntries else { return [:] }
        var options: [String: [String]] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue, let items = entry.value.unwrappingVariants.arrayElements else { continue }
            options[key] = items.compactMap(\.stringValue)
        }
        return options
    }

    /// A property of the portal's notification interface (`org.freedesktop.DBus.Properties.Get`).
    private func property(_ name: String) throws -> Value? {
        try call(.properties, "Get", [.string(Self.interface.rawValue), .string(name)]).first?.unwrappingVariants
    }

    private func call(_ interface: InterfaceName, _ member: MemberName, _ arguments: [Value]) throws -> [Value] {
        try connection.call(
            destination: Self.busName, path: Self.objectPath, interface: interface, member: member, arguments: arguments,
            timeout: timeout)
    }

    static func meansNoPortal(_ error: DBusError) -> Bool {
        switch error.name {
        case .serviceUnknown, .nameHasNoOwner, .unknownInterface, .unknownProperty, .unknownMethod, .unknownObject, .invalidArgs: true
        default: error.name.rawValue.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
        }
    }

    /// Shows a notification, or replaces the one with the same id. `AddNotification`.
    public func add(id: String, _ notification: PortalNotification, version: UInt32) throws {
        _ = try call(Self.interface, "AddNotification", [.string(id), notification.wireValue(version: version)])
    }

    /// Withdraws a notification. `RemoveNotification`.
    public func remove(id: String) throws {
        _ = try call(Self.interface, "RemoveNotification", [.string(id)])
    }

    /// Delivers `ActionInvoked` to `handler` while the connection is dispatched; subscribe before
    /// `add` so none can slip past.
    @discardableResult
    public func subscribe(_ handler: @escaping (PortalActionInvoked) -> Void) throws -> SubscriptionToken {
        let rule = MatchRule(sender: Self.busName, interface: Self.interface, member: "ActionInvoked", path: Self.objectPath)
        return try connection.subscribe(rule) { message in
            let args = message.arguments()
            guard args.count >= 2, case .string(let id) = args[0], case .string(let action) = args[1] else { return }
            handler(PortalActionInvoked(id: id, action: action))
        }
    }
}

/// Whether this process runs in a sandbox whose notifications go through the portal, decided as
/// libnotify decides it: never with `NOTIFY_IGNORE_PORTAL` set, always with `NOTIFY_FORCE_PORTAL`
/// set, otherwise inside a Flatpak (`/.flatpak-info`) or a Snap (its cgroup, or `SNAP_NAME`).
public struct Sandbox: Hashable, Sendable {
    /// The Flatpak application (`/.flatpak-info`'s `[Application]` or `[Runtime]` `name`).
    public var flatpakApp: String?
    /// The Snap and its application, from the process's cgroup (`snap.NAME.APP-…`) or `SNAP_NAME`.
    public var snapName: String?
    public var snapApp: String?
    /// `NOTIFY_FORCE_PORTAL` or `NOTIFY_IGNORE_PORTAL`.
    public var forced: Bool
    public var ignored: Bool

    public init(flatpakApp: String? = nil, snapName: String? = nil, snapApp: String? = nil, forced: Bool = false, ignored: Bool = false) {
        self.flatpakApp = flatpakApp
        self.snapName = snapName
        self.snapApp = snapApp
        self.forced = forced
        self.ignored = ignored
    }

    /// Whether notifications should try the portal first.
    public var wantsPortal: Bool {
        !ignored && (forced || flatpakApp != nil || snapApp != nil)
    }

    /// This process's sandbox: `/.flatpak-info` (absent outside Flatpak: one failed open) and,
    /// outside Flatpak, `/proc/self/cgroup`.
    public static func current() -> Sandbox {
        // libnotify tests only whether the variables are set, whatever their value.
        var sandbox = Sandbox(forced: Sys.environment("NOTIFY_FORCE_PORTAL") != nil,
                              ignored: Sys.environment("NOTIFY_IGNORE_PORTAL") != nil)
        if let info = try? Sys.readFile("/.flatpak-info", limit: 1 << 20) {
            sandbox.flatpakApp = flatpakApp(info: String(decoding: info, as: UTF8.self))
        }
        if sandbox.flatpakApp == nil, let cgroup = try? Sys.readFile("/proc/self/cgroup", limit: 1 << 20) {
            let (name, app) = snap(cgroup: cgroup)
            // As libnotify: a Snap is known by its cgroup; SNAP_NAME only names it.
            sandbox.snapApp = app ?? name
            sandbox.snapName = name
        }
        if sandbox.snapName == nil, let name = Sys.environment("SNAP_NAME"), !name.isEmpty { sandbox.snapName = name }
        return sandbox
    }

    /// The desktop entry libnotify gives a Snap's notifications that name none (`NAME_APP`).
    public var snapDesktopEntry: String? {
        guard let snapApp, let snapName else { return nil }
        return "\(snapName)_\(snapApp)"
    }

    /// The application's name in a `.flatpak-info` key file: `[Runtime]`'s when it has one (a
    /// runtime's own shell), else `[Application]`'s.
    static func flatpakApp(info: String) -> String? {
        var group = ""
        var names: [String: String] = [:]
        for line in info.split(whereSeparator: \.isNewline) {
            let text = line.drop(while: { $0 == " " || $0 == "\t" })
            if text.hasPrefix("[") {
                group = String(text.dropFirst().prefix(while: { $0 != "]" }))
            } else if let equals = text.firstIndex(of: "="), text[..<equals].trimmingTrailingSpaces() == "name" {
                names[group] = String(text[text.index(after: equals)...].drop(while: { $0 == " " }))
            }
        }
        return names["Runtime"] ?? names["Application"]
    }

    /// The snap and its application in `/proc/self/cgroup`: a line's last path component
    /// `snap.NAME.APP[-UUID].scope` (or `snap.NAME.hook…`), the UUID that snapd appends dropped.
    static func snap(cgroup: String) -> (name: String?, app: String?) { snap(cgroup: Array(cgroup.utf8)) }

    /// The same, on the file's bytes: a line that is not a snap's is passed over without making a
    /// string of it (every notification reads this file; as strings, it cost a fifth of a
    /// `chime notify`'s instructions).
    static func snap(cgroup bytes: [UInt8]) -> (name: String?, app: String?) {
        var found: String? = nil
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            // HIERARCHY:CONTROLLERS:PATH; the path's last component.
            guard line.lazy.filter({ $0 == UInt8(ascii: ":") }).count >= 2, let slash = line.lastIndex(of: UInt8(ascii: "/")) else { continue }
            let component = line[(slash + 1)...]
            guard component.starts(with: "snap.".utf8) else { continue }
            let parts = String(decoding: component, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count >= 2 else { continue }
            if found == nil { found = String(parts[1]) }
            guard parts.count >= 3, String(parts[1]) == found else { continue }
            // snap.NAME.APP....EXTENSION: the app is everything between the name and the extension.
            var app = parts[2..<(parts.count - 1)].joined(separator: ".")
            if app.isEmpty { continue }
            // snapd appends "-" and a UUID (36 characters) to the app's scope.
            if app.count > 37, app.dropLast(36).last == "-", isUUID(app.suffix(36)) { app = String(app.dropLast(37)) }
            return (found, app)
        }
        return (found, nil)
    }

    static func isUUID<S: StringProtocol>(_ text: S) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return false }
        for (index, byte) in utf8.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                if byte != UInt8(ascii: "-") { return false }
            } else if !(byte >= 48 && byte <= 57 || byte >= 97 && byte <= 102 || byte >= 65 && byte <= 70) {
                return false
            }
        }
        return true
    }

    /// The id libnotify gives a notification it shows through the portal, so that chime and
    /// libnotify programs name the same notification the same way: `libnotify-flatpak.APP-NAME-N`
    /// (`(null)` for a program that forces the portal outside Flatpak) or
    /// `libnotify-snap.SNAP_APP-NAME-N`, where NAME is the program's name (`notify-send`, `chime`)
    /// and N its number for the notification.
    public func portalID(programName: String, number: UInt32) -> String {
        let app = snapName.map { "snap.\($0)_\(snapApp ?? $0)" } ?? "flatpak.\(flatpakApp ?? "(null)")"
        return "libnotify-\(app)-\(programName)-\(number)"
    }
}

extension StringProtocol {
    fileprivate func trimmingTrailingSpaces() -> SubSequence {
        var end = endIndex
        while end > startIndex, self[index(before: end)] == " " || self[index(before: end)] == "\t" { end = index(before: end) }
        return self[..<end]
    }
}
