// The store's records beside the pending requests: quarantine, the alarm file's definitions, what
// rings, the outputs an insisting sound raised (Store.swift opens the file and writes).
import ChimeCenter
import Notifications
import FoundationEssentials
import Timekeeping

extension Store {
    // MARK: - Quarantine

    /// Keeps a request but never fires it again (until it is replaced or cancelled), with why.
    public func quarantine(_ identifier: String, reason: String) throws(StoreError) {
        try write { () throws(StoreError) in
            try run("UPDATE pending SET quarantine = ?, next_fire = NULL WHERE identifier = ?", [.text(reason), .text(identifier)])
            try run("DELETE FROM held WHERE identifier = ?", [.text(identifier)])
            // Its crash count stays: an alarm-file alarm quarantined before it was ever stored is
            // known by that count alone (replacing or removing the request clears it).
        }
    }

    /// Notes that the daemon crashed while firing `identifier`; returns how often it has.
    public func recordCrash(whileFiring identifier: String) throws(StoreError) -> Int {
        var crashes = 0
        try write { () throws(StoreError) in
            try run("INSERT INTO suspects(identifier, crashes) VALUES (?, 1) ON CONFLICT(identifier) DO UPDATE SET crashes = crashes + 1",
                    [.text(identifier)])
            try read("SELECT crashes FROM suspects WHERE identifier = ?", [.text(identifier)]) { crashes = Int($0.integer(0)) }
        }
        return crashes
    }

    /// How often the daemon crashed while working on `identifier` (firing it, or computing its
    /// next fire) and has not since done so cleanly.
    public func crashCount(_ identifier: String) throws(StoreError) -> Int {
        var crashes = 0
        try read("SELECT crashes FROM suspects WHERE identifier = ?", [.text(identifier)]) { crashes = Int($0.integer(0)) }
        return crashes
    }

    /// The alarm-file definition an alarm had when it was left out for crashes (nil: none noted).
    public func suspectDefinition(_ identifier: String) throws(StoreError) -> String? {
        var definition: String?
        try read("SELECT definition FROM suspects WHERE identifier = ?", [.text(identifier)]) { definition = $0.optionalText(0) }
        return definition
    }

    /// Notes the definition an alarm-file alarm had when it was left out for crashes.
    public func setSuspectDefinition(_ identifier: String, _ definition: String) throws(StoreError) {
        try run("UPDATE suspects SET definition = ? WHERE identifier = ?", [.text(definition), .text(identifier)])
    }

    /// Forgets earlier crashes while firing `identifier` (it has fired cleanly since).
    public func clearCrashes(_ identifier: String) throws(StoreError) {
        try run("DELETE FROM suspects WHERE identifier = ?", [.text(identifier)])
    }

    /// Quarantined requests and why, by identifier.
    public func quarantined() throws(StoreError) -> [(identifier: String, reason: String)] {
        var list: [(String, String)] = []
        try read("SELECT identifier, quarantine FROM pending WHERE quarantine IS NOT NULL ORDER BY identifier") {
            list.append(($0.text(0), $0.text(1)))
        }
        return list
    }

    // MARK: - The alarm file's alarms

    /// Each alarm-file alarm's definition as last applied, by identifier.
    public func fileDefinitions() throws(StoreError) -> [String: String] {
        var definitions: [String: String] = [:]
        try read("SELECT identifier, definition FROM file_alarms") { definitions[$0.text(0)] = $0.text(1) }
        return definitions
    }

    /// Up to `limit` alarm-file definitions after `identifier` (nil: from the first), in order of
    /// identifier: the known definitions are read a slice at a time, never all at once.
    public func fileDefinitions(after identifier: String?, limit: Int, _ body: (String, String) -> Void) throws(StoreError) {
        try read("SELECT identifier, definition FROM file_alarms WHERE identifier > ? ORDER BY identifier LIMIT ?",
                 [.text(identifier ?? ""), .integer(Int64(limit))]) { body($0.text(0), $0.text(1)) }
    }

    /// How many alarm-file alarms have a definition on record.
    public func fileAlarmCount() throws(StoreError) -> Int {
        var count = 0
        try read("SELECT n FROM temp.row_counts WHERE name = 'file_alarms'") { count = Int($0.integer(0)) }
        return count
    }

    /// Every suspect the daemon crashed on at least `crashes` times, by the name it was noted under.
    public func suspects(crashedAtLeast crashes: Int) throws(StoreError) -> [String] {
        var names: [String] = []
        try read("SELECT identifier FROM suspects WHERE crashes >= ?", [.integer(Int64(crashes))]) { names.append($0.text(0)) }
        return names
    }

    /// Records (or, with nil, forgets) the definition applied for an alarm-file alarm.
    public func setFileDefinition(_ identifier: String, _ definition: String?) throws(StoreError) {
        if let definition {
            try run(Hot.setFileDefinition, [.text(identifier), .text(definition)])
        } else {
            try run(Hot.removeFileDefinition, [.text(identifier)])
        }
    }

