// What the daemon knows of the popups it showed. A popup shown by this run of the daemon is known:
// the server tells this connection when it closes. One shown before a restart is not, on servers
// that send NotificationClosed only to the connection that showed the popup (dunst does: the
// signal carries the old unique name as its destination). dunst can be asked instead: its
// history (org.dunstproject.cmd0.NotificationListHistory) holds the popups it has closed, so one
// found there is closed and forgotten. Elsewhere the popup's state is unknown, and `ListDelivered`
// says so rather than claim it is on screen.
//
// A part of the daemon: it owns the set shown this run, the history call in flight, and the
// store's `delivered` table (its face: `LedgerStore`). Others tell it what they show (`record`,
// `shown`) and what closed (`remove`, `forget`), and ask what is shown (`delivered`); the service
// asks it for the list (`list`); it tells the others of popups found closed (`events.closedMeanwhile`).
import ChimeCenter
import DBus
import Logging
import Notifications
import Timekeeping

final class PopupLedger: LoopPart {
    /// The bus, to ask dunst for its history (nil: nobody to ask, as in the simulator).
    let connection: Connection?
    private let store: any LedgerStore
    let session: any ServerFace
    let clock: WallClock
    let logger: Logger
    /// What the ledger tells the other parts (wired by the daemon).
    struct Events {
        /// A popup shown before this run turned out to be closed (the row is already gone from the store).
        var closedMeanwhile: (DeliveredNotification) -> Void = { _ in }
    }
    var events = Events()
    /// How long dunst has to answer.
    static let timeout = TimeSpan.seconds(1)

    /// Server ids of the popups this run showed (or sent again in place).
    private var shownThisRun: Set<UInt32> = []
    /// Popups shown before this run that dunst's history, at the last ask, did not hold: still up.
    private var stillUp: Set<UInt32> = []
    /// The history call in flight, and who waits for its outcome.
    private var asking: (call: PendingCall, deadline: Instant, waiters: [() -> Void])?

    init(connection: Connection?, store: any LedgerStore, session: any ServerFace, clock: WallClock, logger: Logger) {
        self.connection = connection
        self.store = store
        self.session = session
        self.clock = clock
        self.logger = logger
    }

    var deadline: Instant? { asking?.deadline }

    func deadlineReached(now: Instant) {
        guard let asking, asking.deadline <= now else { return }
        asking.call.cancel()
        logger.info("dunst did not give its history within \(Self.timeout); popups shown before the restart stay unknown")
        finish()
    }

    // MARK: - The delivered table

    /// Records a popup the server connection `server` (its unique name) shows; inside the
    /// presenter's transaction.
    func record(_ notification: DeliveredNotification, server: String) throws(StoreError) {
        try store.recordDelivered(notification, server: server)
    }

    /// What shows for an alarm, or in a popup (nil: nothing known).
    func delivered(identifier: String) throws(StoreError) -> DeliveredNotification? { try store.delivered(identifier: identifier) }
    func delivered(serverID: UInt32) throws(StoreError) -> DeliveredNotification? { try store.delivered(serverID: serverID) }
    /// The number of the popup up for an alarm (nil: none known).
    func popup(of identifier: String) throws(StoreError) -> UInt32? { try store.popup(of: identifier) }

    /// Everything shown and not known to be closed: each alarm with its popup's number.
    func popups() throws(StoreError) -> [(identifier: String, serverID: UInt32)] { try store.deliveredPopups() }

    /// These alarms' popups closed.
    func remove(_ identifiers: [String]) throws(StoreError) { try store.removeDelivered(identifiers) }

    /// The server `server` left the bus: its popups are gone. Returns their alarms.
    func forget(shownBy server: String) throws(StoreError) -> [String] { try store.forgetDelivered(shownBy: server) }

    /// At start: popups shown by a server that has since left (while the daemon was down) are gone.
    func forgetLeftServers(current: String?) {
        do {
            let gone = try store.forgetDelivered(notShownBy: current)
            if !gone.isEmpty { logger.info("\(gone.count) popup(s) shown by a notification server that has left are gone") }
        } catch {
            logger.error("\(error)")
        }
    }

