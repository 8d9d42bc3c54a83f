import ChimeCenter
import ChimeClient
import DBus
import Foundation
import Testing
import TestSupport

/// Do-not-disturb on a real server: dunst paused and resumed with `dunstctl set-paused`, an alarm
/// of each policy due while it is paused.
@Suite struct DoNotDisturbTests {
    @Test func eachPolicyWhileDunstIsPausedAndAfter() throws {
        let session = try DunstSession()
        let bus = session.bus
        let state = bus.directory.appendingPathComponent("state").path
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); session.stop() }
        let environment = bus.environment()
        func dunstctl(_ arguments: [String]) throws -> String {
            let result = try runProgram("/usr/bin/dunstctl", arguments.map { Array($0.utf8) },
                                        environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func dunst(_ property: String) throws -> UInt32? {
            let connection = try bus.connect()
            let reply = try connection.call(destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                                            interface: "org.freedesktop.DBus.Properties", member: "Get",
                                            arguments: [.string("org.dunstproject.cmd0"), .string(property)])
            return reply.first?.unwrappingVariants.uint32Value
        }
        let connection = try bus.connect()
        let center = UserNotificationCenter(connection: connection)
        nonisolated(unsafe) var fired: [String: String] = [:]  // identifier → timeliness
        _ = try connection.subscribe(MatchRule(interface: "org.chime.Scheduler1", member: "Fired")) { message in
            let arguments = message.arguments()
            if arguments.count == 3, let id = arguments[0].stringValue, let timeliness = arguments[2].stringValue { fired[id] = timeliness }
        }
        func pump(until condition: () throws -> Bool, timeout: TimeInterval = 30) rethrows -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                _ = connection.run(until: .now + .milliseconds(50)) { true }
                if try condition() { return true }
            }
            return try condition()
        }

        #expect(try runChime(["status"], environment: environment).stdout.contains("Do not disturb: off (dunst is not paused)"))
        _ = try dunstctl(["set-paused", "true"])
        #expect(try dunstctl(["is-paused"]) == "true")
        let status = try runChime(["status"], environment: environment).stdout
        #expect(status.contains("Do not disturb: on (dunst is paused): alarms break through as critical (dunst holds even those until it resumes; chime still plays their sound), --dnd defer ones wait until it ends, --dnd silent ones are only recorded"), "\(status)")

        for (id, extra) in [("through", [String]()), ("later", ["--dnd", "defer"]), ("quiet", ["--dnd", "silent"])] {
            let set = try runChime(["in", "1s", "--urgency", "normal", "--id", id, id.capitalized] + extra, environment: environment)
            try #require(set.status == 0, "\(set.stderr)")
        }
        #expect(pump { fired["through"] != nil && fired["quiet"] != nil })
        // Break-through went to dunst (which holds it, as dunst 1.9 holds everything while paused); silent
        // was recorded as delivered and never sent; defer waits, held.
        #expect(fired["through"] == "on-time")
        #expect(fired["quiet"] == "on-time")
        #expect(try dunst("waitingLength") == 1)
        #expect(try dunst("displayedLength") == 0)
        #expect(Set(try center.deliveredNotifications().map(\.identifier)) == ["through", "quiet"])
        #expect(try center.pendingSummaries().first { $0.identifier == "later" }?.state == .held)
        #expect(fired["later"] == nil)
        #expect(daemon.log.contains("do-not-disturb is on; the alarm breaks through as critical"))
        let deferredStatus = try runChime(["status"], environment: environment).stdout
        #expect(deferredStatus.contains("; 1 alarm(s) deferred"), "\(deferredStatus)")

        // Resumed: dunst's own announcement (PropertiesChanged) brings the deferred alarm, marked late.
        let resumed = Date()
        _ = try dunstctl(["set-paused", "false"])
        #expect(pump { fired["later"] != nil })
        print("measured: the deferred alarm fired \(Int(Date().timeIntervalSince(resumed) * 1000)) ms after dunstctl set-paused false")
        // Brought by the announcement, not by a later look: within moments, even on a busy machine.
        #expect(Date().timeIntervalSince(resumed) < 6, "shown \(Date().timeIntervalSince(resumed)) s after do-not-disturb ended")
        #expect(fired["later"] == "late")
        #expect(try center.pendingSummaries().isEmpty)
        #expect(try pump { (try dunst("displayedLength") ?? 0) == 2 }, "the deferred alarm and the held one are on screen")
    }
}
