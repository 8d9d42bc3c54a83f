// The notification server as the daemon knows it: whether one owns the name, what it can do
// (GetCapabilities, needed before an alarm can be rendered) and who it is (GetServerInformation,
// for Settings and for reading its do-not-disturb). Each question is a pending call with the
// session's own deadline: a server that never answers holds up neither the loop nor a client.
//
// Other parts may: read `present`, `capabilities`, `information` and `failure`; `ask()` what is
// not known yet; `whenAnswered` to run something once no question is in flight; `markGone()` when
// a call found no server. The session tells its owner (`events`) when the server comes, goes,
// says what it can do, or fails to.
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping

final class ServerSession: LoopPart {
    /// How long the notification server may take to answer a call before the daemon gives up on it.
    static let timeout = TimeSpan.seconds(10)

    /// What the session tells the daemon.
    struct Events {
        /// The name changed hands: `old` ("" for none) took its popups with it; `new` ("" for none)
        /// is being asked what it can do.
        var ownerChanged: (_ old: String, _ new: String) -> Void = { _, _ in }
        /// A call found no server (its owner left before NameOwnerChanged arrived).
        var gone: () -> Void = {}
        /// It said what it can do.
        var capabilities: ([Capability]) -> Void = { _ in }
        /// It did not say what it can do (an error, or no answer in time).
        var capabilitiesFailed: (String) -> Void = { _ in }
        /// It said who it is.
        var identified: (ServerInformation) -> Void = { _ in }
    }

    let client: NotificationClient
    private let clock: WallClock
    private let logger: Logger
    var events = Events()

    /// Whether a server owns `org.freedesktop.Notifications` (as the bus driver last said).
    private(set) var present = false
    /// The unique name of the server's connection ("" while none).
    private(set) var owner = ""
    /// What it can do, once it said.
    private(set) var capabilities: [Capability]?
    /// Who it is, once it said.
    private(set) var information: ServerInformation?
    /// Why the last question failed (nil: none failed since the server came).
    private(set) var failure: String?

    private var capabilitiesCall: (call: PendingCall, deadline: Instant)?
    private var informationCall: (call: PendingCall, deadline: Instant)?
    /// Run once no question is in flight.
    private var afterAnswers: [() -> Void] = []

    init(client: NotificationClient, clock: WallClock, logger: Logger) {
        self.client = client
        self.clock = clock
        self.logger = logger
    }

    /// Follows the name's owner (NameOwnerChanged from the bus driver) and asks the bus who owns it
    /// now; a server that is there is asked its capabilities and name without waiting.
    func start() throws {
        try client.connection.watchNameOwner(NotificationClient.busName) { [weak self] old, new in
            self?.ownerChanged(from: old, to: new)
        }
        // Asking the bus who owns the name cannot hang; asking the server itself could.
        owner = ((try? client.connection.nameOwner(NotificationClient.busName)) ?? nil) ?? ""
        present = !owner.isEmpty
        if present { ask() }
    }

    /// Asks what is not known yet (capabilities, server information), once at a time.
    func ask() {
        guard present else { return }
        if capabilities == nil, capabilitiesCall == nil {
            do {
                let call = try client.beginCapabilities()
                capabilitiesCall = (call, clock.now() + Self.timeout)
                try call.onCompletion { [weak self] answer in self?.capabilitiesAnswered(answer) }
            } catch {
                capabilitiesCall = nil
                fail("could not ask for the capabilities: \(error)", capabilities: true)
            }
        }
        if information == nil, informationCall == nil {
            do {
                let call = try client.beginServerInformation()
                informationCall = (call, clock.now() + Self.timeout)
                try call.onCompletion { [weak self] answer in self?.informationAnswered(answer) }
            } catch {
                informationCall = nil
                fail("could not ask the notification server: \(error)", capabilities: false)
            }
        }
    }

    /// Runs `body` once no question to the server is in flight (at once when none is).
    func whenAnswered(_ body: @escaping () -> Void) {
        if capabilitiesCall == nil, informationCall == nil { return body() }
        afterAnswers.append(body)
    }

    /// A call found no server on the bus (its owner left before NameOwnerChanged arrived).
    func markGone() {
        guard present else { return }
        present = false
        events.gone()
    }

    // MARK: - The loop

    var deadline: Instant? {
        [capabilitiesCall?.deadline, informationCall?.deadline].compactMap { $0 }.min()
    }

    func deadlineReached(now: Instant) {
        if let (call, deadline) = capabilitiesCall, deadline <= now {
            call.cancel()
            capabilitiesCall = nil
            fail("the notification server did not answer GetCapabilities within \(Self.timeout)", capabilities: true)
        }
        if let (call, deadline) = informationCall, deadline <= now {
            call.cancel()
            informationCall = nil
            fail("the notification server did not answer GetServerInformation within \(Self.timeout)", capabilities: false)
        }
    }

    // MARK: - Answers

    private func capabilitiesAnswered(_ answer: Result<Message, any Error>) {
        guard capabilitiesCall != nil else { return }
        capabilitiesCall = nil
        do {
            let known = try NotificationClient.capabilities(from: answer)
            capabilities = known
            events.capabilities(known)
        } catch is NoNotificationServerError {
            markGone()
        } catch {
            fail(Self.describe(error), capabilities: true)
            return
        }
        answersMayBeIn()
    }

    private func informationAnswered(_ answer: Result<Message, any Error>) {
        guard informationCall != nil else { return }
        informationCall = nil
        do {
            let information = try NotificationClient.serverInformation(from: answer)
            self.information = information
            events.identified(information)
        } catch is NoNotificationServerError {
            markGone()
        } catch {
            fail("the notification server failed: \(Self.describe(error))", capabilities: false)
            return
        }
        answersMayBeIn()
    }

    private func fail(_ reason: String, capabilities: Bool) {
        failure = reason
        if capabilities { events.capabilitiesFailed(reason) }
        answersMayBeIn()
    }

    private func answersMayBeIn() {
        guard capabilitiesCall == nil, informationCall == nil, !afterAnswers.isEmpty else { return }
        let waiting = afterAnswers
        afterAnswers.removeAll()
        for body in waiting { body() }
    }

    private func ownerChanged(from old: String, to new: String) {
        // Questions put to the server that left are asked again of the one that came (if any).
        capabilitiesCall?.call.cancel()
        informationCall?.call.cancel()
        capabilitiesCall = nil
        informationCall = nil
        capabilities = nil
        information = nil
        failure = nil
        owner = new
        present = !new.isEmpty
        ask()
        events.ownerChanged(old, new)
        answersMayBeIn()
    }

    /// A D-Bus failure in a few words for a log line and `chime list`.
    static func describe(_ error: any Error) -> String {
        if let error = error as? DBusError {
            if error.name == .noReply, error.message.contains("disconnected") { return "the notification server left the bus while showing it" }
            return "\(error.name.rawValue): \(error.message)"
        }
        return "\(error)"
    }
}
