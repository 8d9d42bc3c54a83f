// What the store is asked: the pending requests, their times, summaries and listings, delivered,
// missed and held occurrences (Store.swift opens the file and writes).
import ChimeCenter
import FoundationEssentials
import Timekeeping

extension Store {


    /// Every pending request's next and last occurrence (start-up builds its queue from these).
    public func scheduledTimes() throws(StoreError) -> [ScheduledTime] {
        var times: [ScheduledTime] = []
        try read("""
            SELECT identifier, next_fire, last_fired, quarantine,
                   EXISTS(SELECT 1 FROM disabled WHERE disabled.identifier = pending.identifier),
                   EXISTS(SELECT 1 FROM paused WHERE paused.identifier = pending.identifier)
            FROM pending
            """) { row in
            times.append(ScheduledTime(identifier: row.text(0), nextFire: row.optionalInstant(1), lastFired: row.optionalInstant(2),
                                       quarantine: row.optionalText(3), disabled: row.integer(4) != 0, paused: row.integer(5) != 0))
        }
        return times
    }

    public var pendingCount: Int {
        var count = 0
        try? read("SELECT n FROM temp.row_counts WHERE name = 'pending'") { count = Int($0.integer(0)) }
        return count
    }

    /// The pending request with this identifier, decoded and checked against today's bounds
    /// (`NotificationRequest.validate`): a stored request that no longer passes is `.invalid`.
    public func loadRequest(_ identifier: String) throws(StoreError) -> LoadedRequest? {
        var loaded: LoadedRequest?
        try read("SELECT request FROM pending WHERE identifier = ?", [.text(identifier)]) { row in
            loaded = row.withBytes(0) { bytes in
                // The same bytes as last time: the same request (decoding is most of a fire's work).
                if let known = decodedRequests[identifier], known.bytes.elementsEqual(bytes) { return known.loaded }
                let result: LoadedRequest
                do {
                    let request = try JSONDecoder().decode(NotificationRequest.self, from: Data(bytes))
                    try request.validate()
                    result = .valid(request)
                } catch let error as RequestError {
                    result = .invalid(reason: "its stored form no longer passes: \(error)")
                } catch {
                    result = .invalid(reason: "its stored form cannot be read: \(error)")
                }
                if decodedRequests.count >= Self.decodedRequestsKept { decodedRequests.removeAll(keepingCapacity: true) }
                decodedRequests[identifier] = (Array(bytes), result)
                return result
            }
        }
        return loaded
    }

    /// The pending request with this identifier, if it is there and valid.
    public func request(withIdentifier identifier: String) throws(StoreError) -> NotificationRequest? {
        if case .valid(let request)? = try loadRequest(identifier) { return request }
        return nil
    }

    public func scheduledTime(of identifier: String) throws(StoreError) -> ScheduledTime? {
        var time: ScheduledTime?
        try read("""
            SELECT next_fire, last_fired, quarantine, EXISTS(SELECT 1 FROM disabled WHERE disabled.identifier = pending.identifier),
                   EXISTS(SELECT 1 FROM paused WHERE paused.identifier = pending.identifier)
            FROM pending WHERE identifier = ?
            """, [.text(identifier)]) { row in
            time = ScheduledTime(identifier: identifier, nextFire: row.optionalInstant(0), lastFired: row.optionalInstant(1),
                                 quarantine: row.optionalText(2), disabled: row.integer(3) != 0, paused: row.integer(4) != 0)
        }
        return time
    }

    static let bySoonest = "ORDER BY next_fire IS NULL, next_fire, identifier"
    /// The listing's index: its order, then every column it shows (so it covers the listing).
    static let listingColumns = "next_fire IS NULL, next_fire, identifier, title, label, time_zone, origin, quarantine, rule, sound"

