import ChimeCenter
import Foundation
import Testing
import TestSupport

/// Where the daemon keeps its state, and what it hands its children: never a shared place, never
/// through a planted link, never its whole environment. Real daemon, real bus.
@Suite struct StatePlaceTests: OnAPrivateBus {
    let bus: PrivateBus

    init() throws { bus = try PrivateBus() }

    /// Without HOME (and XDG_STATE_HOME, and --state-dir) the state went to /tmp/.local/state/chime,
    /// where another user could have made it first: now the daemon refuses, in one line.
    @Test func withoutAHomeTheDaemonRefusesToStart() throws {
        defer { bus.stop() }
        var environment = bus.environment()
        environment["HOME"] = nil
        let result = try runChime(["daemon", "--no-config"], environment: environment, timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains("no place for the state: HOME is not set"), "\(result.stderr)")
    }

    /// A state directory others may write to is refused, with what to do about it.
    @Test func aStateDirectoryOthersMayWriteToIsRefused() throws {
        defer { bus.stop() }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chmod(state, 0o777) == 0)
        let result = try runChime(["daemon", "--no-config", "--state-dir", state], environment: bus.environment(), timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains("others may write to it (mode 777); run chmod go-w on it"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state + "/chime.sqlite3"), "nothing was written there")
        // Put right, it starts.
        #expect(chmod(state, 0o700) == 0)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        daemon.stop()
    }

    /// The firing marker is truncated and written at every fire: a link planted where it goes is
    /// removed, never written through, and the alarm fires.
    @Test func aLinkWhereTheMarkerGoesIsNeverWrittenThrough() throws {
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let victim = bus.directory.appendingPathComponent("victim").path
        try "precious\n".write(toFile: victim, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: state + "/firing", withDestinationPath: victim)
        let recorder = try RecordingServer(address: bus.address)
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state)
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let set = try runChime(["in", "1s", "--id", "tea", "Tea"], environment: bus.environment())
        #expect(set.status == 0, "\(set.stderr)")
        #expect(recorder.waitForCalls(1).count == 1)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: state + "/firing")
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect(daemon.log.contains("firing was a symbolic link; removed it and made the marker anew"), "\(daemon.log)")
    }

    /// A body command gets the session's places and the user's language, not whatever else the
    /// daemon was started with.
    @Test func childrenGetACleanEnvironment() throws {
        let recorder = try RecordingServer(address: bus.address, capabilities: ["body"])
        let daemon = try DaemonProcess(bus: bus, stateDirectory: state,
                                       environment: ["CHIME_TEST_SECRET": "do-not-pass", "LC_TIME": "de_DE.UTF-8"])
        defer { daemon.stop(); recorder.stop(); bus.stop() }
        let set = try runChime(["in", "1s", "--id", "env", "--body-command", "env", "Environment"], environment: bus.environment())
        #expect(set.status == 0, "\(set.stderr)")
        let call = try #require(recorder.waitForCalls(1).first)
        let names = Set(call.body.split(separator: "\n").compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) })
        #expect(names.contains("PATH") && names.contains("DBUS_SESSION_BUS_ADDRESS") && names.contains("LC_TIME"), "\(names)")
        #expect(!names.contains("CHIME_TEST_SECRET"), "\(names)")
        let allowed: Set<String> = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "DISPLAY", "WAYLAND_DISPLAY",
                                    "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "PULSE_SERVER", "PULSE_SINK", "XDG_CURRENT_DESKTOP",
                                    "XDG_SESSION_TYPE", "GSETTINGS_BACKEND"]
        let unexpected = names.filter { !allowed.contains($0) && !$0.hasPrefix("LC_") && !$0.hasPrefix("XDG_") && $0 != "PWD" }
        #expect(unexpected.isEmpty, "\(unexpected)")
    }
}