    /// A popup of this run: its close comes to this connection.
    func shown(_ serverID: UInt32) {
        shownThisRun.insert(serverID)
    }

    /// Whether the server keeps a history that says which popups it closed.
    private var serverKeepsHistory: Bool { session.present && session.information?.name == "dunst" }

    /// The delivered alarms, each marked known or not; asks dunst's history first when some were
    /// shown before this run. `reply` runs in the loop, now or when dunst answered (or did not).
    func list(_ reply: @escaping (Result<[DeliveredSummary], StoreError>) -> Void) {
        let answer = { [unowned self] in
            do throws(StoreError) {
                reply(.success(try store.deliveredTitles().map {
                    DeliveredSummary(identifier: $0.identifier, serverID: $0.serverID, shown: $0.date, title: $0.title,
                                     known: shownThisRun.contains($0.serverID) || stillUp.contains($0.serverID))
                }))
            } catch {
                reply(.failure(error))
            }
        }
        reconcile(then: answer)
    }

    /// Asks dunst which of the popups shown before this run it has closed, and forgets those;
    /// then runs `then` (at once where there is nothing to ask).
    func reconcile(then: @escaping () -> Void = {}) {
        let inherited = ((try? store.deliveredPopups()) ?? []).contains { !shownThisRun.contains($0.serverID) }
        guard inherited, serverKeepsHistory, let connection else { return then() }
        if asking != nil {
            asking?.waiters.append(then)
            return
        }
        do {
            let message = try Message.methodCall(destination: NotificationClient.busName, path: NotificationClient.objectPath,
                                                 interface: "org.dunstproject.cmd0", member: "NotificationListHistory")
            let call = try connection.send(message, timeout: .milliseconds(Int32(Self.timeout.milliseconds)))
            asking = (call, clock.now() + Self.timeout, [then])
            try call.onCompletion { [weak self] answer in
                guard let self, self.asking?.call === call else { return }
                self.historyArrived(try? answer.get().arguments())
            }
        } catch {
            logger.info("cannot ask dunst for its history: \(error)")
            asking = nil
            then()
        }
    }

    private func historyArrived(_ arguments: [Value]?) {
        guard let entries = arguments?.first?.arrayElements else {
            logger.info("dunst gave no history; popups shown before the restart stay unknown")
            return finish()
        }
        var closed: Set<UInt32> = []
        for entry in entries {
            guard case .dictionary(_, _, let pairs) = entry,
                let id = pairs.first(where: { $0.key.stringValue == "id" })?.value.unwrappingVariants,
                let serverID = Self.serverID(id)
            else { continue }
            closed.insert(serverID)
        }
        let inherited = ((try? store.deliveredNotifications()) ?? []).filter { !shownThisRun.contains($0.serverID) }
        stillUp = Set(inherited.map(\.serverID)).subtracting(closed)
        for popup in inherited where closed.contains(popup.serverID) {
            do { try store.removeDelivered([popup.identifier]) } catch { logger.error("\(error)") }
            logger.info("closed while the daemon was not running (dunst's history says so)", metadata: ["alarm.id": "\(popup.identifier)"])
            events.closedMeanwhile(popup)
        }
        // What dunst still shows (not in its history) is up: its close will not reach this
        // connection, but the next ask finds it in the history.
        finish()
    }

    /// dunst gives ids as int32; any integer will do.
    private static func serverID(_ value: Value) -> UInt32? {
        switch value {
        case .int32(let n): UInt32(exactly: n)
        case .uint32(let n): n
        case .int64(let n): UInt32(exactly: n)
        case .uint64(let n): UInt32(exactly: n)
        default: nil
        }
    }

    private func finish() {
        let waiters = asking?.waiters ?? []
        asking = nil
        for waiter in waiters { waiter() }
    }
}
