// What each part of the daemon may do with the store: a face over its own tables. A part holds
// its face, never the `Store`, so the compiler keeps it out of other parts' tables; what it needs
// of another part's state, it asks that part. One transaction may span parts (`write` joins the
// transaction already open), so an occurrence shown, its held row released and its one-off request
// finished still commit together.
//
// The tables and their owners:
// - `pending`, `paused`, `disabled`, `crashes` (with the quarantine), `meta`: the schedule.
// - `held`, `retrying`: the presenter.
// - `delivered`: the popup ledger.
// - `ringing`: ringing. `raised_outputs`: the speaker.
// - `file_alarms`: the alarm file follower.
// - `missed`: a journal. Every part that lets an occurrence go unshown appends to it (the schedule,
//   the presenter, ringing); only the D-Bus service reads it.
import ChimeCalendars
import ChimeCenter
import Timekeeping

/// One transaction over a part's tables; a write inside another joins it.
protocol StoreTransactions: AnyObject {
    func write(_ durability: Store.Durability, _ body: () throws(StoreError) -> Void) throws(StoreError)
}

extension StoreTransactions {
    func write(_ body: () throws(StoreError) -> Void) throws(StoreError) { try write(.acknowledged, body) }
}

/// The missed journal, for the parts that let an occurrence go unshown.
protocol MissedJournal: StoreTransactions {
    func recordMissed(_ occurrences: [MissedOccurrence]) throws(StoreError)
}

/// The schedule's tables: the pending requests and their next fires, paused and disabled alarms,
/// the crashes charged to them and the quarantine, the sequence identifiers are made from.
protocol ScheduleStore: MissedJournal {
    func plan(_ key: Store.PlanKey) throws(StoreError) -> String?
    func setPlan(_ key: Store.PlanKey, _ value: String) throws(StoreError)
    func planTime(_ key: Store.PlanKey) throws(StoreError) -> Instant?
    func setPlanTime(_ key: Store.PlanKey, _ time: Instant) throws(StoreError)
    func snoozes() throws(StoreError) -> [String: Instant]
    func setSnoozed(_ identifier: String, until: Instant) throws(StoreError)
    func add(_ request: NotificationRequest, nextFire: Instant?, origin: AlarmOrigin, json: String?) throws(StoreError)
    func add(_ record: ReaderRecord, nextFire: Instant?, fresh: Bool) throws(StoreError)
    /// (It looks at the presenter's tables too, only to say whether they hold anything.)
    func presence(of identifier: String) throws(StoreError) -> (origin: AlarmOrigin?, state: Bool)
    func update(_ request: NotificationRequest, nextFire: Instant?) throws(StoreError)
    @discardableResult
    func remove(_ identifiers: [String]) throws(StoreError) -> [String]
    @discardableResult
    func removeAll() throws(StoreError) -> [String]
    func setNextFire(_ identifier: String, _ next: Instant?, handled: Instant?) throws(StoreError)
    func setPaused(_ identifier: String, remaining: TimeSpan?) throws(StoreError)
    func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)]
    func daysOffRecord(_ key: String) throws(StoreError) -> String?
    func setDaysOffRecord(_ key: String, _ value: String) throws(StoreError)
    func setDisabled(_ identifier: String, _ disabled: Bool) throws(StoreError)
    func nextWake(handset: Bool) throws(StoreError) -> (identifier: String, time: Instant, title: String)?
    func nextSequenceNumber() throws(StoreError) -> Int64
    func identifierInUse(_ identifier: String) throws(StoreError) -> Bool
    func quarantine(_ identifier: String, reason: String) throws(StoreError)
    func recordCrash(whileFiring identifier: String) throws(StoreError) -> Int
    func crashCount(_ identifier: String) throws(StoreError) -> Int
    func suspectDefinition(_ identifier: String) throws(StoreError) -> String?
    func setSuspectDefinition(_ identifier: String, _ definition: String) throws(StoreError)
    func clearCrashes(_ identifier: String) throws(StoreError)
    func suspects(crashedAtLeast crashes: Int) throws(StoreError) -> [String]
    func isFileAlarm(_ identifier: String) throws(StoreError) -> Bool
    func origin(of identifier: String) throws(StoreError) -> AlarmOrigin?
    func hasReminders(_ identifier: String) throws(StoreError) -> Bool
    func identifiersWithReminders() throws(StoreError) -> Set<String>
    func scheduledTimes() throws(StoreError) -> [ScheduledTime]
    func scheduledTime(of identifier: String) throws(StoreError) -> ScheduledTime?
    func loadRequest(_ identifier: String) throws(StoreError) -> LoadedRequest?
    func request(withIdentifier identifier: String) throws(StoreError) -> NotificationRequest?
    func makeDurable() throws(StoreError)
}

