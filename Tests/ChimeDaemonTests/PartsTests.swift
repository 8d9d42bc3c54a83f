// The daemon's shape, held by its sources: the service asks the parts through `SchedulerParts`
// only; each part holds its face of the store, never the store; what parts tell each other is
// assigned in one place (`Daemon.connectParts`); no part reaches into another's state. A change
// that breaks one of these fails here with the file and line, before a reader finds it.
import Foundation
import Testing

@Suite struct PartsTests {
    static let daemonSources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ChimeDaemon")

    /// Each source file of the daemon, as lines with their numbers (comments left out).
    static func sources() throws -> [(file: String, lines: [(number: Int, text: String)])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: daemonSources.path).filter { $0.hasSuffix(".swift") }.sorted()
        return try names.map { name in
            let text = try String(contentsOf: daemonSources.appendingPathComponent(name), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
                let code = line.trimmingCharacters(in: .whitespaces)
                return code.hasPrefix("//") ? nil : (index + 1, String(line))
            }
            return (name, lines)
        }
    }

    static let parts = ["Schedule", "Presenter", "ServerSession", "DoNotDisturb", "ChildProcesses", "Speaker", "Ringing",
                        "SleepFollower", "Waking", "AlarmFileFollower", "OwnCalendars", "ZoneFollower", "PopupLedger", "Vibration", "PhoneCalls"]

    @Test func theServiceAsksThePartsThroughItsOwnInterfaceOnly() throws {
        let service = try #require(try Self.sources().first { $0.file == "SchedulerService.swift" })
        var reaches: [String] = []
        for (number, text) in service.lines {
            for name in Self.parts + ["SchedulerDaemon", "Store", "DaemonParts"]
            where text.range(of: "\\b\(name)\\b", options: .regularExpression) != nil {
                reaches.append("SchedulerService.swift:\(number): \(name)")
            }
        }
        #expect(reaches.isEmpty, "the service names a part, the daemon or the store: \(reaches)")
        #expect(service.lines.contains { $0.text.contains("parts: any SchedulerParts") })
    }

    @Test func everyPartHoldsItsFaceOfTheStoreNeverTheStore() throws {
        var holders: [String] = []
        var faces: [String: String] = [:]
        // (The simulated daemon opens its store as `chime daemon` does, and hands the parts their faces.)
        for (file, lines) in try Self.sources() where !["Store.swift", "StoreFaces.swift", "Database.swift", "Simulation.swift"].contains(file) {
            for (number, text) in lines {
                if text.range(of: "(let|var) store: Store\\b", options: .regularExpression) != nil { holders.append("\(file):\(number)") }
                if let match = text.range(of: "let store: any [A-Za-z]+Store", options: .regularExpression) {
                    faces[file] = String(text[match].split(separator: " ").last!)
                }
            }
        }
        #expect(holders.isEmpty, "a part holds the whole store: \(holders)")
        #expect(faces == [
            "Schedule.swift": "ScheduleStore", "Presenter.swift": "PresenterStore", "PopupLedger.swift": "LedgerStore",
            "Ringing.swift": "RingingStore", "Speaker.swift": "SpeakerStore", "AlarmFileFollower.swift": "AlarmFileStore",
            "OwnCalendars.swift": "OwnCalendarsStore",
        ])
    }

    @Test func whatPartsTellEachOtherIsWiredInOnePlace() throws {
        var elsewhere: [String] = []
        var wired: Set<String> = []
        for (file, lines) in try Self.sources() {
            for (number, text) in lines {
                guard let match = text.range(of: "[A-Za-z?]+\\.events\\.[A-Za-z]+ =", options: .regularExpression) else { continue }
                if file == "Daemon.swift" {
                    wired.insert(String(text[match].split(separator: ".").first!).replacingOccurrences(of: "?", with: ""))
                } else {
                    elsewhere.append("\(file):\(number)")
                }
            }
        }
        #expect(elsewhere.isEmpty, "events assigned outside the wiring: \(elsewhere)")
        #expect(wired == ["schedule", "session", "doNotDisturb", "ledger", "ringing", "speaker", "zone", "sleep", "alarmFile", "ownCalendars", "presenter", "calls"])
        // One way to hear: no part offers a bare closure slot beside its events.
        var slots: [String] = []
        // (The simulator's stand-ins for the world are not parts: the simulation wires them itself.)
        for (file, lines) in try Self.sources() where file != "FiringMarker.swift" && file != "Simulation.swift" {
            for (number, text) in lines
            where text.range(of: "^    var [a-zA-Z]+: \\([^)]*\\)( throws\\([A-Za-z]+\\))? -> (Void|Bool) = ", options: .regularExpression) != nil {
                slots.append("\(file):\(number)")
            }
        }
        #expect(slots.isEmpty, "closure slots outside an Events struct: \(slots)")
    }

    @Test func everyPartAsksAnotherThroughItsFaceOnly() throws {
        // Only the wiring (the daemon, the service's gateway, the simulator) holds parts as they are;
        // a part holds each part it asks as the face it has of it (PartFaces.swift, InnerFaces.swift).
        let wiring = ["Daemon.swift", "SchedulerParts.swift", "Simulation.swift"]
        let concrete = "(let|var) [a-zA-Z]+: \\(?(\(Self.parts.joined(separator: "|")))\\b"
        var holders: [String] = []
        var faces: Set<String> = []
        for (file, lines) in try Self.sources() where !wiring.contains(file) {
            for (number, text) in lines {
                if text.range(of: concrete, options: .regularExpression) != nil { holders.append("\(file):\(number)") }
                if let match = text.range(of: "let (schedule|ledger|children|session|sleep): \\(?any [A-Za-z]+", options: .regularExpression) {
                    faces.insert("\(file): \(text[match].split(separator: " ").last!)")
                }
            }
        }
        #expect(holders.isEmpty, "a part holds another as it is, not its face: \(holders)")
        #expect(faces.isSuperset(of: [
            "Presenter.swift: PresenterSchedule", "Presenter.swift: PresenterLedger", "Ringing.swift: RingingLedger",
            "AlarmFileFollower.swift: FollowerSchedule", "OwnCalendars.swift: CalendarsSchedule", "Waking.swift: SleepFace",
            "DoNotDisturb.swift: ServerFace", "Speaker.swift: ProgramRunner",
        ]), "\(faces.sorted())")
    }

    @Test func noPartReachesIntoAnothersState() throws {
        // The queue, the marker and the signals are the schedule's; the daemon is nobody's to hold.
        let forbidden = ["schedule\\.queue\\b", "schedule\\.marker\\b", "schedule\\.signals\\b", "\\b(?!self\\b)[a-z][A-Za-z]*\\.store\\b", "\\bdaemon\\."]
        var found: [String] = []
        for (file, lines) in try Self.sources() {
            for (number, text) in lines {
                for term in forbidden where text.range(of: term, options: .regularExpression) != nil { found.append("\(file):\(number): \(term)") }
            }
        }
        #expect(found.isEmpty, "\(found)")
    }
}
