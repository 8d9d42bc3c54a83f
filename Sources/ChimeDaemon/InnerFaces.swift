// The faces the schedule and the popup ledger show the parts that ask them: each asker holds its
// own face, narrowed to what it asks, and nothing more of the part behind it. (PartFaces.swift holds
// the faces of the world, which the simulator replaces; these two parts are real in the simulation
// too, so the daemon and the simulator hand every asker the same part, through the same face.)
// A reader sees here who may ask the schedule and the ledger what; anything else is refused by the
// compiler.
import ChimeCenter
import ChimeConfig
import Notifications
import Timekeeping

/// The schedule as the presenter sees it: firing on the record, what a request is and when it is
/// due, moving it past an occurrence, finishing a one-off, snoozing and skipping from a popup.
protocol PresenterSchedule: AnyObject {
    /// Runs the work of firing `identifier` with the marker set (a crash inside is charged to it).
    @discardableResult
    func firing<Result, Failure: Error>(_ identifier: String, _ body: () throws(Failure) -> Result) throws(Failure) -> Result
    func firedCleanly(_ identifier: String)
    /// Logs a store failure; the caller goes on with what it has.
    func logging(_ body: () throws(StoreError) -> Void)
    func load(_ identifier: String) -> NotificationRequest?
    func stored(_ identifier: String) throws(StoreError) -> LoadedRequest?
    func scheduledTime(of identifier: String) throws(StoreError) -> ScheduledTime?
    func advance(_ request: NotificationRequest, past due: Instant, now: Instant) throws(StoreError) -> Instant?
    func requeue(_ identifier: String, _ next: Instant?, hasReminders: Bool?)
    func finished(_ identifier: String, detached: Bool) throws(StoreError)
    func handledDetached(_ identifier: String, due: Instant) throws(StoreError)
    @discardableResult
    func snooze(_ delivered: DeliveredNotification, for span: TimeSpan?) -> Instant
    @discardableResult
    func skip(_ identifier: String, occurrence: Instant, undo: Bool) throws(SchedulerError) -> Instant?
}

extension PresenterSchedule {
    func requeue(_ identifier: String, _ next: Instant?) { requeue(identifier, next, hasReminders: nil) }
    @discardableResult
    func snooze(_ delivered: DeliveredNotification) -> Instant { snooze(delivered, for: nil) }
}

/// The schedule as the alarm file's follower sees it: storing and removing the file's alarms,
/// planning them, the file's days off, and the crash records of the reader.
protocol FollowerSchedule: AnyObject {
    var commandAway: [DaysOff.Away] { get }
    func presence(of identifier: String) throws(StoreError) -> (origin: AlarmOrigin?, state: Bool)
    func storeFromFile(_ record: ReaderRecord, next: Instant?, fresh: Bool) throws(StoreError)
    func quarantinedFromFile(_ identifier: String, definition: String) throws(StoreError) -> Bool
    func removeFromFile(_ identifier: String) throws(StoreError)
    func makeRoom(_ count: Int)
    func replaced(_ alarms: [(identifier: String, next: Instant?, hasReminders: Bool)])
    func setFileDaysOff(_ new: DaysOff, now: Instant)
    func readRefusal(_ subject: Schedule.ReadSubject) -> String?
    func readerRefusals() -> (calendars: [String: String], alarms: [String: String])
    @discardableResult
    func chargeReader(_ stage: ReaderStage, path: String) -> Int
}

/// The schedule as the calendars chime writes to see it: a new alarm's identifier and next time,
/// what is stored and queued for one, and where it came from.
protocol CalendarsSchedule: AnyObject {
    func newIdentifier(for request: NotificationRequest) throws(StoreError) -> String
    func origin(of identifier: String) throws(StoreError) -> AlarmOrigin?
    func nextFire(_ request: NotificationRequest, after time: Instant) -> Instant?
    func neverFires(_ request: NotificationRequest, after now: Instant) -> RequestError
    func load(_ identifier: String) -> NotificationRequest?
    func queuedTime(of identifier: String) -> Instant?
}

extension Schedule: PresenterSchedule, FollowerSchedule, CalendarsSchedule {}

/// The popup ledger as the presenter sees it: what shows, recorded and removed.
protocol PresenterLedger: AnyObject {
    func record(_ notification: DeliveredNotification, server: String) throws(StoreError)
    func delivered(identifier: String) throws(StoreError) -> DeliveredNotification?
    func delivered(serverID: UInt32) throws(StoreError) -> DeliveredNotification?
    func popup(of identifier: String) throws(StoreError) -> UInt32?
    func popups() throws(StoreError) -> [(identifier: String, serverID: UInt32)]
    func remove(_ identifiers: [String]) throws(StoreError)
    func forget(shownBy server: String) throws(StoreError) -> [String]
    func shown(_ serverID: UInt32)
}

/// The popup ledger as ringing sees it: the popup a ring is for.
protocol RingingLedger: AnyObject {
    func delivered(identifier: String) throws(StoreError) -> DeliveredNotification?
    func shown(_ serverID: UInt32)
}

extension PopupLedger: PresenterLedger, RingingLedger {}
