// What kind of machine this is, asked once at start: a phone (`handset`) suspends itself when
// idle, so there every alarm with a sound wakes it unless told not to (Waking.swift).
//
// hostnamed's `Chassis` property answers, on the system bus (a pending call with a deadline:
// nothing waits on it). Without hostnamed, what it reads itself: `CHASSIS=` in /etc/machine-info
// (the administrator's word), then the device tree's `chassis-type` (a phone's firmware says
// `handset`). DMI's chassis types have no phone among them.
import Posix

enum Chassis {
    /// The chassis the files say (nil: they say nothing): `machineInfo` first, then `deviceTree`.
    static func fromFiles(machineInfo: String = "/etc/machine-info",
                          deviceTree: String = "/sys/firmware/devicetree/base/chassis-type") -> String? {
        if let bytes = try? Sys.readFile(machineInfo, limit: 64 * 1024) {
            for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
                let text = line.drop(while: { $0 == " " || $0 == "\t" })
                guard text.hasPrefix("CHASSIS=") else { continue }
                var value = text.dropFirst("CHASSIS=".count)
                if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                    value = value.dropFirst().dropLast()
                }
                if !value.isEmpty { return String(value) }
            }
        }
        if let bytes = try? Sys.readFile(deviceTree, limit: 256) {
            // A device-tree string: NUL-terminated.
            let value = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self).split(whereSeparator: \.isWhitespace).first
            if let value { return String(value) }
        }
        return nil
    }

    static let handset = "handset"
}
