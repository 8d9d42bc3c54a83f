import DBus
import Notifications
import Posix
#if canImport(Glibc)
import Glibc
#endif

/// chime's exit statuses, one per kind of outcome, so scripts can tell them apart.
package enum ExitStatus: Int32, CaseIterable {
    case success = 0
    case serverError = 1
    case waitTimedOut = 3
    case serverVanished = 4
    case actionsUnsupported = 5
    case unknownIdentifier = 6
    case fromAlarmFile = 7
    case usage = 64
    case invalidInput = 65
    case cannotPlay = 66
    case noDaemon = 67
    case noSessionBus = 68
    case noNotificationServer = 69
    case daemonFailed = 71
    case missingPart = 72
    case callTimedOut = 75
    case configError = 78
    case interrupted = 130

    package var meaning: String {
        switch self {
        case .success: "success (after waiting: closed, or an action was invoked)"
        case .serverError: "the notification server or the bus answered with an error"
        case .waitTimedOut: "waiting ended: the time limit passed (see notify --help)"
        case .serverVanished: "waiting ended because the notification server left the bus"
        case .actionsUnsupported: "shown, but without actions: the server has no 'actions' capability"
        case .unknownIdentifier: "no alarm has that identifier"
        case .fromAlarmFile: "that alarm comes from the alarm file: change it there"
        case .usage: "bad usage: unknown option, bad value, bad hint syntax, bad rule"
        case .noDaemon: "no chime daemon is running (chime daemon &)"
        case .daemonFailed: "the daemon could not start (another one runs, unusable state), or did not answer in time"
        case .configError: "the alarm file has errors (each printed as file:line:col: message)"
        case .invalidInput: "bad input: text that is not UTF-8, a missing sound file or holiday calendar"
        case .cannotPlay: "the sound cannot be played here (no such sound, a file that cannot be decoded, nothing to play it)"
        case .noSessionBus: "no session bus to connect to"
        case .noNotificationServer: "no notification server is running on the session bus"
        case .callTimedOut: "the notification server did not answer in time"
        case .missingPart: "chime is installed incompletely: chime-commands, which runs every command but notify, is missing"
        case .interrupted: "interrupted while waiting; the notification was closed"
        }
    }

    package static var helpText: String {
        "EXIT STATUS\n" + allCases.sorted { $0.rawValue < $1.rawValue }.map { "  \(String($0.rawValue).padding(3))  \($0.meaning)" }.joined(separator: "\n")
    }

    /// Prints `chime: message` on standard error and exits with this status.
    /// Started as notify-send: messages without "chime: ", and every failure is status 1.
    nonisolated(unsafe) package static var asNotifySend = false

    package func exit(_ message: String) -> Never {
        if Self.asNotifySend {
            printError(message)
            Sys.exit(self == .success ? 0 : 1)
        }
        printError("chime: \(message)")
        Sys.exit(rawValue)
    }

    /// What the commands beyond `notify` add to `fail`: their own errors (the daemon's), each ended
    /// with its status, or nothing for an error they do not know.
    nonisolated(unsafe) package static var failMore: ((any Error) -> Void)? = nil

    /// Ends the process for an error from the libraries, with a one-line message saying what to do.
    package static func fail(_ error: any Error) -> Never {
        failMore?(error)
        switch error {
        case let error as NoNotificationServerError:
            noNotificationServer.exit(
                "no notification server is running on the session bus (org.freedesktop.Notifications has no owner); "
                    + "start one, e.g. dunst" + (error.underlying.name == .timedOut ? " (starting one by D-Bus activation timed out)" : ""))
        case let error as PortalRefusalError:
            serverError.exit(
                "the notification portal refused the notification (\(error.underlying.name): \(error.underlying.message)); "
                    + "NOTIFY_IGNORE_PORTAL=1 sends it to the notification server directly")
        case let error as SessionBusError:
            noSessionBus.exit(
                "cannot connect to the session bus: \(error.underlying.message); run chime inside your desktop session "
                    + "or set DBUS_SESSION_BUS_ADDRESS")
        case let error as DBusError where error.name == .noReply || error.name == .timeout:
            callTimedOut.exit("the notification server did not answer in time (\(error.message)); it may be hung: restart it")
        case let error as DBusError where error.name == .disconnected:
            serverError.exit("the session bus closed the connection (\(error.message)); try again")
        case let error as DBusError:
            serverError.exit("\(error.call.map { "\($0.member) failed" } ?? "D-Bus call failed"): \(error.name): \(error.message)")
        case let error as InvalidValueError:
            invalidInput.exit("cannot send \(error.location): \(error.reason)")
        case let error as InvalidNameError:
            invalidInput.exit("\(error)")
        case let error as NotifySendSyntaxError:
            (error.isInvalidText ? invalidInput : usage).exit(asNotifySend ? error.notifySendMessage : error.message)
        case let error as InputError:
            invalidInput.exit(error.message)
        case let error as ImageError:
            invalidInput.exit(error.description)
        default:
            serverError.exit("\(error)")
        }
    }
}

/// Input that cannot be used (a missing file, say); exits with `invalidInput`.
package struct InputError: Error {
    package var message: String
    package init(message: String) { self.message = message }
}

/// Connecting to the session bus failed.
package struct SessionBusError: Error {
    package var underlying: DBusError
}

/// The session bus, or a `SessionBusError` saying why not.
package func openSessionBus() throws -> Connection {
    do {
        return try Connection(.session)
    } catch let error as DBusError {
        throw SessionBusError(underlying: error)
    }
}

package func printError(_ text: String) {
    Sys.flushStandardOutput()
    // Standard error closed or full: there is nowhere left to say anything.
    try? Sys.writeAll(2, (text + "\n").utf8)
}

/// Writes a line to standard output and flushes it, so scripts reading a pipe see it at once.
package func printLine(_ text: String) {
    print(text)
    Sys.flushStandardOutput()
}

/// The first argument that is not valid UTF-8, with its position and a printable form.
package func firstInvalidUTF8Argument() -> (index: Int, shown: String)? {
    for index in 1..<Int(CommandLine.argc) {
        guard let pointer = CommandLine.unsafeArgv[index] else { continue }
        let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) }
        if String(validating: bytes, as: UTF8.self) == nil {
            let shown = bytes.map { $0 < 0x80 && $0 >= 0x20 ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }
            return (index, shown.joined())
        }
    }
    return nil
}

extension String {
    package func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}

/// Runs `body`, turning library errors into chime's one-line messages and exit statuses.
package func reportingErrors<T>(_ body: () throws -> T) -> T {
    do {
        return try body()
    } catch {
        ExitStatus.fail(error)
    }
}