    /// What `chime list` shows of each pending request, soonest first, read without decoding
    /// any request. Held occurrences and quarantine are read in the same pass.
    public func pendingSummaries() throws(StoreError) -> [PendingSummary] {
        var list: [PendingSummary] = []
        do {
            try forEachPendingSummary { list.append($0) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("read", path: path, "\(error)", cause: .encoding)
        }
        return list
    }

    /// The same, one row at a time: a listing of 100,000 alarms goes into its D-Bus reply as
    /// it is read, never held whole. `body` may throw to stop; its error comes out as it is.
    public func forEachPendingSummary(_ body: (PendingSummary) throws -> Void) throws {
        // A side table that is empty (as they mostly are) is not asked about for every row.
        func unlessEmpty(_ table: String, _ term: String, otherwise: String = "NULL") throws(StoreError) -> String {
            var any = false
            try read("SELECT 1 FROM \(table) LIMIT 1") { _ in any = true }
            return any ? term : otherwise
        }
        let held = try unlessEmpty("held", "(SELECT min(due) FROM held WHERE held.identifier = pending.identifier)")
        let retrying = try unlessEmpty("retrying", """
            (SELECT 'attempt ' || attempt || ' failed: ' || reason FROM retrying WHERE retrying.identifier = pending.identifier
             ORDER BY due LIMIT 1)
            """)
        let disabled = try unlessEmpty("disabled", "EXISTS(SELECT 1 FROM disabled WHERE disabled.identifier = pending.identifier)", otherwise: "0")
        let paused = try unlessEmpty("paused", "(SELECT remaining FROM paused WHERE paused.identifier = pending.identifier)")
        let sql = """
            SELECT identifier, next_fire, title, label, time_zone, origin, quarantine, \(held), \(retrying), rule, sound, \(disabled), \(paused)
            FROM pending INDEXED BY pending_listing \(Self.bySoonest)
            """
        do {
            try database.query(sql, [], { row in
            var state = AlarmState.scheduled
            var note = ""
            if let reason = row.optionalText(6) {
                state = .quarantined
                note = reason
            } else if row.integer(11) != 0 {
                state = .disabled
            } else if let remaining = row.optionalInteger(12) {
                state = .paused
                note = "\(TimeSpan.seconds((remaining + 999_999_999) / 1_000_000_000)) left"
            } else if let retry = row.optionalText(8) {
                state = .retrying
                note = retry
            } else if let since = row.optionalInstant(7) {
                state = .held
                note = "no notification server since \(Zone.system().iso8601(since))"
            }
            try body(PendingSummary(
                identifier: row.text(0), nextFire: row.optionalInstant(1), title: row.text(2), label: row.text(3),
                timeZone: row.optionalText(4), origin: row.integer(5) == 1 ? .file : .commandLine, state: state, note: note,
                rule: row.text(9), sound: row.text(10)))
            })
        } catch let error as DatabaseError {
            throw StoreError("read", path: path, error.message, cause: .sqlite(error.code))
        }
    }

    public func deliveredNotifications() throws(StoreError) -> [DeliveredNotification] {
        try deliveredNotifications(where: "", [])
    }

    func deliveredNotifications(where condition: String, _ values: [SQLValue]) throws(StoreError) -> [DeliveredNotification] {
        var list: [DeliveredNotification] = []
        let decoder = JSONDecoder()
        try read("SELECT identifier, server_id, date, content FROM delivered \(condition) ORDER BY date, identifier", values) { row in
            // A record this chime cannot read is still a popup on screen: listed by its title.
            let content = (try? row.withBytes(3) { try decoder.decode(NotificationContent.self, from: Data($0)) })
                ?? NotificationContent(title: row.text(0))
            list.append(DeliveredNotification(identifier: row.text(0), serverID: UInt32(truncatingIfNeeded: row.integer(1)),
                                              date: row.instant(2), content: content))
        }
        return list
    }

    /// Each popup shown, by its alarm, with its number (nothing of their records is read).
    func deliveredPopups() throws(StoreError) -> [(identifier: String, serverID: UInt32)] {
        var list: [(String, UInt32)] = []
        try read("SELECT identifier, server_id FROM delivered ORDER BY date, identifier") { row in
            list.append((row.text(0), UInt32(truncatingIfNeeded: row.integer(1))))
        }
        return list
    }

    /// Each popup shown, by its alarm: its number, when it was shown and its title. Only the title is
    /// read of each record (listing hundreds of popups decoded each whole, twice a call).
    func deliveredTitles() throws(StoreError) -> [(identifier: String, serverID: UInt32, date: Instant, title: String)] {
        struct Titled: Decodable { var title: String }
        var list: [(String, UInt32, Instant, String)] = []
        let decoder = JSONDecoder()
        try read("SELECT identifier, server_id, date, content FROM delivered ORDER BY date, identifier") { row in
            let title = (try? row.withBytes(3) { try decoder.decode(Titled.self, from: Data($0)) })?.title ?? row.text(0)
            list.append((row.text(0), UInt32(truncatingIfNeeded: row.integer(1)), row.instant(2), title))
        }
        return list
    }

    public func delivered(identifier: String) throws(StoreError) -> DeliveredNotification? {
        try deliveredNotifications(where: "WHERE identifier = ?", [.text(identifier)]).first
    }

    /// The number of the popup shown for an alarm (its record's content is not decoded).
    public func popup(of identifier: String) throws(StoreError) -> UInt32? {
        var id: UInt32?
        try read("SELECT server_id FROM delivered WHERE identifier = ?", [.text(identifier)]) { id = UInt32(truncatingIfNeeded: $0.integer(0)) }
        return id
    }

    public func delivered(serverID: UInt32) throws(StoreError) -> DeliveredNotification? {
        try deliveredNotifications(where: "WHERE server_id = ?", [.integer(Int64(serverID))]).first
    }

    /// The alarms with an occurrence skipped ahead of `now` (`chime skip`, a notice's Skip this one),
    /// each with the earliest such occurrence. Found by a byte search of the stored requests: only
    /// those that have skips are decoded.
    public func skippedAhead(of now: Instant) throws(StoreError) -> [(identifier: String, occurrence: Instant)] {
        var list: [(String, Instant)] = []
        try read("SELECT identifier, request FROM pending WHERE quarantine IS NULL AND instr(request, '\"skipped\":[') > 0 ORDER BY identifier") { row in
            guard let request = try? JSONDecoder().decode(NotificationRequest.self, from: Data(row.text(1).utf8)),
                  let first = request.trigger.skipped.filter({ $0 > now }).min() else { return }
            list.append((row.text(0), first))
        }
        return list
    }

    public func missedOccurrences() throws(StoreError) -> [MissedOccurrence] {
        var list: [MissedOccurrence] = []
        try read("SELECT identifier, due, recorded, reason FROM missed ORDER BY due, identifier") { row in
            list.append(MissedOccurrence(identifier: row.text(0), due: row.instant(1), recorded: row.instant(2), reason: row.optionalText(3)))
        }
        return list
    }

    /// Occurrences held for a notification server, oldest first.
    public func held() throws(StoreError) -> [(identifier: String, due: Instant)] {
        var list: [(String, Instant)] = []
        try read("SELECT identifier, due FROM held ORDER BY due, identifier") { list.append(($0.text(0), $0.instant(1))) }
        return list
    }

    public func isHeld(_ identifier: String) throws(StoreError) -> Bool {
        var found = false
        try read("SELECT 1 FROM held WHERE identifier = ? LIMIT 1", [.text(identifier)]) { _ in found = true }
        return found
    }
}