    /// Whether `identifier` belongs to the alarm file (pending or not: a one-off from the file
    /// that has fired still names the file's alarm).
    public func isFileAlarm(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM file_alarms WHERE identifier = ? LIMIT 1", [.text(identifier)]) { _ in found = true }
        return found
    }

    /// Where a pending request came from; nil when nothing is pending under `identifier`.
    public func origin(of identifier: String) throws(StoreError) -> AlarmOrigin? {
        var origin: AlarmOrigin?
        try read("SELECT origin FROM pending WHERE identifier = ?", [.text(identifier)]) { origin = $0.integer(0) == 1 ? .file : .commandLine }
        return origin
    }

    /// Whether the pending request has reminders or a notice (its trigger's JSON has them only when it does).
    public func hasReminders(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM pending WHERE identifier = ? AND quarantine IS NULL AND (instr(request, '\"reminders\":[') > 0 OR instr(request, '\"notice\":') > 0)",
                 [.text(identifier)]) { _ in found = true }
        return found
    }

    /// The pending requests that have reminders.
    public func identifiersWithReminders() throws(StoreError) -> Set<String> {
        var found: Set<String> = []
        try read("SELECT identifier FROM pending WHERE quarantine IS NULL AND (instr(request, '\"reminders\":[') > 0 OR instr(request, '\"notice\":') > 0)", []) { row in
            found.insert(row.text(0))
        }
        return found
    }

    /// Changes what is stored of a pending request (its skips) and its next occurrence, keeping its
    /// history, its origin and whether it is switched off.
    public func update(_ request: NotificationRequest, nextFire: Instant?) throws(StoreError) {
        let json = Self.encode(request)
        try run("UPDATE pending SET request = ?1, next_fire = ?2 WHERE identifier = ?3 AND quarantine IS NULL",
                [.text(json), .instant(nextFire), .text(request.identifier)])
    }

    /// Moves a request to its next occurrence (nil: none), noting `handled` as done.
    public func setNextFire(_ identifier: String, _ next: Instant?, handled: Instant? = nil) throws(StoreError) {
        try run("""
            UPDATE pending SET next_fire = ?1, last_fired = max(coalesce(last_fired, ?2), coalesce(?2, last_fired))
            WHERE identifier = ?3 AND quarantine IS NULL
            """, [.instant(next), .instant(handled), .text(identifier)])
        // A snooze that rang is over.
        if let handled { try run("DELETE FROM snoozed WHERE identifier = ? AND until <= ?", [.text(identifier), .integer(handled.nanosecondsSinceEpoch)]) }
    }

    /// Records what the server connection `server` (its unique name) is showing.
    public func recordDelivered(_ notification: DeliveredNotification, server: String = "") throws(StoreError) {
        let json: String
        do {
            json = String(decoding: try JSONEncoder().encode(notification.content), as: UTF8.self)
        } catch {
            throw StoreError("encode a delivery for", path: notification.identifier, "\(error)", cause: .encoding)
        }
        try run("INSERT OR REPLACE INTO delivered(identifier, server_id, date, content, server) VALUES (?, ?, ?, ?, ?)",
                [.text(notification.identifier), .integer(Int64(notification.serverID)), .instant(notification.date), .text(json),
                 .text(server)])
    }

    /// Forgets what `server` showed (it left the bus: its popups are gone); returns their identifiers.
    @discardableResult
    public func forgetDelivered(shownBy server: String) throws(StoreError) -> [String] {
        var gone: [String] = []
        try read("SELECT identifier FROM delivered WHERE server = ?", [.text(server)]) { gone.append($0.text(0)) }
        if !gone.isEmpty { try run("DELETE FROM delivered WHERE server = ?", [.text(server)]) }
        return gone
    }

    /// At start: forgets what servers other than `current` (the owner of the name now; nil: none)
    /// showed. Records from before chime 0.2 name no server and stay while some server runs.
    @discardableResult
    public func forgetDelivered(notShownBy current: String?) throws(StoreError) -> [String] {
        var gone: [String] = []
        let condition = current == nil ? "" : "WHERE server <> '' AND server <> ?"
        let values: [SQLValue] = current.map { [.text($0)] } ?? []
        try read("SELECT identifier FROM delivered \(condition)", values) { gone.append($0.text(0)) }
        if !gone.isEmpty { try run("DELETE FROM delivered \(condition)", values) }
        return gone
    }

    // MARK: - Rings

    /// Records that `ring` rings (replacing what rang for its alarm before).
    public func setRing(_ ring: StoredRing) throws(StoreError) {
        try run("INSERT OR REPLACE INTO ringing(identifier, server_id, due, started, until_time, capabilities) VALUES (?, ?, ?, ?, ?, ?)",
                [.text(ring.identifier), .integer(Int64(ring.serverID)), .instant(ring.due), .instant(ring.started),
                 .instant(ring.until), .text(ring.capabilities.map(\.rawValue).joined(separator: ","))])
    }

    /// The alarm rings no longer (answered, cancelled, rung out).
    public func removeRing(_ identifier: String) throws(StoreError) {
        try run("DELETE FROM ringing WHERE identifier = ?", [.text(identifier)])
    }

    /// What rang when the daemon last stopped.
    public func rings() throws(StoreError) -> [StoredRing] {
        var found: [StoredRing] = []
        try read("SELECT identifier, server_id, due, started, until_time, capabilities FROM ringing ORDER BY identifier") { row in
            found.append(StoredRing(identifier: row.text(0), serverID: UInt32(truncatingIfNeeded: row.integer(1)), due: row.instant(2),
                                    started: row.instant(3), until: row.instant(4),
                                    capabilities: row.text(5).split(separator: ",").map { Capability(rawValue: String($0)) }))
        }
        return found
    }

    // MARK: - Raised outputs

    /// Records an output raised for an insisting alarm, and how it was before.
    public func setRaisedOutput(_ output: RaisedOutput) throws(StoreError) {
        func text(_ volumes: [UInt32]) -> SQLValue { .text(volumes.map(String.init).joined(separator: ",")) }
        try run("INSERT OR REPLACE INTO raised_outputs(sink, muted, volumes, raised_volumes) VALUES (?, ?, ?, ?)",
                [.text(output.sink), .integer(output.muted ? 1 : 0), text(output.volumes), text(output.raisedVolumes)])
    }

    /// The output was put back (or is gone).
    public func removeRaisedOutput(_ sink: String) throws(StoreError) {
        try run("DELETE FROM raised_outputs WHERE sink = ?", [.text(sink)])
    }

    /// Outputs raised and not yet put back.
    public func raisedOutputs() throws(StoreError) -> [RaisedOutput] {
        func volumes(_ text: String) -> [UInt32] { text.split(separator: ",").compactMap { UInt32($0) } }
        var found: [RaisedOutput] = []
        try read("SELECT sink, muted, volumes, raised_volumes FROM raised_outputs ORDER BY sink") { row in
            found.append(RaisedOutput(sink: row.text(0), muted: row.integer(1) != 0, volumes: volumes(row.text(2)),
                                      raisedVolumes: volumes(row.text(3))))
        }
        return found
    }

    public func removeDelivered(_ identifiers: [String]) throws(StoreError) {
        try write { () throws(StoreError) in
            for identifier in identifiers { try run("DELETE FROM delivered WHERE identifier = ?", [.text(identifier)]) }
        }
    }

    public func recordMissed(_ occurrences: [MissedOccurrence]) throws(StoreError) {
        try write { () throws(StoreError) in
            for occurrence in occurrences {
                try run("INSERT OR IGNORE INTO missed(identifier, due, recorded, reason) VALUES (?, ?, ?, ?)",
                        [.text(occurrence.identifier), .instant(occurrence.due), .instant(occurrence.recorded),
                         occurrence.reason.map(SQLValue.text) ?? .null])
            }
        }
    }

    /// Notes (or updates) an occurrence the server failed to show, to be tried again at `nextTry`.
    public func setRetrying(_ retry: Retry) throws(StoreError) {
        try run("INSERT OR REPLACE INTO retrying(identifier, due, attempt, next_try, reason) VALUES (?, ?, ?, ?, ?)",
                [.text(retry.identifier), .instant(retry.due), .integer(Int64(retry.attempt)), .instant(retry.nextTry), .text(retry.reason)])
    }

    /// Forgets a retried occurrence (shown, or given up as missed).
    public func releaseRetrying(_ identifier: String, due: Instant) throws(StoreError) {
        try run("DELETE FROM retrying WHERE identifier = ? AND due = ?", [.text(identifier), .instant(due)])
    }

    /// Occurrences waiting to be tried again, soonest first.
    public func retrying() throws(StoreError) -> [Retry] {
        var list: [Retry] = []
        try read("SELECT identifier, due, attempt, next_try, reason FROM retrying ORDER BY next_try, identifier") { row in
            list.append(Retry(identifier: row.text(0), due: row.instant(1), attempt: Int(row.integer(2)), nextTry: row.instant(3),
                              reason: row.text(4)))
        }
        return list
    }

    /// Whether an occurrence of `identifier` is held for a server or waiting to be retried (its
    /// request must stay pending until that occurrence is shown).
    public func isDetached(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM held WHERE identifier = ?1 UNION ALL SELECT 1 FROM retrying WHERE identifier = ?1 LIMIT 1",
                 [.text(identifier)]) { _ in found = true }
        return found
    }

    /// Notes an occurrence due while no server ran.
    public func hold(_ identifier: String, due: Instant) throws(StoreError) {
        try run("INSERT OR IGNORE INTO held(identifier, due) VALUES (?, ?)", [.text(identifier), .instant(due)])
    }

    public func release(_ identifier: String, due: Instant) throws(StoreError) {
        try run("DELETE FROM held WHERE identifier = ? AND due = ?", [.text(identifier), .instant(due)])
    }
}
