import ChimeCenter
import DBus
import Foundation
import Testing
import Timekeeping

/// The one typed client is kept in step with the interface's XML (packaging/org.chime.Scheduler1.xml,
/// the daemon's source of truth): every method has one `Scheduler1` call with the XML's signatures,
/// whose arguments are what it says, every signal one `SchedulerSignal`; and no client names a member
/// itself.
@Suite struct SchedulerCallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// (name, in signature, out signature) of each method, and (name, signature) of each signal, in the XML.
    static func interface() throws -> (methods: [String: (in: String, out: String)], signals: [String: String]) {
        let xml = try String(contentsOf: root.appendingPathComponent("packaging/org.chime.Scheduler1.xml"), encoding: .utf8)
        var methods: [String: (in: String, out: String)] = [:]
        var signals: [String: String] = [:]
        var current: (kind: String, name: String)?
        var inputs = "", outputs = ""
        func value(_ attribute: String, in line: Substring) -> String? {
            guard let start = line.range(of: "\(attribute)=\"") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }
        for line in xml.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("<method ") || trimmed.hasPrefix("<signal ") {
                current = (trimmed.hasPrefix("<method") ? "method" : "signal", value("name", in: line) ?? "")
                inputs = ""
                outputs = ""
            } else if trimmed.hasPrefix("<arg "), let type = value("type", in: line) {
                if value("direction", in: line) == "out" { outputs += type } else { inputs += type }
            }
            if let open = current, trimmed.hasPrefix("</\(open.kind)>") || (trimmed.hasPrefix("<\(open.kind) ") && trimmed.hasSuffix("/>")) {
                if open.kind == "method" { methods[open.name] = (inputs, outputs) } else { signals[open.name] = inputs }
                current = nil
            }
        }
        return (methods, signals)
    }

    struct Described {
        let member: String, inSignature: String, outSignature: String, sent: String
        init<T>(_ call: SchedulerCall<T>) {
            member = call.member.rawValue
            inSignature = call.inSignature
            outSignature = call.outSignature
            sent = call.arguments.map(\.signature).joined()
        }
    }

    /// One of each call, with arguments of every kind it takes.
    static var calls: [Described] {
        let request = NotificationRequest(identifier: "tea", content: NotificationContent(title: "Tea"),
                                          trigger: .timeInterval(.minutes(5), anchor: Instant(seconds: 1_800_000_000)))
        return [
            Described(Scheduler1.add(request)), Described(Scheduler1.addAll([request, request])), Described(Scheduler1.addAll([])),
            Described(Scheduler1.remove(["a", "b"])), Described(Scheduler1.disable(["a"])), Described(Scheduler1.enable(["a"])),
            Described(Scheduler1.skip("a", undo: true)), Described(Scheduler1.pause(["a"])), Described(Scheduler1.resume(["a"])),
            Described(Scheduler1.listPaused), Described(Scheduler1.answer("a", action: "snooze")), Described(Scheduler1.snooze("a", for: .seconds(300))), Described(Scheduler1.previewSound("bell")),
            Described(Scheduler1.playSound("bell")), Described(Scheduler1.playSound("bell", volume: 50, fade: .seconds(3), for: .seconds(9))),
            Described(Scheduler1.stopSound(3)), Described(Scheduler1.listRinging), Described(Scheduler1.listTimerPresets),
            Described(Scheduler1.startTimer("tea")), Described(Scheduler1.removeAll), Described(Scheduler1.get("a")),
            Described(Scheduler1.listPending), Described(Scheduler1.listPendingFile), Described(Scheduler1.listDelivered), Described(Scheduler1.closeDelivered(["a"])),
            Described(Scheduler1.listMissed), Described(Scheduler1.settings), Described(Scheduler1.status),
            Described(Scheduler1.alarmFileStatus), Described(Scheduler1.reloadAlarmFile),
            Described(Scheduler1.occurrencesOff("a")), Described(Scheduler1.listAway), Described(Scheduler1.listSkipped), Described(Scheduler1.listCalendars),
            Described(Scheduler1.setAway(from: nil, until: Instant(seconds: 1_800_000_000), identifiers: ["a"])), Described(Scheduler1.endAway([])),
        ]
    }

    @Test func everyMethodHasOneTypedCallWithTheXMLsSignatures() throws {
        let methods = try Self.interface().methods
        #expect(methods.count >= 20, "read \(methods.count) methods from the XML")
        #expect(Set(Self.calls.map(\.member)) == Set(methods.keys), "calls without a method, or methods without a call")
        for call in Self.calls {
            let xml = try #require(methods[call.member], "\(call.member) is not in the XML")
            #expect(call.inSignature == xml.in, "\(call.member) is sent as (\(call.inSignature)), the XML says (\(xml.in))")
            #expect(call.outSignature == xml.out, "\(call.member) is read as (\(call.outSignature)), the XML says (\(xml.out))")
            #expect(call.sent == xml.in, "\(call.member)'s arguments are (\(call.sent)), the XML says (\(xml.in))")
        }
    }

    @Test func everySignalIsOneSchedulerSignalWithTheXMLsSignature() throws {
        let signals = try Self.interface().signals
        #expect(Set(SchedulerSignal.allCases.map(\.rawValue)) == Set(signals.keys))
        for signal in SchedulerSignal.allCases {
            #expect(signal.signature == signals[signal.rawValue], "\(signal.rawValue)")
        }
    }

    /// Clients (the command line, the app and its model, UserNotifications) name no member of the
    /// interface as a string: each call and signal goes through `Scheduler1` and `SchedulerSignal`.
    /// (Words shown to people, `tr("Pause")`, are not member names.)
    @Test func noClientNamesAMember() throws {
        let (methods, signals) = try Self.interface()
        let members = Set(methods.keys).union(signals.keys)
        var found: [String] = []
        for folder in ["ChimeCommands", "chime-alarms", "AlarmsModel", "UserNotifications", "ChimeCenter", "NotifyTool", "chime-commands"] {
            let directory = Self.root.appendingPathComponent("Sources/\(folder)")
            for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
                if folder == "ChimeCenter" && file == "SchedulerCalls.swift" { continue }
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for member in members where text.replacingOccurrences(of: "tr(\"\(member)\"", with: "").contains("\"\(member)\"") {
                    found.append("\(folder)/\(file): \"\(member)\"")
                }
            }
        }
        #expect(found.isEmpty, "\(found)")
    }
}
