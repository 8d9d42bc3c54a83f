// What org.chime.Scheduler1 answers, as D-Bus values and back: the one place both
// ends agree on the shapes of docs/dbus-interface.md. Times cross the bus as int64
// seconds since the epoch; -1 (or an absent key) means "none".
import DBus
import Notifications
import Timekeeping

/// A delivered notification as `ListDelivered` gives it.
public struct DeliveredSummary: Hashable, Sendable {
    public var identifier: String
    /// The notification server's id for the popup.
    public var serverID: UInt32
    public var shown: Instant
    public var title: String
    /// Whether the daemon knows the popup is up. False after a restart on a server that tells
    /// only the connection that showed a popup when it closes (dunst answers through its history;
    /// others cannot be asked): it may have been closed meanwhile.
    public var known: Bool

    public init(identifier: String, serverID: UInt32, shown: Instant, title: String, known: Bool = true) {
        self.identifier = identifier
        self.serverID = serverID
        self.shown = shown
        self.title = title
        self.known = known
    }
}

/// The daemon's own state, as `Status` gives it.
public struct DaemonStatus: Hashable, Sendable {
    public var version: String
    public var pending: Int
    /// Quarantined alarms: identifier and why.
    public var quarantined: [(identifier: String, reason: String)]
    /// The store file.
    public var store: String
    /// What happened to the store at start (a damaged file moved aside).
    public var storeWarnings: [String]
    /// Whether the daemon follows the machine's sleep, and how or why not ("": a daemon that does not say).
    public var sleep: String
    /// Whether `--wake` alarms wake the machine here, how or why not (and the next wake time).
    public var wake: String = ""
    /// How: `kernel`, `systemd` or `none` ("": a daemon that does not say).
    public var wakeMethod: String = ""
    /// Whether the daemon holds logind's block lock for a wake alarm now, and why.
    public var stayAwake: String = ""
    /// The notification server's do-not-disturb state, as far as it tells.
    public var doNotDisturb: String = ""
    /// How the daemon plays alarms' sounds: through the sound server, or which player and why.
    public var sound: String = ""

    public init(version: String, pending: Int, quarantined: [(identifier: String, reason: String)], store: String, storeWarnings: [String],
                sleep: String = "", wake: String = "", wakeMethod: String = "", stayAwake: String = "", doNotDisturb: String = "",
                sound: String = "") {
        self.sound = sound
        self.sleep = sleep
        self.wake = wake
        self.wakeMethod = wakeMethod
        self.stayAwake = stayAwake
        self.doNotDisturb = doNotDisturb
        self.version = version
        self.pending = pending
        self.quarantined = quarantined
        self.store = store
        self.storeWarnings = storeWarnings
    }

    public static func == (a: DaemonStatus, b: DaemonStatus) -> Bool {
        a.version == b.version && a.pending == b.pending && a.store == b.store && a.storeWarnings == b.storeWarnings && a.sleep == b.sleep
            && a.wake == b.wake && a.wakeMethod == b.wakeMethod && a.stayAwake == b.stayAwake && a.doNotDisturb == b.doNotDisturb
            && a.sound == b.sound && a.quarantined.elementsEqual(b.quarantined) { $0 == $1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(pending)
        hasher.combine(store)
    }
}

func wireTime(_ instant: Instant?) -> Value { .int64(instant?.seconds ?? -1) }
func instant(fromWire value: Value) -> Instant? {
    guard case .int64(let seconds) = value, seconds >= 0 else { return nil }
    return Instant(seconds: seconds)
}

private func mismatch(_ what: String, _ value: Value?) -> DBusError {
    DBusError(name: .invalidSignature, message: "the daemon answered \(what) as '\(value?.signature ?? "nothing")'")
}

/// Reads the entries of an `a{sv}` by key.
struct VardictReader {
    var values: [String: Value] = [:]

    init(_ value: Value?, _ what: String) throws(DBusError) {
        guard let entries = value?.dictionaryEntries else { throw mismatch(what, value) }
        for entry in entries {
            if case .string(let key) = entry.key, case .variant(let inner) = entry.value { values[key] = inner }
        }
    }

    func string(_ key: String) -> String? { values[key]?.stringValue }
    func bool(_ key: String) -> Bool? {
        if case .boolean(let flag)? = values[key] { return flag }
        return nil
    }
    func int(_ key: String) -> Int64? {
        switch values[key] {
        case .int64(let n)?: n
        case .uint32(let n)?: Int64(n)
        case .int32(let n)?: Int64(n)
        default: nil
        }
    }
    func strings(_ key: String) -> [String] { values[key]?.arrayElements?.compactMap(\.stringValue) ?? [] }
}

extension PendingSummary {
    /// `(sxssssssssx)`: id, next fire in seconds (-1: never), title, label, time zone ("": the
    /// system's), origin, state, note, rule ("": a one-off at an instant), sound ("": none), and the
    /// next fire exactly, in nanoseconds since the epoch (-1: never).
    public var dbusValue: Value {
        .structure([
            .string(identifier), wireTime(nextFire), .string(title), .string(label), .string(timeZone ?? ""),
            .string(origin.rawValue), .string(state.rawValue), .string(note), .string(rule), .string(sound),
            .int64(nextFire?.nanosecondsSinceEpoch ?? -1),
        ])
    }

