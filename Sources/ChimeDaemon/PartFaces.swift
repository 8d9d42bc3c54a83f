// The faces parts show each other where the other side is the world: the notification server,
// the sound, do-not-disturb, the programs the daemon runs, staying awake, and the daemon's own
// signals. The presenter, the ledger and ringing hold these and nothing more of the parts behind
// them; the daemon hands them the real parts (`ServerSession`, `Speaker`, `DoNotDisturb`,
// `ChildProcesses`, `Waking`, `SchedulerSignals` on the bus), and the simulator (`Simulation`)
// hands them a simulated world instead. Each face is what its holders ask, and only that.
import ChimeCenter
import DBus
import Notifications
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

/// A popup the server says it shows: its id, and the unique name of the server's connection (the
/// popup lives as long as it does).
struct ShownPopup: Equatable, Sendable {
    var id: UInt32
    var server: String
}

/// A Notify on its way to the server.
protocol NotifyCall: AnyObject {
    /// Runs `body` with the server's answer (once, in the loop).
    func whenAnswered(_ body: @escaping (Result<ShownPopup, any Error>) -> Void) throws
    /// Gives up on the answer.
    func cancel()
}

/// The notification server as the presenter, ringing and the ledger see it: what the session
/// knows of it, and the two calls they make to it.
protocol ServerFace: AnyObject {
    /// Whether a server owns the name.
    var present: Bool { get }
    /// What it can do, once it said.
    var capabilities: [Capability]? { get }
    /// Who it is, once it said.
    var information: ServerInformation? { get }
    /// Asks what is not known yet.
    func ask()
    /// A call found no server.
    func markGone()
    /// Sends Notify without waiting for the answer.
    func beginNotify(_ notification: Notification) throws -> any NotifyCall
    /// Asks the server to close a popup, without waiting.
    func requestClose(_ id: UInt32)
}

/// Ringing as the presenter sees it.
protocol RingingFace: AnyObject {
    func soundCapabilities(_ capabilities: [Capability]) -> [Capability]
    func identifier(ringingOn serverID: UInt32) -> String?
    func ring(of identifier: String) -> (due: Instant, serverID: UInt32)?
    func isRinging(_ identifier: String, on serverID: UInt32) -> Bool
    func start(_ identifier: String, serverID: UInt32, due: Instant, content: NotificationContent, capabilities: [Capability], timer: Bool)
    func stop(_ identifier: String, because reason: String)
    func stop(serverID: UInt32, because reason: String)
    func ringOut(_ identifier: String)
}

/// The sound, as ringing sees it: plays and stops.
protocol SoundFace: AnyObject {
    /// Whether chime plays sounds itself (the server is not asked to).
    var playsItself: Bool { get }
    /// Starts a sound; its id, for `stop` and for the speaker's events.
    func play(_ request: SoundRequest) -> Int
    func stop(_ id: Int)
}

/// Do-not-disturb as the presenter sees it.
protocol DoNotDisturbFace: AnyObject {
    var current: DoNotDisturbState { get }
    /// The server changed hands: its do-not-disturb is read again.
    func serverChanged()
}

/// Starting a program (a body command, the app), as the presenter sees the children.
protocol ProgramStarter: AnyObject {
    func start(_ arguments: [String], captureOutput: Bool, outputLimit: Int, timeLimit: TimeSpan,
               ended: @escaping (Child) -> Void) throws(SpawnError) -> pid_t
}

extension ProgramStarter {
    /// A program whose output is not read, stopped past `timeLimit`.
    @discardableResult
    func start(_ arguments: [String], timeLimit: TimeSpan, ended: @escaping (Child) -> Void) throws(SpawnError) -> pid_t {
        try start(arguments, captureOutput: false, outputLimit: 0, timeLimit: timeLimit, ended: ended)
    }
}

/// The children as the parts that run programs of their own see them (the sound's players, the
/// readers, the syncs, gsettings): starting one, its output streamed or not, and stopping it.
protocol ProgramRunner: ProgramStarter {
    func startStreaming(_ arguments: [String], environment: [String: String], timeLimit: TimeSpan,
                        ended: @escaping (Child) -> Void) throws(SpawnError) -> Child
    func stop(_ pid: pid_t)
}

/// logind's sleep as waking sees it: whether it is followed, and the block lock waking holds.
protocol SleepFace: AnyObject {
    var following: Bool { get }
    var blockReason: String? { get }
    var blockRefusal: String? { get }
    func holdBlock(_ reason: String?)
}

/// Staying awake for an alarm that shows, as the presenter sees waking.
protocol AwakeFace: AnyObject {
    func keepAwake(for identifier: String, content: NotificationContent)
    func release(_ identifier: String)
}

extension Ringing: RingingFace {}
extension Speaker: SoundFace {}
extension DoNotDisturb: DoNotDisturbFace {}
extension ChildProcesses: ProgramRunner {}
extension SleepFollower: SleepFace {}
extension Waking: AwakeFace {}

extension ServerSession: ServerFace {
    func beginNotify(_ notification: Notification) throws -> any NotifyCall {
        BusNotifyCall(try client.beginNotify(notification))
    }

    func requestClose(_ id: UInt32) { try? client.requestClose(id) }
}

/// A Notify on the bus: a pending call whose answer is the popup's id.
final class BusNotifyCall: NotifyCall {
    let call: PendingCall
    init(_ call: PendingCall) { self.call = call }

    func whenAnswered(_ body: @escaping (Result<ShownPopup, any Error>) -> Void) throws {
        try call.onCompletion { answer in
            body(Result { () throws(any Error) -> ShownPopup in
                ShownPopup(id: try NotificationClient.notificationID(from: answer), server: (try? answer.get())?.sender ?? "")
            })
        }
    }

    func cancel() { call.cancel() }
}
