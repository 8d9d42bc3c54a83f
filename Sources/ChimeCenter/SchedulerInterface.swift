// The scheduler daemon's interface as both sides speak it: its address on the bus, the error names
// it answers with, and the records its answers carry (docs/dbus-interface.md).
import DBus
import Timekeeping

/// The scheduler daemon's address on the session bus.
public enum SchedulerInterface {
    public static let busName: BusName = "org.chime.Scheduler"
    public static let path: ObjectPath = "/org/chime/Scheduler"
    public static let interface: InterfaceName = "org.chime.Scheduler1"
    // Error names the daemon answers with (docs/dbus-interface.md).
    /// A key is unknown, of the wrong type, or outside its bound; the message names it and the bound.
    public static let invalidRequest: ErrorName = "org.chime.Scheduler.Error.InvalidRequest"
    /// The request is valid but would never fire (a one-off in the past).
    public static let neverFires: ErrorName = "org.chime.Scheduler.Error.NeverFires"
    /// No pending (or delivered) alarm has that identifier.
    public static let unknownIdentifier: ErrorName = "org.chime.Scheduler.Error.UnknownIdentifier"
    /// The daemon could not write or read its store; nothing was changed.
    public static let storeFailed: ErrorName = "org.chime.Scheduler.Error.StoreFailed"
    /// The identifier belongs to an alarm in the alarm file: change it there.
    public static let fromAlarmFile: ErrorName = "org.chime.Scheduler.Error.FromAlarmFile"
    /// `PreviewSound` found nothing here that can play the sound (the message says why).
    public static let cannotPlay: ErrorName = "org.chime.Scheduler.Error.CannotPlay"
    /// The daemon follows no alarm file (started with --no-config).
    public static let noAlarmFile: ErrorName = "org.chime.Scheduler.Error.NoAlarmFile"
}

/// Where a pending alarm came from. The alarm file's alarms follow the file; a reload never
/// touches those added from the command line or over D-Bus.
public enum AlarmOrigin: String, Hashable, Sendable {
    case commandLine = "command-line"
    case file
}

/// A pending request with when it fires next (nil: never again).
public struct PendingRequest: Hashable, Sendable {
    public var request: NotificationRequest
    public var nextFire: Instant?
    public init(request: NotificationRequest, nextFire: Instant?) {
        self.request = request
        self.nextFire = nextFire
    }
}

/// Where a pending alarm stands.
public enum AlarmState: String, Hashable, Sendable {
    /// Waiting for its next occurrence.
    case scheduled
    /// An occurrence is waiting for a notification server to appear.
    case held
    /// The server failed to show an occurrence; it is tried again (the note says when and why).
    case retrying
    /// Kept but never fired: the daemon crashed twice while firing it, or its stored form no
    /// longer validates. `chime cancel` removes it.
    case quarantined
    /// Switched off (`chime disable`): kept and listed, never fired until switched on again.
    case disabled
    /// A timer paused (`chime pause`) with time left (the note says how much), until resumed.
    case paused
}

/// A pending alarm as `chime list` shows it (one element of `ListPending`).
public struct PendingSummary: Hashable, Sendable {
    public var identifier: String
    public var nextFire: Instant?
    public var title: String
    public var label: String
    public var timeZone: String?
    public var origin: AlarmOrigin
    public var state: AlarmState
    /// Why it is held or quarantined; "" otherwise.
    public var note: String
    /// Its rule as a person writes it for the request's `rule` key (`16:35 mon-fri`, `in 5m`,
    /// `every 25m`, a calendar expression in full where it has no short form), or "" for a one-off
    /// at an instant.
    public var rule: String
    /// Its sound as the request's `sound` or `sound-file` key has it (`default`, `bell`, a path); "" for none.
    public var sound: String

    public init(identifier: String, nextFire: Instant?, title: String, label: String, timeZone: String?,
                origin: AlarmOrigin = .commandLine, state: AlarmState = .scheduled, note: String = "",
                rule: String = "", sound: String = "") {
        self.rule = rule
        self.sound = sound
        self.identifier = identifier
        self.nextFire = nextFire
        self.title = title
        self.label = label
        self.timeZone = timeZone
        self.origin = origin
        self.state = state
        self.note = note
    }
}

/// What the daemon made of the alarm file, as `chime status` shows it.
public struct AlarmFileStatus: Hashable, Sendable {
    /// The file the daemon follows.
    public var path: String
    /// Whether the file was there at the last look.
    public var exists: Bool
    /// Alarms from the file that are scheduled, and those set `enabled = false`.
    public var alarms: Int
    public var disabled: Int
    /// When the running set was loaded (nil: never, or no file).
    public var loaded: Instant?
    /// When the file was last read.
    public var checked: Instant?
    /// What was wrong at the last read (`file:line:col: message`); the last good set keeps running meanwhile.
    public var problems: [String]
    /// Alarms from the file left out because a command-line alarm has their identifier.
    public var conflicts: [String]
    /// A reading of the file (and its calendars) is under way: what is listed may change when it is over.
    public var reading = false
    /// How each of GNOME's calendars (`[[calendar]] eds`) is followed: a line each, with what to do
    /// where it is not followed live or where GNOME's own reminders ring it too.
    public var calendars: [String] = []

    public init(path: String, exists: Bool = false, alarms: Int = 0, disabled: Int = 0, loaded: Instant? = nil,
                checked: Instant? = nil, problems: [String] = [], conflicts: [String] = []) {
        self.path = path
        self.exists = exists
        self.alarms = alarms
        self.disabled = disabled
        self.loaded = loaded
        self.checked = checked
        self.problems = problems
        self.conflicts = conflicts
    }
}
