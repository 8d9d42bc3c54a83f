import DBus
import Foundation
import Testing
import TestSupport

/// The popups speak the session's language: chime's German catalogue (po/de.po, compiled with
/// msgfmt as `make install` does) turns Snooze, Dismiss and the notes the daemon adds into German.
@Suite struct PopupLanguageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func aGermanSessionGetsGermanButtonsAndNotes() throws {
        let bus = try PrivateBus()
        let recorder = try RecordingServer(address: bus.address)
        defer { recorder.stop(); bus.stop() }
        let locale = bus.directory.appendingPathComponent("locale/de/LC_MESSAGES")
        try FileManager.default.createDirectory(at: locale, withIntermediateDirectories: true)
        let compiled = try runProgram("/usr/bin/msgfmt", ["--check", "-o", locale.appendingPathComponent("chime.mo").path,
                                                          Self.root.appendingPathComponent("po/de.po").path].map { Array($0.utf8) },
                                      environment: ["PATH": "/usr/bin:/bin"])
        try #require(compiled.status == 0, "\(compiled.stderr)")
        // LANGUAGE picks the catalogue; gettext ignores it under the plain C locale, not under C.UTF-8.
        let daemon = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state").path,
                                       environment: ["CHIME_LOCALEDIR": bus.directory.appendingPathComponent("locale").path,
                                                     "LANG": "C.UTF-8", "LANGUAGE": "de"])
        defer { daemon.stop() }
        let environment = bus.environment()
        #expect(try runChime(["in", "1s", "--id", "tee", "--body-command", "false", "Tee", "Ziehen lassen"], environment: environment).status == 0)
        let calls = recorder.waitForCalls(1)
        try #require(calls.count >= 1)
        #expect(calls[0].actions == ["snooze", "Schlummern", "dismiss", "Beenden"])
        #expect(calls[0].body == "Ziehen lassen\n(Befehl für den Text fehlgeschlagen: exit status 1)", "\(calls[0].body)")
        // The notice before an alarm: its line and its buttons in German too (the words of its time
        // in the messages' language, LANGUAGE's here).
        #expect(try runChime(["at", "*:*:0/5", "--notice", "4s", "--id", "probe", "Probealarm"], environment: environment).status == 0)
        #expect(waitUntil { recorder.calls.contains { $0.summary == "Probealarm" && $0.hints["category"] == .string("x-chime.reminder") } })
        let notice = try #require(recorder.calls.first { $0.summary == "Probealarm" && $0.hints["category"] == .string("x-chime.reminder") })
        #expect(notice.actions == ["skip", "Diesmal auslassen", "open", "Öffnen"])
        #expect(notice.body.hasPrefix("<b>Klingelt am "), "\(notice.body)")

        // The same daemon binary in an English session says it in English.
        daemon.stop()
        let english = try DaemonProcess(bus: bus, stateDirectory: bus.directory.appendingPathComponent("state2").path,
                                        environment: ["CHIME_LOCALEDIR": bus.directory.appendingPathComponent("locale").path, "LANG": "C.UTF-8"])
        defer { english.stop() }
        #expect(try runChime(["in", "1s", "--id", "tea", "Tea"], environment: environment).status == 0)
        #expect(waitUntil { recorder.calls.contains { $0.summary == "Tea" } })
        #expect(recorder.calls.first { $0.summary == "Tea" }?.actions == ["snooze", "Snooze", "dismiss", "Dismiss"])
    }
}