    public init(dbus value: Value) throws(DBusError) {
        // (Ten fields from a daemon before 0.3, which answered whole seconds only.)
        guard case .structure(let f) = value, f.count == 10 || f.count == 11, let id = f[0].stringValue, let title = f[2].stringValue,
            let label = f[3].stringValue, let zone = f[4].stringValue, let origin = f[5].stringValue.flatMap(AlarmOrigin.init),
            let state = f[6].stringValue.flatMap(AlarmState.init), let note = f[7].stringValue, let rule = f[8].stringValue,
            let sound = f[9].stringValue
        else { throw mismatch("a pending alarm", value) }
        var next = instant(fromWire: f[1])
        if f.count == 11, case .int64(let nanoseconds) = f[10] { next = nanoseconds >= 0 ? Instant(nanosecondsSinceEpoch: nanoseconds) : nil }
        self.init(identifier: id, nextFire: next, title: title, label: label, timeZone: zone.isEmpty ? nil : zone,
                  origin: origin, state: state, note: note, rule: rule, sound: sound)
    }

    /// The rule as a person writes it: `16:35 mon-fri`, `in 5m`, `every 25m`, `once`.
    public var ruleText: String { rule.isEmpty ? "once" : rule }
}

extension DeliveredSummary {
    /// `(suxsb)`: id, the server's notification id, when it was shown, title, whether it is known to be up.
    public var dbusValue: Value { .structure([.string(identifier), .uint32(serverID), wireTime(shown), .string(title), .boolean(known)]) }

    public init(dbus value: Value) throws(DBusError) {
        guard case .structure(let f) = value, f.count == 5, let id = f[0].stringValue, case .uint32(let serverID) = f[1],
            let shown = instant(fromWire: f[2]), let title = f[3].stringValue, case .boolean(let known) = f[4]
        else { throw mismatch("a delivered alarm", value) }
        self.init(identifier: id, serverID: serverID, shown: shown, title: title, known: known)
    }
}

extension MissedOccurrence {
    /// `(sxxs)`: id, when it was due, when it was recorded as missed, why ("" when the daemon was
    /// not running or the machine slept).
    public var dbusValue: Value { .structure([.string(identifier), wireTime(due), wireTime(recorded), .string(reason ?? "")]) }

    public init(dbus value: Value) throws(DBusError) {
        guard case .structure(let f) = value, f.count == 4, let id = f[0].stringValue, let due = instant(fromWire: f[1]),
            let recorded = instant(fromWire: f[2]), let reason = f[3].stringValue
        else { throw mismatch("a missed occurrence", value) }
        self.init(identifier: id, due: due, recorded: recorded, reason: reason.isEmpty ? nil : reason)
    }
}

extension NotificationSettings {
    /// `a{sv}`: authorized (b), reason (s, when denied), alert, actions, body-markup, hyperlinks,
    /// images, persistence, badge (b), sound (s: "server", "chime" or "none"), player and
    /// player-path (s, when chime plays), capabilities (as), server-name, server-vendor,
    /// server-version, spec-version (s, when a server runs), dnd (b, where the server says) and
    /// dnd-source (s).
    public var dbusValue: Value {
        var entries: [(String, Value)] = [("authorized", .boolean(isAuthorized))]
        if case .denied(let reason) = authorizationStatus { entries.append(("reason", .string(reason))) }
        for (key, setting) in [("alert", alert), ("actions", actions), ("body-markup", bodyMarkup), ("hyperlinks", hyperlinks),
                               ("images", images), ("persistence", persistence), ("badge", badge)] {
            entries.append((key, .boolean(setting == .enabled)))
        }
        switch sound {
        case .byServer: entries.append(("sound", .string("server")))
        case .localPlayer(let name, let path): entries += [("sound", .string("chime")), ("player", .string(name)), ("player-path", .string(path))]
        case .soundServer(let name): entries += [("sound", .string("chime")), ("sound-server", .string(name))]
        case .notSupported: entries.append(("sound", .string("none")))
        }
        entries.append(("capabilities", .strings(capabilities.map(\.rawValue))))
        if let server {
            entries += [("server-name", .string(server.name)), ("server-vendor", .string(server.vendor)),
                        ("server-version", .string(server.version)), ("spec-version", .string(server.specVersion))]
        }
        if let doNotDisturb { entries.append(("dnd", .boolean(doNotDisturb))) }
        if !doNotDisturbSource.isEmpty { entries.append(("dnd-source", .string(doNotDisturbSource))) }
        return .vardict(entries)
    }

