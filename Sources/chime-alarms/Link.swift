// The app's one door to chime: org.chime.Scheduler1 on the session bus. The bus socket is
// watched by GLib's main loop; the daemon's signals (PendingChanged, RingingChanged, Fired,
// RangOut) arrive there and become one refresh per loop turn. A call to a daemon that is not
// running starts it (D-Bus activation).
import ChimeCenter
import ChimeClient
import DBus
import Gtk
import Posix
import Timekeeping

final class SchedulerLink {
    let connection: Connection
    let center: UserNotificationCenter
    private var watch: Source?
    private var dispatchSoon: Source?
    private var refreshSoon: Source?
    private var subscriptions: [SubscriptionToken] = []

    /// The pending alarms changed.
    var pendingChanged: () -> Void = {}
    /// An alarm started or stopped ringing.
    var ringingChanged: () -> Void = {}
    /// Missed occurrences may have been recorded (a ring ended unanswered, an alarm was missed).
    var missedChanged: () -> Void = {}
    /// The calendars chime writes to or syncs changed, or one's sync started or stopped failing.
    var calendarsChanged: () -> Void = {}
    /// The daemon came or went.
    var daemonChanged: (_ running: Bool) -> Void = { _ in }

    init() throws {
        connection = try Connection(.session)
        // Short enough that a hung daemon never freezes the window for long.
        center = UserNotificationCenter(connection: connection, timeout: .seconds(5))
        let from = SchedulerInterface.busName
        subscriptions.append(try center.follow(.pendingChanged) { [unowned self] _ in schedulePendingRefresh() })
        subscriptions.append(try center.follow(.ringingChanged) { [unowned self] _ in ringingChanged() })
        subscriptions.append(try center.follow(.calendarsChanged) { [unowned self] _ in calendarsChanged() })
        for signal: SchedulerSignal in [.rangOut, .missed] {
            subscriptions.append(try center.follow(signal) { [unowned self] _ in missedChanged() })
        }
        subscriptions.append(try connection.watchNameOwner(from) { [unowned self] _, owner in
            daemonChanged(!owner.isEmpty)
            if !owner.isEmpty { schedulePendingRefresh() }
        })
        if let fd = connection.fileDescriptor {
            watch = Source(reading: fd) { [unowned self] in
                connection.processAvailable()
            }
        }
    }

    /// Signals read while a call waited for its answer sit in libdbus's queue, where the socket's
    /// watch cannot see them: dispatched on the next loop turn.
    func afterCall() {
        guard connection.hasMessagesToDispatch || connection.hasMessagesToSend, dispatchSoon == nil else { return }
        dispatchSoon = Source(idle: { [unowned self] in
            dispatchSoon = nil
            connection.processAvailable()
        })
    }

    /// One refresh for every PendingChanged of this loop turn.
    private func schedulePendingRefresh() {
        guard refreshSoon == nil else { return }
        refreshSoon = Source(idle: { [unowned self] in
            refreshSoon = nil
            pendingChanged()
        })
    }

    /// Calls in flight without waiting, each with its deadline, by a number of their own.
    private var inFlight: [Int: (call: PendingCall, deadline: Source)] = [:]
    private var nextCall = 0

    /// Makes a call without waiting (the window goes on): `done` gets the answer, or the error, or
    /// after the center's timeout that the daemon did not answer.
    func later<T>(_ typed: SchedulerCall<T>, _ done: @escaping (Result<T, SchedulerError>) -> Void) {
        nextCall += 1
        let number = nextCall
        do {
            let call = try center.send(typed) { [unowned self] result in
                guard inFlight.removeValue(forKey: number) != nil else { return }
                done(result)
            }
            let milliseconds = UInt32(clamping: center.timeout.milliseconds)
            let deadline = Source(after: milliseconds) { [unowned self] in
                guard let entry = inFlight.removeValue(forKey: number) else { return }
                entry.call.cancel()
                done(.failure(.notAnswering(SchedulerNotAnsweringError(underlying: DBusError(
                    name: .timeout, message: "no answer to \(typed.member) within \(center.timeout)")))))
            }
            inFlight[number] = (call, deadline)
        } catch {
            done(.failure(error))
        }
    }

    /// Runs a call, and dispatches what arrived meanwhile.
    func run<T>(_ body: (UserNotificationCenter) throws -> T) throws -> T {
        defer { afterCall() }
        return try body(center)
    }
}

/// A daemon's error as one line a person reads (the D-Bus error's message, without its name).
func describe(_ error: any Error) -> String {
    if let error = error as? SchedulerError { return error.message }
    if let error = error as? DBusError { return error.message }
    return "\(error)"
}

/// A line on standard error (for measuring, with CHIME_TRACE set).
func trace(_ line: String) {
    try? Sys.writeAll(2, Array((line + "\n").utf8))
}