/// The presenter's tables: occurrences held for a server, and those to be tried again.
protocol PresenterStore: MissedJournal {
    func hold(_ identifier: String, due: Instant) throws(StoreError)
    func release(_ identifier: String, due: Instant) throws(StoreError)
    func held() throws(StoreError) -> [(identifier: String, due: Instant)]
    func setRetrying(_ retry: Retry) throws(StoreError)
    func releaseRetrying(_ identifier: String, due: Instant) throws(StoreError)
    func retrying() throws(StoreError) -> [Retry]
    func isDetached(_ identifier: String) throws(StoreError) -> Bool
}

/// The ledger's table: the popups shown, by which server connection.
protocol LedgerStore: StoreTransactions {
    func recordDelivered(_ notification: DeliveredNotification, server: String) throws(StoreError)
    func deliveredNotifications() throws(StoreError) -> [DeliveredNotification]
    func deliveredPopups() throws(StoreError) -> [(identifier: String, serverID: UInt32)]
    func deliveredTitles() throws(StoreError) -> [(identifier: String, serverID: UInt32, date: Instant, title: String)]
    func delivered(identifier: String) throws(StoreError) -> DeliveredNotification?
    func popup(of identifier: String) throws(StoreError) -> UInt32?
    func delivered(serverID: UInt32) throws(StoreError) -> DeliveredNotification?
    func removeDelivered(_ identifiers: [String]) throws(StoreError)
    @discardableResult
    func forgetDelivered(shownBy server: String) throws(StoreError) -> [String]
    @discardableResult
    func forgetDelivered(notShownBy current: String?) throws(StoreError) -> [String]
}

/// Ringing's table: what rings, and until when.
protocol RingingStore: MissedJournal {
    func setRing(_ ring: StoredRing) throws(StoreError)
    func removeRing(_ identifier: String) throws(StoreError)
    func rings() throws(StoreError) -> [StoredRing]
}

/// The speaker's table: outputs it raised for `--insist`, to be put back.
protocol SpeakerStore: StoreTransactions {
    func setRaisedOutput(_ output: RaisedOutput) throws(StoreError)
    func removeRaisedOutput(_ sink: String) throws(StoreError)
    func raisedOutputs() throws(StoreError) -> [RaisedOutput]
}

/// The alarm file follower's table: the definition of each alarm of the file, as last applied.
protocol AlarmFileStore: StoreTransactions {
    func setFileDefinition(_ identifier: String, _ definition: String?) throws(StoreError)
    func fileDefinitions(after identifier: String?, limit: Int, _ body: (String, String) -> Void) throws(StoreError)
    func fileAlarmCount() throws(StoreError) -> Int
    func makeDurable() throws(StoreError)
}

/// What the writer of the person's calendars keeps (`OwnCalendars`).
protocol OwnCalendarsStore: AnyObject {
    /// What calendars cannot carry of the alarms this machine put into them (`KeptHere`).
    func keptHere() throws(StoreError) -> [String: (request: String, settings: String)]
    func setKeptHere(_ identifier: String, request: String?, settings: String) throws(StoreError)
    /// The file's alarms this machine put into calendars (`[[alarm]] calendar`), by the digest of
    /// their definition when written.
    func placedFromFile() throws(StoreError) -> [String: String]
    func setPlacedFromFile(_ identifier: String, digest: String?) throws(StoreError)
}

/// What the D-Bus service reads for its listings and its status (it writes nothing itself).
protocol ListingStore: AnyObject {
    func forEachPendingSummary(_ body: (PendingSummary) throws -> Void) throws
    func missedOccurrences() throws(StoreError) -> [MissedOccurrence]
    func skippedAhead(of now: Instant) throws(StoreError) -> [(identifier: String, occurrence: Instant)]
    func quarantined() throws(StoreError) -> [(identifier: String, reason: String)]
    func pausedTimers() throws(StoreError) -> [(identifier: String, remaining: TimeSpan)]
    var pendingCount: Int { get }
    var path: String { get }
    var warnings: [String] { get }
}

extension Store: ScheduleStore, PresenterStore, LedgerStore, RingingStore, SpeakerStore, AlarmFileStore, OwnCalendarsStore, ListingStore {}

extension ScheduleStore {
    func add(_ request: NotificationRequest, nextFire: Instant?, origin: AlarmOrigin = .commandLine) throws(StoreError) {
        try add(request, nextFire: nextFire, origin: origin, json: nil)
    }

    func setNextFire(_ identifier: String, _ next: Instant?) throws(StoreError) { try setNextFire(identifier, next, handled: nil) }
}