    public init(dbus value: Value?) throws(DBusError) {
        let r = try VardictReader(value, "the settings")
        func setting(_ key: String) -> Setting { r.bool(key) == true ? .enabled : .notSupported }
        let sound: SoundSetting = switch r.string("sound") {
        case "server": .byServer
        case "chime": r.string("sound-server").map { .soundServer($0) }
            ?? .localPlayer(name: r.string("player") ?? "", path: r.string("player-path") ?? "")
        default: .notSupported
        }
        let server = r.string("server-name").map {
            ServerInformation(name: $0, vendor: r.string("server-vendor") ?? "", version: r.string("server-version") ?? "",
                              specVersion: r.string("spec-version") ?? "")
        }
        self.init(authorizationStatus: r.bool("authorized") == true ? .authorized : .denied(reason: r.string("reason") ?? ""),
                  alert: setting("alert"), sound: sound, actions: setting("actions"), bodyMarkup: setting("body-markup"),
                  hyperlinks: setting("hyperlinks"), images: setting("images"), persistence: setting("persistence"),
                  server: server, capabilities: r.strings("capabilities").map { Capability(rawValue: $0) },
                  doNotDisturb: r.bool("dnd"), doNotDisturbSource: r.string("dnd-source") ?? "")
    }
}

extension AlarmFileStatus {
    /// `a{sv}`: path (s), exists (b), alarms, disabled (u), loaded, checked (x, when known),
    /// problems, conflicts (as), reading (b), calendars (as).
    public var dbusValue: Value {
        var entries: [(String, Value)] = [
            ("path", .string(path)), ("exists", .boolean(exists)), ("alarms", .uint32(UInt32(clamping: alarms))),
            ("disabled", .uint32(UInt32(clamping: disabled))),
        ]
        if let loaded { entries.append(("loaded", wireTime(loaded))) }
        if let checked { entries.append(("checked", wireTime(checked))) }
        entries += [("problems", .strings(problems)), ("conflicts", .strings(conflicts)), ("reading", .boolean(reading)),
                    ("calendars", .strings(calendars))]
        return .vardict(entries)
    }

    public init(dbus value: Value?) throws(DBusError) {
        let r = try VardictReader(value, "the alarm file's status")
        self.init(path: r.string("path") ?? "", exists: r.bool("exists") ?? false, alarms: Int(r.int("alarms") ?? 0),
                  disabled: Int(r.int("disabled") ?? 0), loaded: r.values["loaded"].flatMap(instant(fromWire:)),
                  checked: r.values["checked"].flatMap(instant(fromWire:)), problems: r.strings("problems"),
                  conflicts: r.strings("conflicts"))
        reading = r.bool("reading") ?? false
        calendars = r.strings("calendars")
    }
}

extension DaemonStatus {
    /// `a{sv}`: version (s), pending (u), quarantined (a(ss): id, reason), store (s), store-warnings (as), sleep (s),
    /// wake (s), wake-method (s), stay-awake (s), dnd (s), sound (s).
    public var dbusValue: Value {
        .vardict([
            ("version", .string(version)), ("pending", .uint32(UInt32(clamping: pending))),
            ("quarantined", .array(element: .structure([.string, .string]), quarantined.map { .structure([.string($0.identifier), .string($0.reason)]) })),
            ("store", .string(store)), ("store-warnings", .strings(storeWarnings)), ("sleep", .string(sleep)),
            ("wake", .string(wake)), ("wake-method", .string(wakeMethod)), ("stay-awake", .string(stayAwake)),
            ("dnd", .string(doNotDisturb)), ("sound", .string(sound)),
        ])
    }

    public init(dbus value: Value?) throws(DBusError) {
        let r = try VardictReader(value, "the daemon's status")
        let quarantined: [(identifier: String, reason: String)] = (r.values["quarantined"]?.arrayElements ?? []).compactMap {
            guard case .structure(let f) = $0, f.count == 2, let id = f[0].stringValue, let reason = f[1].stringValue else { return nil }
            return (id, reason)
        }
        self.init(version: r.string("version") ?? "", pending: Int(r.int("pending") ?? 0), quarantined: quarantined,
                  store: r.string("store") ?? "", storeWarnings: r.strings("store-warnings"), sleep: r.string("sleep") ?? "",
                  wake: r.string("wake") ?? "", wakeMethod: r.string("wake-method") ?? "", stayAwake: r.string("stay-awake") ?? "",
                  doNotDisturb: r.string("dnd") ?? "", sound: r.string("sound") ?? "")
    }
}
