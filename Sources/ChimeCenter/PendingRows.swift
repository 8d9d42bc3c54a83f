// `ListPendingFile`: the pending list beside the bus. 100,000 alarms as one `ListPending` reply is
// 1.1 million fields that libdbus marshals and checks in the daemon, the bus checks again and the
// client takes apart; the same rows written into a sealed file in memory (memfd) cross the bus as
// one descriptor and are read at memory speed. The rows are `ListPending`'s fields in its order
// (docs/dbus-interface.md):
//
//     file   = "CHIMEPL1" *row
//     row    = string int64 string string string string string string string string int64
//     string = length(uint32, little-endian) UTF-8 bytes
//     int64  = signed, little-endian
import DBus
import Timekeeping
#if canImport(Glibc)
import Glibc
#endif

public enum PendingRows {
    /// What a listing starts with (its format and version).
    public static let magic: [UInt8] = Array("CHIMEPL1".utf8)
    /// The largest listing read or written, in bytes (about 5 million alarms).
    public static let maximumBytes = 1 << 30

    /// Appends one row.
    public static func append(_ row: PendingSummary, to out: inout [UInt8]) {
        func int64(_ value: Int64) {
            withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
        }
        func string(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: bytes.count).littleEndian) { out.append(contentsOf: $0) }
                out.append(contentsOf: bytes)
            }
        }
        string(row.identifier)
        int64(row.nextFire?.seconds ?? -1)
        string(row.title)
        string(row.label)
        string(row.timeZone ?? "")
        string(row.origin.rawValue)
        string(row.state.rawValue)
        string(row.note)
        string(row.rule)
        string(row.sound)
        int64(row.nextFire?.nanosecondsSinceEpoch ?? -1)
    }

    /// The rows of a listing; a listing that is cut short, not UTF-8, or not one is refused.
    public static func read(_ bytes: UnsafeRawBufferPointer) throws(DBusError) -> [PendingSummary] {
        func refuse(_ why: String) -> DBusError { DBusError(name: .invalidArgs, message: "the daemon's listing is not readable: \(why)") }
        guard bytes.count >= magic.count, magic.indices.allSatisfy({ bytes[$0] == magic[$0] }) else {
            throw refuse("it does not start with \(String(decoding: magic, as: UTF8.self))")
        }
        var at = magic.count
        func int64() throws(DBusError) -> Int64 {
            guard bytes.count - at >= 8 else { throw refuse("it ends inside a row") }
            var value: Int64 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + 8)])) }
            at += 8
            return Int64(littleEndian: value)
        }
        func string() throws(DBusError) -> String {
            guard bytes.count - at >= 4 else { throw refuse("it ends inside a row") }
            var length: UInt32 = 0
            withUnsafeMutableBytes(of: &length) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + 4)])) }
            at += 4
            let count = Int(UInt32(littleEndian: length))
            guard bytes.count - at >= count else { throw refuse("it ends inside a row") }
            let field = UnsafeRawBufferPointer(rebasing: bytes[at..<(at + count)])
            // Decoded, then compared with what was read: a field that is not UTF-8 comes out
            // repaired, so different. (String(validating:) looks up generic metadata at each call.)
            var text = String(decoding: field, as: UTF8.self)
            let valid = text.withUTF8 { decoded in
                decoded.count == count && (count == 0 || memcmp(decoded.baseAddress!, field.baseAddress!, count) == 0)
            }
            guard valid else { throw refuse("a field is not UTF-8") }
            at += count
            return text
        }
        var rows: [PendingSummary] = []
        while at < bytes.count {
            let identifier = try string()
            _ = try int64()  // whole seconds, as ListPending has them; the exact instant follows
            let title = try string(), label = try string(), zone = try string()
            guard let origin = AlarmOrigin(rawValue: try string()), let state = AlarmState(rawValue: try string()) else {
                throw refuse("an origin or state chime does not know")
            }
            let note = try string(), rule = try string(), sound = try string()
            let nanoseconds = try int64()
            rows.append(PendingSummary(
                identifier: identifier, nextFire: nanoseconds >= 0 ? Instant(nanosecondsSinceEpoch: nanoseconds) : nil, title: title,
                label: label, timeZone: zone.isEmpty ? nil : zone, origin: origin, state: state, note: note, rule: rule, sound: sound))
        }
        return rows
    }
}
